"""The report's markdown, rendered deterministically from its structure.

What the model (or the offline writer) contributes is prose, sentence by sentence,
each sentence with the ids of the claims it rests on. Everything else is code's:

* ``[n]`` markers are computed from claim ids -> the claims' supporting sources;
  sources are numbered in order of first citation, and the Sources list holds exactly
  the cited sources, each with the quoted passages and their ``char:s-e`` locators.
  Any ``[n]`` found in text (a model's own marker, a title, a quote) is stripped from
  prose or escaped (``\\[n\\]``) so it can never pass for a citation.
* Headings, coverage, Verified Findings, contradictions, unknowns, confidence,
  methodology and council sections come from data, not from model text.

How far each sentence was checked is shown (``Sentence.level``, ``Claim.level``):

* ``quoted`` (its text is a source's words): in curly quotation marks, ``“…” [n]``;
* ``entailed`` (the code's checks passed and a verifier model judged its quotes to
  entail it): plain prose, ``… [n]``;
* ``supported`` (the code's checks only): plain prose with a dagger after its
  citation, ``… [n]†``, and a one-line legend under the executive summary, written
  only when a dagger appears;
* a connective (``level`` None, no claim) states nothing and carries no mark.

Quotation marks and daggers are added here, never taken from the writer: a model's
sentence loses a dagger and quotation marks around its whole text.

The plan is the planner's wording, never a finding: the refined question, checklist
items (the section headings), queries and council reasons are shown as such, each
passed through :func:`plain` (no links, tags, emphasis or heading marks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.research.claims import valid_indices
from shared.research.envelope import LEVELS, ChecklistItem, Claim, CoverageStatus, JobConfidence, Level, ScoredSource
from shared.research.events import CouncilReview, OutputSource, VerifiedFinding
from shared.research.memory import Insight

from services.synthesis.passages import disputing_quote, fallback_quote
from services.synthesis.wording import CLOSE_QUOTE as _CLOSE
from services.synthesis.wording import OPEN_QUOTE as _OPEN
from services.synthesis.wording import (
    LEVEL_MARK,
    escape,
    pct,
    plain,
    plan_text,
    plural,
    query_text,
    strip_markers,
    unquoted,
)


__all__ = [
    "LEVEL_LEGEND",
    "OFFLINE_PART",
    "PLAN_NOTE",
    "Body",
    "Citations",
    "Paragraph",
    "ReportFacts",
    "Section",
    "Sentence",
    "level_counts",
    "level_of",
    "levels_phrase",
    "render",
    "sentence_levels",
]

SEE_ALSO_QUOTED = 3  # findings quoted under an item whose answers were all placed elsewhere


# -- the structure --------------------------------------------------------------------


@dataclass
class Sentence:
    text: str
    claim_ids: list[str] = field(default_factory=list)
    # How it was checked (shared.research.envelope.Level): "quoted", "entailed" or "supported";
    # None for a connective, which states nothing to check.
    level: str | None = None


Paragraph = list[Sentence]


@dataclass
class Section:
    """The answer to one checklist item (``item`` None: findings no item claims)."""

    item: ChecklistItem | None
    paragraphs: list[Paragraph] = field(default_factory=list)
    findings: list[Claim] = field(default_factory=list)  # offline: listed as quoted bullets
    offline: bool = False
    see_also: list[tuple[Claim, str]] = field(default_factory=list)  # (claim, heading it is listed under)


@dataclass
class Body:
    summary: list[Paragraph]
    sections: list[Section]
    summary_offline: bool = False
    label_offline: bool = False  # a model wrote the rest: say so where the offline engine wrote a part

OFFLINE_PART = "*Written offline: the model's text for this part did not survive verification or was missing.*"
LEVEL_LEGEND = (f"*{LEVEL_MARK} Checked by code only: the sentence passed the deterministic checks against the "
                "quotes of the claims it cites, but no verifier model judged that those quotes entail it.*")
PLAN_NOTE = ("*The section headings below are the research plan's checklist items, in the planner's wording: "
             "what the answer had to cover, not findings.*")
UNKNOWNS_NOTE = "*Open checklist items and the searches run for them, in the planner's wording.*"
COUNCIL_NOTE = "*The reviewing models' own words, not checked against the sources.*"


# -- levels ---------------------------------------------------------------------------------


def level_of(claim: Claim) -> Level:
    """The claim's check level; for a claim made before levels existed, ``quoted``
    when its text is one of its quotes (spacing aside), else ``supported`` (it passed
    the claim check, which is deterministic)."""
    if claim.level is not None:
        return claim.level
    text = " ".join(claim.text.split())
    return "quoted" if any(" ".join(c.quote.split()) == text for c in claim.citations) else "supported"


def _sentence_level(sentence: Sentence) -> str | None:
    """What a sentence is shown as: its level; one that cites claims without a level
    passed the writer's deterministic check, so ``supported``; a connective none."""
    return sentence.level or ("supported" if sentence.claim_ids else None)


