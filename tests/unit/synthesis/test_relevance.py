"""Relevance before confidence: a true, quoted, well-supported claim that answers
neither the question nor an item stays out of the report (it stays in the claims)."""

from __future__ import annotations

from datetime import timedelta

from services.scoring.engine import SourceScorer
from services.synthesis.findings import verified_findings
from services.synthesis.relevance import answers_question, relevance, relevant_claims
from services.synthesis.report import build_report, offline_section, placement, prepare, summary_claims
from shared.research.envelope import (
    ChecklistItem,
    Citation,
    Claim,
    CoverageStatus,
    JobEnvelope,
    Plan,
    ResearchRequest,
    SubQuestion,
)
from shared.subjects import Stage
from tests.unit.synthesis.test_report import NOW, make_source

QUESTION = "How do garbage collection pauses affect latency in concurrent servers?"
OFF_TOPIC = "A web server must handle many client connections at once."
PAUSE = "Garbage collection pauses stop application threads and add latency to every request in flight."
HEAP = "Per-process heaps avoid global garbage collection pauses by isolating collection to small units."
GUIDE = "This guide summarises how garbage collection pauses affect latency in concurrent servers."


def _claim(cid: str, text: str, index: int, source_id: str, *, confidence: float, items: list[str]) -> Claim:
    return Claim(id=cid, text=text, supporting_indices=[index], confidence_score=confidence, level="quoted",
                 checklist_item_ids=items, citations=[Citation(source_id=source_id, locator=f"char:0-{len(text)}",
                                                               quote=text)])


def _envelope() -> JobEnvelope:
    sources = [make_source("web", OFF_TOPIC, da=95), make_source("gc", PAUSE), make_source("heap", HEAP),
               make_source("guide", GUIDE)]
    scored = SourceScorer().score_all(sources, now=NOW)
    index = {s.id: n for n, s in enumerate(scored)}
    checklist = [ChecklistItem(id="c1", description="How garbage collection pauses affect latency",
                               status=CoverageStatus.SATISFIED, evidence=["cl2"]),
                 ChecklistItem(id="c2", description="Per-process heaps and garbage collection",
                               status=CoverageStatus.SATISFIED, evidence=["cl3"])]
    claims = [
        # The most confident claim answers nothing that was asked.
        _claim("cl1", OFF_TOPIC, index["web"], "web", confidence=0.95, items=[]),
        _claim("cl2", PAUSE, index["gc"], "gc", confidence=0.7, items=["c1"]),
        _claim("cl3", HEAP, index["heap"], "heap", confidence=0.6, items=["c2"]),
        _claim("cl4", GUIDE, index["guide"], "guide", confidence=0.9, items=["c1"]),
    ]
    plan = Plan(refined_question=QUESTION, sub_questions=[SubQuestion(id="q1", text=QUESTION)], checklist=checklist)
    return JobEnvelope(job_id="job-rel", user_id="u1", stage=Stage.SYNTHESIZE, request=ResearchRequest(question=QUESTION),
                       deadline_at=NOW + timedelta(minutes=10), plan=plan, sources=sources, scored_sources=scored,
                       claims=claims)


def test_the_question_rule_and_the_relevance_score() -> None:
    off, pause, guide = (Claim(id="x", text=t, supporting_indices=[0]) for t in (OFF_TOPIC, PAUSE, GUIDE))
    assert not answers_question(QUESTION, off)
    assert answers_question(QUESTION, pause)
    # The guide's sentence names every subject term, and is about the guide.
    assert relevance(QUESTION, guide) < relevance(QUESTION, pause)


def test_an_off_topic_true_claim_stays_out_of_the_report_but_in_the_claims() -> None:
    envelope = _envelope()
    prepared = prepare(envelope)
    assert [c.id for c in prepared.claims] == ["cl2", "cl3", "cl4"]
    assert "cl1" not in [c.id for c in summary_claims(prepared)]
    result = build_report(envelope, partial_reason=None)
    body = result.report.partition("\n## Methodology")[0]
    assert OFF_TOPIC not in body
    assert OFF_TOPIC in [c.text for c in result.claims]
    assert "1 left out of the report because they answer neither the question nor a checklist item" in result.report


def test_verified_findings_cover_the_items_before_the_most_confident() -> None:
    envelope = _envelope()
    candidates = relevant_claims(QUESTION, envelope.plan.checklist, envelope.claims)
    findings = verified_findings(candidates, envelope.scored_sources, limit=2, checklist=envelope.plan.checklist,
                                 question=QUESTION)
    # One per item, each item's most squarely answering claim: the guide's sentence is
    # more confident than the pause claim but leans on its own text.
    assert [f.claim_id for f in findings] == ["cl2", "cl3"]


def test_a_claim_that_says_what_a_thing_is_is_listed_under_its_definition() -> None:
    checklist = [ChecklistItem(id="c1", description="Definition of threads", evidence=["cl1", "cl2"]),
                 ChecklistItem(id="c2", description="How threads and processes differ", evidence=["cl1", "cl2"])]
    defining = _claim("cl1", "A thread is an independent flow of execution inside a process.", 0, "s",
                      confidence=0.8, items=["c1", "c2"])
    comparing = _claim("cl2", "Threads share the address space of their process, unlike separate processes.", 0, "s",
                       confidence=0.8, items=["c1", "c2"])
    # Both name threads and processes; the one that says what a thread is goes under the
    # definition, the other where it shares most terms.
    assert placement(checklist, [defining, comparing]) == {"cl1": "c1", "cl2": "c2"}


def test_under_a_definition_item_what_the_thing_is_comes_first() -> None:
    envelope = _envelope()
    envelope.plan.checklist = [ChecklistItem(id="c1", description="Definition of garbage collection pauses",
                                             status=CoverageStatus.SATISFIED, evidence=["cl2", "cl5"])]
    text = "A garbage collection pause is a stop of every application thread while the collector runs."
    defining = _claim("cl5", text, 1, "gc", confidence=0.5, items=["c1"])
    envelope.claims = [*envelope.claims, defining]
    prepared = prepare(envelope)
    section = offline_section(envelope.plan.checklist[0], prepared, placement(envelope.plan.checklist, prepared.claims))
    # The definition comes first although the other claim is more confident.
    assert [c.id for c in section.findings][:1] == ["cl5"]
