"""The gateway service.

Consumes: job events through two durables shared by all gateway processes:
``research.events.*.{progress,stage}`` (each job's latest stored once per batch) and
``research.events.*.{completed,failed,clarification}`` (a consumer of their own, so an
outcome never waits behind progress); an event that cannot be stored after
GATEWAY_EVENT_MAX_DELIVER attempts fails its job. Also the MAX_DELIVERIES advisories
captured in the dead-letter stream.
Emits: ``research.stage.plan`` commands when a job is admitted, and
``research.events.<job_id>.status`` on every lifecycle transition, both through the
outbox relay.
Guarantees: it is the only writer of research_jobs / research_results /
research_sources; at most RESEARCH_MAX_CONCURRENCY jobs are PROCESSING across all
gateway processes, started in submission order; every transition is persisted together
with its status event, which is then published at least once (deduplicated by its
Nats-Msg-Id); an answer never contradicts the database (202: stored, 503: not stored).
The consumers, admission, expiry and the relay are supervised loops (see loops.py):
``/readyz`` answers 503 naming any loop that keeps failing.
"""

from __future__ import annotations

import logging
import contextlib
import ipaddress
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import nats.errors
import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from faststream.nats import NatsBroker
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from services.gateway import db, storage
from services.gateway.api import OPENAPI_SECURITY, STORE_FULL_RETRY_AFTER_S, ErrorBody, current_user, router
from services.gateway.contract import router as contract_router
from services.gateway.events_sse import router as events_router
from services.gateway.followup import router as follow_up_router
from services.gateway.lifecycle import LOOP_CONNECTIONS, Lifecycle
from services.gateway.mcp import McpRoute, MountedMcp, loopback_url
from services.gateway.models import Job
from services.gateway.pages import router as pages_router
from services.gateway.plan_review_api import router as plan_review_router
from shared.platform import metrics
from shared.stores import topology
from shared.platform.errors import ConfigurationError
from shared.research.events import JobStatus
from shared.platform.logs import configure_logging
from shared.settings import GatewaySettings

log = logging.getLogger(__name__)

settings = GatewaySettings()
configure_logging(settings.log_level, settings.research_log_format)
# Per-message consume logs at DEBUG: at INFO they drown everything else.
# The broker holds the connection (with its reconnect policy); the gateway's consumers
# are its own supervised pull loops (lifecycle.py), which survive any error.
# Reconnect for ever: after the client's default 60 attempts (two minutes) it would
# close for good, and every loop would fail until someone restarted the process.
broker = NatsBroker(settings.nats_servers, graceful_timeout=10, log_level=logging.DEBUG, max_reconnect_attempts=-1)


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


class JobMetrics:
    """Jobs by status and admission waits for /metrics, read from the database (the
    truth every gateway process shares) at each pass; waits are observed once, for the
    jobs started since the previous pass."""

    def __init__(self, sessions) -> None:  # noqa: ANN001 - an async_sessionmaker
        self.sessions = sessions
        self.since: datetime | None = None

    async def __call__(self) -> None:
        async with self.sessions() as session:
            counts = dict((await session.execute(sa.select(Job.status, sa.func.count()).group_by(Job.status))).all())
            for status in JobStatus:
                metrics.JOBS.labels(status.value).set(counts.get(status, 0))
            if self.since is None:  # waits of jobs started before this process are not ours to report
                self.since = datetime.now(UTC)
                return
            started = (await session.execute(
                sa.select(Job.created_at, Job.started_at).where(Job.started_at > self.since).order_by(Job.started_at)
            )).all()
        for created_at, started_at in started:
            metrics.ADMISSION_WAIT.observe(max(0.0, (started_at - created_at).total_seconds()))
        if started:
            self.since = started[-1][1]


def pool_size(s: GatewaySettings) -> int:
    """Every connection the gateway can use at once: one per loop, one per outcome
    event stored concurrently, and those kept for API requests."""
    return LOOP_CONNECTIONS + s.gateway_outcome_concurrency + s.gateway_db_api_connections


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    if not settings.database_url:
        raise ConfigurationError("DATABASE_URL is not set: run the gateway through `deepresearch up` or set it")
    app.state.settings = settings
    app.state.api_keys = settings.api_key_map()
    check_bind(settings.gateway_host, app.state.api_keys)
    await db.migrate(settings.database_url)
    engine = db.make_engine(settings.database_url, pool_size=pool_size(settings))
    await topology.declare(settings.nats_servers, ttl_s=settings.research_job_ttl_s, replicas=settings.research_stream_replicas)
    await broker.start()
    js = broker.connection.jetstream()
    await topology.ensure_gateway_consumers(js, max_deliver=settings.gateway_event_max_deliver)
    app.state.lifecycle = life = Lifecycle(settings, db.make_sessions(engine), js)
    life.start()
    if metrics.serve("gateway", settings.research_metrics_port, settings.research_metrics_host):
        life.loops.start("metrics", JobMetrics(life.sessions), interval_s=5.0)
    app.state.mcp = MountedMcp(loopback_url(settings.gateway_host, settings.gateway_port), settings.gateway_host, current_user)
    try:
        async with app.state.mcp.running():
            yield
    finally:
        await life.loops.stop()
        await life.close()
        await broker.stop()
        await engine.dispose()