def level_counts(levels: Sequence[str | None]) -> dict[str, int]:
    """Levels counted, in the order of ``LEVELS`` (None, a connective, not counted)."""
    return {lv: n for lv in LEVELS if (n := sum(1 for x in levels if x == lv))}


def sentence_levels(body: Body, claims: Sequence[Claim]) -> dict[str, int]:
    """The body's stating sentences by the level they are shown at: the prose's
    sentences that cite claims, and the findings listed as bullets (a finding referred
    to again under another heading is not counted twice)."""
    by_id = {c.id: c for c in claims}
    levels: list[str | None] = []
    for paragraph in [*body.summary, *(p for section in body.sections for p in section.paragraphs)]:
        for sentence in paragraph:
            if sentence.claim_ids and any(cid in by_id for cid in sentence.claim_ids):
                levels.append(_sentence_level(sentence))
    levels += [level_of(c) for section in body.sections for c in section.findings]
    return level_counts(levels)


_LEVEL_WORDS = {
    "quoted": "quoted (a source's own words)",
    "entailed": "entailed (a verifier model judged their quotes to entail them)",
    "supported": f"supported (checked by code only, marked {LEVEL_MARK})",
}


def levels_phrase(counts: dict[str, int], *, explain: bool = True) -> str:
    """``3 quoted, 5 entailed, 1 supported`` (with what each means when ``explain``)."""
    return ", ".join(f"{counts[lv]} {_LEVEL_WORDS[lv] if explain else lv}" for lv in LEVELS if counts.get(lv))


@dataclass
class ReportFacts:
    """Everything the renderer shows besides the body."""

    question: str
    refined_question: str | None
    sources: Sequence[ScoredSource]
    claims: Sequence[Claim]  # the citable claims
    all_claims: Sequence[Claim]  # every claim scoring kept (for fallback quotes)
    checklist: Sequence[ChecklistItem]  # with the coverage shown (see coverage.py)
    confidence: JobConfidence
    findings: Sequence[VerifiedFinding]
    unknowns: Sequence[tuple[str, list[str]]]  # (open item or gap, queries run for it)
    methodology: Sequence[str]
    writer_note: str
    partial_reason: str | None = None
    council: Sequence[CouncilReview] = ()
    insights: Sequence[Insight] = ()  # the research memory's, most confident first


# -- citations --------------------------------------------------------------------------


