"""Claims a job took over from an earlier, similar job of the same user.

A job seeded by reuse (the gateway's services/gateway/reuse.py) arrives at its first
scoring pass with the earlier job's sources, scored sources and verified claims. On
that pass only the sources the job found itself go to claim extraction (to the model),
and the earlier claims are carried over, re-pointed at this pass's source order and
checked again as a fresh claim is (model_claims.verify_offline_claims: every quote
against the archived text, the sentence against its quotes), whatever checks they
passed in the earlier job; one that fails is rejected with its reason (engine
"reused"). Later passes extract from every source, as any job's do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

from services.scoring.model_claims import ClaimsOutcome
from services.scoring.claim_checks import Verifier, verify_offline_claims
from shared.research.envelope import Claim, JobEnvelope, RejectedClaim, ScoredSource

__all__ = ["carried_claims", "claims_with_reuse", "reused_ids"]

Extract = Callable[[Sequence[ScoredSource], Verifier], Awaitable[ClaimsOutcome]]
REUSED = "reused"  # what proposed a carried claim that is rejected: the earlier job


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


def carried_claims(envelope: JobEnvelope, keep: set[str],
                   verifier: Verifier) -> tuple[list[Claim], list[RejectedClaim]]:
    """The envelope's claims whose supporting sources are all among ``keep``, their
    indices moved from the envelope's scored sources to this pass's (``verifier.scored``),
    that pass the check again; and those that do not, with the reason."""
    position = {s.id: n for n, s in enumerate(verifier.scored)}
    moved = []
    for claim in envelope.claims:
        one = _repoint(claim, envelope.scored_sources, position, keep, carried=True)
        if one is not None and len(one.supporting_indices) == len(claim.supporting_indices):
            moved.append(one)
    return verify_offline_claims(moved, verifier, iteration=envelope.iteration, engine=REUSED)


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
    # Quote checks are CPU work over whole texts: off the event loop, as extraction's.
    carried, refused = await asyncio.to_thread(carried_claims, envelope, keep, verifier)
    outcome.claims = [*(c for c in own if c is not None), *carried]
    outcome.rejected = [*outcome.rejected, *refused]
    return outcome
