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

The offline body (no model, an unusable model answer, or a spent budget) is
extractive: each finding is a claim's text, quoted exactly, under the checklist item
it answers, and a summary paragraph of the best findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.claims import JobConfidenceCalculator, item_terms, knowledge_gaps, valid_indices
from shared.deadline import DEADLINE_PREFIX
from shared.envelope import ChecklistItem, Claim, CoverageStatus, JobEnvelope
from shared.events import ChecklistCoverage, CouncilReview, ResearchOutput, ResearchResult, VerifiedFinding
from shared.text import terms

from services.synthesis.findings import verified_findings
from services.synthesis.render import (
    Body,
    ReportFacts,
    Section,
    Sentence,
    citation_numbers,
    plural,
    render,
)
from services.synthesis.steps import step_lines

__all__ = ["ENGINE", "OFFLINE_NOTE", "Draft", "assemble", "build_report", "citation_numbers", "offline_body",
           "prepare"]

ENGINE = "offline"
OFFLINE_NOTE = (
    "> Written by the offline engine without an LLM: this report is extractive. Every "
    "finding is a sentence quoted from a source, grouped by checklist item."
)
SUMMARY_FINDINGS = 3
# Notes earlier stages leave when a step of theirs was done offline (scoring's claims
# and coverage, the plan's steps and their analyses): the methodology repeats them, so
# the report says every offline part.
UPSTREAM_OFFLINE_NOTES = ("claims:", "coverage:", "steps:")
DEFAULT_FINDINGS_MAX = 5


def addresses(item: ChecklistItem, claim: Claim) -> bool:
    return claim.id in item.evidence or item.id in claim.checklist_item_ids


@dataclass
class Prepared:
    """What every writer starts from: the citable claims and the coverage they support."""

    envelope: JobEnvelope
    claims: list[Claim]
    checklist: list[ChecklistItem]  # coverage as shown
    findings: list[VerifiedFinding]


def prepare(envelope: JobEnvelope, *, findings_max: int = DEFAULT_FINDINGS_MAX) -> Prepared:
    sources = envelope.scored_sources
    claims = [c for c in envelope.claims if valid_indices(c.supporting_indices, len(sources))]
    checklist = [shown_coverage(item, claims) for item in (envelope.plan.checklist if envelope.plan else [])]
    return Prepared(envelope, claims, checklist, verified_findings(claims, sources, limit=findings_max))


def shown_coverage(item: ChecklistItem, claims: Sequence[Claim]) -> ChecklistItem:
    """The item as the report shows it: no citable claim addresses it, not covered,
    whatever coverage was judged (the report could show nothing under it)."""
    if any(addresses(item, c) for c in claims):
        return item
    return item.model_copy(update={"status": CoverageStatus.UNSATISFIED})


# -- the offline body -----------------------------------------------------------------------