class Citations:
    """Numbers sources in order of first citation and keeps the quotes shown for them."""

    def __init__(self, sources: Sequence[ScoredSource], claims: Sequence[Claim]) -> None:
        self.sources = sources
        self._by_id = {s.id: i for i, s in enumerate(sources)}
        self.claims = {c.id: c for c in claims}
        self.order: list[int] = []  # source indices; position + 1 is the number
        self.quotes: dict[int, list[tuple[str, str]]] = {}  # index -> [(locator, quote)]
        self.marked = False  # a dagger was written: the legend is due

    def number(self, index: int) -> int:
        if index not in self.quotes:
            self.order.append(index)
            self.quotes[index] = []
        return self.order.index(index) + 1

    def add_quote(self, index: int, locator: str, quote: str) -> None:
        if (locator, quote) not in self.quotes[index]:
            self.quotes[index].append((locator, quote))

    def claim_sources(self, claim: Claim) -> list[int]:
        """The sources a claim cites: its supporting sources, and any source one of its
        citations names."""
        cited = [self._by_id[c.source_id] for c in claim.citations if c.source_id in self._by_id]
        return valid_indices([*claim.supporting_indices, *cited], len(self.sources))

    def cite_claims(self, claim_ids: Sequence[str]) -> str:
        """``[n][m]`` for the sources of the claims named (unknown ids cite nothing);
        the claims' quotes are recorded for the Sources list."""
        indices: list[int] = []
        for cid in dict.fromkeys(claim_ids):
            claim = self.claims.get(cid)
            if claim is None:
                continue
            own = self.claim_sources(claim)
            for i in own:
                self.number(i)
            for citation in claim.citations:
                i = self._by_id.get(citation.source_id)
                if i is not None and i in own:
                    self.add_quote(i, citation.locator, citation.quote)
            indices.extend(own)
        return self.cite_sources(indices)

    def cite_sources(self, indices: Sequence[int]) -> str:
        numbers = sorted({self.number(i) for i in valid_indices(indices, len(self.sources))})
        return "".join(f"[{n}]" for n in numbers)


# -- sections ---------------------------------------------------------------------------


def _worded(text: str, level: str | None) -> str:
    """The text as its level shows it: a quote in quotation marks, anything else
    without marks around the whole of it (``text`` is escaped already)."""
    text = unquoted(text)
    return f"{_OPEN}{text}{_CLOSE}" if level == "quoted" else text


def _marked(marks: str, level: str | None, citer: Citations) -> str:
    """The citation marks, with the dagger after them for a sentence checked by code only."""
    if level == "supported":
        citer.marked = True
        return marks + LEVEL_MARK
    return marks


def _stated(text: str, level: str | None, marks: str, citer: Citations, between: str = "") -> str:
    """``“text”{between} [n]``, ``text{between} [n]`` or ``text{between} [n]†``."""
    tail = _marked(marks, level, citer)
    return f"{_worded(text, level)}{between}" + (f" {tail}" if tail else "")


def _prose(paragraphs: Sequence[Paragraph], citer: Citations) -> list[str]:
    lines: list[str] = []
    for paragraph in paragraphs:
        parts = []
        for s in paragraph:
            level = _sentence_level(s)
            parts.append(_stated(strip_markers(s.text), level, citer.cite_claims(s.claim_ids), citer))
        if parts:
            lines += [" ".join(parts), ""]
    return lines


def _bullet(claim: Claim, citer: Citations) -> str:
    return "- " + _stated(escape(claim.text), level_of(claim), citer.cite_claims([claim.id]), citer,
                          f" (confidence {pct(claim.confidence_score)})")


def _status_of(item: ChecklistItem) -> str:
    return {CoverageStatus.SATISFIED: "covered", CoverageStatus.PARTIAL: "partly covered",
            CoverageStatus.UNSATISFIED: "not covered"}[item.status]


def _section(section: Section, citer: Citations, *, label_offline: bool) -> list[str]:
    if section.item is None:
        lines = ["## Other findings", ""]
    else:
        lines = [f"## {plan_text(section.item.description)}", "", f"Coverage: {_status_of(section.item)}.", ""]
    if section.offline and label_offline:
        lines += [OFFLINE_PART, ""]
    lines += _prose(section.paragraphs, citer)
    if section.findings:
        lines += [_bullet(c, citer) for c in section.findings] + [""]
    if section.see_also:
        # A claim that answers several items is quoted where it was placed; elsewhere one
        # line per heading refers to it. An item with nothing of its own quotes the best
        # few, so that every item shown covered has a quoted finding under it.
        see_also = section.see_also
        if not section.findings and not section.paragraphs:
            quoted, see_also = see_also[:SEE_ALSO_QUOTED], see_also[SEE_ALSO_QUOTED:]
            lines += ["- " + _stated(escape(c.text), level_of(c), citer.cite_claims([c.id]), citer)
                      + f' (listed under "{plan_text(h)}")' for c, h in quoted] + [""]
        by_heading: dict[str, list[str]] = {}
        for claim, heading in see_also:
            by_heading.setdefault(heading, []).append(claim.id)
        if by_heading:
            lines += [f'- Also answered by {plural(len(ids), "finding")} under "{plan_text(h)}" {citer.cite_claims(ids)}'
                      for h, ids in by_heading.items()] + [""]
    if not section.paragraphs and not section.findings and not section.see_also:
        lines += ["No claim that passed the claim check answers this item.", ""]
    return lines


