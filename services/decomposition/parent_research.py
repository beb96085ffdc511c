"""Planning a follow-up question from its parent's research.

A follow-up job (services/gateway/followup.py) arrives at its first plan with the
parent job's sources, verified claims and memory in the envelope, and
``envelope.reused.follow_up`` set. Its plan is a brief and checklist for the follow-up
question alone; what the parent established is input, not something to research again:

- with a model, the planner's ``context`` also carries the parent's refined question and
  verified findings, as data, so the brief aims at what the follow-up adds
  (:func:`planning_request`); the offline plan is made from the question's own words,
  which that text would only blur;
- the parent's claims count toward the new checklist where they answer an item by the
  coverage rule (shared.research.claims.answering_claims), and a first-pass step they
  already answer (two claims or more) does not search (:func:`count_parent_claims`);
  the first step, the follow-up question itself, always does.

Scoring has the last word on coverage: on the first pass it checks each carried claim
again against its archived quotes (services/scoring/reused.py) and judges the checklist
from the claims that pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.llm.engine import JobLLM
from shared.research.claims import answering_claims
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus, JobEnvelope, Plan, ResearchRequest

__all__ = ["ANSWERED", "count_parent_claims", "is_follow_up", "parent_context", "planning_request"]

ANSWERED = 2  # claims that answer an item or a step, as the offline coverage rule's "satisfied"
FINDINGS_MAX = 12  # of the parent's verified findings shown to the planner


def is_follow_up(envelope: JobEnvelope) -> bool:
    return envelope.reused is not None and envelope.reused.follow_up


def parent_context(envelope: JobEnvelope) -> str:
    """What the planner is told of the parent's research: its refined question and its
    verified findings (the memory's insights, else the claims' text)."""
    reused = envelope.reused
    assert reused is not None
    findings = [i.text for i in envelope.memory.insights] or [c.text for c in envelope.claims]
    lines = [f"This question follows up earlier research (job {reused.job_id}) that asked: {reused.question or '?'}"]
    if findings:
        lines.append("That research already established (verified; plan only for what the follow-up needs beyond it):")
        lines += [f"- {' '.join(text.split())}" for text in findings[:FINDINGS_MAX]]
    return "\n".join(lines)


def planning_request(envelope: JobEnvelope, llm: JobLLM) -> ResearchRequest:
    """The request the first plan is made from: a follow-up's, with a model, has the
    parent's research appended to its context."""
    request = envelope.request
    if not is_follow_up(envelope) or llm.offline:
        return request
    earlier = parent_context(envelope)
    return request.model_copy(update={"context": f"{request.context}\n\n{earlier}" if request.context else earlier})


def _status(evidence: Sequence[str]) -> CoverageStatus:
    return (CoverageStatus.SATISFIED if len(evidence) >= ANSWERED
            else CoverageStatus.PARTIAL if evidence else CoverageStatus.UNSATISFIED)


def count_parent_claims(envelope: JobEnvelope, plan: Plan) -> tuple[Plan, int]:
    """A follow-up's first plan with the parent's claims counted: each checklist item
    they answer has them as evidence (partial with one, satisfied with two or more), and
    the first-pass steps they answer do not search (their queries are dropped unless
    another step searches the same text). Returns the plan and the number of steps that
    do not search; any other plan comes back unchanged."""
    claims: list[Claim] = list(envelope.claims)
    if envelope.reused is None or not envelope.reused.follow_up or not claims:
        return plan, 0
    job = envelope.reused.job_id
    checklist = []
    for item in plan.checklist:
        evidence = answering_claims(item, claims)
        if evidence:
            item = item.model_copy(update={
                "status": _status(evidence), "evidence": evidence,
                "reason": f"{len(evidence)} verified claim{'s' if len(evidence) != 1 else ''} of job {job} answer it "
                          "(checked again on the first pass)",
            })
        checklist.append(item)
    # The first step is the follow-up question itself: it always searches, since the
    # coverage rule matches words, and the follow-up asks something the parent did not.
    answered = {s.id for s in plan.sub_questions[1:] if s.ran_in_iteration == 0 and s.searched and len(
        answering_claims(ChecklistItem(id=s.id, description=s.text), claims)) >= ANSWERED}
    still = {text for s in plan.sub_questions if s.id not in answered for text in s.searched}
    steps = [s.model_copy(update={"searched": [], "answered_by": job}) if s.id in answered else s
             for s in plan.sub_questions]
    dropped = {text for s in plan.sub_questions if s.id in answered for text in s.searched} - still
    queries = [q for q in plan.queries if q.text not in dropped]
    return plan.model_copy(update={"checklist": checklist, "sub_questions": steps, "queries": queries}), len(answered)
