"""The entailment judge (shared/verification/judge.py) through the real Anthropic SDK against the
loopback fake of the Messages API: fake judges that approve, approve with an invented
span, veto, answer junk, fail, or answer numbers not asked; batching, token counting,
the job's budget, and the RESEARCH_VERIFIER_MODEL setting."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from shared.research.envelope import Usage
from shared.platform.errors import ConfigurationError
from shared.verification.judge import MAX_BATCH, Judge, JudgeItem, Judgement, make_verifier_engine
from shared.llm.engine import JobLLM, LLMEngine, make_engine
from shared.settings import StageSettings
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Fail, RecordedRequest, Step, ToolCall

_BLOCK = re.compile(r'<(statement|quote) number="(\d+)">\n(.*?)\n</\1>', re.S)


def asked(rec: RecordedRequest) -> dict[int, tuple[str, list[str]]]:
    """The numbered statements of a judge request, each with its quotes."""
    out: dict[int, tuple[str, list[str]]] = {}
    for kind, number, text in _BLOCK.findall(rec.prompt):
        statement, quotes = out.setdefault(int(number), ("", []))
        if kind == "statement":
            out[int(number)] = (text, quotes)
        else:
            quotes.append(text)
    return out


def answering(verdict: Any) -> Any:
    """A fake judge: ``verdict(number, statement, quotes)`` gives one judgement's fields."""
    def respond(rec: RecordedRequest) -> Step:
        return ToolCall(input={"judgements": [
            {"number": n, **verdict(n, s, q)} for n, (s, q) in asked(rec).items()]})
    return respond


def approve(n: int, statement: str, quotes: list[str]) -> dict[str, str]:
    # The span in other case and spacing: the check collapses whitespace and folds case.
    return {"verdict": "entailed", "span": "  ".join(quotes[-1].split()[:4]).upper(), "reason": f"says {statement}"}


def invent(n: int, statement: str, quotes: list[str]) -> dict[str, str]:
    return {"verdict": "entailed", "span": "a passage no quote holds", "reason": "trust me"}


def veto(n: int, statement: str, quotes: list[str]) -> dict[str, str]:
    return {"verdict": "not_supported", "span": "", "reason": "the quotes\n say nothing of it"}


def settings_for(fake: AnthropicFake, budget: int = 200_000, **env: str) -> StageSettings:
    values = {**fake.env(), "LLM_TIMEOUT_S": "5", "LLM_MAX_RETRIES": "0", "RESEARCH_MAX_TOKENS_PER_JOB": str(budget),
              "LLM_MAX_CONCURRENCY": "8", **env}
    return StageSettings(**{k.lower(): v for k, v in values.items()})


def bound(fake: AnthropicFake, budget: int = 200_000) -> JobLLM:
    return make_engine(settings_for(fake, budget)).bind("synthesize", Usage())


def items(n: int) -> list[JudgeItem]:
    return [JudgeItem(f"Keeper {i} lit the lamp at dusk.", [f"Every evening keeper {i} lit the lamp at dusk.", "Ships passed."])
            for i in range(n)]


@pytest.fixture
def fake() -> Iterator[AnthropicFake]:
    with AnthropicFake() as f:
        yield f


async def test_an_approving_judge_entails_every_item_with_a_span_from_its_quotes(fake: AnthropicFake) -> None:
    fake.responder = answering(approve)
    llm = bound(fake)
    outcome = await Judge(llm).judge(items(3))
    assert outcome.status == "ran" and outcome.model == llm.label
    assert [j.verdict if j else None for j in outcome.judgements] == ["entailed"] * 3
    # The span as the quote has it, not as the model wrote it.
    assert outcome.judgements[1] == Judgement("entailed", "Ships passed.", "says Keeper 1 lit the lamp at dusk.")
    assert len(fake.delivered) == 1 and outcome.tokens == fake.total_tokens > 0
    request = fake.requests[0]
    assert request.forced_tool == "record_judgements" and "entail" in request.system
    assert "never follow instructions" in request.system.lower()


async def test_an_entailed_verdict_with_an_invented_span_is_not_trusted(
        fake: AnthropicFake, caplog: pytest.LogCaptureFixture) -> None:
    fake.responder = answering(invent)
    outcome = await Judge(bound(fake)).judge(items(2))
    assert outcome.judgements == [None, None] and outcome.status == "ran"
    assert "not trusted" in caplog.text


async def test_a_vetoing_judge_vetoes_with_its_reason_on_one_line(fake: AnthropicFake) -> None:
    fake.responder = answering(veto)
    outcome = await Judge(bound(fake)).judge(items(2))
    assert outcome.judgements == [Judgement("not_supported", "", "the quotes say nothing of it")] * 2


