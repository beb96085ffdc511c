"""The gateway service.

Consumes: ``research.events.*.*`` (durable, shared by all gateway processes) and the
MAX_DELIVERIES advisories captured in the dead-letter stream.
Emits: ``research.stage.plan`` commands when a job is admitted, and
``research.events.<job_id>.status`` on every lifecycle transition.
Guarantees: it is the only writer of research_jobs / research_results /
research_sources; at most RESEARCH_MAX_CONCURRENCY jobs are PROCESSING across all
gateway processes, started in submission order; every transition is persisted, then
emitted.
"""

from __future__ import annotations

import asyncio
import logging
import contextlib
import ipaddress
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from faststream.middlewares import AckPolicy
from faststream.nats import JStream, NatsBroker, NatsMessage, PullSub
from nats.js.api import ConsumerConfig, DeliverPolicy

from services.gateway import db
from services.gateway.api import router
from services.gateway.lifecycle import Lifecycle
from shared import subjects, topology
from shared.errors import ConfigurationError
from shared.logs import configure_logging
from shared.settings import GatewaySettings

settings = GatewaySettings()
configure_logging(settings.log_level)
# Per-message consume logs at DEBUG: at INFO they drown everything else.
broker = NatsBroker(settings.nats_servers, graceful_timeout=10, log_level=logging.DEBUG)
_consumer = dict(ack_policy=AckPolicy.NACK_ON_ERROR, pull_sub=PullSub(batch_size=20, timeout=1.0))


@broker.subscriber(
    f"{subjects.EVENTS_PREFIX}.*.*",
    stream=JStream(subjects.EVENTS_STREAM, declare=False),
    durable=subjects.GATEWAY_EVENTS_DURABLE,
    config=ConsumerConfig(ack_wait=30, deliver_policy=DeliverPolicy.ALL),
    **_consumer,
)
async def on_job_event(msg: NatsMessage) -> None:
    await app.state.lifecycle.apply_event(msg.body)


@broker.subscriber(
    subjects.MAX_DELIVERIES_ADVISORY,
    stream=JStream(subjects.DEADLETTER_STREAM, declare=False),
    durable=subjects.GATEWAY_DEADLETTER_DURABLE,
    config=ConsumerConfig(ack_wait=30, deliver_policy=DeliverPolicy.ALL),
    **_consumer,
)
async def on_dead_letter(msg: NatsMessage) -> None:
    await app.state.lifecycle.apply_dead_letter(msg.body)


def check_bind(host: str, api_keys: dict[str, str]) -> None:
    """With no API keys there is one unauthenticated local user: never expose that."""
    if api_keys:
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise ConfigurationError(
            f"refusing to bind the gateway to {host} without RESEARCH_API_KEYS: "
            "set keys (key:user,...) or bind to 127.0.0.1"
        )


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    if not settings.database_url:
        raise ConfigurationError("DATABASE_URL is not set: run the gateway through `deepresearch up` or set it")
    app.state.settings = settings
    app.state.api_keys = settings.api_key_map()
    check_bind(settings.gateway_host, app.state.api_keys)
    await db.migrate(settings.database_url)
    engine = db.make_engine(settings.database_url)
    await topology.declare(settings.nats_servers, ttl_s=settings.research_job_ttl_s, replicas=settings.research_stream_replicas)
    await broker.start()
    app.state.lifecycle = life = Lifecycle(settings, db.make_sessions(engine), broker.connection.jetstream())
    tasks = [asyncio.create_task(life.admission_loop()), asyncio.create_task(life.expiry_loop())]
    life.kick()
    try:
        yield
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await broker.stop()
        await engine.dispose()


app = FastAPI(
    title="Deep research gateway",
    version="0.1.0",
    description="Submit research jobs, follow their progress, read verified reports.",
    lifespan=lifespan,
)
app.include_router(router)


@app.exception_handler(RequestValidationError)
async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with a message that names the offending field, plus FastAPI's details."""
    errors = exc.errors()
    parts = []
    for e in errors:
        loc = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
        parts.append(f"{loc}: {e.get('msg')}")
    return JSONResponse(
        {"message": "; ".join(parts), "detail": [{k: e[k] for k in ("loc", "msg", "type") if k in e} for e in errors]},
        status_code=422,
    )


def main() -> None:
    import uvicorn

    check_bind(settings.gateway_host, settings.api_key_map())
    uvicorn.run(app, host=settings.gateway_host, port=settings.gateway_port, log_level=settings.log_level.lower(), access_log=False)