def _finding_level(finding: VerifiedFinding, citer: Citations) -> str:
    own = getattr(finding, "level", None)
    if own:
        return str(own)
    claim = citer.claims.get(finding.claim_id)
    return level_of(claim) if claim is not None else "supported"


_FINDING_LEVELS = {
    "quoted": "quoted: the claim is a source's own words",
    "entailed": "entailed: a verifier model judged its quotes to entail it",
    "supported": f"supported: checked by code only ({LEVEL_MARK})",
}


def _verified_findings(findings: Sequence[VerifiedFinding], citer: Citations) -> list[str]:
    lines = ["## Verified Findings", ""]
    if not findings:
        return lines + ["No claim met the bar for a verified finding (a quote found in the archived source text, "
                        "no contradicting source).", ""]
    levels = [_finding_level(f, citer) for f in findings]
    shown = "; ".join(_FINDING_LEVELS[lv] for lv in LEVELS if lv in levels)
    lines += ["Chosen by the service, not the model: the strongest claims whose quotes were found in the "
              f"archived source texts, each with its check level ({shown}).", ""]
    for n, (f, level) in enumerate(zip(findings, levels, strict=True), start=1):
        lines.append(f"{n}. " + _stated(escape(f.text), level, citer.cite_claims([f.claim_id]), citer,
                                         f" ({level}, confidence {pct(f.confidence)})"))
        for c in f.citations:
            mark = citer.cite_sources([i for i, s in enumerate(citer.sources) if s.id == c.source_id])
            lines.append(f"   > {_OPEN}{escape(c.quote)}{_CLOSE} {mark} `{c.locator}`")
    return lines + [""]


def _contradictions(facts: ReportFacts, citer: Citations) -> list[str]:
    lines = ["## Contradictions", ""]
    pairs: list[str] = []
    n_sources = len(facts.sources)
    for claim in facts.claims:
        against = valid_indices(claim.contradicting_indices, n_sources) if claim.contradiction_flag else []
        if not against:
            continue
        pairs.append(f"- **Claim:** {_worded(escape(claim.text), level_of(claim))}")
        pairs.append(f"  - *Supported by* {citer.cite_claims([claim.id])}: "
                     + "; ".join(f"{_OPEN}{escape(c.quote)}{_CLOSE}" for c in claim.citations[:2]))
        for i in against:
            source = facts.sources[i]
            locator, quote, confirmed = disputing_quote(claim, source, facts.all_claims)
            mark = citer.cite_sources([i])
            citer.add_quote(i, locator, quote)
            note = "" if confirmed else " (the closest passage quoted here; code did not find it to state the opposite)"
            pairs.append(f"  - *Disputed by* {mark}{note}: {_OPEN}{escape(quote)}{_CLOSE}")
    return lines + (pairs or ["No contradictions were detected among the sources."]) + [""]


def _confidence(facts: ReportFacts) -> list[str]:
    """The job's confidence, and the distinct insights of the research memory it rests on."""
    c = facts.confidence
    lines = ["## Confidence", "",
             f"Confidence: {pct(c.confidence)} ({plural(c.claim_count, 'claim')} from {plural(c.source_count, 'source')})", ""]
    if facts.insights:
        best = facts.insights[0]
        mean = sum(i.confidence for i in facts.insights) / len(facts.insights)
        lines += [f"It rests on {plural(len(facts.insights), 'distinct insight')} (mean confidence {pct(mean)}); "
                  f'the strongest: "{escape(best.text)}" ({pct(best.confidence)}).', ""]
    return lines


