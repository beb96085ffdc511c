"""A stage service as a process: its broker, its FastStream app and its runner.

Each stage's ``service.py`` calls :func:`stage_app` once at import; the app declares the
topology and the stage's durable consumer at start-up, serves the process's metrics, and
settles the runner's publishes at shutdown. The runner itself (what happens around each
command) is :mod:`shared.runtime.stage`.
"""

from __future__ import annotations

import logging
from typing import Any

import nats
from faststream import FastStream
from faststream.nats import NatsBroker
from faststream.nats.prometheus import NatsPrometheusMiddleware

from shared.platform import metrics
from shared.platform.logs import configure_logging
from shared.runtime.stage import StageRunner
from shared.settings import CommonSettings
from shared.stores import topology
from shared.subjects import Stage

__all__ = ["stage_app"]


def stage_app(stage: Stage, settings: CommonSettings) -> tuple[NatsBroker, Any, StageRunner]:
    """The broker, FastStream app and runner of one stage service."""
    configure_logging(settings.log_level, settings.research_log_format)
    # The CLI refuses to start a lone service without NATS_URL; the fallback is only
    # what importing the module (tests, docs generation) needs. Reconnect for as long as
    # it takes: a stage that gave up after a long nats-server outage would stay alive and
    # healthy-looking while receiving no work.
    broker = NatsBroker(
        settings.nats_servers, graceful_timeout=settings.research_ack_wait_s, log_level=logging.DEBUG,
        middlewares=[NatsPrometheusMiddleware(registry=metrics.REGISTRY, app_name=stage.value)],
        max_reconnect_attempts=-1,
    )
    app = FastStream(broker)
    runner = StageRunner(broker, stage, settings)

    @app.on_startup
    async def _declare() -> None:
        await topology.declare(settings.nats_servers, ttl_s=settings.research_job_ttl_s, replicas=settings.research_stream_replicas)
        nc = await nats.connect(servers=settings.nats_servers, connect_timeout=5, max_reconnect_attempts=3)
        try:
            await runner.update_durable(nc.jetstream())
        finally:
            await nc.drain()
        metrics.serve(stage.value, settings.research_metrics_port, settings.research_metrics_host)

    @app.on_shutdown
    async def _stop_watch() -> None:
        await runner.control.stop()
        await runner.publisher.settle()

    return broker, app, runner