app = FastAPI(
    title="Deep research gateway",
    version="0.1.0",
    description="Submit research jobs, follow their progress, read verified reports.",
    lifespan=lifespan,
)
app.include_router(router)
app.include_router(events_router)  # GET /api/research/jobs/{job_id}/events
app.include_router(plan_review_router)  # POST /api/research/jobs/{job_id}/plan
app.include_router(follow_up_router)  # POST /api/research/jobs/{job_id}/follow-up
app.include_router(contract_router)  # GET /api/schemas/events and /asyncapi.json
# The deep_research tool over streamable HTTP, behind the same bearer keys as the API.
app.router.routes.append(Route("/mcp", McpRoute(), methods=["GET", "POST", "DELETE"]))
app.include_router(pages_router)  # the web page at / and /jobs/{id}, its files, and the routes it reads


def _openapi() -> dict:
    """FastAPI's document plus the bearer scheme every /api route requires."""
    if app.openapi_schema:
        return app.openapi_schema
    from fastapi.openapi.utils import get_openapi

    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {}).update(OPENAPI_SECURITY)
    components.setdefault("schemas", {})["ErrorBody"] = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    for path, ops in schema.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for method, op in ops.items():
            op["security"] = [{name: []} for name in OPENAPI_SECURITY]
            codes = [401, 422, 503]
            if "{job_id}" in path:
                codes.append(404)
            if method == "post" or path.endswith(("/result", "/verify")):
                codes.append(409)
            if method == "post" and path == "/api/research/jobs":
                codes.append(429)
            for code in codes:
                op.setdefault("responses", {})[str(code)] = {
                    "description": ERROR_DESCRIPTIONS[code],
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
                    **({"headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait"}}} if code in (429, 503) else {}),
                }
            streaming = op.get("responses", {}).get("200", {}).get("content", {})
            if "text/event-stream" in streaming:
                streaming.pop("application/json", None)
    app.openapi_schema = schema
    return schema


ERROR_DESCRIPTIONS = {
    401: "Missing or invalid API key",
    404: "No such job for this user",
    409: "The job is not in a state that allows this (or the Idempotency-Key was used for another request)",
    422: "The request is invalid; the message names the field",
    429: "Too many submissions; see Retry-After",
    503: "NATS or PostgreSQL unavailable, or a store's disk full; nothing was stored; see Retry-After",
}


app.openapi = _openapi  # type: ignore[method-assign]


@app.exception_handler(RequestValidationError)
async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with a message that names the offending field, plus FastAPI's details."""
    errors = exc.errors()
    parts = []
    for e in errors:
        loc = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
        if e.get("type") == "string_unicode":  # a lone surrogate (\\ud800) in JSON text
            e["msg"] = "must not contain unpaired surrogate characters (\\ud800-\\udfff)"
        parts.append(f"{loc}: {e.get('msg')}")
    return JSONResponse(
        {"message": "; ".join(parts), "detail": [{k: e[k] for k in ("loc", "msg", "type") if k in e} for e in errors]},
        status_code=422,
    )


RETRY_AFTER_S = 5


async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
    """NATS or PostgreSQL did not answer: nothing was stored (every write commits
    before it answers), so the client may retry."""
    if isinstance(exc, DBAPIError) and not db.is_unavailable(exc):
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return JSONResponse({"message": f"internal error ({type(exc).__name__})", "detail": None}, status_code=500)
    full = storage.disk_full_message(exc)
    if full is not None:
        log.error("%s %s: %s (%s: %s)", request.method, request.url.path, full, type(exc).__name__, exc)
        return JSONResponse({"message": full, "detail": str(exc)[:500]}, status_code=503,
                            headers={"Retry-After": str(STORE_FULL_RETRY_AFTER_S)})
    log.warning("%s %s: dependency unavailable: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    return JSONResponse(
        {"message": f"temporarily unavailable ({type(exc).__name__}); nothing was stored, retry later", "detail": str(exc)[:500]},
        status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)},
    )


for _exc in (nats.errors.Error, DBAPIError, SQLAlchemyTimeoutError, OSError, TimeoutError):
    app.add_exception_handler(_exc, _unavailable)


@app.exception_handler(StarletteHTTPException)
async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Every error answers with the same body: a message, and FastAPI's detail."""
    message = exc.detail if isinstance(exc.detail, str) else "; ".join(str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in exc.detail)
    return JSONResponse({"message": message, "detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)


def main() -> None:
    import uvicorn

    check_bind(settings.gateway_host, settings.api_key_map())
    uvicorn.run(app, host=settings.gateway_host, port=settings.gateway_port, log_level=settings.log_level.lower(), access_log=False)
