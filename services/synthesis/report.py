"""Assembling a job's result: the facts every report shows, the offline body, and
the ``deep_research`` tool's output object.

Guarantees, whoever writes the prose:

* Every unescaped ``[n]`` in the report resolves: it is the n-th entry of the
  report's Sources list and ``output.sources[n-1]`` (id ``src_n``). Sources are
  numbered in order of first citation and only cited sources are listed.
* A checklist item is shown as covered only when some citable claim addresses it,
  and then findings appear under it; ``output.checklist_coverage`` says the same.
* Verified Findings, contradictions, unknowns, confidence and methodology are built
  from data (see render.py), and the report says which parts were written offline.
* Every stating sentence shows its check level (render.py): a source's words in
  quotation marks, an entailed sentence as plain prose, one checked by code only with
  a dagger. The top line and the methodology count the sentences shown by level, the
  removed ones by reason and say whether the entailment judge ran, from the draft's
  :class:`VerificationSummary` (counted from the body when the writer gave none); the
  result carries that summary.
* The plan is the planner's wording (refined question, checklist items, queries):
  shown as the plan, never as a finding.

The offline body (no model, an unusable model answer, a spent budget, or a model
provider unavailable after its retries) is extractive: each finding is a claim's text
under the checklist item it answers (in quotation marks when it is a source's words, as
the offline engine's claims are), and a summary paragraph of the best findings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.research.claims import JobConfidenceCalculator, defines, item_terms, knowledge_gaps, valid_indices
from shared.runtime.deadline import DEADLINE_PREFIX
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus, JobEnvelope
from shared.research.events import (
    ChecklistCoverage,
    CouncilReview,
    ResearchOutput,
    ResearchResult,
    VerificationSummary,
    VerifiedFinding,
)
from shared.research.text import terms

from services.synthesis.depth import methodology_line, rules_of
from services.synthesis.findings import verified_findings
from services.synthesis.relevance import addresses, relevance, relevant_claims
from services.synthesis.levels import summarize
from services.synthesis.render import (
    Body,
    ReportFacts,
    Section,
    Sentence,
    level_counts,
    level_of,
    levels_phrase,
    render,
    sentence_levels,
)
from services.synthesis.cost import cost_line
from services.synthesis.wording import FIXED_LINE_START, LEVEL_MARK, escape, plain, plural, query_text
from services.synthesis.steps import step_lines

__all__ = ["ENGINE", "OFFLINE_NOTE", "Draft", "assemble", "build_report", "offline_body", "prepare"]

ENGINE = "offline"
OFFLINE_NOTE = (
    "> Written by the offline engine without an LLM: this report is extractive. Every "
    "finding is a sentence quoted from a source, grouped by checklist item."
)
# When some claims are not a source's words (a model extracted them, the offline engine
# wrote the report): each is shown as its level says (render.py).
OFFLINE_NOTE_MIXED = (
    "> Written by the offline engine without an LLM: this report is extractive. Every "
    "finding is a claim's text, grouped by checklist item: in quotation marks when it is a "
    "source's own words, otherwise as the claim was worded, with its check level."
)
SUMMARY_FINDINGS = 3
# Notes earlier stages leave when a step of theirs was done offline (scoring's claims
# and coverage, the plan's steps and their analyses): the methodology repeats them, so
# the report says every offline part.
UPSTREAM_OFFLINE_NOTES = ("claims:", "coverage:", "steps:")
DEFAULT_FINDINGS_MAX = 5


@dataclass
class Prepared:
    """What every writer starts from: the citable claims and the coverage they support."""

    envelope: JobEnvelope
    claims: list[Claim]  # the claims the report may show: citable, and answering the question or an item
    checklist: list[ChecklistItem]  # coverage as shown
    findings: list[VerifiedFinding]
    kept: list[Claim] = field(default_factory=list)  # every citable claim, shown or not


def question_of(envelope: JobEnvelope) -> str:
    """The question the report answers: the user's, with the plan's refinement of it."""
    refined = envelope.plan.refined_question if envelope.plan else ""
    return f"{envelope.request.question} {refined}".strip()


def prepare(envelope: JobEnvelope, *, findings_max: int = DEFAULT_FINDINGS_MAX) -> Prepared:
    """``findings_max``: the configured number of Verified Findings, which the request's
    ``report_depth`` lowers (brief) or raises (detailed), services/synthesis/depth.py."""
    findings_max = rules_of(envelope).findings_max(findings_max)
    sources = envelope.scored_sources
    kept = [c for c in envelope.claims if valid_indices(c.supporting_indices, len(sources))]
    plan_items = envelope.plan.checklist if envelope.plan else []
    claims = relevant_claims(question_of(envelope), plan_items, kept)
    checklist = [shown_coverage(item, claims) for item in plan_items]
    findings = verified_findings(claims, sources, limit=findings_max, checklist=checklist,
                                 question=question_of(envelope))
    return Prepared(envelope, claims, checklist, findings, kept)


def shown_coverage(item: ChecklistItem, claims: Sequence[Claim]) -> ChecklistItem:
    """The item as the report shows it: no citable claim addresses it, not covered,
    whatever coverage was judged (the report could show nothing under it)."""
    if any(addresses(item, c) for c in claims):
        return item
    return item.model_copy(update={"status": CoverageStatus.UNSATISFIED})


# -- the offline body -----------------------------------------------------------------------


def placement(checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> dict[str, str]:
    """Claim id -> the checklist item it is listed under: of the items it addresses, a
    definition item whose subject the claim says what it is ("A thread is an independent
    flow of execution inside a process" under "Definition of threads", not under "How
    threads and processes differ"), else the one sharing most subject terms with it,
    the earliest on ties. Listing each claim once keeps comparison checklists, whose
    items overlap, from repeating it."""
    subjects = [(item, item_terms(item.description)) for item in checklist]
    placed: dict[str, str] = {}
    for claim in claims:
        own = set(terms(claim.text))
        best: tuple[bool, int, str] | None = None
        for item, subject in subjects:
            if addresses(item, claim):
                key = (_DEFINITION.match(item.description) is not None and defines(claim.text, subject),
                       len(own & subject), item.id)
                if best is None or key[:2] > best[:2]:
                    best = key
        if best is not None:
            placed[claim.id] = best[2]
    return placed


# Items that ask what a thing is: the offline planner's "Definition of threads", a
# model's "What are threads?".
_DEFINITION = re.compile(r"^(?:Definition of|What (?:is|are))\b", re.IGNORECASE)


def _by_confidence(claims: Sequence[Claim]) -> list[Claim]:
    return sorted(claims, key=lambda c: -c.confidence_score)  # stable on ties


def summary_claims(prepared: Prepared, *, limit: int = SUMMARY_FINDINGS) -> list[Claim]:
    """The claims the summary leads with: each open-to-answer item's most squarely
    answering claim in checklist order (its relevance to the item, then confidence),
    then the claims answering the question most squarely, up to ``limit``."""
    chosen: list[Claim] = []
    for item in prepared.checklist:
        answering = [c for c in prepared.claims if addresses(item, c) and c not in chosen]
        if answering and len(chosen) < limit:
            chosen.append(max(answering, key=lambda c: (relevance(item.description, c), c.confidence_score)))
    question = question_of(prepared.envelope)
    rest = sorted((c for c in prepared.claims if c not in chosen),
                  key=lambda c: (-relevance(question, c), -c.confidence_score))
    return (chosen + rest)[:limit]


def offline_summary(prepared: Prepared) -> list[list[Sentence]]:
    checklist = prepared.checklist
    n_sources = len(prepared.envelope.scored_sources)
    counts = [f"{plural(len(prepared.kept), 'claim')} from {plural(n_sources, 'source')} "
              f"passed the claim check."]
    if checklist:
        covered = sum(1 for i in checklist if i.status is CoverageStatus.SATISFIED)
        partly = sum(1 for i in checklist if i.status is CoverageStatus.PARTIAL)
        counts.append(f"{covered} of {len(checklist)} checklist items are covered"
                      + (f" and {partly} partly." if partly else "."))
    best = summary_claims(prepared)
    if not best:
        return [[Sentence(" ".join(counts)), Sentence("No claim relevant to the question passed the claim check.")]]
    lead = [Sentence(" ".join(counts)), Sentence("The best-supported findings follow.")]
    # Shown as the claims' own words: quotation marks (added by the renderer) only for a
    # claim that is a quote.
    return [lead, [Sentence(c.text, [c.id], level=level_of(c)) for c in best]]


def offline_section(item: ChecklistItem, prepared: Prepared, placed: dict[str, str]) -> Section:
    """The item's findings, most confident first (under a definition item, those saying
    what the thing is before the rest): the claims placed under it, then one
    line per other heading its other answers are listed under. At the detailed depth
    every claim answering it is listed here; at the brief depth at most
    ``BRIEF_SECTION_FINDINGS`` (services/synthesis/depth.py)."""
    rules = rules_of(prepared.envelope)
    headings = {i.id: i.description for i in prepared.checklist}
    ranked = _by_confidence(prepared.claims)
    if rules.every_item:
        return Section(item=item, findings=[c for c in ranked if addresses(item, c)], offline=True)
    own = [c for c in ranked if placed.get(c.id) == item.id]
    if _DEFINITION.match(item.description):  # what the thing is, first
        subject = item_terms(item.description)
        own.sort(key=lambda c: not defines(c.text, subject))
    elsewhere = [(c, headings[placed[c.id]]) for c in ranked
                 if addresses(item, c) and placed.get(c.id) not in (None, item.id)]
    if (limit := rules.section_findings) is not None:
        # Brief: the best few, and the other headings referred to only when none is its own.
        own, elsewhere = own[:limit], ([] if own else elsewhere[:limit])
    return Section(item=item, findings=own, see_also=elsewhere, offline=True)


def offline_body(prepared: Prepared) -> Body:
    placed = placement(prepared.checklist, prepared.claims)
    sections = [offline_section(item, prepared, placed) for item in prepared.checklist]
    rest = [c for c in _by_confidence(prepared.claims) if c.id not in placed]
    if rest:
        sections.append(Section(item=None, findings=rest[:rules_of(prepared.envelope).section_findings], offline=True))
    return Body(summary=offline_summary(prepared), sections=sections, summary_offline=True)


# -- facts shown by every report ---------------------------------------------------------------


def searched_for(item: ChecklistItem, queries: Sequence[str]) -> list[str]:
    """The job's queries that share a subject term with the item."""
    subject = item_terms(item.description)
    return [q for q in queries if subject & set(terms(q))]