def _unknowns(facts: ReportFacts) -> list[str]:
    lines = ["## What remains unknown", ""]
    if not facts.unknowns:
        return lines + ["Nothing on the checklist is left open: every item is covered by findings that passed the "
                        "claim check.", ""]
    lines += [UNKNOWNS_NOTE, ""]
    for what, queries in facts.unknowns:
        searched = "; ".join(f"`{query_text(q)}`" for q in queries)
        lines.append(f"- {plan_text(what)}" + (f" (searched: {searched})" if searched else " (no search targeted it directly)"))
    return lines + [""]


def _council(reviews: Sequence[CouncilReview]) -> list[str]:
    if not reviews:
        return []
    lines = ["## Council review", "", COUNCIL_NOTE, ""]
    for r in reviews:
        what = "the research plan" if r.subject == "brief" else "the verified findings"
        if r.agree is None:
            lines.append(f"- {escape(r.model)} gave no verdict on {what}: {escape(r.error or 'no answer')}.")
            continue
        verdict = "agrees with" if r.agree else "**disagrees** with"
        reasons = "; ".join(escape(plain(x)) for x in r.reasons if plain(x))
        lines.append(f"- {escape(r.model)} {verdict} {what}" + (f": {reasons}" if reasons else "."))
    return lines + [""]


def _sources(facts: ReportFacts, citer: Citations) -> tuple[list[str], list[OutputSource]]:
    lines = ["## Sources", ""]
    out: list[OutputSource] = []
    for n, index in enumerate(citer.order, start=1):
        source = facts.sources[index]
        quotes = citer.quotes[index] or [fallback_quote(source, facts.all_claims)]
        locators = [loc for loc, _ in quotes if loc]
        where = f" ({'; '.join(locators)})" if locators else ""
        lines.append(f"[{n}] {escape(source.title)} — {escape(source.url)}{where}")
        lines += [f"> {_OPEN}{escape(q)}{_CLOSE}" for _, q in quotes]
        lines.append("")
        out.append(OutputSource(id=f"src_{n}", type=source.retrieval_method.value, title=source.title,
                                url=source.url, snippet=quotes[0][1]))
    if not citer.order:
        lines += ["No source was cited.", ""]
    return lines, out


def render(facts: ReportFacts, body: Body) -> tuple[str, list[OutputSource]]:
    """The markdown report and the cited sources in citation order (``src_n`` is ``[n]``)."""
    citer = Citations(facts.sources, facts.claims)
    lines: list[str] = [f"# {escape(facts.question)}", "", facts.writer_note, ""]
    refined = plain(facts.refined_question or "")
    if refined and refined != plain(facts.question):
        lines += [f"Refined question: {escape(refined)} *(the planner's wording, not a finding)*", ""]
    if facts.partial_reason is not None:
        lines += [f"**Partial report:** {escape(facts.partial_reason) or 'no reason was given.'}", ""]
    lines += ["## Executive summary", ""]
    if body.summary_offline and body.label_offline:
        lines += [OFFLINE_PART, ""]
    lines += _prose(body.summary, citer)
    if not body.summary:
        lines += ["No claim relevant to the question passed the claim check.", ""]
    legend_at = len(lines)  # the dagger's legend goes here, once every section is written
    if any(section.item is not None for section in body.sections):
        lines += [PLAN_NOTE, ""]
    for section in body.sections:
        lines += _section(section, citer, label_offline=body.label_offline)
    lines += _verified_findings(facts.findings, citer)
    lines += _contradictions(facts, citer)
    lines += _unknowns(facts)
    lines += _confidence(facts)
    lines += _council(facts.council)
    lines += ["## Methodology", ""] + [f"- {m}" for m in facts.methodology] + [""]
    source_lines, output_sources = _sources(facts, citer)
    lines += source_lines
    if citer.marked:
        lines[legend_at:legend_at] = [LEVEL_LEGEND, ""]
    return "\n".join(lines).rstrip() + "\n", output_sources
