"""Whole jobs whose report is written by an adversarial model: the loopback Anthropic
fake driven by the real SDK, the scoring tools answered by tests.fakes.report_writer,
the report by tests.fakes.turning_writer (sentences that cite real claims but turn
what they say, uncited claims about the sources, links and HTML, repeats), and the
entailment judge (RESEARCH_VERIFIER_MODEL empty: the job's own model) approving
everything. What a user sees through the API: none of it reaches the report, and
the result's verification summary counts it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.verification.judge import JUDGE_TOOL
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.report_writer import ReportWriter
from tests.fakes.turning_writer import CONNECTIVES, EVIL_URL, Connector, MeaningTurner, approve_all_judge, routed
from tests.integration.conftest import running_system
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=ReportWriter()) as fake:
        yield fake


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres: Any, claude: AnthropicFake) -> Iterator[System]:
    env = {**claude.env(), "LLM_MAX_RETRIES": "1", "RESEARCH_MAX_CONCURRENCY": "1", "DIGEST_POLICY": "off"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def _run(system: System) -> dict[str, Any]:
    job_id = system.submit(QUESTION, max_iterations=1)
    job = system.wait_terminal(job_id, timeout=90)
    assert job["status"] == "COMPLETED", f"{job}\n{system.logs()}"
    with system.client() as c:
        return c.get(f"/api/research/jobs/{job_id}/result").json()


def _flat(text: str) -> str:
    return " ".join(text.replace("\\", "").split()).casefold()


def test_turned_sentences_are_removed_and_counted(system: System, claude: AnthropicFake) -> None:
    writer, judge = MeaningTurner("negation", paraphrase=True), approve_all_judge()
    claude.responder = routed(writer, judge, ReportWriter())
    n = len(claude.delivered)
    result = _run(system)
    mine = claude.delivered[n:]
    report, v = result["report"], result["verification"]
    print(f"\n[job: negation + approve_all] sentences_removed={v['sentences_removed']} sentences={v['sentences']} "
          f"judge={v['judge']!r} judge_tokens={v['judge_tokens']}")
    assert writer.turned
    for sentence in writer.turned:
        assert _flat(sentence.rstrip(".")) not in _flat(report), sentence
    found = {f["text"] for f in result["verified_findings"]}
    assert not found & set(writer.turned)
    assert sum(v["sentences_removed"].values()) == result["sentences_removed"] == len(writer.turned)
    assert v["sentences_removed"].get("negation", 0) >= 1
    # The judge ran on what the checks kept; it rescued nothing.
    assert not set(judge.asked) & set(writer.turned)
    assert v["judge"] == "ran" and v["judge_tokens"] > 0
    synth_judge = [r for r in mine if r.forced_tool == JUDGE_TOOL and "In addition, " in r.prompt]
    assert synth_judge and v["judge_tokens"] == sum(r.input_tokens + r.output_tokens for r in synth_judge)
    assert "supported" not in v["sentences"] and v["sentences"].get("entailed", 0) >= 1
    # The trace shows the judge's calls in the stage that made them, within its tokens.
    with system.client() as c:
        trace = c.get(f"/api/research/jobs/{result['job_id']}/trace").json()
    stages = [s for it in trace["iterations"] for s in it["stages"] if s.get("judge")]
    synth = next(s for s in stages if s["stage"] == "synthesize")
    assert synth["judge"]["tokens"] == v["judge_tokens"] and synth["judge"]["statements"] == v["judged"]
    assert synth["judge"]["entailed"] == v["sentences"]["entailed"] and synth["judge"]["status"] == "ran"
    assert synth["judge"]["tokens"] <= synth["tokens"]["input"] + synth["tokens"]["output"]


def test_uncited_claims_markup_and_repeats_are_removed(system: System, claude: AnthropicFake) -> None:
    writer = Connector()
    claude.responder = routed(writer, approve_all_judge(), ReportWriter())
    result = _run(system)
    report, v = result["report"], result["verification"]
    print(f"\n[job: connector] sentences_removed={v['sentences_removed']} sentences={v['sentences']} "
          f"judge={v['judge']!r} judge_tokens={v['judge_tokens']}")
    for sentence in CONNECTIVES:
        assert sentence not in report
    assert "](http" not in report and "<b>" not in report and EVIL_URL not in report
    summary = report.split("\n## Executive summary\n", 1)[1].split("\n## ", 1)[0]
    assert _flat(summary).count(_flat(writer.repeated.rstrip("."))) == 1
    assert v["sentences_removed"] == {"uncited": len(writer.turned), "repeated": writer.repeats - 1}