def queries_of(envelope: JobEnvelope) -> list[str]:
    """Every query the job ran (or planned for its last pass), each once."""
    planned = envelope.plan.queries if envelope.plan else []
    return list(dict.fromkeys([*envelope.queries_run, *(q.text for q in planned)]))


def unknowns(prepared: Prepared) -> list[tuple[str, list[str]]]:
    envelope = prepared.envelope
    queries = queries_of(envelope)
    if not prepared.checklist:
        return [(g, []) for g in envelope.knowledge_gaps]
    # The research memory names, per open item, the searches tried for it on any provider.
    tried = {g.item_id: g.tried for g in envelope.memory.gaps}
    out = []
    for item in prepared.checklist:
        if item.status is CoverageStatus.SATISFIED:
            continue
        what = item.description + (" (partly covered)" if item.status is CoverageStatus.PARTIAL else "")
        out.append((what, (tried.get(item.id) or searched_for(item, queries))[:5]))
    return out


@dataclass
class Draft:
    """How the body was written: by whom, which parts offline, what was removed."""

    body: Body
    writer: str = ENGINE
    offline_parts: list[str] = field(default_factory=list)
    sentences_removed: int = 0
    sentences_reasked: int = 0
    fallback_reason: str | None = None  # why the model did not write it, when it did not
    verification: VerificationSummary | None = None  # None: counted from the body (no judge ran)


