"""Where a stage's sources come from: the local corpora, the web (the page fetcher,
Tavily and the keyless providers), PubMed and the paper search APIs, and the shared
search cache. The retrieval stage reads these; they are a mixin of
:class:`shared.settings.StageSettings`, which every stage's settings class extends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr

from shared.research.envelope import CredibilityTier

__all__ = ["SourceSettings"]


class SourceSettings(BaseModel):
    """The retrieval sources' settings (mixed into :class:`shared.settings.StageSettings`)."""

    # -- the local corpora (services/retrieval/service.py) --
    research_local_results_per_query: int = Field(10, ge=1)
    """Passages (chunks) retrieved per query from the local corpora."""

    research_local_credibility_tier: CredibilityTier = CredibilityTier.AUTHORITATIVE
    """Credibility tier given to local documents."""

    research_local_domain_authority: int = Field(70, ge=0, le=100)
    """Domain authority (0-100) given to local documents."""

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

    # -- search providers: web (Tavily), PubMed, fan-out, cache (services/retrieval) --
    tavily_api_key: SecretStr | None = None
    """Tavily API key; setting it enables the web provider."""

    tavily_base_url: str | None = None
    """Another Tavily endpoint (a proxy, or the test suite's fake); unset: https://api.tavily.com."""

    research_web_results_per_query: int = Field(10, ge=1, le=20)
    """Web results per query (about 10 gives breadth at a bounded cost; Tavily allows at most 20)."""

    tavily_search_depth: Literal["basic", "advanced"] = "basic"
    """Tavily search depth; `advanced` costs two credits per search."""

    tavily_use_extract: bool = True
    """Ask Tavily's extract endpoint for the full text of results that came back
    without raw content, before falling back to our own fetcher."""

    ncbi_eutils_base_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    """NCBI E-utilities base URL (esearch.fcgi and efetch.fcgi live under it)."""

    ncbi_api_key: SecretStr | None = None
    """NCBI API key: raises the limit from 3 to 10 requests/s and enables PubMed."""

    ncbi_tool: str = "deepresearch"
    """`tool` parameter sent on every E-utilities request (NCBI asks for it)."""

    ncbi_email: str | None = None
    """`email` parameter sent on every E-utilities request; setting it enables PubMed."""

    ncbi_max_requests_per_s: float | None = Field(None, gt=0, le=10)
    """E-utilities requests per second across every retrieval process. Unset: NCBI's
    limit, 3 without a key and 10 with one."""

    research_pubmed_enabled: bool | None = None
    """Unset: PubMed is on when NCBI_EMAIL or NCBI_API_KEY is set. true/false forces it."""

    research_pubmed_results_per_query: int = Field(10, ge=1, le=100)
    """PubMed records fetched per query."""

    research_retrieval_concurrency: int = Field(16, ge=1, le=64)
    """(query, provider) searches in flight at once per retrieval process."""

    research_provider_timeout_s: float = Field(60.0, gt=0)
    """Longest one search of one provider may take (full texts included); a slower one
    is abandoned and reported as that provider's failure for the query."""

    research_provider_retries: int = Field(2, ge=0, le=10)
    """Retries of one search after a transient error (429, 5xx, timeout), with backoff."""

    research_search_cache_ttl_s: int = Field(86_400, ge=0, le=30 * 86_400)
    """How long a web or PubMed search result is reused from the shared cache
    (0: no cache). At most the 30 days texts are archived, so a hit's texts exist."""

    # -- keyless search providers and web failover (services/retrieval/webchain.py) --
    research_web_providers: str = ""
    """Web providers in failover order, from tavily, searxng, wikipedia (e.g.
    `tavily,searxng,wikipedia`). Empty: tavily when TAVILY_API_KEY is set, then searxng
    when SEARXNG_URL is set."""

    research_scholarly_providers: str = ""
    """Paper search APIs asked with every web query, from arxiv, openalex (e.g.
    `arxiv,openalex`). Empty: none."""

    research_web_failover_timeout_s: float = Field(20.0, gt=0)
    """Longest one web provider may take before the next one in RESEARCH_WEB_PROVIDERS is asked."""

    research_provider_quota_pause_s: float = Field(3600.0, ge=0)
    """How long this process skips a provider that refused for its quota or key (Tavily 432/433/401)."""

    searxng_url: str | None = None
    """Base URL of a SearXNG instance with the json format enabled (e.g. http://localhost:8888)."""

    wikipedia_api_url: str = "https://en.wikipedia.org/w/api.php"
    """MediaWiki Action API endpoint of the Wikipedia searched (another language: xx.wikipedia.org)."""

    arxiv_api_url: str = "https://export.arxiv.org/api/query"
    """arXiv's Atom query API."""

    arxiv_max_requests_per_s: float = Field(1 / 3, gt=0, le=10)
    """arXiv requests per second across every retrieval process (arXiv asks for one every 3 s)."""

    openalex_api_url: str = "https://api.openalex.org"
    """OpenAlex API base URL (`/works` lives under it)."""

    openalex_email: str | None = None
    """`mailto` sent to OpenAlex (its polite pool)."""

    openalex_api_key: SecretStr | None = None
    """Optional OpenAlex API key (higher daily limits)."""

    @property
    def pubmed_enabled(self) -> bool:
        """RESEARCH_PUBMED_ENABLED when set, else whether NCBI_EMAIL or NCBI_API_KEY is."""
        if self.research_pubmed_enabled is not None:
            return self.research_pubmed_enabled
        return bool(self.ncbi_email or self.ncbi_api_key)
