"""The reuse measure (services.gateway.reuse): question similarity on stemmed content
terms, the scope rule, and when an earlier job's checklist covers a new question."""

from __future__ import annotations

from datetime import timedelta

from services.gateway.models import Job
from services.gateway.reuse import covers, question_similarity, same_scope
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus, JobEnvelope, Plan, ResearchRequest, SubQuestion, utcnow
from shared.subjects import Stage


def test_the_same_question_in_other_words_forms_is_the_same() -> None:
    assert question_similarity("How did automation change lighthouse keeping?",
                               "how has automation changed lighthouse keeping") == 1.0
    assert question_similarity("Lighthouse keeping and automation", "How did automation change lighthouse keeping?") >= 0.6


def test_a_different_question_is_not_similar() -> None:
    assert question_similarity("How did automation change lighthouse keeping?",
                               "What is the half-life of caffeine in adults?") == 0.0
    assert question_similarity("How did automation change lighthouse keeping?",
                               "How did automation change car factories?") < 0.6
    assert question_similarity("", "How?") == 0.0  # no content terms: never similar


def _job(**kw: object) -> Job:
    now = utcnow()
    return Job(id="j", user_id="alice", question="q", status="COMPLETED", created_at=now, updated_at=now, **kw)


def test_scope_is_the_same_corpora_and_providers_in_any_order() -> None:
    assert same_scope(_job(corpora=["a", "b"], providers=["rag"]), _job(corpora=["b", "a"], providers=["rag"]))
    assert same_scope(_job(), _job())
    assert not same_scope(_job(providers=["rag"]), _job(providers=["rag", "web"]))
    assert not same_scope(_job(corpora=None), _job(corpora=["a"]))  # all corpora is not one corpus


def _earlier(status: CoverageStatus = CoverageStatus.SATISFIED) -> JobEnvelope:
    plan = Plan(refined_question="How did automation change the work of lighthouse keepers?",
                sub_questions=[SubQuestion(text="When were lighthouses automated?")],
                checklist=[ChecklistItem(id="c1", description="When lighthouses were automated", status=status),
                           ChecklistItem(id="c2", description="What keepers did before", status=CoverageStatus.SATISFIED)],
                key_terms=["lighthouse", "automation", "keeper"])
    return JobEnvelope(job_id="j", user_id="alice", stage=Stage.SYNTHESIZE, plan=plan,
                       request=ResearchRequest(question="How did automation change lighthouse keeping?"),
                       claims=[Claim(id="cl1", text="Lighthouses were automated.", supporting_indices=[0])],
                       deadline_at=utcnow() + timedelta(minutes=10))


def test_a_satisfied_checklist_covers_the_question_it_researched_only() -> None:
    assert covers(_earlier(), "how has automation changed lighthouse keeping")
    assert covers(_earlier(), "When were lighthouses automated?")
    assert not covers(_earlier(), "How did automation change lighthouse keeping in Japan?")  # a term never researched
    assert not covers(_earlier(CoverageStatus.PARTIAL), "How did automation change lighthouse keeping?")
    assert not covers(_earlier().model_copy(update={"claims": []}), "How did automation change lighthouse keeping?")
    # another context asks for another report: its research is reused by planning afresh
    assert not covers(_earlier(), "When were lighthouses automated?", "for a museum guide about lamp fuels")
