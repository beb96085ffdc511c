"""The offline synthesis: an extractive markdown report and seed 001's output object.

Guarantees:

* Every unescaped ``[n]`` in the report resolves: it is the n-th entry of the
  report's Sources list and ``output.sources[n-1]`` (id ``src_n``). Sources are
  numbered in order of first citation and only cited sources are listed.
* Text taken from sources or the request that happens to look like ``[n]`` is
  escaped (``\\[n\\]``) so that it can never be mistaken for a citation;
  :func:`citation_numbers` skips escaped brackets.
* Each finding is printed as the claim text exactly, in quotes, and ends with its
  citations. A claim with no supporting source in range is left out: it cannot be
  cited.
* The report says it was written by the offline engine without an LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shared.envelope import (
    ChecklistItem,
    Claim,
    CoverageStatus,
    JobEnvelope,
    ScoredSource,
)
from shared.events import ChecklistCoverage, OutputSource, ResearchOutput, ResearchResult
from shared.text import sentence_spans, terms

from services.scoring.claims import item_terms, knowledge_gaps
from services.scoring.engine import JobConfidenceCalculator, valid_indices

ENGINE = "offline"
OFFLINE_NOTE = (
    "> Written by the offline engine without an LLM: this report is extractive. Every "
    "finding is a sentence quoted from a source, grouped by checklist item."
)
SUMMARY_FINDINGS = 3

_CITATION = re.compile(r"(?<!\\)\[(\d+)\]")
_BRACKETED_NUMBER = re.compile(r"\[(\d+)\]")


def citation_numbers(markdown: str) -> set[int]:
    """Every citation number used in ``markdown`` (escaped ``\\[n\\]`` excluded)."""
    return {int(m.group(1)) for m in _CITATION.finditer(markdown)}


def _escape(text: str) -> str:
    return _BRACKETED_NUMBER.sub(r"\\[\1\\]", " ".join(text.split()))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _pct(value: float) -> str:
    return f"{round(value * 100)}%"


class _Citations:
    """Numbers sources in order of first citation and keeps the quotes shown for them."""

    def __init__(self, sources: Sequence[ScoredSource]) -> None:
        self._sources = sources
        self.order: list[int] = []  # source indices; position + 1 is the number
        self.quotes: dict[int, list[tuple[str, str]]] = {}  # index -> [(locator, quote)]

    def number(self, index: int) -> int:
        if index not in self.quotes:
            self.order.append(index)
            self.quotes[index] = []
        return self.order.index(index) + 1

    def add_quote(self, index: int, locator: str, quote: str) -> None:
        self.number(index)
        if (locator, quote) not in self.quotes[index]:
            self.quotes[index].append((locator, quote))

    def cite(self, indices: Sequence[int], claim: Claim | None = None) -> str:
        """``[n][m]`` for the sources at ``indices``; a claim's quotes are recorded."""
        valid = valid_indices(indices, len(self._sources))
        numbers = sorted(self.number(i) for i in valid)
        if claim is not None:
            for citation in claim.citations:
                for i in valid:
                    if self._sources[i].id == citation.source_id:
                        self.add_quote(i, citation.locator, citation.quote)
                        break
        return "".join(f"[{n}]" for n in numbers)


def _fallback_quote(source: ScoredSource, claims: Sequence[Claim]) -> tuple[str, str]:
    """A quote for a source cited without one (e.g. only as contradicting): one of
    its citations elsewhere, else its first evidence snippet, else its first sentence."""
    for claim in claims:
        for citation in claim.citations:
            if citation.source_id == source.id:
                return citation.locator, citation.quote
    if source.digest is not None and source.digest.evidence_snippets:
        snippet = source.digest.evidence_snippets[0]
        return snippet.locator, snippet.text
    spans = sentence_spans(source.text)
    return "", source.text[spans[0][0]:spans[0][1]] if spans else source.text


def _addresses(item: ChecklistItem, claim: Claim) -> bool:
    return claim.id in item.evidence or item.id in claim.checklist_item_ids


