"""The report writer in a small context window: a report whose one prompt does not fit
is written a section a call, each call showing the most confident claims that fit,
and no request exceeds the window. Against the loopback OpenAI-compatible fake, which
refuses, as vLLM does, a request longer than its window, writing with
tests.fakes.report_writer."""

from __future__ import annotations

import re

from services.synthesis.relevance import addresses
from services.synthesis.report import prepare
from services.synthesis.writer import write_report
from shared.llm.engine import make_engine
from shared.research.envelope import Usage
from shared.settings import StageSettings
from shared.verification.grounding import MIN_SUPPORT
from tests.fakes.openai import OpenAIFake
from tests.fakes.report_writer import ReportWriter
from tests.unit.synthesis.test_report_depth import envelope


def _llm(fake: OpenAIFake, window: int):  # noqa: ANN202
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "OPENAI_MODEL": "qwen3:8b", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "30",
        "LLM_CONTEXT_TOKENS": str(window)}.items()})
    return make_engine(settings).bind("synthesize", Usage())


async def test_a_report_too_long_for_one_call_is_written_a_section_a_call() -> None:
    env = envelope("standard")
    prepared = prepare(env)
    answered = [item for item in prepared.checklist if any(addresses(item, c) for c in prepared.claims)]
    with OpenAIFake(responder=ReportWriter(), context_tokens=4096) as fake:
        result = await write_report(env, _llm(fake, 4096), partial_reason=None, findings_max=5,
                                    min_support=MIN_SUPPORT)
        calls = [r for r in fake.delivered if r.forced_tool == "write_report"]
        assert fake.refused_for_length == 0
        assert all(p + c <= 4096 for p, c in fake.prompt_sizes)
    assert len(calls) == 1 + len(answered)  # the summary, then a call per section
    shown = [set(re.findall(r'<claim id="([^"]+)"', r.prompt)) for r in calls]
    assert len(shown[0]) < len(prepared.claims)  # the summary's call shows the most confident that fit
    left_out = {c.id for c in prepared.claims} - shown[0]
    assert min(c.confidence_score for c in prepared.claims if c.id in shown[0]) >= \
        max(c.confidence_score for c in prepared.claims if c.id in left_out)
    assert "offline" not in result.engine, result.engine


async def test_a_report_that_fits_is_one_call() -> None:
    with OpenAIFake(responder=ReportWriter()) as fake:
        await write_report(envelope("standard"), _llm(fake, 200_000), partial_reason=None, findings_max=5,
                           min_support=MIN_SUPPORT)
        assert len([r for r in fake.delivered if r.forced_tool == "write_report"]) == 1