def unavailable_since(envelope: JobEnvelope) -> str | None:
    """Where the job's model provider was found unavailable, from which point every
    model step was done offline (shared/llm/engine.py); None: it never was."""
    d = envelope.degraded
    if d is None:
        return None
    return f"the {d.stage} stage of " + (f"iteration {d.iteration}" if d.iteration >= 0 else "the brief")


def unavailable_part(envelope: JobEnvelope) -> list[str]:
    """The result's offline part when the provider was unavailable (the API shows it)."""
    since = unavailable_since(envelope)
    return [f"every model step from {since} on (the model provider was unavailable)"] if since else []


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n)


def _summary(prepared: Prepared, draft: Draft, verification: VerificationSummary | None) -> VerificationSummary:
    if verification is not None:
        return verification
    if draft.verification is None:
        env = prepared.envelope
        draft.verification = summarize(draft.body, env.claims, env.rejected_claims)
    return draft.verification


def judge_line(v: VerificationSummary, shown: dict[str, int]) -> str:
    """Whether the entailment judge ran, and on how many of the report's sentences."""
    if v.judge == "ran" or v.judge.startswith("partly run"):
        model = v.judge_model or "the verifier model"
        entailed, refused = shown.get("entailed", 0), v.sentences_removed.get("judge", 0)
        tokens = f", {v.judge_tokens:,} tokens" if v.judge_tokens else ""
        how = "" if v.judge == "ran" else f" ({v.judge})"
        return (f"Entailment judge: {model} judged {plural(entailed + refused, 'sentence')}{how}: {entailed} "
                f"entailed, {refused} removed as not following from their quotes{tokens}.")
    if v.judge.startswith("not run") and "code only" not in v.judge:
        return f"Entailment judge: {v.judge}: sentences are checked by code only."
    return f"Entailment judge: {v.judge}."