def placement(checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> dict[str, str]:
    """Claim id -> the checklist item it is listed under: of the items it addresses,
    the one sharing most subject terms with it, the earliest on ties. Listing each
    claim once keeps comparison checklists, whose items overlap, from repeating it."""
    subjects = [(item, item_terms(item.description)) for item in checklist]
    placed: dict[str, str] = {}
    for claim in claims:
        own = set(terms(claim.text))
        best: tuple[int, str] | None = None
        for item, subject in subjects:
            if addresses(item, claim):
                shared = len(own & subject)
                if best is None or shared > best[0]:
                    best = (shared, item.id)
        if best is not None:
            placed[claim.id] = best[1]
    return placed


def _by_confidence(claims: Sequence[Claim]) -> list[Claim]:
    return sorted(claims, key=lambda c: -c.confidence_score)  # stable on ties


def offline_summary(prepared: Prepared) -> list[list[Sentence]]:
    claims, checklist = prepared.claims, prepared.checklist
    n_sources = len(prepared.envelope.scored_sources)
    counts = [f"{plural(len(claims), 'claim')} {'was' if len(claims) == 1 else 'were'} "
              f"verified from {plural(n_sources, 'source')}."]
    if checklist:
        covered = sum(1 for i in checklist if i.status is CoverageStatus.SATISFIED)
        partly = sum(1 for i in checklist if i.status is CoverageStatus.PARTIAL)
        counts.append(f"{covered} of {len(checklist)} checklist items are covered"
                      + (f" and {partly} partly." if partly else "."))
    best = _by_confidence(claims)[:SUMMARY_FINDINGS]
    if not best:
        return [[Sentence(" ".join(counts)), Sentence("No claim relevant to the question could be verified.")]]
    lead = [Sentence(" ".join(counts)), Sentence("The best-supported findings follow.")]
    return [lead, [Sentence(f'"{c.text}"', [c.id]) for c in best]]


def offline_section(item: ChecklistItem, prepared: Prepared, placed: dict[str, str]) -> Section:
    headings = {i.id: i.description for i in prepared.checklist}
    ranked = _by_confidence(prepared.claims)
    own = [c for c in ranked if placed.get(c.id) == item.id]
    elsewhere = [(c, headings[placed[c.id]]) for c in ranked
                 if addresses(item, c) and placed.get(c.id) not in (None, item.id)]
    return Section(item=item, findings=own, see_also=elsewhere, offline=True)


def offline_body(prepared: Prepared) -> Body:
    placed = placement(prepared.checklist, prepared.claims)
    sections = [offline_section(item, prepared, placed) for item in prepared.checklist]
    rest = [c for c in _by_confidence(prepared.claims) if c.id not in placed]
    if rest:
        sections.append(Section(item=None, findings=rest, offline=True))
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


def methodology(prepared: Prepared, draft: Draft, cited: int) -> list[str]:
    env = prepared.envelope
    queries = queries_of(env)
    shown = "; ".join(f"`{q.replace('`', '')}`" for q in queries[:6]) + ("; …" if len(queries) > 6 else "")
    out_of_range = len(env.claims) - len(prepared.claims)
    lines = [
        f"Searched: {plural(len(queries), 'query')} over {plural(env.iteration + 1, 'research iteration')}"
        + (f" ({shown})." if queries else "."),
        f"Sources: {len(env.sources)} retrieved, {len(env.scored_sources)} scored, {cited} cited in this report.",
        f"Claims: {len(prepared.claims)} verified claims kept, {len(env.rejected_claims)} rejected by the claim check "
        "(a quote that does not verify, or text its quotes do not support)"
        + (f", {out_of_range} left out because they point at no source in range" if out_of_range else "")
        + f"; {len(prepared.findings)} shown as Verified Findings.",
    ]
    if (r := env.reused) is not None:
        lines.append(f"Reused from job {r.job_id} (question similarity {r.similarity:.2f}): {plural(r.sources, 'source')} "
                     f"and {plural(r.claims, 'claim')} taken over without searching, digesting or extracting them again"
                     + ("; its checklist already covered this question, so this report was assembled from its verified "
                        "claims with no new research or model writing." if r.covered else "."))
    lines += step_lines(env.plan)  # each step's kind and when it ran (services/synthesis/steps.py)
    if cut := [n.removeprefix(DEADLINE_PREFIX).strip() for n in env.notes if n.startswith(DEADLINE_PREFIX)]:
        lines.append("The job's deadline was reached; it cut: " + "; ".join(cut) + ".")
    upstream = [n for n in env.notes if n.startswith(UPSTREAM_OFFLINE_NOTES)]
    if upstream:
        lines.append("Earlier stages: " + "; ".join(upstream) + ".")
    if draft.writer == ENGINE:
        lines.append("Written by the offline engine: every finding is quoted from a claim, no sentence was generated.")
    else:
        lines.append(f"Written by {draft.writer} from the verified claims only. Verification pass: "
                     f"{plural(draft.sentences_reasked, 'sentence')} re-asked, "
                     f"{plural(draft.sentences_removed, 'sentence')} removed (unsupported by the cited claims' quotes, "
                     "citing claims that do not exist, or stating a fact without a citation).")
    if draft.fallback_reason:
        lines.append(f"The model's report could not be used ({draft.fallback_reason}); the offline engine wrote it.")
    if draft.offline_parts and draft.writer != ENGINE:
        lines.append("Written offline: " + "; ".join(draft.offline_parts) + ".")
    lines.append("Verified Findings, contradictions, unknowns, confidence, this methodology and the sources "
                 "are built by the service from the verified claims, never by a model.")
    return lines


def writer_note(envelope: JobEnvelope, draft: Draft) -> str:
    plan_engine = envelope.plan.engine if envelope.plan else ENGINE
    if draft.writer == ENGINE:
        return OFFLINE_NOTE if plan_engine == ENGINE else f"> Planned by {plan_engine}. " + OFFLINE_NOTE[2:]
    note = (f"> Written by {draft.writer} from verified claims; every cited sentence was checked against the quotes "
            f"of the claims it cites ({plural(draft.sentences_removed, 'sentence')} removed).")
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
    facts = ReportFacts(
        question=" ".join(envelope.request.question.split()),
        refined_question=envelope.plan.refined_question if envelope.plan else None,
        sources=sources, claims=prepared.claims, all_claims=envelope.claims, checklist=prepared.checklist,
        confidence=confidence, findings=prepared.findings, unknowns=unknowns(prepared),
        methodology=[], writer_note=writer_note(envelope, draft), partial_reason=partial_reason, council=council,
        insights=envelope.memory.insights,
    )
    # The methodology counts cited sources, which only rendering knows: render twice
    # is wasteful, so count first from a dry run of the same renderer.
    _, dry_sources = render(facts, draft.body)
    facts.methodology = methodology(prepared, draft, len(dry_sources))
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
        offline_parts=list(draft.offline_parts), council=list(council), memory=envelope.memory,
    )


def build_report(envelope: JobEnvelope, *, partial_reason: str | None, findings_max: int = DEFAULT_FINDINGS_MAX,
                 council: Sequence[CouncilReview] = (), fallback_reason: str | None = None) -> ResearchResult:
    """The offline report of a job (no model)."""
    prepared = prepare(envelope, findings_max=findings_max)
    draft = Draft(body=offline_body(prepared), offline_parts=["the whole report"], fallback_reason=fallback_reason)
    return assemble(prepared, draft, partial_reason=partial_reason, council=council)