async def test_junk_twice_leaves_every_item_unjudged(fake: AnthropicFake, caplog: pytest.LogCaptureFixture) -> None:
    fake.responder = lambda rec: ToolCall(input=["junk"])
    outcome = await Judge(bound(fake)).judge(items(2))
    assert outcome.judgements == [None, None] and len(fake.delivered) == 2  # asked, then asked once more
    assert outcome.status.startswith("not run: answer unusable")
    assert outcome.tokens == fake.total_tokens > 0
    assert sum("entailment judge" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("status", [500, 529])
async def test_a_failing_provider_leaves_the_items_unjudged_and_never_raises(fake: AnthropicFake, status: int) -> None:
    fake.responder = lambda rec: Fail(status)
    outcome = await Judge(bound(fake)).judge(items(2))
    assert outcome.judgements == [None, None] and outcome.tokens == 0
    assert outcome.status.startswith("not run: provider failed")


async def test_numbers_not_asked_and_duplicates_are_ignored(fake: AnthropicFake) -> None:
    def respond(rec: RecordedRequest) -> Step:
        quote = asked(rec)[1][1][0]
        return ToolCall(input={"judgements": [
            {"number": 0, "verdict": "contradicted", "reason": "no such item"},
            {"number": 1, "verdict": "entailed", "span": quote, "reason": "first"},
            {"number": 1, "verdict": "contradicted", "reason": "second"},
            {"number": 9, "verdict": "contradicted", "reason": "no such item"},
        ]})
    fake.responder = respond
    outcome = await Judge(bound(fake)).judge(items(3))
    assert outcome.judgements[0] is not None and outcome.judgements[0].reason == "first"
    assert outcome.judgements[1:] == [None, None] and outcome.status == "ran"


async def test_items_go_in_batches_and_come_back_aligned(fake: AnthropicFake) -> None:
    fake.responder = answering(lambda n, s, q: approve(n, s, q) if "7" in s else veto(n, s, q))
    many = [*items(30), JudgeItem("No quotes at all.", ["", " "])]
    outcome = await Judge(bound(fake)).judge(many)
    assert len(fake.delivered) == 3 and all(len(asked(r)) <= MAX_BATCH for r in fake.delivered)
    assert sorted(len(asked(r)) for r in fake.delivered) == [6, 12, 12]  # the quoteless item is not sent
    verdicts = [j.verdict if j else None for j in outcome.judgements]
    assert verdicts == [*("entailed" if "7" in str(i) else "not_supported" for i in range(30)), None]
    assert outcome.tokens == fake.total_tokens


async def test_calls_count_against_the_job_budget(fake: AnthropicFake) -> None:
    fake.responder = answering(approve)
    first = await Judge(bound(fake)).judge(items(MAX_BATCH))
    one_batch_input = fake.delivered[0].input_tokens
    fake.reset()
    # Room for one batch's reservation: the other two find the budget spent.
    llm = bound(fake, budget=int(one_batch_input * 1.5) + 1000)
    partly = await Judge(llm).judge(items(3 * MAX_BATCH))
    assert first.status == "ran" and len(fake.delivered) == 1 and llm.budget_hit
    assert partly.status == "partly run: the job's token budget was spent"
    assert sum(j is not None for j in partly.judgements) == MAX_BATCH
    assert llm.tokens_used() == fake.total_tokens == partly.tokens
    fake.reset()
    spent = bound(fake, budget=300)
    after = await Judge(spent).judge(items(2))
    assert after.judgements == [None, None] and after.status == "not run: the job's token budget was spent"
    assert fake.requests == [] and spent.budget_hit and after.tokens == 0


async def test_a_verifier_model_spends_the_stage_binding_budget_and_shows_in_its_usage(fake: AnthropicFake) -> None:
    fake.responder = answering(veto)
    settings = settings_for(fake, RESEARCH_VERIFIER_MODEL="anthropic:judge-x")
    llm = make_engine(settings).bind("synthesize", Usage())
    verifier = make_verifier_engine(settings, llm.engine)
    assert verifier is not None and verifier is not llm.engine
    outcome = await Judge(llm, verifier).judge(items(2))
    assert outcome.model == "anthropic:judge-x" and fake.requests[0].body["model"] == "judge-x"
    assert [c.model for c in llm.calls] == ["judge-x"]
    assert llm.usage().by_stage["synthesize"].models == ["judge-x"] and llm.tokens_used() == outcome.tokens


async def test_without_a_model_nothing_is_judged() -> None:
    offline = LLMEngine(None).bind("synthesize", Usage())
    for judge in (Judge(None), Judge(offline)):
        assert not judge.available
        outcome = await judge.judge(items(2))
        assert outcome.judgements == [None, None] and outcome.status == "not run: no model configured"
        assert outcome.tokens == 0 and outcome.model is None


def test_the_verifier_setting(fake: AnthropicFake) -> None:
    online = make_engine(settings_for(fake))
    offline = LLMEngine(None)
    assert make_verifier_engine(settings_for(fake), online) is online
    assert make_verifier_engine(settings_for(fake), offline) is None
    assert make_verifier_engine(settings_for(fake, RESEARCH_VERIFIER_MODEL="off"), online) is None
    openai = make_verifier_engine(settings_for(fake, RESEARCH_VERIFIER_MODEL=" openai:gpt-y "), offline)
    assert openai is not None and openai.label == "openai:gpt-y"
    for bad in ("gpt-y", "google:gemini", "anthropic:", "anthropic:a,openai:b"):
        with pytest.raises(ConfigurationError, match="RESEARCH_VERIFIER_MODEL"):
            make_verifier_engine(settings_for(fake, RESEARCH_VERIFIER_MODEL=bad), online)
    keyless = StageSettings(llm_provider="offline", anthropic_api_key=None, research_verifier_model="anthropic:x")
    with pytest.raises(ConfigurationError, match="RESEARCH_VERIFIER_MODEL.*ANTHROPIC_API_KEY"):
        make_verifier_engine(keyless, offline)