def verification_lines(draft: Draft, v: VerificationSummary, shown: dict[str, int]) -> list[str]:
    """The methodology's account of the checks: the stating sentences shown, by level;
    removed ones by reason; the judge."""
    kept = sum(shown.values())
    removed = sum(v.sentences_removed.values()) or draft.sentences_removed
    if v.sentences_removed:
        why = f" ({_reasons(v.sentences_removed)})"
    elif removed:
        why = (" (unsupported by the cited claims' quotes, citing claims that do not exist, or stating a fact "
               "without a citation)")
    else:
        why = ""
    line = (f"Sentences: {plural(kept, 'stating sentence')} shown" + (f": {levels_phrase(shown)}" if kept else "")
            + f"; {plural(removed, 'sentence')} removed{why}.")
    return [line, judge_line(v, shown)]


def methodology(prepared: Prepared, draft: Draft, cited: int,
                verification: VerificationSummary | None = None) -> list[str]:
    """The methodology's lines. ``verification``: what the checks did (default: the
    draft's summary, counted from the body when it has none)."""
    env = prepared.envelope
    v = _summary(prepared, draft, verification)
    shown_levels = sentence_levels(draft.body, prepared.claims)  # as the renderer shows them
    queries = queries_of(env)
    shown = "; ".join(f"`{query_text(q)}`" for q in queries[:6]) + ("; …" if len(queries) > 6 else "")
    out_of_range = len(env.claims) - len(prepared.kept)
    off_topic = len(prepared.kept) - len(prepared.claims)
    by_level = level_counts([level_of(c) for c in prepared.kept])
    n_rejected = sum(v.claims_rejected.values()) or len(env.rejected_claims)
    categories = {k: n for k, n in v.claims_rejected.items() if k != "other"}
    rejected_why = (f" ({_reasons(v.claims_rejected)})" if categories
                    else " (a quote that does not verify, or text its quotes do not support)")
    lines = [
        f"Searched: {plural(len(queries), 'query')} over {plural(env.iteration + 1, 'research iteration')}"
        + (f", in the planner's wording ({shown})." if queries else "."),
        f"Sources: {len(env.sources)} retrieved, {len(env.scored_sources)} scored, {cited} cited in this report.",
        f"Claims: {plural(len(prepared.kept), 'claim')} kept"
        + (f" ({levels_phrase(by_level, explain=False)})" if by_level else "")
        + f", {n_rejected} rejected by the claim check" + (rejected_why if n_rejected else "")
        + (f", {out_of_range} left out because they point at no source in range" if out_of_range else "")
        + (f", {off_topic} left out of the report because they answer neither the question nor a checklist item "
           "(still in the result's claims)" if off_topic else "")
        + f"; {len(prepared.findings)} shown as Verified Findings.",
    ]
    if (r := env.reused) is not None and r.follow_up:
        lines.append(f"Follow-up of job {r.job_id}: its {plural(r.sources, 'source')} and {plural(r.claims, 'verified claim')} "
                     "were carried over (each claim checked again against its quotes) and are cited beside this job's own.")
    elif r is not None:
        lines.append(f"Reused from job {r.job_id} (question similarity {r.similarity:.2f}): {plural(r.sources, 'source')} "
                     f"and {plural(r.claims, 'claim')} taken over without searching, digesting or extracting them again"
                     + ("; its checklist already covered this question, so this report was assembled from its verified "
                        "claims with no new research or model writing." if r.covered else "."))
    steps = step_lines(env.plan)  # each step's kind and when it ran (services/synthesis/steps.py)
    if steps:
        lines.append("The plan's steps, each with its sub-question in the planner's wording:")
        lines += [escape(plain(step)) for step in steps]
    if cut := [n.removeprefix(DEADLINE_PREFIX).strip() for n in env.notes if n.startswith(DEADLINE_PREFIX)]:
        lines.append("The job's deadline was reached; it cut: " + "; ".join(cut) + ".")
    upstream = [n for n in env.notes if n.startswith(UPSTREAM_OFFLINE_NOTES)]
    if upstream:
        lines.append("Earlier stages: " + "; ".join(upstream) + ".")
    if env.degraded is not None:
        lines.append(f"The model provider was unavailable from {unavailable_since(env)} on, after its retries "
                     f"({escape(plain(env.degraded.reason))}): the offline engine did every model step of the job "
                     "from there.")
    if draft.writer == ENGINE:
        lines.append("Written by the offline engine: every finding is a claim's text, no sentence was generated.")
    else:
        reasked = draft.sentences_reasked
        lines.append(f"Written by {draft.writer} from the checked claims only; each cited sentence was checked against "
                     "the quotes of the claims it cites"
                     + (f", {plural(reasked, 'sentence')} re-asked once with the reason it failed." if reasked else "."))
    lines += verification_lines(draft, v, shown_levels)
    if draft.fallback_reason:
        lines.append(f"The model's report could not be used ({draft.fallback_reason}); the offline engine wrote it.")
    if draft.offline_parts and draft.writer != ENGINE:
        lines.append("Written offline: " + "; ".join(draft.offline_parts) + ".")
    if depth := methodology_line(rules_of(env), len(prepared.findings)):
        lines.append(depth)
    if cost := cost_line(env.usage):
        lines.append(cost)
    lines.append(FIXED_LINE_START + " this methodology and the sources "
                 "are built by the service from the checked claims, never by a model; the refined question, the "
                 "checklist items (the section headings) and the queries are the planner's wording, shown as the plan.")
    return lines


