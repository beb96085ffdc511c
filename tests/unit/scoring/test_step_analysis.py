"""Dependent steps: analysed from their dependencies' verified claims without a search,
their claims citing the underlying evidence and checked by the same verification as
every claim (a sentence its cited evidence does not support is rejected)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from services.scoring.analysis import ANALYSIS_TOOL, MAX_ANALYSIS_CLAIMS_PER_JOB, carried_claims, run_dependent_steps
from services.scoring.engine import SourceScorer
from services.scoring.claim_checks import Verifier
from shared.research.envelope import (
    ChecklistItem,
    Citation,
    Claim,
    CredibilityTier,
    Plan,
    RetrievalMethod,
    ScoredSource,
    Source,
    StepKind,
    SubQuestion,
    Usage,
)
from shared.llm.engine import make_engine
from shared.settings import StageSettings
from shared.research.steps import mark_ran
from shared.research.text import canonicalize, text_hash
from tests.fakes.anthropic import AnthropicFake

NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "Should a house in a cold climate use a heat pump or a gas boiler?"
PUMPS = canonicalize("Heat pumps deliver about three units of heat per unit of electricity in mild weather. "
                     "Their efficiency falls in severe cold.")
BOILERS = canonicalize("Modern condensing gas boilers convert about 90 percent of the fuel's energy into heat.")


def _source(sid: str, text: str, query: str) -> Source:
    return Source(id=sid, text=text, excerpt_start=0, url=f"https://example.org/{sid}", title=sid, relevance_score=0.8,
                  credibility_tier=CredibilityTier.SECONDARY, domain_authority=60, retrieval_method=RetrievalMethod.RAG,
                  text_hash=text_hash(text), text_chars=len(text), found_by=[query])


@pytest.fixture
def world() -> tuple[Plan, list[ScoredSource], list[Claim], Verifier]:
    scored = SourceScorer().score_all([_source("pumps", PUMPS, "heat pumps"), _source("boilers", BOILERS, "boilers")],
                                      now=NOW)
    index = {s.id: i for i, s in enumerate(scored)}
    first = PUMPS.split(". ")[0] + "."
    claims = [
        Claim(id="cl1", text=first, supporting_indices=[index["pumps"]], confidence_score=0.7,
              citations=[Citation(source_id="pumps", locator=f"char:0-{len(first)}", quote=first)]),
        Claim(id="cl2", text=BOILERS, supporting_indices=[index["boilers"]], confidence_score=0.6,
              citations=[Citation(source_id="boilers", locator=f"char:0-{len(BOILERS)}", quote=BOILERS)]),
    ]
    plan = Plan(refined_question=QUESTION, checklist=[ChecklistItem(id="c1", description="Which to choose")],
                sub_questions=[
                    SubQuestion(id="q1", text="How efficient are heat pumps?"),
                    SubQuestion(id="q2", text="How efficient are gas boilers?"),
                    SubQuestion(id="q3", text="Which is more efficient?", kind=StepKind.DEPENDENT, depends_on=["q1", "q2"]),
                    SubQuestion(id="q4", text="Recommend one", kind=StepKind.DEPENDENT, depends_on=["q3"]),
                ])
    plan = mark_ran(plan, ["q1", "q2"], 0, searched={"q1": ["heat pumps"], "q2": ["boilers"]})
    verifier = Verifier(scored, {s.text_hash: s.text for s in scored}, min_jaccard=0.8, min_support=0.6)
    return plan, scored, claims, verifier


def _offline():  # noqa: ANN202
    return make_engine(StageSettings(llm_provider="offline")).bind("score", Usage())


async def test_offline_a_dependent_step_combines_its_dependencies_claims_in_order(world) -> None:  # noqa: ANN001
    plan, scored, claims, verifier = world
    out = await run_dependent_steps(QUESTION, plan, claims, scored, [], _offline(), verifier, iteration=0)
    # q3 runs first; q4, which needs q3's claims, runs after it in the same pass.
    assert out.plan.step_order == ["q1", "q2", "q3", "q4"]
    assert [s.ran_in_iteration for s in out.plan.sub_questions] == [0, 0, 0, 0]
    q3 = [c for c in out.claims if c.id.startswith("q3.")]
    assert [c.text for c in q3] == [claims[0].text, claims[1].text]  # restated, no new reasoning
    assert [c.citations for c in q3] == [claims[0].citations, claims[1].citations]
    assert [c.id for c in out.claims] == ["q3.a1", "q3.a2", "q4.a1", "q4.a2"]
    assert out.rejected == []


async def test_a_dependent_step_waits_for_claims_of_every_dependency(world) -> None:  # noqa: ANN001
    plan, scored, claims, verifier = world
    out = await run_dependent_steps(QUESTION, plan, claims[:1], scored, [], _offline(), verifier, iteration=0)
    assert out.claims == [] and out.plan.step_order == ["q1", "q2"]


def test_carried_claims_follow_their_sources_through_a_new_order(world) -> None:  # noqa: ANN001
    _, scored, claims, verifier = world
    now = list(reversed(scored))
    carried, rejected = carried_claims([claims[0].model_copy(update={"id": "q3.a1"})],
                                       Verifier(now, verifier.texts, min_jaccard=0.8, min_support=0.6), iteration=1)
    assert carried[0].supporting_indices == [[s.id for s in now].index("pumps")]
    assert rejected == [] and carried[0].level == "quoted"


async def test_carried_claims_are_checked_again_and_failures_rejected(world) -> None:  # noqa: ANN001
    plan, scored, claims, verifier = world
    first = claims[0].citations[0]
    earlier = [
        claims[0].model_copy(update={"id": "q3.a1"}),
        # Says more than its quote: a figure the quote does not have.
        claims[0].model_copy(update={"id": "q3.a2", "text": "Heat pumps deliver about five units of heat per unit "
                                                             "of electricity in mild weather."}),
        # Its quote is not in the archived text.
        claims[0].model_copy(update={"id": "q3.a3", "text": "Heat pumps hum.", "citations": [
            first.model_copy(update={"quote": "Heat pumps hum."})]}),
        # Its only source is no longer among the job's.
        claims[0].model_copy(update={"id": "q3.a4", "citations": [first.model_copy(update={"source_id": "gone"})]}),
    ]
    carried, rejected = carried_claims(earlier, verifier, iteration=2)
    assert [c.id for c in carried] == ["q3.a1"]
    assert [(r.category, r.engine, r.iteration) for r in rejected] == [
        ("citation", "carried", 2), ("number", "carried", 2), ("quote", "carried", 2)]
    assert rejected[0].reason == "cites no current source"
    # A pass that analyses nothing new still reports them.
    done = mark_ran(plan, ["q3", "q4"], 0)
    out = await run_dependent_steps(QUESTION, done, claims, scored, earlier, _offline(), verifier, iteration=2)
    assert [c.id for c in out.claims] == ["q3.a1"] and len(out.rejected) == 3


@pytest.fixture
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


async def test_the_model_reasons_over_the_claims_and_what_its_evidence_does_not_support_is_rejected(
    world, claude: AnthropicFake,  # noqa: ANN001
) -> None:
    plan, scored, claims, verifier = world
    plan = plan.model_copy(update={"sub_questions": plan.sub_questions[:3]})
    claude.tool({"claims": [
        {"text": "Heat pumps deliver about three units of heat per unit of electricity, while condensing gas "
                 "boilers convert about 90 percent of the fuel's energy into heat.",
         "supporting": ["e1", "e2"], "checklist_item_ids": ["c1"]},
        {"text": "Heat pumps are always cheaper to run than gas boilers in 2024.", "supporting": ["e1"]},
        {"text": "Gas boilers are best.", "supporting": ["e9"]},
    ]})
    llm = make_engine(StageSettings(**{k.lower(): v for k, v in claude.env().items()})).bind("score", Usage())
    out = await run_dependent_steps(QUESTION, plan, claims, scored, [], llm, verifier, iteration=1)
    (request,) = claude.delivered
    assert request.forced_tool == ANALYSIS_TOOL
    # The dependencies' claims and their evidence reach the model as data.
    assert f'<finding step="q1">\n{claims[0].text}\n</finding>' in request.prompt
    assert f'<evidence id="e2">\n{BOILERS}\n</evidence>' in request.prompt
    assert '<step id="q3">' in request.prompt
    (kept,) = out.claims
    assert kept.id == "q3.a1" and kept.checklist_item_ids == ["c1"]
    assert {c.source_id for c in kept.citations} == {"pumps", "boilers"}
    assert {c.quote for c in kept.citations} == {claims[0].text, BOILERS}
    reasons = sorted(r.reason for r in out.rejected)
    assert len(reasons) == 2 and all(r.startswith("analysis of q3: ") for r in reasons)
    assert any("not grounded" in r for r in reasons) and any("unknown snippet e9" in r for r in reasons)
    assert out.plan.step_order == ["q1", "q2", "q3"]


async def test_analysis_claims_are_bounded_per_job(world) -> None:  # noqa: ANN001
    plan, scored, claims, verifier = world
    many = [SubQuestion(id=f"d{n}", text=f"Analysis {n}", kind=StepKind.DEPENDENT, depends_on=["q1", "q2"])
            for n in range(1, 5)]
    plan = plan.model_copy(update={"sub_questions": [*plan.sub_questions[:2], *many]})
    out = await run_dependent_steps(QUESTION, plan, claims, scored, [], _offline(), verifier, iteration=0)
    assert len(out.claims) == MAX_ANALYSIS_CLAIMS_PER_JOB == 6
    assert [c.id for c in out.claims] == ["d1.a1", "d1.a2", "d2.a1", "d2.a2", "d3.a1", "d3.a2"]
    assert out.plan.step_order == ["q1", "q2", "d1", "d2", "d3", "d4"]  # d4 ran, with no room left
