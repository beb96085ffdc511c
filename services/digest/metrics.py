"""The digest stage's metrics, for Prometheus.

One registry per :class:`DigestMetrics` (tests make their own); the digest process
serves its registry on ``DIGEST_METRICS_PORT`` when that is set.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server


class DigestMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.sources_processed = Counter(
            "digest_sources_processed", "Sources the digest stage handled, by outcome",
            ["outcome"], registry=self.registry,
        )
        self.cache_hits = Counter(
            "digest_cache_hits", "Digests served from a cache (local: this process, shared: the KV bucket)",
            ["cache"], registry=self.registry,
        )
        self.duration = Histogram(
            "digest_duration_seconds", "Time to compute one digest (cache hits excluded)",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120), registry=self.registry,
        )
        self.compression_ratio = Histogram(
            "digest_compression_ratio", "digest_chars / original_chars of each digest",
            buckets=(0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0), registry=self.registry,
        )
        self.evidence_snippets = Histogram(
            "digest_evidence_snippets", "Evidence snippets per digest",
            buckets=(0, 1, 2, 3, 4, 5, 6, 8, 10, 20), registry=self.registry,
        )

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        """Expose ``/metrics`` over HTTP from a daemon thread."""
        start_http_server(port, addr=host, registry=self.registry)