def writer_note(envelope: JobEnvelope, draft: Draft, claims: Sequence[Claim] | None = None) -> str:
    """The report's top line: who wrote it, and how far its sentences were checked."""
    plan_engine = envelope.plan.engine if envelope.plan else ENGINE
    shown = envelope.claims if claims is None else claims
    if draft.writer == ENGINE:
        offline = OFFLINE_NOTE if all(level_of(c) == "quoted" for c in shown) else OFFLINE_NOTE_MIXED
        note = offline if plan_engine == ENGINE else f"> Planned by {plan_engine}. " + offline[2:]
        since = unavailable_since(envelope)
        return note + (f" The model provider was unavailable from {since} on: the offline engine did the rest."
                       if since else "")
    levels = sentence_levels(draft.body, shown)
    words = {"quoted": "quoted", "entailed": "entailed", "supported": f"checked by code only ({LEVEL_MARK})"}
    by_level = ", ".join(f"{levels[lv]} {words[lv]}" for lv in words if levels.get(lv))
    note = (f"> Written by {draft.writer} from the job's checked claims; every cited sentence was checked against the "
            f"quotes of the claims it cites ({plural(draft.sentences_removed, 'sentence')} removed)"
            + (f": {by_level}." if by_level else "."))
    if draft.offline_parts:
        note += " Written offline: " + "; ".join(draft.offline_parts) + "."
    return note


