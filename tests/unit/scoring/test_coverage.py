"""Checklist coverage (services.scoring.coverage): whoever judged it, an item counts a
claim as its evidence only when the claim answers it by the coverage rule, and is
never satisfied without one; naming a claim that exists is not enough."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.scoring.coverage import apply_judgements, enforce, judge_coverage, offline_coverage
from services.scoring.schemas import ItemJudgement
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus, Usage
from shared.llm.engine import make_engine
from shared.settings import StageSettings
from tests.fakes.anthropic import AnthropicFake

QUESTION = "How did automation change lighthouse keeping?"
CHECKLIST = [
    ChecklistItem(id="c1", description="When lighthouse keepers left"),
    ChecklistItem(id="c2", description="How automated lighthouses are monitored"),
    ChecklistItem(id="c3", description="Costs of automation"),
]
CLAIMS = [
    Claim(id="cl1", text="The last keeper left Fair Isle South in 1998.", supporting_indices=[0]),
    Claim(id="cl2", text="Automation replaced resident keepers with remote monitoring.", supporting_indices=[0]),
    Claim(id="cl3", text="Automation raised maintenance costs at remote stations.", supporting_indices=[0]),
]


def _judge(*judgements: ItemJudgement) -> dict[str, ChecklistItem]:
    judged = apply_judgements(CHECKLIST, judgements, CLAIMS, offline_coverage(CHECKLIST, CLAIMS))
    return {item.id: item for item in judged}


def test_a_named_claim_that_does_not_answer_the_item_does_not_satisfy_it() -> None:
    # cl1 is about when keepers left: it names none of "automated", "monitored".
    out = _judge(ItemJudgement(item_id="c2", status="satisfied", claim_ids=["cl1"], reason="cl1 covers it"))
    c2 = out["c2"]
    assert (c2.status, c2.evidence) == (CoverageStatus.PARTIAL, [])
    assert c2.reason == ("judged satisfied, but the claims it names (cl1) are not about it"
                         " (fewer than two of its subject terms)")


def test_the_evidence_keeps_only_the_named_claims_that_answer_it() -> None:
    out = _judge(ItemJudgement(item_id="c3", status="satisfied", claim_ids=["cl1", "cl3", "cl9"], reason="costs given"))
    c3 = out["c3"]
    assert (c3.status, c3.evidence, c3.reason) == (CoverageStatus.SATISFIED, ["cl3"], "costs given")


def test_a_partial_judgement_stands_and_lists_only_answering_claims() -> None:
    out = _judge(ItemJudgement(item_id="c1", status="partial", claim_ids=["cl2", "cl1"], reason="no exact date"),
                 ItemJudgement(item_id="c2", status="partial", claim_ids=["cl3"], reason="only hints"))
    assert (out["c1"].status, out["c1"].evidence) == (CoverageStatus.PARTIAL, ["cl1"])
    # A partial item is a gap either way; the claim that does not answer it is not its evidence.
    assert (out["c2"].status, out["c2"].evidence, out["c2"].reason) == (CoverageStatus.PARTIAL, [], "only hints")


def test_an_item_the_model_left_out_keeps_the_offline_rule() -> None:
    out = _judge(ItemJudgement(item_id="c1", status="open", claim_ids=[], reason="no date"))
    assert out["c2"].evidence == ["cl2"] and out["c2"].status is CoverageStatus.PARTIAL
    assert (out["c2"].reason or "").startswith("not judged by the model; offline rule")


def test_enforce_applies_the_same_rule_to_any_assessment() -> None:
    claimed = [
        CHECKLIST[0].model_copy(update={"status": CoverageStatus.SATISFIED, "evidence": ["cl1", "cl2"]}),
        CHECKLIST[1].model_copy(update={"status": CoverageStatus.SATISFIED, "evidence": ["cl3"], "reason": "said so"}),
        CHECKLIST[2].model_copy(update={"status": CoverageStatus.SATISFIED, "evidence": ["cl42"]}),
    ]
    c1, c2, c3 = enforce(claimed, CLAIMS)
    assert (c1.status, c1.evidence) == (CoverageStatus.SATISFIED, ["cl1"])
    assert (c2.status, c2.evidence) == (CoverageStatus.PARTIAL, [])
    assert c2.reason == "said so, but the claims it names (cl3) are not about it (fewer than two of its subject terms)"
    assert (c3.status, c3.evidence) == (CoverageStatus.PARTIAL, []) and "cl42" in (c3.reason or "")
    open_item = enforce([CHECKLIST[0].model_copy(update={"status": CoverageStatus.SATISFIED})], CLAIMS)[0]
    assert open_item.status is CoverageStatus.UNSATISFIED


def test_the_offline_rule_is_left_as_it_is() -> None:
    offline = offline_coverage(CHECKLIST, CLAIMS)
    assert enforce(offline, CLAIMS) == offline


@pytest.fixture
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


async def test_the_models_judgement_is_overruled_through_the_whole_step(claude: AnthropicFake) -> None:
    claude.tool({"items": [
        {"item_id": "c1", "status": "satisfied", "claim_ids": ["cl1"], "reason": "year given"},
        {"item_id": "c2", "status": "satisfied", "claim_ids": ["cl3"], "reason": "remote stations"},
        {"item_id": "c3", "status": "satisfied", "claim_ids": ["cl3"], "reason": "costs given"},
    ]})
    env = {**claude.env(), "LLM_TIMEOUT_S": "30", "LLM_MAX_RETRIES": "0"}
    llm = make_engine(StageSettings(**{k.lower(): v for k, v in env.items()})).bind("score", Usage())
    checklist, notes = await judge_coverage(QUESTION, CHECKLIST, CLAIMS, llm)
    assert notes == []
    assert [(i.status, i.evidence) for i in checklist] == [
        (CoverageStatus.SATISFIED, ["cl1"]), (CoverageStatus.PARTIAL, []), (CoverageStatus.SATISFIED, ["cl3"])]
