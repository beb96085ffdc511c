"""The entailment judge in a small context window: fewer statements a call, and a
call the server refuses for length made again in two halves, every statement judged.
Against the loopback OpenAI-compatible fake, which refuses, as vLLM does, a request
longer than its window."""

from __future__ import annotations

import re

from shared.llm.engine import make_engine
from shared.research.envelope import Usage
from shared.settings import StageSettings
from shared.verification.judge import MAX_BATCH, Judge, JudgeItem
from tests.fakes.llm import RecordedRequest, ToolCall
from tests.fakes.openai import OpenAIFake

QUOTE = ("The last keeper left Fair Isle South in 1998, after 106 years of service, and the light was then "
         "monitored remotely from Edinburgh by the Northern Lighthouse Board. ")


def _items(n: int) -> list[JudgeItem]:
    return [JudgeItem(f"Statement {k}: the last keeper left Fair Isle South in 1998.", [QUOTE * 3]) for k in range(n)]


def _entails_all(request: RecordedRequest) -> ToolCall:
    numbers = sorted({int(n) for n in re.findall(r'<statement number="(\d+)"', request.prompt)})
    return ToolCall(input={"judgements": [{"number": n, "verdict": "entailed", "span": "The last keeper left Fair Isle "
                                           "South in 1998", "reason": "stated"} for n in numbers]})


def _judge(fake: OpenAIFake, window: int) -> Judge:
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "OPENAI_MODEL": "qwen3:4b", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "5",
        "LLM_CONTEXT_TOKENS": str(window)}.items()})
    return Judge(make_engine(settings).bind("synthesize", Usage()))


async def test_the_judge_asks_fewer_statements_a_call_in_a_small_window() -> None:
    with OpenAIFake(responder=_entails_all, context_tokens=4096) as fake:
        outcome = await _judge(fake, 4096).judge(_items(MAX_BATCH))
        assert fake.refused_for_length == 0 and len(fake.delivered) > 1
        assert all(p + c <= 4096 for p, c in fake.prompt_sizes)
    assert outcome.status == "ran"
    assert all(j is not None and j.verdict == "entailed" for j in outcome.judgements)


async def test_a_judge_call_refused_for_length_is_made_again_in_halves() -> None:
    with OpenAIFake(responder=_entails_all, context_tokens=4096) as fake:
        outcome = await _judge(fake, 64_000).judge(_items(MAX_BATCH))
        assert fake.refused_for_length >= 1
        assert len(fake.delivered) >= 2
    assert outcome.status == "ran"
    assert all(j is not None and j.verdict == "entailed" for j in outcome.judgements)