# -- the result -----------------------------------------------------------------------------


def _engine(envelope: JobEnvelope, draft: Draft) -> str:
    plan_engine = envelope.plan.engine if envelope.plan else ENGINE
    if draft.writer == ENGINE:
        return ENGINE if plan_engine == ENGINE else f"{plan_engine}+offline"[:40]
    return (draft.writer + ("+offline" if draft.offline_parts else ""))[:40]


def assemble(prepared: Prepared, draft: Draft, *, partial_reason: str | None,
             council: Sequence[CouncilReview] = ()) -> ResearchResult:
    """The job's result from the prepared facts and a written body."""
    envelope = prepared.envelope
    sources = envelope.scored_sources
    confidence = envelope.confidence or JobConfidenceCalculator().calculate(envelope.claims, sources)
    if draft.verification is None:
        draft.verification = summarize(draft.body, envelope.claims, envelope.rejected_claims)
    facts = ReportFacts(
        question=" ".join(envelope.request.question.split()),
        refined_question=envelope.plan.refined_question if envelope.plan else None,
        sources=sources, claims=prepared.claims, all_claims=envelope.claims, checklist=prepared.checklist,
        confidence=confidence, findings=prepared.findings, unknowns=unknowns(prepared),
        methodology=[], writer_note=writer_note(envelope, draft, prepared.claims),
        partial_reason=partial_reason, council=council,
        insights=envelope.memory.insights,
    )
    # The methodology counts cited sources, which only rendering knows: render twice
    # is wasteful, so count first from a dry run of the same renderer.
    _, dry_sources = render(facts, draft.body)
    facts.methodology = methodology(prepared, draft, len(dry_sources), draft.verification)
    answer, output_sources = render(facts, draft.body)
    gaps = knowledge_gaps(prepared.checklist) if prepared.checklist else list(envelope.knowledge_gaps)
    iterations_used = envelope.iteration + 1
    ran_out = iterations_used >= envelope.request.max_iterations
    output = ResearchOutput(
        trace_id=envelope.job_id, answer=answer, sources=output_sources,
        checklist_coverage=ChecklistCoverage(
            satisfied=[i.description for i in prepared.checklist if i.status is CoverageStatus.SATISFIED], gaps=gaps,
        ),
        iterations_used=iterations_used,
        status="max_iterations_reached" if gaps and ran_out else "completed",
    )
    return ResearchResult(
        report=answer, output=output, scored_sources=list(sources), claims=list(envelope.claims),
        confidence=confidence, usage=envelope.usage, partial=partial_reason is not None,
        partial_reason=partial_reason, engine=_engine(envelope, draft),
        rejected_claims=list(envelope.rejected_claims),
        verified_findings=list(prepared.findings), sentences_removed=draft.sentences_removed,
        offline_parts=[*draft.offline_parts, *unavailable_part(envelope)], council=list(council),
        memory=envelope.memory, verification=draft.verification,
    )


def build_report(envelope: JobEnvelope, *, partial_reason: str | None, findings_max: int = DEFAULT_FINDINGS_MAX,
                 council: Sequence[CouncilReview] = (), fallback_reason: str | None = None) -> ResearchResult:
    """The offline report of a job (no model)."""
    prepared = prepare(envelope, findings_max=findings_max)
    draft = Draft(body=offline_body(prepared), offline_parts=["the whole report"], fallback_reason=fallback_reason)
    return assemble(prepared, draft, partial_reason=partial_reason, council=council)
