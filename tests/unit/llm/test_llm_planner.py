"""The LLM layer and the planner against loopback fakes of the Anthropic Messages API
and an OpenAI-compatible server, through the real SDKs."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from services.decomposition.plan import first_plan
from services.decomposition.planner import clarifying_questions, plan_first, plan_refinement
from shared.research.envelope import (
    ChecklistItem,
    Claim,
    CoverageStatus,
    JobEnvelope,
    Plan,
    ResearchRequest,
    RetrievalMethod,
    SearchQuery,
    StageUsage,
    SubQuestion,
    Usage,
    utcnow,
)
from shared.platform.errors import ConfigurationError, TransientError
from shared.llm.budget import BUDGET_NOTE
from shared.llm.engine import LLMEngine, make_engine
from shared.llm.providers import LLMAuthError, LLMError, LLMUnavailable
from shared.settings import StageSettings
from shared.subjects import Stage
from shared.research.text import normalize_query
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Delay, Fail, ToolCall
from tests.fakes.openai import OpenAIFake

Q = "How does immunotherapy change survival in pleural mesothelioma?"

BRIEF = {
    "refined_question": "What is the effect of immune checkpoint inhibitors on overall survival in pleural mesothelioma?",
    "in_scope": ["adults", "first-line treatment"],
    "out_of_scope": ["peritoneal mesothelioma"],
    "key_terms": ["mesothelioma", "nivolumab", "ipilimumab", "overall survival"],
    "checklist": [
        "Survival benefit of checkpoint inhibitors versus chemotherapy",
        "Which histological subtypes benefit",
        "Adverse events and toxicity",
    ],
}
DECOMPOSITION = {
    "sub_questions": [
        {"question": "1. What survival benefit do checkpoint inhibitors give in mesothelioma?", "kind": "independent",
         "web_queries": ["checkpoint inhibitors mesothelioma survival"],
         "pubmed_queries": ['mesothelioma[mh] AND "immune checkpoint inhibitors"[tiab] AND survival[tiab]']},
        {"question": "2) Which histological subtypes benefit most?", "kind": "hybrid",
         "web_queries": ["mesothelioma histology immunotherapy benefit", "epithelioid vs sarcomatoid immunotherapy"],
         "pubmed_queries": ['(epithelioid OR sarcomatoid) AND mesothelioma AND "nivolumab"[tiab']},  # unbalanced
        {"question": "Summarize the trade-offs", "kind": "dependent", "web_queries": [], "pubmed_queries": []},
        {"question": "what survival benefit do checkpoint inhibitors give in mesothelioma?", "kind": "independent",
         "web_queries": ["dup"], "pubmed_queries": []},
    ]
}


def _settings(**env: str) -> StageSettings:
    return StageSettings(**{k.lower(): v for k, v in env.items()})


def _engine(fake: AnthropicFake | OpenAIFake, **extra: str) -> LLMEngine:
    env = {**fake.env(), "LLM_TIMEOUT_S": "5", "LLM_MAX_RETRIES": "2", **extra}
    if isinstance(fake, OpenAIFake):
        env.setdefault("OPENAI_MODEL", "local-model")
    return make_engine(_settings(**env))


@pytest.fixture
def anthropic() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


@pytest.fixture
def openai_compat() -> Iterator[OpenAIFake]:
    with OpenAIFake() as fake:
        yield fake


# -- provider selection ---------------------------------------------------------------


def test_auto_is_offline_without_a_key_and_claude_with_one(anthropic: AnthropicFake) -> None:
    assert make_engine(_settings(LLM_PROVIDER="auto")).offline
    engine = make_engine(_settings(ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=anthropic.base_url))
    assert not engine.offline and engine.label == "anthropic:claude-sonnet-5-5"


def test_misconfigured_providers_are_refused_at_start() -> None:
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        make_engine(_settings(LLM_PROVIDER="anthropic"))
    with pytest.raises(ConfigurationError, match="OPENAI_MODEL"):
        make_engine(_settings(LLM_PROVIDER="openai"))


# -- the planner against Claude ---------------------------------------------------------


async def test_plan_is_parsed_validated_and_follows_seed_000(anthropic: AnthropicFake) -> None:
    anthropic.tool(BRIEF).tool(DECOMPOSITION)
    llm = _engine(anthropic).bind("plan", Usage())
    plan = await plan_first(ResearchRequest(question=Q), llm, max_sub_questions=8)

    # The forced tool calls carried the pydantic schemas.
    brief_req, decompose_req = anthropic.requests
    assert brief_req.forced_tool == "record_brief" and "checklist" in brief_req.tool_schema["properties"]
    assert decompose_req.forced_tool == "record_sub_questions"
    assert f"<question>\n{Q}\n</question>" in brief_req.prompt and "data" in brief_req.system

    assert plan.refined_question == BRIEF["refined_question"]
    assert [c.description for c in plan.checklist] == BRIEF["checklist"]
    assert plan.out_of_scope == ["peritoneal mesothelioma"]
    # The parser's rules: original first, numbering stripped, case-insensitive duplicate dropped.
    assert [s.text for s in plan.sub_questions] == [
        Q,
        "What survival benefit do checkpoint inhibitors give in mesothelioma?",
        "Which histological subtypes benefit most?",
        "Summarize the trade-offs",
    ]
    assert [s.kind.value for s in plan.sub_questions] == ["independent", "independent", "hybrid", "dependent"]
    by = {p: [q.text for q in plan.queries if q.provider is p] for p in RetrievalMethod}
    # Only the independent steps search now: the hybrid one waits for its dependencies'
    # claims (its queries are written then), the dependent one never searches.
    assert by[RetrievalMethod.WEB][1:] == ["checkpoint inhibitors mesothelioma survival"]
    assert 'mesothelioma[mh] AND "immune checkpoint inhibitors"[tiab] AND survival[tiab]' in by[RetrievalMethod.PUBMED]
    assert len(by[RetrievalMethod.PUBMED]) == 2
    assert "Summarize the trade-offs" not in by[RetrievalMethod.RAG]
    assert "Which histological subtypes benefit most?" not in by[RetrievalMethod.RAG]
    # Steps without ids are numbered as the model listed them (the question it left out is
    # q0); kinds without dependencies need the earlier steps.
    assert [s.id for s in plan.sub_questions] == ["q0", "q1", "q2", "q3"]
    assert [s.depends_on for s in plan.sub_questions] == [[], [], ["q0", "q1"], ["q0", "q1", "q2"]]
    assert plan.step_order == ["q0", "q1"]
    assert plan.engine == "anthropic:claude-sonnet-5-5"

    # Token totals are what the fake reported, per stage.
    usage = llm.usage()
    assert usage.by_stage["plan"].calls == 2
    assert usage.input_tokens == anthropic.total_input_tokens > 0
    assert usage.output_tokens == anthropic.total_output_tokens > 0
    assert usage.by_stage["plan"].models == ["claude-sonnet-5-5"]


@pytest.mark.parametrize(("junk", "calls"), [
    (ToolCall(input={"sub_questions": "1. a\n2. b"}), 3),  # wrong shape: asked again, junk again
    (ToolCall(input={"sub_questions": []}), 3),  # empty
    (ToolCall(input={"sub_questions": [{"kind": "independent"}]}, stop_reason="max_tokens"), 3),  # truncated
    (ToolCall(input=["not", "an", "object"]), 3),
])
async def test_junk_sub_questions_fall_back_to_the_offline_steps(anthropic: AnthropicFake, junk: ToolCall, calls: int) -> None:
    anthropic.tool(BRIEF).script(junk, junk)
    llm = _engine(anthropic).bind("plan", Usage())
    notes: list[str] = []
    plan = await plan_first(ResearchRequest(question=Q), llm, max_sub_questions=8, notes=notes)
    offline = first_plan(ResearchRequest(question=Q))
    assert [s.text for s in plan.sub_questions] == [s.text for s in offline.sub_questions]
    assert plan.queries == offline.queries and {q.provider for q in plan.queries} == set(RetrievalMethod)
    assert notes and notes[0].startswith("steps: offline (the model's plan was unusable")
    assert [c.description for c in plan.checklist] == BRIEF["checklist"]  # the brief still counts
    assert llm.usage().by_stage["plan"].calls == calls
    assert llm.usage().total_tokens == anthropic.total_tokens  # the re-ask's tokens count too


async def test_junk_brief_uses_the_offline_brief(anthropic: AnthropicFake) -> None:
    anthropic.tool({"refined_question": "x", "checklist": ["only one"]}).tool(DECOMPOSITION)
    plan = await plan_first(ResearchRequest(question=Q), _engine(anthropic).bind("plan", Usage()), max_sub_questions=8)
    assert 3 <= len(plan.checklist) <= 7 and plan.refined_question == Q


async def test_more_than_eight_sub_questions_are_capped(anthropic: AnthropicFake) -> None:
    many = {"sub_questions": [{"question": f"Aspect number {n} of mesothelioma?", "web_queries": [f"aspect {n}"]} for n in range(12)]}
    anthropic.tool(BRIEF).tool(many)
    plan = await plan_first(ResearchRequest(question=Q), _engine(anthropic).bind("plan", Usage()), max_sub_questions=8)
    assert len(plan.sub_questions) == 8 and plan.sub_questions[0].text == Q


async def test_429_then_success_is_retried_after_retry_after(anthropic: AnthropicFake) -> None:
    anthropic.script(Fail(429, retry_after=0.6)).tool(BRIEF).tool(DECOMPOSITION)
    llm = _engine(anthropic).bind("plan", Usage())
    plan = await plan_first(ResearchRequest(question=Q), llm, max_sub_questions=8)
    assert plan.refined_question == BRIEF["refined_question"]
    first, second = anthropic.requests[0], anthropic.requests[1]
    assert first.status == 429 and second.status == 200
    assert second.received_at - first.received_at >= 0.55
    assert llm.usage().input_tokens == anthropic.total_input_tokens


@pytest.mark.parametrize("status", [500, 529])
async def test_server_errors_are_retried(anthropic: AnthropicFake, status: int) -> None:
    anthropic.script(Fail(status, retry_after=0)).tool(BRIEF).tool(DECOMPOSITION)
    plan = await plan_first(ResearchRequest(question=Q), _engine(anthropic).bind("plan", Usage()), max_sub_questions=8)
    assert plan.refined_question == BRIEF["refined_question"]


async def test_persistent_overload_is_transient_for_the_runner(anthropic: AnthropicFake) -> None:
    anthropic.script(*[Fail(529, retry_after=0)] * 3)
    with pytest.raises(LLMUnavailable) as info:
        await plan_first(ResearchRequest(question=Q), _engine(anthropic).bind("plan", Usage()), max_sub_questions=8)
    assert isinstance(info.value, TransientError) and "529" in str(info.value)
    assert len(anthropic.requests) == 3  # 1 + LLM_MAX_RETRIES


async def test_401_fails_naming_the_api_key(anthropic: AnthropicFake) -> None:
    engine = make_engine(_settings(ANTHROPIC_API_KEY="wrong-key", ANTHROPIC_BASE_URL=anthropic.base_url))
    with pytest.raises(LLMAuthError, match="ANTHROPIC_API_KEY"):
        await plan_first(ResearchRequest(question=Q), engine.bind("plan", Usage()), max_sub_questions=8)
    assert len(anthropic.requests) == 1  # never retried


@pytest.mark.parametrize(("status", "word"), [(400, "400"), (403, "permission")])
async def test_client_errors_are_permanent(anthropic: AnthropicFake, status: int, word: str) -> None:
    anthropic.fail(status)
    with pytest.raises(LLMError, match=word):
        await plan_first(ResearchRequest(question=Q), _engine(anthropic).bind("plan", Usage()), max_sub_questions=8)
    assert len(anthropic.requests) == 1


async def test_a_call_slower_than_the_timeout_is_abandoned_and_retried(anthropic: AnthropicFake) -> None:
    anthropic.script(Delay(3.0)).tool(BRIEF).tool(DECOMPOSITION)
    llm = _engine(anthropic, LLM_TIMEOUT_S="0.5").bind("plan", Usage())
    started = time.monotonic()
    plan = await plan_first(ResearchRequest(question=Q), llm, max_sub_questions=8)
    assert time.monotonic() - started < 3.0
    assert plan.refined_question == BRIEF["refined_question"]
    assert anthropic.requests[0].abandoned
    # The abandoned call was not billed, and is not counted as tokens.
    assert llm.usage().input_tokens == anthropic.total_input_tokens


async def test_the_budget_stops_model_calls(anthropic: AnthropicFake) -> None:
    spent = Usage(by_stage={"digest": StageUsage(input_tokens=900, output_tokens=100, calls=3)})
    engine = _engine(anthropic, RESEARCH_MAX_TOKENS_PER_JOB="1000")
    llm = engine.bind("plan", spent)
    plan = await plan_first(ResearchRequest(question=Q), llm, max_sub_questions=8)
    assert anthropic.requests == []  # nothing was sent
    assert plan.sub_questions[0].text == Q and llm.budget_hit
    env = _envelope(Plan(refined_question=Q, sub_questions=[], checklist=[]))
    assert BUDGET_NOTE in llm.apply(env).notes


async def test_budget_is_checked_before_each_call(anthropic: AnthropicFake) -> None:
    # The first call pushes the job over its budget: the second is not made.
    anthropic.tool(BRIEF, input_tokens=600, output_tokens=500)
    llm = _engine(anthropic, RESEARCH_MAX_TOKENS_PER_JOB="1000").bind("plan", Usage())
    plan = await plan_first(ResearchRequest(question=Q), llm, max_sub_questions=8)
    assert len(anthropic.requests) == 1 and llm.budget_hit
    assert plan.refined_question == BRIEF["refined_question"]
    assert llm.usage().total_tokens == 1100


# -- refinement and clarification ----------------------------------------------------------


def _envelope(plan: Plan, **changes: object) -> JobEnvelope:
    return JobEnvelope(job_id="j1", user_id="u", stage=Stage.PLAN, request=ResearchRequest(question=Q),
                       deadline_at=utcnow(), plan=plan, **changes)


async def test_refinement_never_repeats_a_query(anthropic: AnthropicFake) -> None:
    plan = Plan(
        refined_question=Q, sub_questions=[SubQuestion(text=Q)],
        checklist=[ChecklistItem(id="c1", description="Survival benefit", status=CoverageStatus.SATISFIED),
                   ChecklistItem(id="c2", description="Adverse events and toxicity", status=CoverageStatus.PARTIAL)],
        queries=[SearchQuery(provider=RetrievalMethod.WEB, text="mesothelioma immunotherapy toxicity")],
    )
    run = ["checkpoint inhibitors mesothelioma survival", "mesothelioma immunotherapy toxicity"]
    env = _envelope(plan, iteration=1, queries_run=run, knowledge_gaps=["Adverse events and toxicity"],
                    claims=[Claim(id="k1", text="Nivolumab improved survival.", supporting_indices=[0])])
    anthropic.tool({"queries": [{
        "item_id": "c2",
        "web_queries": ["  Mesothelioma  IMMUNOTHERAPY toxicity ", "nivolumab ipilimumab adverse events mesothelioma"],
        "pubmed_queries": ['mesothelioma[mh] AND "drug-related side effects and adverse reactions"[mh]'],
    }]})
    queries = await plan_refinement(env, _engine(anthropic).bind("plan", Usage()))
    prompt = anthropic.requests[0].prompt
    assert "c2 (partial): Adverse events and toxicity" in prompt and "c1" not in prompt.split("<open_items>")[1].split("</open_items>")[0]
    assert "Nivolumab improved survival." in prompt and "checkpoint inhibitors mesothelioma survival" in prompt
    texts = [(q.provider, q.text) for q in queries]
    assert (RetrievalMethod.WEB, "nivolumab ipilimumab adverse events mesothelioma") in texts
    assert (RetrievalMethod.RAG, "nivolumab ipilimumab adverse events mesothelioma") in texts
    assert all(normalize_query(t) not in {normalize_query(r) for r in run} for _, t in texts)
    assert all(q.iteration == 1 for q in queries)


async def test_refinement_with_only_repeats_uses_offline_variants(anthropic: AnthropicFake) -> None:
    plan = Plan(refined_question=Q, sub_questions=[SubQuestion(text=Q)],
                checklist=[ChecklistItem(id="c1", description="Toxicity")])
    env = _envelope(plan, iteration=1, queries_run=["toxicity mesothelioma"])
    anthropic.tool({"queries": [{"item_id": "c1", "web_queries": ["Toxicity  Mesothelioma"]}]})
    queries = await plan_refinement(env, _engine(anthropic).bind("plan", Usage()))
    assert queries and all(normalize_query(q.text) != "toxicity mesothelioma" for q in queries)


async def test_clarifying_questions_only_when_asked_for(anthropic: AnthropicFake) -> None:
    llm = _engine(anthropic).bind("plan", Usage())
    assert await clarifying_questions(ResearchRequest(question="Is it safe?"), llm) == []
    assert anthropic.requests == []
    anthropic.tool({"needs_clarification": True, "questions": ["Which drug?", "Which patients?", "Which dose?", "A fourth?"]})
    questions = await clarifying_questions(ResearchRequest(question="Is it safe?", clarify=True), llm)
    assert questions == ["Which drug?", "Which patients?", "Which dose?"]
    # Once answered, the planner does not ask again.
    answered = ResearchRequest(question="Is it safe?", clarify=True, clarification="Nivolumab in adults")
    assert await clarifying_questions(answered, llm) == []


async def test_offline_clarification_asks_for_short_questions() -> None:
    llm = LLMEngine(None).bind("plan", Usage())
    assert await clarifying_questions(ResearchRequest(question="Is it safe?", clarify=True), llm)
    assert await clarifying_questions(ResearchRequest(question=Q, clarify=True), llm) == []


# -- the same against an OpenAI-compatible server ---------------------------------------


async def test_openai_compatible_plan(openai_compat: OpenAIFake) -> None:
    openai_compat.tool(BRIEF).tool(DECOMPOSITION)
    llm = _engine(openai_compat).bind("plan", Usage())
    plan = await plan_first(ResearchRequest(question=Q), llm, max_sub_questions=8)
    assert plan.refined_question == BRIEF["refined_question"] and len(plan.sub_questions) == 4
    assert plan.engine == "openai:local-model"
    assert llm.usage().input_tokens == openai_compat.total_input_tokens
    assert llm.usage().output_tokens == openai_compat.total_output_tokens


async def test_openai_server_that_ignores_tools_and_lies_about_finish_reason() -> None:
    with OpenAIFake(ignore_tools=True, tool_finish_reason="stop") as fake:
        fake.tool(BRIEF).tool(DECOMPOSITION)
        plan = await plan_first(ResearchRequest(question=Q), _engine(fake).bind("plan", Usage()), max_sub_questions=8)
    assert plan.refined_question == BRIEF["refined_question"] and len(plan.sub_questions) == 4


async def test_openai_truncated_arguments_fall_back(openai_compat: OpenAIFake) -> None:
    cut = ToolCall(raw='{"sub_questions": [{"question": "What surv', stop_reason="length")
    openai_compat.tool(BRIEF).script(cut, cut)
    plan = await plan_first(ResearchRequest(question=Q), _engine(openai_compat).bind("plan", Usage()), max_sub_questions=8)
    assert [s.text for s in plan.sub_questions] == [s.text for s in first_plan(ResearchRequest(question=Q)).sub_questions]


async def test_openai_errors(openai_compat: OpenAIFake) -> None:
    engine = make_engine(_settings(LLM_PROVIDER="openai", OPENAI_BASE_URL=openai_compat.base_url,
                                   OPENAI_MODEL="m", OPENAI_API_KEY="wrong", LLM_MAX_RETRIES="0"))
    with pytest.raises(LLMAuthError, match="OPENAI_API_KEY"):
        await plan_first(ResearchRequest(question=Q), engine.bind("plan", Usage()), max_sub_questions=8)
    openai_compat.script(Fail(429, retry_after=0.2))
    openai_compat.tool(BRIEF).tool(DECOMPOSITION)
    plan = await plan_first(ResearchRequest(question=Q), _engine(openai_compat).bind("plan", Usage()), max_sub_questions=8)
    assert plan.refined_question == BRIEF["refined_question"]