def _placement(checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> dict[str, str]:
    """Claim id -> the checklist item it is listed under: of the items it addresses,
    the one sharing most subject terms with it, the earliest on ties. Listing each
    claim once keeps comparison checklists, whose items overlap, from repeating it."""
    subjects = [(item, item_terms(item.description)) for item in checklist]
    placed: dict[str, str] = {}
    for claim in claims:
        own = set(terms(claim.text))
        best: tuple[int, str] | None = None
        for item, subject in subjects:
            if _addresses(item, claim):
                shared = len(own & subject)
                if best is None or shared > best[0]:
                    best = (shared, item.id)
        if best is not None:
            placed[claim.id] = best[1]
    return placed


def _bullet(claim: Claim, citer: _Citations) -> str:
    return f'- "{_escape(claim.text)}" (confidence {_pct(claim.confidence_score)}) {citer.cite(claim.supporting_indices, claim)}'


def build_report(envelope: JobEnvelope, *, partial_reason: str | None) -> ResearchResult:
    """The final result of a job from its envelope (scored sources, scored claims,
    assessed checklist)."""
    sources = envelope.scored_sources
    claims = [c for c in envelope.claims if valid_indices(c.supporting_indices, len(sources))]
    checklist = envelope.plan.checklist if envelope.plan else []
    confidence = envelope.confidence or JobConfidenceCalculator().calculate(envelope.claims, sources)
    gaps = knowledge_gaps(checklist) if checklist else list(envelope.knowledge_gaps)
    citer = _Citations(sources)
    question = " ".join(envelope.request.question.split())

    plan_engine = envelope.plan.engine if envelope.plan else ENGINE
    note = OFFLINE_NOTE if plan_engine == ENGINE else f"> Planned by {plan_engine}. " + OFFLINE_NOTE[2:]
    lines: list[str] = [f"# {_escape(question)}", "", note, ""]
    if envelope.plan and envelope.plan.refined_question != question:
        lines += [f"Refined question: {_escape(envelope.plan.refined_question)}", ""]
    if partial_reason is not None:
        lines += [f"**Partial report:** {_escape(partial_reason) or 'no reason was given.'}", ""]

    # Summary.
    covered = sum(1 for i in checklist if i.status is CoverageStatus.SATISFIED)
    partly = sum(1 for i in checklist if i.status is CoverageStatus.PARTIAL)
    summary = [f"{_plural(len(claims), 'claim')} were extracted from {_plural(len(sources), 'source')}."
               if len(claims) != 1 else
               f"1 claim was extracted from {_plural(len(sources), 'source')}."]
    if checklist:
        summary.append(f"{covered} of {len(checklist)} checklist items are covered"
                       + (f" and {partly} partially." if partly else "."))
    best = sorted(claims, key=lambda c: -c.confidence_score)[:SUMMARY_FINDINGS]
    if best:
        findings = "; ".join(f'"{_escape(c.text)}" {citer.cite(c.supporting_indices, c)}' for c in best)
        summary.append(f"The best-supported findings: {findings}.")
    else:
        summary.append("No claim relevant to the question could be extracted.")
    lines += ["## Summary", "", " ".join(summary), "",
              f"Confidence: {_pct(confidence.confidence)} "
              f"({_plural(confidence.claim_count, 'claim')} from {_plural(confidence.source_count, 'source')})",
              ""]

    # One section per checklist item, strongest claims first.
    placed = _placement(checklist, claims)
    headings = {item.id: _escape(item.description) for item in checklist}
    by_confidence = sorted(claims, key=lambda c: -c.confidence_score)  # stable on ties
    for item in checklist:
        lines += [f"## {headings[item.id]}", "", f"Coverage: {item.status.value}.", ""]
        own = [c for c in by_confidence if placed.get(c.id) == item.id]
        elsewhere = [placed[c.id] for c in claims if _addresses(item, c) and placed[c.id] != item.id]
        lines += [_bullet(c, citer) for c in own]
        if elsewhere:
            where = "; ".join(dict.fromkeys(f'"{headings[i]}"' for i in elsewhere))
            if own:
                lines += ["", f"Also addressed by the findings under {where}."]
            else:
                lines.append(f"Addressed by the findings under {where}.")
        if not own and not elsewhere:
            lines.append("No evidence was found for this item.")
        lines.append("")
    rest = [c for c in by_confidence if c.id not in placed]
    if rest:
        lines += ["## Other findings" if checklist else "## Findings", ""]
        lines += [_bullet(c, citer) for c in rest]
        lines.append("")

    lines += ["## Contradictions", ""]
    disputed = [c for c in claims
                if c.contradiction_flag and valid_indices(c.contradicting_indices, len(sources))]
    if disputed:
        for c in disputed:
            lines.append(f'- "{_escape(c.text)}" is supported by {citer.cite(c.supporting_indices, c)} '
                         f"and disputed by {citer.cite(c.contradicting_indices)}.")
    else:
        lines.append("No contradictions were detected among the sources.")
    lines.append("")

    lines += ["## Gaps", ""]
    lines += [f"- {_escape(g)}" for g in gaps] if gaps else ["None: every checklist item is satisfied."]
    lines.append("")

    lines += ["## Sources", ""]
    output_sources: list[OutputSource] = []
    for n, index in enumerate(citer.order, start=1):
        source = sources[index]
        quotes = citer.quotes[index] or [_fallback_quote(source, envelope.claims)]
        locators = [loc for loc, _ in quotes if loc]
        where = f" ({'; '.join(locators)})" if locators else ""
        lines.append(f"[{n}] {_escape(source.title)} — {_escape(source.url)}{where}")
        lines += [f'> "{_escape(q)}"' for _, q in quotes]
        lines.append("")
        output_sources.append(OutputSource(
            id=f"src_{n}", type=source.retrieval_method.value, title=source.title,
            url=source.url, snippet=quotes[0][1],
        ))
    if not citer.order:
        lines += ["No source was cited.", ""]

    answer = "\n".join(lines).rstrip() + "\n"
    iterations_used = envelope.iteration + 1
    ran_out = iterations_used >= envelope.request.max_iterations
    output = ResearchOutput(
        trace_id=envelope.job_id,
        answer=answer,
        sources=output_sources,
        checklist_coverage=ChecklistCoverage(
            satisfied=[i.description for i in checklist if i.status is CoverageStatus.SATISFIED],
            gaps=gaps,
        ),
        iterations_used=iterations_used,
        status="max_iterations_reached" if gaps and ran_out else "completed",
    )
    return ResearchResult(
        report=answer,
        output=output,
        scored_sources=list(sources),
        claims=list(envelope.claims),
        confidence=confidence,
        usage=envelope.usage,
        partial=partial_reason is not None,
        partial_reason=partial_reason,
        # What did model work: the planner's engine when it used one (the report
        # itself is always the extractive engine's, see OFFLINE_NOTE).
        engine=ENGINE if plan_engine == ENGINE else f"{plan_engine}+offline"[:40],
    )
