"""The report written by the model, kept only as far as the claims bear it out.

The model gets the refined question, the checklist with its coverage, the verified
claims (id, text, confidence, contradiction flag) and the sources, each inside a
data block, and answers with a :class:`ReportDraft`: an executive summary and one
section per checklist item, sentence by sentence, each sentence with the claim ids
it rests on. Then code disposes (verify.py): sentences that fail the check are
re-asked once and otherwise removed. What the model left empty or lost entirely is
written offline, and the report says which parts: a summary with no surviving
sentence, a section for an item that claims address but the model did not answer.
No model, no verified claim to write from, an answer that fails validation (after
the LLM layer's one re-ask), a spent token budget or a model provider unavailable
after its retries: the whole report is written offline, and says why.

The request's ``report_depth`` (depth.py): brief asks for a short report and keeps at
most the first few surviving sentences of the summary and of each section; detailed
asks for the executive summary in one call and each section in its own call from that
section's claims, and verifies all their sentences together, as one draft's. A report
whose one prompt does not fit the model's context window (``LLM_CONTEXT_TOKENS``) is
written the detailed way too, each call showing the most confident claims that fit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from shared.research.envelope import ChecklistItem, Claim, JobEnvelope
from shared.research.events import CouncilReview, ResearchResult
from shared.verification.judge import Judge
from shared.llm.engine import JobLLM
from shared.llm.budget import estimate_tokens
from shared.llm.context import fixed_texts
from shared.llm.providers import LLMInvalidOutput
from shared.llm.prompting import block

from services.synthesis import prompts
from services.synthesis.render import Body, Section, Sentence
from services.synthesis.report import (
    Draft,
    Prepared,
    assemble,
    offline_body,
    offline_section,
    offline_summary,
    placement,
    prepare,
)
from services.synthesis.relevance import addresses
from services.synthesis.depth import capped, rules_of
from services.synthesis.schemas import DraftParagraph, DraftSection, ReportDraft
from services.synthesis.levels import NO_MODEL, judge_status, summarize
from services.synthesis.verify import Verdict, claims_block, verify_sentences

__all__ = ["REPORT_TOOL", "write_report"]

log = logging.getLogger(__name__)

REPORT_TOOL = "write_report"
REPORT_MAX_TOKENS = 8_192
# Handed to the LLM layer as the "offline answer": it comes back only when no model
# call was made (no provider, the job's token budget is spent, or the provider is unavailable).
_NO_DRAFT = ReportDraft.model_construct(executive_summary=[], sections=[])
JUDGE_DOWN = "not run: the model provider was unavailable (sentences are checked by code only)"


def report_prompt(prepared: Prepared, *, checklist: Sequence[ChecklistItem] | None = None,
                  claims: Sequence[Claim] | None = None, note: str = "") -> str:
    """The report prompt over the whole checklist and every claim, or (a section of a
    detailed report) over the ``checklist`` and ``claims`` given; ``note`` appended."""
    env = prepared.envelope
    items = prepared.checklist if checklist is None else checklist
    shown = prepared.claims if claims is None else claims
    question = env.plan.refined_question if env.plan else env.request.question
    listed = "\n".join(
        block("checklist_item", item.description, id=item.id, coverage=item.status.value,
              evidence=", ".join(c.id for c in shown if addresses(item, c)) or "none")
        for item in items
    ) or "(no checklist: answer the question as a whole)"
    cited = {c.source_id for claim in shown for c in claim.citations}
    sources = "\n".join(block("source", f"{s.title} ({s.url})", id=s.id)
                        for s in env.scored_sources if s.id in cited) or "(none)"
    return prompts.REPORT_PROMPT.format(question=block("question", question), checklist=listed,
                                        claims=claims_block(shown), sources=sources) + note


async def _ask(prepared: Prepared, llm: JobLLM, prompt: str | None = None) -> tuple[ReportDraft | None, str | None]:
    """The model's draft, or None and why not. ``prompt``: the whole report's by default."""
    if prompt is None:
        prompt = report_prompt(prepared, note=rules_of(prepared.envelope).prompt_note())
    try:
        draft = await llm.structured(
            ReportDraft, system=prompts.REPORT_SYSTEM, prompt=prompt, tool_name=REPORT_TOOL,
            offline=lambda: _NO_DRAFT, max_tokens=REPORT_MAX_TOKENS,
        )
    except LLMInvalidOutput as exc:
        log.warning("the model's report is unusable (%s): writing it offline", exc)
        return None, f"its answer did not validate: {exc}"
    if draft is _NO_DRAFT:  # the LLM layer made no call: the budget has no room for it, or the provider is down
        if llm.unavailable:
            return None, "the model provider was unavailable"
        return None, ("the job's cost limit was reached" if llm.cost_hit and not llm.budget_hit
                      else "the job's token budget was spent")
    return draft, None


SUMMARY_ONLY = ("\nThis call writes only the executive summary of a longer report whose sections are written "
                "separately: leave sections empty.")
SECTION_ONLY = ("\nThis call writes one section of a longer report: the section for the one checklist item "
                "given, using every claim listed that answers it; executive_summary: one short sentence.")


async def _ask_by_section(prepared: Prepared, llm: JobLLM) -> tuple[ReportDraft | None, str | None, list[str]]:
    """A detailed report: the executive summary in one call, then each checklist item
    any claim answers in its own call from that item's claims, so no call's answer has
    to hold the whole report. A section whose call fails is written offline (named in
    the third value); a failed summary call fails the whole draft, as a single call would."""
    shown = await _fitting(prepared, llm, prepared.claims, note=SUMMARY_ONLY)
    summary, why_not = await _ask(prepared, llm, report_prompt(prepared, claims=shown, note=SUMMARY_ONLY))
    if summary is None:
        return None, why_not, []
    sections: list[DraftSection] = []
    failed: list[str] = []
    for item in prepared.checklist:
        own = [c for c in prepared.claims if addresses(item, c)]
        if not own:
            continue
        own = await _fitting(prepared, llm, own, checklist=[item], note=SECTION_ONLY)
        draft, why = await _ask(prepared, llm, report_prompt(prepared, checklist=[item], claims=own,
                                                             note=SECTION_ONLY))
        if draft is None:
            log.warning("the model's section %s of a detailed report is missing (%s): written offline", item.id, why)
            failed.append(item.id)
            continue
        # Only this item's section is taken; any other the model wrote is ignored.
        sections += [s for s in draft.sections if s.checklist_item_id == item.id][:1]
    return ReportDraft.model_construct(executive_summary=summary.executive_summary, sections=sections), None, failed


async def _fits_whole(prepared: Prepared, llm: JobLLM) -> bool:
    """The whole report's prompt fits the model's context window with room for its answer."""
    prompt = report_prompt(prepared, note=rules_of(prepared.envelope).prompt_note())
    return await llm.engine.window.fits(*fixed_texts(ReportDraft, system=prompts.REPORT_SYSTEM, tool_name=REPORT_TOOL),
                                        prompt, max_tokens=REPORT_MAX_TOKENS)


async def _fitting(prepared: Prepared, llm: JobLLM, claims: Sequence[Claim], *,
                   checklist: Sequence[ChecklistItem] | None = None, note: str = "") -> list[Claim]:
    """``claims`` in their order, the least confident left out until the prompt over them
    fits the model's context window (one is always kept: the engine refuses a prompt that
    still does not fit, and the part is written offline)."""
    fixed = fixed_texts(ReportDraft, system=prompts.REPORT_SYSTEM, tool_name=REPORT_TOOL)
    room = await llm.engine.window.room(REPORT_MAX_TOKENS)
    kept = list(claims)
    while len(kept) > 1 and estimate_tokens(*fixed, report_prompt(prepared, checklist=checklist, claims=kept,
                                                                  note=note)) > room:
        kept.remove(min(kept, key=lambda c: c.confidence_score))
    if len(kept) < len(claims):
        log.info("report call%s: %d of %d claims shown, the most confident, to fit the context window",
                 f" for {checklist[0].id}" if checklist else "", len(kept), len(claims))
    return kept


def _flatten(draft: ReportDraft, known_items: set[str]) -> tuple[list[Sentence], list[tuple[str, int]], int]:
    """Every sentence with where it goes: ("summary" or an item id, paragraph number).
    Sections for checklist items that do not exist are dropped; their sentences counted."""
    sentences: list[Sentence] = []
    where: list[tuple[str, int]] = []
    dropped = 0

    def add(part: str, paragraphs: Sequence[DraftParagraph]) -> None:
        for p, paragraph in enumerate(paragraphs):
            for s in paragraph.sentences:
                sentences.append(Sentence(text=s.text, claim_ids=list(s.claim_ids)))
                where.append((part, p))

    add("summary", draft.executive_summary)
    seen: set[str] = set()
    for section in draft.sections:
        if section.checklist_item_id not in known_items or section.checklist_item_id in seen:
            dropped += sum(len(p.sentences) for p in section.paragraphs)
            continue
        seen.add(section.checklist_item_id)
        add(section.checklist_item_id, section.paragraphs)
    return sentences, where, dropped


def _paragraphs(part: str, where: Sequence[tuple[str, int]], verdict: Verdict) -> list[list[Sentence]]:
    out: dict[int, list[Sentence]] = {}
    for pos, (p_part, p) in enumerate(where):
        if p_part == part and pos in verdict.kept:
            out.setdefault(p, []).append(verdict.kept[pos])
    return [out[p] for p in sorted(out)]


def _body(prepared: Prepared, where: Sequence[tuple[str, int]], verdict: Verdict) -> tuple[Body, list[str]]:
    rules = rules_of(prepared.envelope)
    offline_parts: list[str] = []
    summary = capped(_paragraphs("summary", where, verdict), rules.summary_sentences)
    if not summary:
        summary = offline_summary(prepared)
        offline_parts.append("the executive summary")
    placed = placement(prepared.checklist, prepared.claims)
    sections: list[Section] = []
    for item in prepared.checklist:
        paragraphs = capped(_paragraphs(item.id, where, verdict), rules.section_findings)
        if paragraphs:
            sections.append(Section(item=item, paragraphs=paragraphs))
        elif any(addresses(item, c) for c in prepared.claims):
            sections.append(offline_section(item, prepared, placed))
            offline_parts.append(f'the section "{item.description}"')
        else:
            sections.append(Section(item=item))
    body = Body(summary=summary, sections=sections, summary_offline="the executive summary" in offline_parts,
                label_offline=True)
    return body, offline_parts


async def write_report(envelope: JobEnvelope, llm: JobLLM, *, partial_reason: str | None, findings_max: int,
                       min_support: float, council: Sequence[CouncilReview] = (), judge: Judge | None = None,
                       judge_off: str = NO_MODEL) -> ResearchResult:
    """The job's result, its prose written by the model where the model's sentences
    survive verification (and the ``judge``'s veto, when one is given) and offline
    elsewhere. ``judge_off`` says why there is no judge, for the methodology."""
    prepared = prepare(envelope, findings_max=findings_max)
    if llm.offline:
        draft, why_not = None, None
    elif not prepared.claims:
        # Without a verified claim every factual sentence would be removed: no call.
        draft, why_not = None, "there was no verified claim to write from"
    elif rules_of(envelope).section_calls or not await _fits_whole(prepared, llm):
        # Detailed, or too long for the context window in one call: a call per section.
        draft, why_not, _failed = await _ask_by_section(prepared, llm)
    else:
        draft, why_not = await _ask(prepared, llm)
        if draft is None and not llm.offline and not await _fits_whole(prepared, llm):
            # Refused for length by a server whose window proved smaller than assumed: a call per section.
            draft, why_not, _failed = await _ask_by_section(prepared, llm)
    prepared.envelope = llm.with_degraded(envelope)  # the report says if this stage found the provider unavailable
    if draft is None:
        body = offline_body(prepared)
        # A configured judge that the provider being down kept from running says so.
        why = JUDGE_DOWN if judge is not None else judge_off
        unjudged = (summarize(body, envelope.claims, envelope.rejected_claims, judge=(why, None, 0, 0))
                    if llm.unavailable else None)
        return assemble(prepared, Draft(body=body, offline_parts=["the whole report"], fallback_reason=why_not,
                                        verification=unjudged),
                        partial_reason=partial_reason, council=council)
    sentences, where, dropped = _flatten(draft, {i.id for i in prepared.checklist})
    verdict = await verify_sentences(sentences, prepared.claims, llm, min_support=min_support, judge=judge,
                                     parts=[part for part, _ in where])
    prepared.envelope = llm.with_degraded(envelope)
    body, offline_parts = _body(prepared, where, verdict)
    removed = verdict.removed_by()
    if dropped:
        removed["placement"] = removed.get("placement", 0) + dropped
    available = judge is not None and judge.available
    summary = summarize(body, envelope.claims, envelope.rejected_claims, removed=removed,
                        judge=judge_status(available, verdict.judge, why_not=judge_off))
    written = Draft(body=body, writer=llm.label, offline_parts=offline_parts,
                    sentences_removed=len(verdict.removed) + dropped, sentences_reasked=verdict.reasked,
                    verification=summary)
    return assemble(prepared, written, partial_reason=partial_reason, council=council)


