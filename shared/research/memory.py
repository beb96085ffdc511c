"""A job's research memory: what the research has learnt, what is still open, and
everything it has searched, carried in the envelope from pass to pass.

* ``insights``: the verified findings so far, each with its confidence and the ids of
  the claims behind it (rebuilt by scoring after every pass from that pass's claims);
* ``gaps``: the checklist items not yet satisfied, with the searches already tried for
  each, so a refinement pass aims elsewhere and the report can say what was tried;
* ``contradictions``: verified claims that some source contradicts;
* ``searched``: every search that was answered (provider, query text, iteration),
  one entry per provider and query (compared case- and whitespace-insensitively): the
  retrieval stage never runs a search listed here again.

Scoring updates the first three each pass (``services/scoring/memory.py``), retrieval
records what it searched, and planning and synthesis read it. The gateway stores it
with the job's trace and its result. Every list is bounded: the envelope travels as a
single NATS message.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from shared.research.text import normalize_query

__all__ = [
    "MAX_CONTRADICTIONS",
    "MAX_GAP_TRIED",
    "MAX_INSIGHTS",
    "MAX_SEARCHED",
    "QUERY_MAX_CHARS",
    "TEXT_MAX_CHARS",
    "Contradiction",
    "Gap",
    "Insight",
    "ResearchMemory",
    "Searched",
]

# Bounds that keep the worst-case memory near 50 kB, which the largest envelope of the
# default source caps still has room for under NATS's 1 MiB.
MAX_INSIGHTS = 20
MAX_CONTRADICTIONS = 10
MAX_GAP_TRIED = 5  # searches named per open gap
MAX_SEARCHED = 150  # the latest; older ones stay in the envelope's queries_run, which retrieval also skips
TEXT_MAX_CHARS = 200  # insight, gap and contradiction texts (the claims keep their whole text)
QUERY_MAX_CHARS = 200


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Insight(_Wire):
    text: str
    confidence: float
    claim_ids: list[str] = Field(default_factory=list)  # the verified claims that state it
    checklist_item_ids: list[str] = Field(default_factory=list)
    first_iteration: int = 0  # the pass that first found it


class Gap(_Wire):
    item_id: str
    description: str
    status: str  # "unsatisfied" or "partial"
    tried: list[str] = Field(default_factory=list)  # searches run so far that target it
    open_since: int = 0  # the first pass after which it was still open


class Contradiction(_Wire):
    claim_id: str
    text: str
    supporting_indices: list[int] = Field(default_factory=list)  # sources, by scored index
    contradicting_indices: list[int] = Field(default_factory=list)


class Searched(_Wire):
    provider: str  # "rag", "web" or "pubmed"
    text: str
    iteration: int = 0


class ResearchMemory(_Wire):
    insights: list[Insight] = Field(default_factory=list)
    gaps: list[Gap] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)
    searched: list[Searched] = Field(default_factory=list)

    def searched_keys(self, provider: str | None = None) -> set[str]:
        """Normalized texts searched (on ``provider``, or on any provider)."""
        return {normalize_query(s.text) for s in self.searched if provider is None or s.provider == provider}

    def searched_texts(self, provider: str) -> list[str]:
        """The query texts answered on ``provider``, in the order they ran."""
        return [s.text for s in self.searched if s.provider == provider]

    def has_searched(self, provider: str, text: str) -> bool:
        return normalize_query(text) in self.searched_keys(provider)

    def with_searches(self, searches: Iterable[tuple[str, str]], *, iteration: int) -> ResearchMemory:
        """This memory plus ``(provider, text)`` searches not listed yet, the latest
        MAX_SEARCHED kept."""
        seen = {(s.provider, normalize_query(s.text)) for s in self.searched}
        added: list[Searched] = []
        for provider, text in searches:
            text = text if len(text) <= QUERY_MAX_CHARS else text[: QUERY_MAX_CHARS - 1] + "…"
            key = (provider, normalize_query(text))
            if key[1] and key not in seen:
                seen.add(key)
                added.append(Searched(provider=provider, text=text, iteration=iteration))
        if not added:
            return self
        return self.model_copy(update={"searched": [*self.searched, *added][-MAX_SEARCHED:]})

    def gap_lines(self) -> list[str]:
        """One line per open gap, with what was tried: for a prompt's data block."""
        lines = []
        for g in self.gaps:
            tried = "; ".join(g.tried) if g.tried else "nothing yet"
            lines.append(f"- {g.item_id} ({g.status}, open since pass {g.open_since + 1}): {g.description} | tried: {tried}")
        return lines
