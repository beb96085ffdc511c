"""Checklist coverage judged against verified claims, not counted.

With a model, one call judges every checklist item against the verified claims (ids
and text; claims too many for one call's context window are shared among several
calls, and an item is as covered as its best share says): satisfied, partial or open, with the claim ids that answer it and a
one-line reason. Without one (or when its answer is invalid) the offline engine's
term-matching rule answers (:func:`assess_coverage`). Either way a deterministic rule has the last word: an
item's evidence is only the claims named for it that exist and answer it by the
coverage rule (shared.research.claims.answering_claims: they share enough of its subject
terms), and it is never satisfied without one. An item judged satisfied with none
left becomes partial when claims were named for it (ones that do not exist, or that
do not answer it; the reason says which), else open. A partial or open judgement
stands as it is (either leaves the item a knowledge gap), with the same evidence rule:
a claim that does not answer an item is never listed as its evidence, so the report
never files it under that item.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from services.scoring import prompts
from services.scoring.schemas import CoverageAnswer, ItemJudgement
from shared.research.claims import answering_claims
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus
from shared.llm.engine import JobLLM
from shared.llm.context import fixed_texts, pack, split_on_overflow
from shared.llm.providers import LLMContextExceeded, LLMInvalidOutput
from shared.llm.prompting import block

log = logging.getLogger(__name__)


def assess_coverage(checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> list[ChecklistItem]:
    """The completeness check, offline: SATISFIED with two or more matching claims, PARTIAL
    with one, UNSATISFIED with none (see :func:`claim_matches_item`); ``evidence``
    lists the matching claim ids. The items given are not modified."""
    out: list[ChecklistItem] = []
    for item in checklist:
        evidence = answering_claims(item, claims)
        status = (CoverageStatus.SATISFIED if len(evidence) >= 2
                  else CoverageStatus.PARTIAL if evidence
                  else CoverageStatus.UNSATISFIED)
        out.append(item.model_copy(update={"status": status, "evidence": evidence}))
    return out

__all__ = ["apply_judgements", "coverage_prompt", "enforce", "judge_coverage", "merge_judgements", "offline_coverage"]

_STATUS = {
    "satisfied": CoverageStatus.SATISFIED,
    "partial": CoverageStatus.PARTIAL,
    "open": CoverageStatus.UNSATISFIED,
}
REASON_MAX_CHARS = 200
COVERAGE_MAX_TOKENS = 2048


def offline_coverage(checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> list[ChecklistItem]:
    """The offline rule (claims sharing the item's subject terms), with its reason."""
    out: list[ChecklistItem] = []
    for item in assess_coverage(checklist, claims):
        n = len(item.evidence)
        reason = (f"offline rule: {n} verified claim{'s' if n != 1 else ''} share its subject terms"
                  if n else "offline rule: no verified claim shares its subject terms")
        out.append(item.model_copy(update={"reason": reason}))
    return out


def coverage_prompt(question: str, checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> str:
    return prompts.COVERAGE_PROMPT.format(
        question=block("question", question),
        checklist=block("checklist", "\n".join(f"{item.id}: {item.description}" for item in checklist)),
        claims="\n".join(block("claim", c.text, id=c.id) for c in claims),
    )


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_MAX_CHARS else text[: REASON_MAX_CHARS - 1] + "…"


def apply_judgements(
    checklist: Sequence[ChecklistItem],
    judgements: Sequence[ItemJudgement],
    claims: Sequence[Claim],
    fallback: Sequence[ChecklistItem],
) -> list[ChecklistItem]:
    """The model's judgements under the rule of the module doc. An item the model did
    not judge keeps its ``fallback`` (offline) assessment, and says so."""
    by_item: dict[str, ItemJudgement] = {}
    for j in judgements:
        by_item.setdefault(j.item_id.strip(), j)
    offline = {item.id: item for item in fallback}
    out: list[ChecklistItem] = []
    for item in checklist:
        judged = by_item.get(item.id)
        if judged is None:
            base = enforce([offline.get(item.id, item)], claims)[0]
            out.append(base.model_copy(update={"reason": f"not judged by the model; {base.reason or 'offline rule'}"}))
            continue
        named = list(dict.fromkeys(c.strip() for c in judged.claim_ids if c.strip()))
        status, evidence, why = _rule(item, _STATUS[judged.status], named, claims)
        reason = (_one_line(f"judged satisfied, but {why}") if why
                  else _one_line(judged.reason) or f"judged {judged.status}")
        out.append(item.model_copy(update={"status": status, "evidence": evidence, "reason": reason}))
    return out


def _rule(item: ChecklistItem, status: CoverageStatus, named: Sequence[str],
          claims: Sequence[Claim]) -> tuple[CoverageStatus, list[str], str | None]:
    """(status, evidence, why a satisfied judgement did not stand) for an item judged
    ``status`` on the claim ids ``named``: the evidence is those that exist and answer it."""
    known = {c.id: c for c in claims}
    existing = [known[c] for c in named if c in known]
    evidence = answering_claims(item, existing, judged=True)
    if status is not CoverageStatus.SATISFIED or evidence:
        return status, evidence, None
    if existing:
        ids = ", ".join(c.id for c in existing[:5])
        why = f"the claims it names ({ids}) are not about it (fewer than two of its subject terms)"
        return CoverageStatus.PARTIAL, [], why
    if named:
        return CoverageStatus.PARTIAL, [], f"none of the claims it names ({', '.join(named[:5])}) is a verified claim"
    return CoverageStatus.UNSATISFIED, [], "no verified claim answers it"


def enforce(checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> list[ChecklistItem]:
    """The rule alone, for an assessment that did not come from :func:`apply_judgements`."""
    out = []
    for item in checklist:
        status, evidence, why = _rule(item, item.status, item.evidence, claims)
        update: dict[str, object] = {"status": status, "evidence": evidence}
        if why:
            update["reason"] = _one_line(f"{item.reason or 'satisfied'}, but {why}")
        out.append(item.model_copy(update=update))
    return out


async def judge_coverage(
    question: str, checklist: Sequence[ChecklistItem], claims: Sequence[Claim], llm: JobLLM,
) -> tuple[list[ChecklistItem], list[str]]:
    """The assessed checklist and notes on what was judged offline."""
    fallback = offline_coverage(checklist, claims)
    if llm.offline or not checklist:
        return enforce(fallback, claims), []
    if not claims:
        # Nothing can answer an item: no call needed to say so.
        return [item.model_copy(update={"status": CoverageStatus.UNSATISFIED, "evidence": [],
                                        "reason": "no verified claim yet"}) for item in checklist], []
    answered_offline = False

    def offline() -> CoverageAnswer:
        nonlocal answered_offline
        answered_offline = True
        return CoverageAnswer(items=[])

    async def ask(group: list[Claim]) -> CoverageAnswer:
        return await llm.structured(
            CoverageAnswer, system=prompts.COVERAGE_SYSTEM, prompt=coverage_prompt(question, checklist, group),
            tool_name=prompts.COVERAGE_TOOL, offline=offline, max_tokens=COVERAGE_MAX_TOKENS,
        )

    # The claims are the long part: as many a call as the context window holds, every
    # call judging every item on its share (an item is as covered as its best share says).
    fixed = fixed_texts(CoverageAnswer, system=prompts.COVERAGE_SYSTEM, tool_name=prompts.COVERAGE_TOOL)
    groups = pack(list(claims), lambda group: (*fixed, coverage_prompt(question, checklist, group)),
                  room=await llm.engine.window.room(COVERAGE_MAX_TOKENS))
    if len(groups) > 1:
        log.info("coverage: %d claims judged in %d calls to fit the context window", len(claims), len(groups))
    try:
        parts = await asyncio.gather(*(split_on_overflow(g, ask, what="coverage batch") for g in groups))
    except LLMInvalidOutput as exc:
        log.warning("coverage answer unusable (%s): offline rule", exc)
        why = "prompt too long for the context window" if isinstance(exc, LLMContextExceeded) else "model output invalid"
        return enforce(fallback, claims), [f"coverage: offline ({why})"]
    if answered_offline:
        return enforce(fallback, claims), ["coverage: offline (token budget spent)"]
    judged = merge_judgements([answer.items for part in parts for _, answer in part])
    return apply_judgements(checklist, judged, claims, fallback), []


_RANK = {"satisfied": 2, "partial": 1, "open": 0}


def merge_judgements(answers: Sequence[Sequence[ItemJudgement]]) -> list[ItemJudgement]:
    """One judgement per item from calls that each saw a share of the claims: the most
    covered status any gave, the claim ids every call named for it, that call's reason."""
    best: dict[str, ItemJudgement] = {}
    named: dict[str, list[str]] = {}
    for items in answers:
        for j in items:
            key = j.item_id.strip()
            named.setdefault(key, []).extend(j.claim_ids)
            if key not in best or _RANK[j.status] > _RANK[best[key].status]:
                best[key] = j
    return [j.model_copy(update={"claim_ids": list(dict.fromkeys(named[k]))}) for k, j in best.items()]
