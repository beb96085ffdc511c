"""Cost in money: the price table (defaults, LLM_PRICES, matching, unpriced models),
each call's cost in the job's usage and trace, the cost limit as a reservation like the
token budget, and a council of three plus a separate verifier kept within the job's
token budget and cost limit. Through the real Anthropic SDK against the loopback fake."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic import BaseModel, Field, ValidationError

from shared.llm.council import Council
from shared.llm.budget import BUDGET_NOTE, COST_NOTE, MIN_OUTPUT_TOKENS
from shared.llm.engine import LLMEngine, make_engine
from shared.llm.pricing import DEFAULT_PRICES, Price, PriceTable, parse_prices
from shared.platform.errors import ConfigurationError
from shared.research.envelope import ResearchRequest, StageUsage, Usage
from shared.settings import StageSettings
from shared.verification.judge import Judge, JudgeItem, make_verifier_engine
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Delay, ToolCall
from tests.unit.synthesis.test_report import make_envelope


class Finding(BaseModel):
    """One finding."""

    statement: str = Field(min_length=3)


VALID = {"statement": "Lenses focus light"}
PROMPT = "Read the source and record one finding. " * 20


def _offline() -> Finding:
    return Finding(statement="offline")


def _settings(fake: AnthropicFake, **env: str) -> StageSettings:
    # (a time limit far above the fake's delays: on a loaded machine ten concurrent
    # calls may wait seconds for the fake to answer, and no test here is about timeouts)
    return StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "LLM_TIMEOUT_S": "30", "LLM_MAX_RETRIES": "0", "LLM_MAX_CONCURRENCY": "8", **env}.items()})


async def _ask(llm, max_tokens: int = 1024) -> Finding:  # noqa: ANN001
    return await llm.structured(Finding, system="You extract findings.", prompt=PROMPT, tool_name="record_finding",
                                offline=_offline, max_tokens=max_tokens)


@pytest.fixture
def anthropic() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


# -- the price table ---------------------------------------------------------------


def test_llm_prices_parse_into_per_million_prices() -> None:
    assert parse_prices("claude-x=3/15, gpt-y=0.15/0.6,llama3.1:8b=0") == {
        "claude-x": Price(3, 15), "gpt-y": Price(0.15, 0.6), "llama3.1:8b": Price(0, 0)}
    assert parse_prices("openai:Gpt-Z=1/2") == {"gpt-z": Price(1, 2)}  # provider prefix and case dropped
    assert parse_prices("") == {}
    for bad in ("claude-x", "claude-x=3", "claude-x=a/b", "=3/15", "claude-x=-1/2", "claude-x=1/2/3"):
        with pytest.raises(ConfigurationError, match="LLM_PRICES"):
            parse_prices(bad)


def test_a_bad_llm_prices_setting_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="LLM_PRICES"):
        StageSettings(llm_prices="claude-x=three/15")
    assert StageSettings(llm_prices="claude-x=3/15").llm_prices == "claude-x=3/15"
    assert StageSettings().research_max_cost_usd is None


def test_models_match_their_entry_or_the_longest_family_prefix() -> None:
    table = PriceTable(parse_prices("my-local=0,claude-sonnet=4/20"))
    assert table.price("claude-sonnet-5-5") == Price(4, 20)  # the default model: the family's entry, overridden
    assert table.price("claude-opus-4-5-20251101") == DEFAULT_PRICES["claude-opus-4-5"]  # longest prefix wins
    assert table.price("claude-opus-4-1") == DEFAULT_PRICES["claude-opus"]
    assert table.price("gpt-4o-mini-2024-07-18") == DEFAULT_PRICES["gpt-4o-mini"]
    assert table.price("gpt-4o-2024-08-06") == DEFAULT_PRICES["gpt-4o"]
    assert table.price("anthropic:claude-haiku-4-5") == DEFAULT_PRICES["claude-haiku"]
    assert table.price("my-local") == Price(0, 0) and table.price("my-local").free  # priced at nothing
    assert table.price("llama3.1:8b") is None  # a local model: unpriced, not free
    assert table.price("claude-sonnetx") is None  # a prefix must end at a separator
    assert table.cost("claude-sonnet-5-5", 1_000_000, 100_000) == pytest.approx(4 + 2)
    assert table.cost("llama3.1:8b", 1000, 1000) is None


def test_usage_sums_cost_and_names_unpriced_models() -> None:
    usage = Usage(by_stage={
        "plan": StageUsage(input_tokens=10, cost_usd=0.0012, models=["claude-sonnet-5-5"]),
        "digest": StageUsage(input_tokens=10, cost_usd=0.0, models=["llama3.1:8b"], unpriced_models=["llama3.1:8b"]),
        "score": StageUsage(cost_usd=0.0034, unpriced_models=["llama3.1:8b"]),
    })
    assert usage.cost_usd == pytest.approx(0.0046) and usage.unpriced_models == ["llama3.1:8b"]
    assert Usage().cost_usd == 0 and Usage().unpriced_models == []
    assert ResearchRequest(question="q", max_cost_usd=0.5).max_cost_usd == 0.5
    with pytest.raises(ValidationError):
        ResearchRequest(question="q", max_cost_usd=0)


# -- each call's cost --------------------------------------------------------------------


async def test_each_call_is_priced_by_the_model_that_answered(anthropic: AnthropicFake) -> None:
    anthropic.responder = lambda rec: ToolCall(input=VALID, input_tokens=2000, output_tokens=500)
    llm = make_engine(_settings(anthropic, LLM_PRICES="claude-sonnet=3/15")).bind("score", Usage())
    await _ask(llm)
    await _ask(llm)
    stage = llm.usage().by_stage["score"]
    assert stage.cost_usd == pytest.approx(2 * (2000 * 3 + 500 * 15) / 1e6)  # $0.027
    assert stage.unpriced_models == [] and llm.usage().cost_usd == pytest.approx(0.027)


async def test_an_unpriced_model_costs_zero_and_is_named(anthropic: AnthropicFake) -> None:
    anthropic.responder = lambda rec: ToolCall(input=VALID, input_tokens=2000, output_tokens=500)
    llm = make_engine(_settings(anthropic, ANTHROPIC_MODEL="house-model-1")).bind("score", Usage())
    await _ask(llm)
    stage = llm.usage().by_stage["score"]
    assert stage.cost_usd == 0 and stage.unpriced_models == ["house-model-1"]


# -- the cost limit as a reservation ---------------------------------------------------------


async def test_concurrent_calls_reserve_their_cost_so_the_job_stays_within_its_limit(anthropic: AnthropicFake) -> None:
    # Ten slow calls at once, each answering its full max_tokens: only what the limit
    # can pay for is sent, shortened where it does not fit whole, the rest is offline.
    anthropic.responder = lambda rec: Delay(0.3, ToolCall(input=VALID, output_tokens=rec.body["max_tokens"]))
    limit = 0.05
    llm = make_engine(_settings(anthropic, LLM_PRICES="claude-sonnet=3/15")).bind("score", Usage(), max_cost_usd=limit)
    answers = await asyncio.gather(*(_ask(llm) for _ in range(10)))
    spent = sum((r.input_tokens * 3 + r.output_tokens * 15) / 1e6 for r in anthropic.delivered)
    assert spent == pytest.approx(llm.usage().cost_usd, abs=1e-6)
    assert spent <= limit * 1.1
    made = len(anthropic.delivered)
    assert 1 <= made < 10 and llm.cost_hit and not llm.budget_hit
    assert sum(a.statement == "offline" for a in answers) == 10 - made
    assert all(MIN_OUTPUT_TOKENS <= r.body["max_tokens"] <= 1024 for r in anthropic.delivered)
    envelope = llm.apply(make_envelope())
    assert COST_NOTE in envelope.notes and BUDGET_NOTE not in envelope.notes
    assert llm.budget_spent and llm.spent_notes() == [COST_NOTE]


async def test_the_request_s_limit_overrides_the_setting_and_earlier_stages_count(anthropic: AnthropicFake) -> None:
    anthropic.responder = lambda rec: ToolCall(input=VALID, input_tokens=1000, output_tokens=300)
    engine = make_engine(_settings(anthropic, LLM_PRICES="claude-sonnet=3/15", RESEARCH_MAX_COST_USD="0.001"))
    assert engine.max_cost_usd == 0.001
    assert (await _ask(engine.bind("score", Usage()))).statement == "offline"  # $0.001 pays for no call
    roomy = engine.bind("score", Usage(), max_cost_usd=1.0)
    assert roomy.max_cost_usd == 1.0 and (await _ask(roomy)).statement != "offline"
    # $0.998 spent by earlier stages: what is left does not pay for this call.
    before = Usage(by_stage={"plan": StageUsage(input_tokens=1, cost_usd=0.998)})
    late = engine.bind("score", before, max_cost_usd=1.0)
    assert (await _ask(late)).statement == "offline" and late.cost_hit


async def test_an_unpriced_model_is_bounded_by_the_token_budget_only(anthropic: AnthropicFake) -> None:
    anthropic.responder = lambda rec: ToolCall(input=VALID, input_tokens=1000, output_tokens=300)
    llm = make_engine(_settings(anthropic, ANTHROPIC_MODEL="house-model-1")).bind("score", Usage(), max_cost_usd=1e-6)
    assert (await _ask(llm)).statement != "offline" and not llm.cost_hit


# -- a council of three (and a separate verifier) within the job's limits ------------------------


def _members(fakes: list[AnthropicFake], **env: str) -> list[LLMEngine]:
    return [make_engine(_settings(f, ANTHROPIC_MODEL=f"claude-sonnet-member-{n}", **env)) for n, f in enumerate(fakes)]


def _slow_full_answers(fake: AnthropicFake, answer: dict) -> None:
    fake.responder = lambda rec: Delay(0.3, ToolCall(input=answer, output_tokens=rec.body["max_tokens"]))


@pytest.fixture
def council_fakes() -> Iterator[list[AnthropicFake]]:
    with AnthropicFake() as a, AnthropicFake() as b, AnthropicFake() as c:
        yield [a, b, c]


async def test_a_council_of_three_stays_within_the_job_s_token_budget(
        anthropic: AnthropicFake, council_fakes: list[AnthropicFake]) -> None:
    # Each member used to reserve against its own copy of the reservation: with a
    # 3,000-token budget three members spent 6,072 tokens.
    budget = 3000
    for fake in council_fakes:
        _slow_full_answers(fake, {"agree": True, "reasons": ["fine"]})
    llm = make_engine(_settings(anthropic, RESEARCH_MAX_TOKENS_PER_JOB=str(budget))).bind("synthesize", Usage())
    council = Council(_members(council_fakes, RESEARCH_MAX_TOKENS_PER_JOB=str(budget)))
    envelope = make_envelope()
    reviews = await council.review_findings(envelope, envelope.claims, llm)
    spent = sum(f.total_tokens for f in council_fakes)
    assert len(reviews) == 3 and spent <= budget * 1.1
    assert llm.tokens_used() == spent and llm.usage().total_tokens == spent
    assert llm._reserved == 0


async def test_a_council_of_three_and_the_verifier_stay_within_the_job_s_cost_limit(
        anthropic: AnthropicFake, council_fakes: list[AnthropicFake]) -> None:
    limit = 0.03
    prices = "claude-sonnet=3/15"
    for fake in council_fakes:
        _slow_full_answers(fake, {"agree": False, "reasons": ["a figure looks wrong"]})
    with AnthropicFake() as verifier_fake:
        _slow_full_answers(verifier_fake, {"judgements": []})
        settings = _settings(anthropic, LLM_PRICES=prices)
        llm = make_engine(settings).bind("synthesize", Usage(), max_cost_usd=limit)
        council = Council(_members(council_fakes, LLM_PRICES=prices))
        verifier = make_verifier_engine(_settings(verifier_fake, LLM_PRICES=prices,
                                                  RESEARCH_VERIFIER_MODEL="anthropic:claude-sonnet-judge"), llm.engine)
        assert verifier is not None and verifier is not llm.engine
        judge = Judge(llm, verifier)
        envelope = make_envelope()
        items = [JudgeItem(statement=f"statement {n} " * 10, quotes=[f"quote {n} " * 30]) for n in range(30)]
        reviews, outcome = await asyncio.gather(council.review_findings(envelope, envelope.claims, llm),
                                                judge.judge(items))
        fakes = [*council_fakes, verifier_fake]
        spent = sum((r.input_tokens * 3 + r.output_tokens * 15) / 1e6 for f in fakes for r in f.delivered)
        assert len(reviews) == 3 and spent <= limit * 1.1
        assert llm.usage().cost_usd == pytest.approx(spent, abs=1e-6)
        assert llm.cost_hit and COST_NOTE in llm.apply(envelope).notes  # not everything fitted
        assert len(verifier_fake.delivered) < 3  # three batches asked, the limit paid for fewer
        assert outcome.status.endswith("run: the job's cost limit was reached")


# -- where the cost is shown -------------------------------------------------------------------


def test_the_cli_shows_the_job_s_cost_so_far_and_its_unpriced_models() -> None:
    from services.cli.view import JobView, plain_line, render_to_text

    usage = {"by_stage": {"plan": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0081},
                          "digest": {"input_tokens": 500, "output_tokens": 34, "cost_usd": 0.0,
                                     "unpriced_models": ["llama3.1:8b"]}}}
    done = {"type": "stage", "stage": "digest", "iteration": 0, "state": "done", "duration_s": 1.0, "usage": usage}
    view = JobView("job-1")
    view.apply(done)
    text = render_to_text(view)
    assert "2,034" in text and "$0.0081 + unpriced: llama3.1:8b" in text
    assert plain_line(done) == "  digest     done in 1.00s  (2,034 tokens, $0.0081 + unpriced: llama3.1:8b so far)"
    offline = {**done, "usage": {"by_stage": {}}}
    assert plain_line(offline) == "  digest     done in 1.00s"
    assert "cost" not in render_to_text(JobView("job-2"))


def test_the_methodology_states_the_cost_with_the_synthesis_stage_s_calls() -> None:
    from services.synthesis.cost import cost_line, with_cost
    from services.synthesis.report import build_report

    assert cost_line(Usage()) is None  # no model called: no cost line
    before = Usage(by_stage={"plan": StageUsage(input_tokens=1000, output_tokens=200, calls=1, cost_usd=0.006)})
    result = build_report(make_envelope().model_copy(update={"usage": before}), partial_reason=None)
    assert "- Cost: $0.0060 (model prices as configured), 1 model call, 1,200 tokens." in result.report
    after = Usage(by_stage={**before.by_stage, "synthesize": StageUsage(
        input_tokens=3000, output_tokens=800, calls=2, cost_usd=0.0213, unpriced_models=["house-model-1"])})
    final = with_cost(result.model_copy(update={"usage": after}))
    line = ("- Cost: $0.0273 (model prices as configured; not counted: the calls of `house-model-1`, which no price is "
            "configured for (LLM_PRICES)), 3 model calls, 5,000 tokens.")
    for text in (final.report, final.output.answer):
        assert line in text and "$0.0060" not in text
    # A report written with no model call before synthesis gets the line from the final usage.
    offline = build_report(make_envelope().model_copy(update={"usage": Usage()}), partial_reason=None)
    assert "Cost: $" not in offline.report
    assert line in with_cost(offline.model_copy(update={"usage": after})).report


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:11434/v1", True), ("http://localhost:8000/v1", True), ("http://ollama:11434/v1", True),
    ("http://192.168.1.20:8080/v1", True), ("http://gpu-box.local/v1", True), ("http://[::1]:8000/v1", True),
    ("https://api.openai.com/v1", False), ("https://api.together.xyz/v1", False), (None, False), ("", False),
])
def test_a_server_on_this_network_is_local(url: str | None, local: bool) -> None:
    from shared.llm.pricing import on_this_network

    assert on_this_network(url) is local


def test_a_model_you_run_costs_nothing_and_a_paid_api_s_unknown_model_is_unpriced() -> None:
    from shared.llm.engine import LLMEngine
    from shared.llm.pricing import LOCAL_PRICE

    class Server:
        name = "openai"  # an OpenAI-compatible server; Anthropic's API is never run locally

        def __init__(self, model: str, base_url: str | None) -> None:
            self.model, self.base_url = model, base_url

    assert LLMEngine(Server("llama3.1:8b", "http://127.0.0.1:11434/v1")).price() == LOCAL_PRICE  # type: ignore[arg-type]
    assert LLMEngine(Server("llama3.1:8b", "https://api.example.com/v1")).price() is None  # type: ignore[arg-type]
    assert LLMEngine(Server("gpt-4o", "http://127.0.0.1:8000/v1")).price().input_per_mtok == 2.5  # type: ignore[arg-type]
