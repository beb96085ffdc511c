"""The token budget as a reservation, and the re-ask on invalid output, through the
real Anthropic SDK against the loopback fake of the Messages API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pydantic import BaseModel, Field

from shared.research.envelope import StageUsage, Usage
from shared.llm.budget import estimate_tokens
from shared.llm.budget import BUDGET_NOTE, MIN_OUTPUT_TOKENS
from shared.llm.engine import make_engine
from shared.llm.providers import LLMInvalidOutput, LLMUnavailable
from shared.settings import StageSettings
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Delay, ToolCall


class Finding(BaseModel):
    """One finding with its support."""

    statement: str = Field(min_length=3)
    support: list[str] = Field(min_length=1)
    confidence: float = Field(ge=0, le=1)


VALID = {"statement": "Lenses focus light", "support": ["a quote"], "confidence": 0.8}
SYSTEM = "You extract findings."
PROMPT = "Read the source and record one finding. " * 20


def _llm(fake: AnthropicFake, budget: int, usage: Usage | None = None, **env: str):  # noqa: ANN202
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "LLM_TIMEOUT_S": "5", "LLM_MAX_RETRIES": "0", "RESEARCH_MAX_TOKENS_PER_JOB": str(budget),
        "LLM_MAX_CONCURRENCY": "8", **env}.items()})
    return make_engine(settings).bind("score", usage or Usage())


def _offline() -> Finding:
    return Finding(statement="offline", support=["none"], confidence=0)


async def _ask(llm, max_tokens: int = 1024) -> Finding:  # noqa: ANN001
    return await llm.structured(Finding, system=SYSTEM, prompt=PROMPT, tool_name="record_finding",
                                offline=_offline, max_tokens=max_tokens)


@pytest.fixture
def anthropic() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


async def test_concurrent_calls_reserve_so_the_job_stays_within_its_budget(anthropic: AnthropicFake) -> None:
    # Ten calls at once, each answered slowly with a full max_tokens of output: under
    # the old check all ten passed (nothing had finished yet) and spent ~6x the budget.
    budget = 3000
    anthropic.responder = lambda rec: Delay(0.3, ToolCall(input=VALID, output_tokens=rec.body["max_tokens"]))
    llm = _llm(anthropic, budget)
    answers = await asyncio.gather(*(_ask(llm) for _ in range(10)))
    assert anthropic.total_tokens <= budget * 1.1
    assert llm.tokens_used() == anthropic.total_tokens
    made = len(anthropic.delivered)
    assert 1 <= made < 10 and llm.budget_hit
    assert sum(a.statement == "offline" for a in answers) == 10 - made
    # A call that did not fit whole was sent with a smaller max_tokens.
    sent = [r.body["max_tokens"] for r in anthropic.delivered]
    assert all(MIN_OUTPUT_TOKENS <= m <= 1024 for m in sent)
    assert BUDGET_NOTE in llm.apply(_envelope()).notes


async def test_a_call_whose_input_alone_exceeds_the_budget_is_not_made(anthropic: AnthropicFake) -> None:
    huge = "word " * 8000  # ~37,000 characters: about 12,000 tokens estimated
    llm = _llm(anthropic, 3000)
    answer = await llm.structured(Finding, system=SYSTEM, prompt=huge, tool_name="record_finding", offline=_offline)
    assert answer.statement == "offline" and anthropic.requests == [] and llm.budget_hit
    assert estimate_tokens(huge) > 3000


async def test_the_estimate_errs_high_against_the_billed_input(anthropic: AnthropicFake) -> None:
    anthropic.tool(VALID)
    llm = _llm(anthropic, 100_000)
    await _ask(llm)
    billed = anthropic.delivered[0].input_tokens
    schema_chars = len(str(Finding.model_json_schema()))
    assert billed <= estimate_tokens(SYSTEM, PROMPT, "x" * schema_chars, Finding.__doc__ or "") <= billed * 1.6


async def test_earlier_spend_and_a_timed_out_call_count(anthropic: AnthropicFake) -> None:
    spent = Usage(by_stage={"digest": StageUsage(input_tokens=2000, output_tokens=500, calls=3)})
    anthropic.script(Delay(3.0))
    llm = _llm(anthropic, 4000, spent, LLM_TIMEOUT_S="0.3")
    with pytest.raises(LLMUnavailable):
        await _ask(llm)
    # Not billed by the fake, but the provider might have: the input estimate counts.
    estimate = llm.calls[0].charged
    assert estimate > 0 and llm.tokens_used() == 2500 + estimate
    assert llm.usage().total_tokens == 2500  # the envelope reports billed tokens only


async def test_an_invalid_answer_is_asked_again_once_with_the_error(anthropic: AnthropicFake) -> None:
    anthropic.tool({"statement": "x", "support": [], "confidence": 7}).tool(VALID)
    llm = _llm(anthropic, 100_000)
    answer = await _ask(llm)
    assert answer == Finding.model_validate(VALID)
    first, second = anthropic.delivered
    assert second.forced_tool == "record_finding"
    assert "failed validation" in second.prompt and "support" in second.prompt and "confidence" in second.prompt
    assert "Answer again by calling record_finding" in second.prompt
    roles = [m["role"] for m in second.body["messages"]]
    assert roles == ["user", "assistant", "user"]  # the junk answer, then the complaint
    assert llm.usage().by_stage["score"].calls == 2
    assert llm.usage().total_tokens == anthropic.total_tokens == llm.tokens_used()


async def test_no_tool_call_is_asked_again_and_a_second_failure_raises(anthropic: AnthropicFake) -> None:
    anthropic.text("I would rather chat.").tool({"statement": "no"})
    llm = _llm(anthropic, 100_000)
    with pytest.raises(LLMInvalidOutput, match="asked twice"):
        await _ask(llm)
    assert "did not call the record_finding tool" in anthropic.delivered[1].prompt
    assert llm.usage().by_stage["score"].calls == 2 and llm.tokens_used() == anthropic.total_tokens


def _envelope():  # noqa: ANN202
    from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow
    from shared.subjects import Stage

    return JobEnvelope(job_id="j1", user_id="u", stage=Stage.SCORE, request=ResearchRequest(question="Why?"),
                       deadline_at=utcnow())


async def test_the_re_ask_speaks_the_openai_compatible_format_too() -> None:
    from tests.fakes.openai import OpenAIFake

    with OpenAIFake() as fake:
        fake.tool({"statement": "x", "support": "not a list", "confidence": 0.5}).tool(VALID)
        env = {**fake.env(), "OPENAI_MODEL": "local-model", "LLM_MAX_RETRIES": "0"}
        llm = make_engine(StageSettings(**{k.lower(): v for k, v in env.items()})).bind("score", Usage())
        assert await _ask(llm) == Finding.model_validate(VALID)
        second = fake.delivered[1]
        assert [m["role"] for m in second.body["messages"]] == ["system", "user", "assistant", "user"]
        assert "failed validation" in second.prompt and "support" in second.prompt
        assert llm.usage().total_tokens == fake.total_tokens
