"""The research memory: searches recorded once per provider and query, insights,
open gaps with what was tried and contradictions rebuilt after each scoring pass."""

from __future__ import annotations

from services.scoring.memory import updated_memory
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus, JobEnvelope, ResearchRequest, utcnow
from shared.research.memory import MAX_SEARCHED, ResearchMemory
from shared.subjects import Stage


def _claim(cid: str, text: str, confidence: float, *, items: list[str] | None = None, contradicted: bool = False) -> Claim:
    return Claim(id=cid, text=text, supporting_indices=[0], contradicting_indices=[1] if contradicted else [],
                 confidence_score=confidence, contradiction_flag=contradicted, checklist_item_ids=items or [])


def test_a_search_is_recorded_once_per_provider_and_query() -> None:
    memory = ResearchMemory().with_searches([("web", "Fresnel lens"), ("rag", "Fresnel lens")], iteration=0)
    again = memory.with_searches([("web", "  fresnel   LENS "), ("web", "lamp changers"), ("web", "")], iteration=1)
    assert [(s.provider, s.text, s.iteration) for s in again.searched] == [
        ("web", "Fresnel lens", 0), ("rag", "Fresnel lens", 0), ("web", "lamp changers", 1)]
    assert again.has_searched("web", "FRESNEL lens") and not again.has_searched("pubmed", "Fresnel lens")
    assert again.searched_texts("web") == ["Fresnel lens", "lamp changers"] and again.searched_texts("pubmed") == []
    assert memory.with_searches([("web", "fresnel lens")], iteration=3) is memory  # nothing new: unchanged


def test_searches_are_bounded() -> None:
    memory = ResearchMemory().with_searches([("web", f"q{n}") for n in range(MAX_SEARCHED + 5)], iteration=0)
    assert len(memory.searched) == MAX_SEARCHED and memory.searched[-1].text == f"q{MAX_SEARCHED + 4}"


def test_the_memory_travels_in_the_envelope() -> None:
    env = JobEnvelope(job_id="j", user_id="u", stage=Stage.PLAN, request=ResearchRequest(question="q?"), deadline_at=utcnow())
    env = env.model_copy(update={"memory": env.memory.with_searches([("web", "a b")], iteration=0)})
    assert JobEnvelope.model_validate_json(env.model_dump_json()).memory.searched[0].text == "a b"


def test_a_scoring_pass_rebuilds_insights_gaps_and_contradictions() -> None:
    checklist = [
        ChecklistItem(id="c1", description="How Fresnel lenses focus light", status=CoverageStatus.SATISFIED, evidence=["cl1"]),
        ChecklistItem(id="c2", description="When lighthouse keepers were replaced by automation", status=CoverageStatus.PARTIAL),
        ChecklistItem(id="c3", description="Costs of running a lighthouse"),
    ]
    searched = ResearchMemory().with_searches(
        [("web", "lighthouse automation history"), ("rag", "Fresnel lens prisms"), ("web", "lighthouse running costs")], iteration=0)
    claims = [_claim("cl1", "Fresnel lenses bend light with prisms.", 0.9, items=["c1"]),
              _claim("cl2", "Keepers were replaced by automatic lamps.", 0.5, items=["c2"], contradicted=True),
              _claim("cl3", "Fresnel  lenses bend light with prisms.", 0.7, items=["c2"])]
    first = updated_memory(searched, claims, checklist, iteration=0)
    assert [(i.text, i.confidence, i.claim_ids, i.checklist_item_ids) for i in first.insights] == [
        ("Fresnel lenses bend light with prisms.", 0.9, ["cl1", "cl3"], ["c1", "c2"]),
        ("Keepers were replaced by automatic lamps.", 0.5, ["cl2"], ["c2"]),
    ]
    assert [(g.item_id, g.status, g.tried, g.open_since) for g in first.gaps] == [
        ("c2", "partial", ["lighthouse automation history"], 0),
        ("c3", "unsatisfied", ["lighthouse running costs"], 0),
    ]
    assert [(c.claim_id, c.contradicting_indices) for c in first.contradictions] == [("cl2", [1])]
    assert first.searched == searched.searched

    # The next pass: c2 now satisfied, c3 still open since pass 0; an insight keeps the
    # pass that first found it.
    checklist[1] = checklist[1].model_copy(update={"status": CoverageStatus.SATISFIED})
    second = updated_memory(first, [_claim("cl1", "Keepers were replaced by automatic lamps.", 0.8),
                                    _claim("cl2", "Lamp changers date from the 1960s.", 0.6)], checklist, iteration=1)
    assert [(g.item_id, g.open_since) for g in second.gaps] == [("c3", 0)]
    assert [(i.text, i.first_iteration) for i in second.insights] == [
        ("Keepers were replaced by automatic lamps.", 0), ("Lamp changers date from the 1960s.", 1)]
    assert second.contradictions == []
    assert second.gap_lines() == ["- c3 (unsatisfied, open since pass 1): Costs of running a lighthouse | tried: lighthouse running costs"]


def test_the_largest_memory_still_fits_the_largest_envelope() -> None:
    from shared.research.envelope import ScoredSource
    from shared.research.memory import MAX_CONTRADICTIONS, MAX_GAP_TRIED, MAX_INSIGHTS, TEXT_MAX_CHARS, Contradiction, Gap, Insight
    from shared.settings import DigestSettings
    from tests.unit.shared.test_envelope_size import NATS_MAX_PAYLOAD, _source

    settings = DigestSettings()
    sources = [_source(n, settings) for n in range(settings.research_max_sources_per_job)]
    scored = [ScoredSource(**s.model_dump(), authority_score=0.5, recency_score=0.5, relevance_component=0.5,
                           credibility_score=0.5, composite_score=0.5) for s in sources]
    claims = [Claim(id=f"k{n}", text="c" * 400, supporting_indices=list(range(5))) for n in range(100)]
    long_query = "q" * 1_000  # cut when recorded
    memory = ResearchMemory().with_searches([("pubmed", f"{n} {long_query}") for n in range(MAX_SEARCHED * 2)], iteration=9)
    checklist = [ChecklistItem(id=f"c{n}", description="d" * 2_000) for n in range(7)]
    memory = memory.model_copy(update={
        "insights": [Insight(text="i" * TEXT_MAX_CHARS, confidence=0.5, claim_ids=[f"cl{n}" for n in range(5)],
                             checklist_item_ids=[f"c{n}" for n in range(7)]) for _ in range(MAX_INSIGHTS)],
        "gaps": [Gap(item_id=c.id, description="d" * TEXT_MAX_CHARS, status="partial", tried=["q" * 200] * MAX_GAP_TRIED)
                 for c in checklist],
        "contradictions": [Contradiction(claim_id="cl1", text="t" * TEXT_MAX_CHARS, supporting_indices=list(range(5)),
                                         contradicting_indices=list(range(5))) for _ in range(MAX_CONTRADICTIONS)],
    })
    assert len(memory.searched) == MAX_SEARCHED and all(len(s.text) <= 200 for s in memory.searched)
    env = JobEnvelope(job_id="j", user_id="u", stage=Stage.SYNTHESIZE, request=ResearchRequest(question="q" * 4_000),
                      deadline_at=utcnow(), sources=sources, scored_sources=scored, claims=claims,
                      queries_run=["q" * 200] * 200, memory=memory)
    size = len(env.model_dump_json().encode())
    assert size < NATS_MAX_PAYLOAD, f"{size} bytes"
