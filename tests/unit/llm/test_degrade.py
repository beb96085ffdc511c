"""Degrade, don't fail: a stage's JobLLM whose provider is unavailable after the SDK's
retries answers that call and every later one of the job offline, records since when
on the envelope, and keeps the budget right; invalid output and auth errors still
raise, and so do bindings that do not degrade (a tool's, a council member's copy).
Through the real Anthropic SDK against the loopback fake of the Messages API."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from datetime import timedelta

import pytest
from pydantic import BaseModel, Field

from services.synthesis.report import build_report
from services.synthesis.writer import write_report
from shared.llm.engine import JobLLM, LLMEngine, make_engine
from shared.llm.providers import LLMAuthError, LLMInvalidOutput, LLMUnavailable
from shared.research.envelope import Degraded, JobEnvelope, ResearchRequest, Usage, utcnow
from shared.settings import StageSettings
from shared.subjects import Stage
from shared.verification.judge import Judge
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Fail, ToolCall
from tests.unit.synthesis.test_report import make_envelope


class Finding(BaseModel):
    """One finding."""

    statement: str = Field(min_length=3)


VALID = {"statement": "Lenses focus light"}
OFFLINE = Finding(statement="offline")


class Ledger:
    """The spend ledger in memory: what every attempt added, per job."""

    def __init__(self) -> None:
        self.tokens: dict[str, int] = {}

    async def spent(self, job_id: str) -> int:
        return self.tokens.get(job_id, 0)

    async def add(self, job_id: str, tokens: int) -> None:
        self.tokens[job_id] = self.tokens.get(job_id, 0) + tokens


def _engine(fake: AnthropicFake, **env: str) -> LLMEngine:
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "LLM_TIMEOUT_S": "5", "LLM_MAX_RETRIES": "0", **env}.items()})
    return make_engine(settings)


def _stage(engine: LLMEngine, degraded: Degraded | None = None, **kw: object) -> JobLLM:
    """A binding as the stage runner makes it: degrading, at iteration 2."""
    return engine.bind("score", Usage(), degrade=True, degraded=degraded, iteration=2, **kw)  # type: ignore[arg-type]


async def _ask(llm: JobLLM) -> Finding:
    return await llm.structured(Finding, system="You extract.", prompt="Record one finding. " * 10,
                                tool_name="record_finding", offline=lambda: OFFLINE)


def _envelope(**changes: object) -> JobEnvelope:
    return JobEnvelope(job_id="j1", user_id="u", stage=Stage.SCORE, request=ResearchRequest(question="Why?"),
                       deadline_at=utcnow() + timedelta(minutes=5), **changes)  # type: ignore[arg-type]


@pytest.fixture
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


async def test_an_unavailable_provider_answers_offline_and_is_not_asked_again(claude: AnthropicFake) -> None:
    claude.responder = lambda rec: Fail(529)
    ledger = Ledger()
    llm = _stage(_engine(claude), job_id="j1", ledger=ledger)
    assert await _ask(llm) == OFFLINE
    assert len(claude.requests) == 1  # 1 + LLM_MAX_RETRIES, then no redelivery
    assert llm.offline and llm.unavailable is not None
    assert (llm.unavailable.stage, llm.unavailable.iteration) == ("score", 2) and "529" in llm.unavailable.reason
    # Later calls, structured or text, do not reach the provider.
    assert await _ask(llm) == OFFLINE
    assert await llm.text(system="s", prompt="p", offline=lambda: "offline text") == "offline text"
    assert len(claude.requests) == 1
    # The failed call keeps its input estimate charged, its reservation is released.
    [failed] = llm.calls
    assert not failed.ok and failed.charged > 0 and llm._reserved == 0
    assert llm.tokens_used() == failed.charged == ledger.tokens["j1"]
    usage = llm.usage().by_stage["score"]
    assert (usage.calls, usage.degraded_calls, usage.input_tokens + usage.output_tokens) == (1, 3, 0)
    # The envelope records it for later stages; the first record stands.
    marked = llm.apply(_envelope())
    assert marked.degraded == llm.unavailable
    earlier = Degraded(stage="digest", iteration=0, reason="earlier")
    assert llm.apply(_envelope(degraded=earlier)).degraded == earlier


async def test_a_stage_of_a_degraded_job_never_waits_on_the_provider(claude: AnthropicFake) -> None:
    claude.tool(VALID)
    since = Degraded(stage="digest", iteration=0, reason="Anthropic is unavailable (529)")
    llm = _stage(_engine(claude), degraded=since)
    assert llm.offline and llm.unavailable == since
    assert await _ask(llm) == OFFLINE
    assert claude.requests == [] and llm.calls == []
    assert llm.usage().by_stage["score"].degraded_calls == 1
    assert llm.apply(_envelope(degraded=since)).degraded == since


async def test_calls_waiting_for_a_slot_are_not_sent_once_the_provider_is_found_down(claude: AnthropicFake) -> None:
    claude.responder = lambda rec: Fail(529)
    ledger = Ledger()
    llm = _stage(_engine(claude, LLM_MAX_CONCURRENCY="1"), job_id="j1", ledger=ledger)
    answers = await asyncio.gather(*(_ask(llm) for _ in range(4)))
    assert answers == [OFFLINE] * 4
    assert len(claude.requests) == 1 and len(llm.calls) == 1
    # The waiting calls' reservations and ledger entries were taken back: only the
    # failed call's input estimate counts.
    assert llm._reserved == 0 and ledger.tokens["j1"] == llm.calls[0].charged == llm.tokens_used()
    assert llm.usage().by_stage["score"].degraded_calls == 4


async def test_a_re_ask_that_finds_the_provider_down_answers_offline(claude: AnthropicFake) -> None:
    claude.script(ToolCall(input={"statement": 3}), Fail(529))
    llm = _stage(_engine(claude))
    assert await _ask(llm) == OFFLINE
    assert llm.unavailable is not None and len(claude.requests) == 2


async def test_invalid_output_still_raises_and_does_not_degrade(claude: AnthropicFake) -> None:
    claude.tool({"statement": 3}).tool({"statement": 4})
    llm = _stage(_engine(claude))
    with pytest.raises(LLMInvalidOutput):
        await _ask(llm)
    assert llm.unavailable is None and not llm.offline
    claude.tool(VALID)
    assert await _ask(llm) == Finding.model_validate(VALID)  # the provider is still asked


async def test_a_rejected_key_still_fails(claude: AnthropicFake) -> None:
    llm = _stage(_engine(claude, ANTHROPIC_API_KEY="sk-ant-wrong"))
    with pytest.raises(LLMAuthError, match="ANTHROPIC_API_KEY"):
        await _ask(llm)
    assert llm.unavailable is None


async def test_a_tool_binding_still_raises_unavailable(claude: AnthropicFake) -> None:
    claude.responder = lambda rec: Fail(529)
    llm = _engine(claude).bind("check", Usage())
    with pytest.raises(LLMUnavailable):
        await _ask(llm)
    assert llm.unavailable is None and llm._reserved == 0


async def test_a_copy_on_another_engine_is_not_degraded_with_the_job(claude: AnthropicFake) -> None:
    """A council member (or a separate verifier) is another provider: its failure is its
    caller's to report, and the job's unavailability does not silence it."""
    with AnthropicFake() as member_fake:
        member_fake.responder = lambda rec: Fail(529)
        llm = _stage(_engine(claude))
        member = dataclasses.replace(llm, engine=_engine(member_fake))
        with pytest.raises(LLMUnavailable):
            await _ask(member)
        assert llm.unavailable is None and member.unavailable is None

        claude.responder = lambda rec: Fail(529)
        await _ask(llm)
        assert llm.unavailable is not None
        member_fake.responder = lambda rec: ToolCall(input=VALID)
        member = dataclasses.replace(llm, engine=_engine(member_fake))
        assert await _ask(member) == Finding.model_validate(VALID)


async def test_the_report_says_it_was_written_offline_because_the_provider_was_down(claude: AnthropicFake) -> None:
    claude.responder = lambda rec: Fail(529)
    llm = _engine(claude).bind("synthesize", Usage(), degrade=True, iteration=1)
    result = await write_report(make_envelope(), llm, partial_reason=None, findings_max=5, min_support=0.5,
                                judge=Judge(llm))
    assert len(claude.requests) == 1 and llm.unavailable is not None
    methodology = result.report.split("## Methodology", 1)[1]
    assert "The model provider was unavailable from the synthesize stage of iteration 1 on" in methodology
    assert "The model's report could not be used (the model provider was unavailable)" in methodology
    assert "- Entailment judge: not run: the model provider was unavailable" in methodology
    top = next(line for line in result.report.splitlines() if line.startswith("> "))
    assert top.endswith("The model provider was unavailable from the synthesize stage of iteration 1 on: "
                        "the offline engine did the rest.")
    assert result.offline_parts == ["the whole report", "every model step from the synthesize stage of "
                                    "iteration 1 on (the model provider was unavailable)"]


def test_an_earlier_stage_s_unavailability_is_in_the_report_and_the_result() -> None:
    since = Degraded(stage="digest", iteration=0, reason="Anthropic is unavailable (529) after retries: Overloaded")
    result = build_report(make_envelope().model_copy(update={"degraded": since}), partial_reason=None)
    assert ("The model provider was unavailable from the digest stage of iteration 0 on, after its retries "
            "(Anthropic is unavailable (529) after retries: Overloaded)") in result.report
    assert "from the digest stage of iteration 0 on: the offline engine did the rest." in result.report
    assert any("digest stage of iteration 0" in p for p in result.offline_parts)
    assert not result.partial  # complete research, done offline from there: not partial
    plain = build_report(make_envelope(), partial_reason=None)
    assert "unavailable" not in plain.report and plain.offline_parts == ["the whole report"]
