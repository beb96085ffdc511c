"""Claims carried over from an earlier job (services.scoring.reused): on a reusing job's
first pass only its own new sources are extracted from, and the earlier claims are
re-pointed at the new source order and checked again as fresh claims are; otherwise
everything is extracted as usual."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from services.scoring.engine import SourceScorer
from services.scoring.model_claims import ClaimsOutcome
from services.scoring.claim_checks import Verifier
from services.scoring.reused import carried_claims, claims_with_reuse, reused_ids
from shared.research.envelope import (
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
from shared.research.text import text_hash

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = {
    "a": "Resident keepers left the lighthouse in 1998.",
    "b": "Fog horns were sounded with compressed air.",
    "c": "Automation replaced resident keepers with remote monitoring.",
    "new": "Remote monitoring reports a failed lamp within minutes.",
}


def _source(sid: str) -> Source:
    text = TEXTS[sid]
    return Source(id=sid, text=text, url=f"https://example.org/{sid}", title=sid, relevance_score=0.8,
                  credibility_tier=CredibilityTier.SECONDARY, domain_authority=60, retrieval_method=RetrievalMethod.WEB,
                  text_hash=text_hash(text), text_chars=len(text))


def _scored(*ids: str) -> list[ScoredSource]:
    return [SourceScorer().score(_source(i), now=NOW) for i in ids]


def _verifier(scored: Sequence[ScoredSource], **texts: str | None) -> Verifier:
    """A verifier over the archived texts (``texts`` replace some: None is one gone from the store)."""
    return Verifier(scored, {s.text_hash: texts.get(s.id, s.text) for s in scored}, min_jaccard=0.8, min_support=0.6)


def _claim(cid: str, source: str, supporting: list[int], contradicting: list[int] | None = None,
           text: str | None = None) -> Claim:
    quote = TEXTS[source]
    return Claim(id=cid, text=text or quote, supporting_indices=supporting, contradicting_indices=contradicting or [],
                 checklist_item_ids=["c1"], level="quoted",
                 citations=[Citation(source_id=source, locator=f"char:0-{len(quote)}", quote=quote)])


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
    carried, rejected = carried_claims(_envelope(), {"a", "b"}, _verifier(now))
    # cl2 and cl3 rest on "c", which was not reused: only cl1 comes over; its
    # contradicting source "c" is not kept either.
    assert [(c.id, c.supporting_indices, c.contradicting_indices, c.checklist_item_ids) for c in carried] == [
        ("cl1", [2], [], [])]
    assert rejected == [] and carried[0].level == "quoted"


def test_carried_claims_are_checked_again_as_fresh_claims_are() -> None:
    now = _scored("new", "b", "a")
    earlier = _envelope(claims=[
        _claim("cl1", "a", [0]),
        _claim("cl2", "b", [1]),
        # Its sentence is not what its quote says: another year.
        _claim("cl3", "a", [0], text="Resident keepers left the lighthouse in 1987."),
    ])
    # The archived text of "b" no longer holds its quote.
    carried, rejected = carried_claims(earlier, {"a", "b"}, _verifier(now, b="Fog signals were abolished."))
    assert [c.id for c in carried] == ["cl1"]
    assert [(r.text, r.engine, r.category) for r in rejected] == [
        (TEXTS["b"], "reused", "quote"), ("Resident keepers left the lighthouse in 1987.", "reused", "number")]
    assert rejected[0].reason.startswith("quote from s2 does not verify")
    assert rejected[1].reason.startswith("not grounded in its quotes")


async def test_the_first_pass_extracts_from_the_new_sources_only() -> None:
    scored = _scored("new", "a", "b")
    seen: list[list[str]] = []

    async def extract(sources: Sequence[ScoredSource], verifier: Verifier) -> ClaimsOutcome:
        seen.append([s.id for s in sources])
        assert list(verifier.scored) == list(sources)
        return ClaimsOutcome([_claim("x", "new", [0])], [])

    verifier = _verifier(scored)
    outcome = await claims_with_reuse(_envelope(), scored, verifier.texts, verifier, extract)
    assert seen == [["new"]]
    assert [(c.id, c.supporting_indices, c.checklist_item_ids) for c in outcome.claims] == [
        ("x", [0], ["c1"]), ("cl1", [1], [])]
    assert outcome.rejected == []


async def test_a_carried_claim_that_fails_its_check_is_rejected_beside_the_fresh_ones() -> None:
    scored = _scored("new", "a", "b")

    async def extract(sources: Sequence[ScoredSource], verifier: Verifier) -> ClaimsOutcome:
        return ClaimsOutcome([], [])

    verifier = _verifier(scored, a=None)  # the archived text of "a" is gone
    outcome = await claims_with_reuse(_envelope(), scored, verifier.texts, verifier, extract)
    assert outcome.claims == []
    assert [(r.text, r.engine, r.category) for r in outcome.rejected] == [(TEXTS["a"], "reused", "quote")]


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
