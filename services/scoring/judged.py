"""The entailment judge over the claims scoring kept.

Claims that passed the deterministic checks but are not quotes (level ``supported``)
go to the verifier model in batches (``shared.verification.judge``). An ``entailed`` verdict makes
the claim ``entailed``; any other verdict vetoes it: the claim moves to the rejected
claims with its reason (category ``judge``). An unjudged claim (no model, a spent
budget, a failed call) stays ``supported``, and so is never a Verified Finding.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from shared.research.envelope import Claim, RejectedClaim
from shared.research.events import TraceJudge
from shared.verification.judge import Judge, JudgeItem

__all__ = ["judge_claims"]

log = logging.getLogger(__name__)


async def judge_claims(claims: Sequence[Claim], judge: Judge | None, *,
                       iteration: int) -> tuple[list[Claim], list[RejectedClaim], TraceJudge | None]:
    """(the claims kept, each judged one ``entailed``; the vetoed ones as rejected
    claims; what the judge did, for the trace, or None when it was not asked)."""
    asked = [c for c in claims if c.level == "supported" and any(x.quote.strip() for x in c.citations)]
    if judge is None or not judge.available or not asked:
        return list(claims), [], None
    outcome = await judge.judge([JudgeItem(c.text, [x.quote for x in c.citations if x.quote.strip()]) for c in asked])
    verdicts = {c.id: j for c, j in zip(asked, outcome.judgements, strict=True)}
    kept: list[Claim] = []
    vetoed: list[RejectedClaim] = []
    for claim in claims:
        judgement = verdicts.get(claim.id)
        if judgement is None:
            kept.append(claim)
        elif judgement.verdict == "entailed":
            kept.append(claim.model_copy(update={"level": "entailed"}))
        else:
            why = f"the verifier model judged it {judgement.verdict.replace('_', ' ')}"
            reason = f"{why}: {judgement.reason}" if judgement.reason else why
            log.info("claim %s vetoed by the entailment judge (%s): %.120s", claim.id, judgement.verdict, claim.text)
            vetoed.append(RejectedClaim.of(claim.text, reason, iteration=iteration, engine="model", category="judge"))
    log.info("entailment judge on %d claims: %s (%d tokens)", len(asked), outcome.status, outcome.tokens)
    entailed = sum(1 for j in outcome.judgements if j is not None and j.verdict == "entailed")
    trace = TraceJudge(statements=len(asked), entailed=entailed, vetoed=len(vetoed), status=outcome.status,
                       model=outcome.model, tokens=outcome.tokens)
    return kept, vetoed, trace
