"""What the checks did, counted: the result's :class:`VerificationSummary`.

Kept sentences are counted by the level they are shown at (``quoted``,
``entailed``, ``supported``; an uncited linking sentence has none and is not
counted; a finding listed as a bullet, at its claim's level),
removed sentences by the category of the check that refused them, kept claims by
level and refused claims by category. ``judge`` says whether the entailment judge
ran on the report, and if not, why not: a report never claims a check that did not run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from shared.research.envelope import Claim, RejectedClaim
from shared.research.events import TraceJudge, VerificationSummary
from shared.verification.judge import JudgeOutcome

from services.synthesis.render import Body, sentence_levels

__all__ = ["NO_MODEL", "TURNED_OFF", "JudgeRun", "judge_status", "summarize", "trace_of"]

NO_MODEL = "not run: no model configured (sentences are checked by code only)"
TURNED_OFF = "not run: turned off (RESEARCH_VERIFIER_MODEL=off)"
NOTHING_TO_JUDGE = "not needed: every checked sentence is a quote"


JudgeRun = tuple[str, str | None, int, int]  # (status, model, tokens, statements sent)


def judge_status(available: bool, outcome: JudgeOutcome | None, *, why_not: str = NO_MODEL) -> JudgeRun:
    """(status, model, tokens, statements sent) of the judge's run on the report."""
    if not available:
        return why_not, None, 0, 0
    if outcome is None:
        return NOTHING_TO_JUDGE, None, 0, 0
    return outcome.status, outcome.model, outcome.tokens, len(outcome.judgements)


def summarize(body: Body, claims: Sequence[Claim], rejected: Sequence[RejectedClaim], *,
              removed: Mapping[str, int] | None = None, judge: JudgeRun = (NO_MODEL, None, 0, 0),
              ) -> VerificationSummary:
    status, model, tokens, judged = judge
    return VerificationSummary(
        sentences=sentence_levels(body, claims),
        sentences_removed=dict(removed or {}),
        claims=dict(Counter(c.level or "unchecked" for c in claims)),
        claims_rejected=dict(Counter(r.category or "other" for r in rejected)),
        judge=status, judge_model=model, judge_tokens=tokens, judged=judged,
    )


def trace_of(summary: VerificationSummary) -> TraceJudge | None:
    """The report judge's run as the trace shows it; None when no judge was asked."""
    if not summary.judged:
        return None
    return TraceJudge(statements=summary.judged, entailed=summary.sentences.get("entailed", 0),
                      vetoed=summary.sentences_removed.get("judge", 0), status=summary.judge,
                      model=summary.judge_model, tokens=summary.judge_tokens)
