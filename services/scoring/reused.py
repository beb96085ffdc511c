"""Claims a job took over from an earlier, similar job of the same user.

A job seeded by reuse (the gateway's services/gateway/reuse.py) arrives at its first
scoring pass with the earlier job's sources, scored sources and verified claims. Those
claims were checked against the same archived texts and stay valid: on that pass only
the sources the job found itself go to claim extraction (to the model), and the
earlier claims are carried over, re-pointed at this pass's source order. Later passes
extract from every source, as any job's do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from services.scoring.model_claims import ClaimsOutcome, Verifier
from shared.envelope import Claim, JobEnvelope, ScoredSource

__all__ = ["carried_claims", "claims_with_reuse", "reused_ids"]

Extract = Callable[[Sequence[ScoredSource], Verifier], Awaitable[ClaimsOutcome]]


def reused_ids(envelope: JobEnvelope) -> set[str]:
    """The ids of the sources whose claims are carried over on this pass (none but on
    the first pass of a job seeded from an earlier one that did not cover its question)."""
    reused = envelope.reused
    if reused is None or reused.covered or envelope.iteration != 0 or not envelope.claims:
        return set()
    return set(reused.source_ids)


def _repoint(claim: Claim, old: Sequence[ScoredSource], position: Mapping[str, int], keep: set[str], *,
             carried: bool) -> Claim | None:
    def moved(indices: list[int]) -> list[int]:
        ids = [old[i].id for i in indices if 0 <= i < len(old)]
        return [position[i] for i in ids if i in position and i in keep]

    supporting = moved(claim.supporting_indices)
    if not supporting:
        return None
    update = {"supporting_indices": supporting, "contradicting_indices": moved(claim.contradicting_indices)}
    if carried:  # its checklist ids were the earlier plan's: this job's coverage judgement places it
        update["checklist_item_ids"] = []
    return claim.model_copy(update=update)


def carried_claims(envelope: JobEnvelope, scored: Sequence[ScoredSource], keep: set[str]) -> list[Claim]:
    """The envelope's claims whose supporting sources are all among ``keep``, their
    indices moved from the envelope's scored sources to ``scored``."""
    position = {s.id: n for n, s in enumerate(scored)}
    out = []
    for claim in envelope.claims:
        moved = _repoint(claim, envelope.scored_sources, position, keep, carried=True)
        if moved is not None and len(moved.supporting_indices) == len(claim.supporting_indices):
            out.append(moved)
    return out


async def claims_with_reuse(envelope: JobEnvelope, scored: Sequence[ScoredSource], texts: Mapping[str, str | None],
                            verifier: Verifier, extract: Extract) -> ClaimsOutcome:
    """``extract(sources, verifier)`` over ``scored``; on a reusing job's first pass,
    over the sources it found itself only, plus the earlier job's claims carried over."""
    keep = reused_ids(envelope) & {s.id for s in scored}
    if not keep:
        return await extract(scored, verifier)
    fresh = [s for s in scored if s.id not in keep]
    outcome = await extract(fresh, Verifier(fresh, texts, min_jaccard=verifier.min_jaccard,
                                            min_support=verifier.min_support)) if fresh else ClaimsOutcome([], [])
    position = {s.id: n for n, s in enumerate(scored)}
    own = [_repoint(c, fresh, position, {s.id for s in fresh}, carried=False) for c in outcome.claims]
    outcome.claims = [*(c for c in own if c is not None), *carried_claims(envelope, scored, keep)]
    return outcome
