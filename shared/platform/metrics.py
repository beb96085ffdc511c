"""Prometheus metrics of every service process, and the one /metrics endpoint a
process serves them on.

Ports: ``RESEARCH_METRICS_PORT`` is a base (0: no endpoint). A process binds the base
plus its service's offset (:data:`PORT_OFFSETS`: gateway 0, plan 1, retrieve 2, digest 3,
score 4, synthesize 5), so the six processes of ``deepresearch up`` never collide and
need nothing passed by whoever starts them. A further process of a service on the same
host finds that port taken and binds a free one instead; the bound port is always
logged. Metrics live in this module's registry; a service with metrics of its own
(the digest's) adds its registry with :func:`include`, and both are served together.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.registry import Collector

__all__ = [
    "ADMISSION_WAIT",
    "BUDGET_SKIPS",
    "JOBS",
    "LLM_CALLS",
    "LLM_LATENCY",
    "LLM_TOKENS",
    "PORT_OFFSETS",
    "REGISTRY",
    "STAGE_DURATION",
    "STAGE_MESSAGES",
    "include",
    "serve",
]

log = logging.getLogger(__name__)

PORT_OFFSETS = {"gateway": 0, "plan": 1, "retrieve": 2, "digest": 3, "score": 4, "synthesize": 5}

REGISTRY = CollectorRegistry()

_SECONDS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

STAGE_DURATION = Histogram(
    "research_stage_duration_seconds", "Time one stage attempt took, by stage and outcome",
    ["stage", "outcome"], buckets=_SECONDS, registry=REGISTRY,
)
STAGE_MESSAGES = Counter(
    "research_stage_messages", "Stage commands handled, by stage and outcome "
    "(done, retried, failed, cancelled, malformed)",
    ["stage", "outcome"], registry=REGISTRY,
)
LLM_TOKENS = Counter(
    "research_llm_tokens", "Model tokens the provider reported, by stage, model and direction (input/output)",
    ["stage", "model", "direction"], registry=REGISTRY,
)
LLM_CALLS = Counter(
    "research_llm_calls", "Model calls, by stage, model and outcome (ok, error, degraded: answered offline, the provider unavailable)",
    ["stage", "model", "outcome"], registry=REGISTRY,
)
LLM_LATENCY = Histogram(
    "research_llm_call_seconds", "Latency of one model call (the SDK's retries included)",
    ["stage", "model"], buckets=_SECONDS, registry=REGISTRY,
)
BUDGET_SKIPS = Counter(
    "research_llm_budget_skips", "Model calls answered offline because the job's token budget had no room for them",
    ["stage"], registry=REGISTRY,
)
JOBS = Gauge(
    "research_jobs", "Jobs by current status (read from the database by the gateway)",
    ["status"], registry=REGISTRY,
)
ADMISSION_WAIT = Histogram(
    "research_admission_wait_seconds", "Time a job waited QUEUED before it started PROCESSING",
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800), registry=REGISTRY,
)


class _Registries(Collector):
    """Several registries served as one."""

    def __init__(self, registries: Iterable[CollectorRegistry]) -> None:
        self.registries = list(registries)

    def collect(self):  # noqa: ANN201 - prometheus_client's own signature
        for registry in self.registries:
            yield from registry.collect()


_extra: list[CollectorRegistry] = []


def include(registry: CollectorRegistry) -> None:
    """Serve ``registry`` too (call before :func:`serve`)."""
    _extra.append(registry)


def serve(service: str, base_port: int, host: str = "127.0.0.1") -> int | None:
    """Start the /metrics endpoint of this process (a daemon thread); returns the port,
    or None when ``base_port`` is 0 (metrics off)."""
    if not base_port:
        return None
    served = CollectorRegistry()
    served.register(_Registries([REGISTRY, *_extra]))
    port = base_port + PORT_OFFSETS.get(service, len(PORT_OFFSETS))
    try:
        start_http_server(port, addr=host, registry=served)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        # Another process of this service on this host holds the port.
        server, _ = start_http_server(0, addr=host, registry=served)
        log.info("metrics port %d is taken (another %s process?): serving on a free port", port, service)
        port = server.server_port
    log.info("%s metrics on http://%s:%d/metrics", service, host, port)
    return port
