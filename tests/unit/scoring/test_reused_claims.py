"""Claims carried over from an earlier job (services.scoring.reused): on a reusing job's
first pass only its own new sources are extracted from, and the earlier claims are
re-pointed at the new source order; otherwise everything is extracted as usual."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from services.scoring.engine import SourceScorer
from services.scoring.model_claims import ClaimsOutcome, Verifier
from services.scoring.reused import carried_claims, claims_with_reuse, reused_ids
from shared.envelope import (
    Citation,
    Claim,
    CredibilityTier,
    JobEnvelope,
    ResearchRequest,
    RetrievalMethod,
    ReusedWork,
    ScoredSource,
    Source,
)
from shared.subjects import Stage
from shared.text import text_hash

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _source(sid: str) -> Source:
    text = f"Text of {sid}."
    return Source(id=sid, text=text, url=f"https://example.org/{sid}", title=sid, relevance_score=0.8,
                  credibility_tier=CredibilityTier.SECONDARY, domain_authority=60, retrieval_method=RetrievalMethod.WEB,
                  text_hash=text_hash(text), text_chars=len(text))


def _scored(*ids: str) -> list[ScoredSource]:
    return [SourceScorer().score(_source(i), now=NOW) for i in ids]


def _claim(cid: str, source: str, supporting: list[int], contradicting: list[int] | None = None) -> Claim:
    return Claim(id=cid, text=f"claim {cid}", supporting_indices=supporting, contradicting_indices=contradicting or [],
                 checklist_item_ids=["c1"], citations=[Citation(source_id=source, locator="char:0-4", quote="Text")])


def _envelope(**changes: object) -> JobEnvelope:
    earlier = _scored("a", "b", "c")
    fields: dict[str, object] = dict(
        job_id="j2", user_id="alice", stage=Stage.SCORE, request=ResearchRequest(question="q"),
        deadline_at=NOW + timedelta(minutes=10), scored_sources=earlier,
        claims=[_claim("cl1", "a", [0], [2]), _claim("cl2", "c", [2]), _claim("cl3", "b", [1, 2])],
        reused=ReusedWork(job_id="j1", similarity=0.8, sources=3, claims=3, source_ids=["a", "b"]),
    )
    return JobEnvelope(**(fields | changes))


def test_claims_move_with_their_sources_and_lose_the_earlier_plans_items() -> None:
    now = _scored("new", "b", "a", "c")  # another order, and a source of this job's own
    carried = carried_claims(_envelope(), now, keep={"a", "b"})
    # cl2 and cl3 rest on "c", which was not reused: only cl1 comes over; its
    # contradicting source "c" is not kept either.
    assert [(c.id, c.supporting_indices, c.contradicting_indices, c.checklist_item_ids) for c in carried] == [
        ("cl1", [2], [], [])]


async def test_the_first_pass_extracts_from_the_new_sources_only() -> None:
    scored = _scored("new", "a", "b")
    seen: list[list[str]] = []

    async def extract(sources: Sequence[ScoredSource], verifier: Verifier) -> ClaimsOutcome:
        seen.append([s.id for s in sources])
        assert list(verifier.scored) == list(sources)
        return ClaimsOutcome([_claim("x", "new", [0])], [])

    verifier = Verifier(scored, {}, min_jaccard=0.8, min_support=0.6)
    outcome = await claims_with_reuse(_envelope(), scored, {}, verifier, extract)
    assert seen == [["new"]]
    assert [(c.id, c.supporting_indices, c.checklist_item_ids) for c in outcome.claims] == [
        ("x", [0], ["c1"]), ("cl1", [1], [])]


async def test_any_other_pass_extracts_from_every_source() -> None:
    scored = _scored("new", "a", "b")
    seen: list[list[str]] = []

    async def extract(sources: Sequence[ScoredSource], verifier: Verifier) -> ClaimsOutcome:
        seen.append([s.id for s in sources])
        return ClaimsOutcome([], [])

    verifier = Verifier(scored, {}, min_jaccard=0.8, min_support=0.6)
    for envelope in (_envelope(iteration=1), _envelope(reused=None),
                     _envelope(reused=ReusedWork(job_id="j1", similarity=1.0, sources=3, claims=3, source_ids=["a"], covered=True))):
        assert reused_ids(envelope) == set()
        await claims_with_reuse(envelope, scored, {}, verifier, extract)
    assert seen == [["new", "a", "b"]] * 3
