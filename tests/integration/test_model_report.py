"""Whole jobs whose report is written by a model: the loopback Anthropic (and
OpenAI-compatible) fakes driven by the real SDKs, answering the synthesis and
scoring tools through tests.fakes.report_writer. What a user can check through the
API: every ``[n]`` resolves, every cited source verifies against its archived text,
invented sentences never survive, and a council's disagreements reach the report and
the job's events."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.openai import OpenAIFake
from tests.fakes.report_writer import INVENTED, ReportWriter, blocks
from tests.integration.conftest import running_system
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"
MODEL = "claude-sonnet-5-5"
_MARK = re.compile(r"(?<!\\)\[(\d+)\]")


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=ReportWriter()) as fake:
        yield fake


@pytest.fixture(scope="module")
def claude_system(tmp_root: Path, postgres: Any, claude: AnthropicFake) -> Iterator[System]:
    # No digests: every cited source reaches the report undigested, so its verification
    # depends on synthesis archiving its canonical text.
    env = {**claude.env(), "LLM_MAX_RETRIES": "1", "RESEARCH_MAX_CONCURRENCY": "1", "DIGEST_POLICY": "off"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def _run(system: System, **body: Any) -> tuple[str, dict[str, Any]]:
    job_id = system.submit(QUESTION, max_iterations=1, **body)
    job = system.wait_terminal(job_id, timeout=90)
    assert job["status"] == "COMPLETED", f"{job}\n{system.logs()}"
    with system.client() as c:
        return job_id, c.get(f"/api/research/jobs/{job_id}/result").json()


def _sources_of(report: str) -> tuple[str, dict[int, str]]:
    body, _, tail = report.partition("\n## Sources\n")
    return body, {int(m.group(1)): m.group(0) for m in re.finditer(r"^\[(\d+)\] .*$", tail, re.M)}


def assert_every_citation_resolves_and_verifies(system: System, job_id: str, result: dict[str, Any], *,
                                                digested: bool) -> None:
    report = result["report"]
    body, entries = _sources_of(report)
    numbers = {int(n) for n in _MARK.findall(report)}
    cited = result["output"]["sources"]
    assert numbers and numbers == set(entries) == set(range(1, len(cited) + 1))
    assert {int(n) for n in _MARK.findall(body)} == numbers  # no uncited source listed
    with system.client() as c:
        stored = {s["url"]: s for s in c.get(f"/api/research/jobs/{job_id}/sources").json()["sources"]}
        for n, out in enumerate(cited, start=1):
            assert out["url"] in entries[n]
            source = stored[out["url"]]
            assert (source["digest"] is not None) is digested
            r = c.get(f"/api/research/jobs/{job_id}/sources/{source['source_id']}/verify")
            assert r.status_code == 200, (source["digest"] is not None, r.text)
            check = r.json()
            assert check["archived"] and check["all_verified"] and check["total"] >= 1, check


def test_a_job_whose_report_is_written_by_the_model(claude_system: System, claude: AnthropicFake) -> None:
    claude.responder = ReportWriter()
    n = len(claude.delivered)
    job_id, result = _run(claude_system)
    mine = claude.delivered[n:]
    assert [r.forced_tool for r in mine].count("write_report") == 1
    assert result["engine"].startswith(f"anthropic:{MODEL}")
    report = result["report"]
    assert f"> Written by anthropic:{MODEL} from the job's checked claims" in report
    assert "(0 sentences removed)" in report
    # The result carries what the checks did; the methodology says it in words.
    verification = result["verification"]
    assert sum(verification["sentences"].values()) >= 1 and not verification["sentences_removed"]
    judge = next(line for line in report.splitlines() if line.startswith("- Entailment judge: "))
    assert verification["judge"] in judge or (verification["judge"] == "ran" and verification["judge_model"] in judge)
    for heading in ("## Executive summary", "## Verified Findings", "## Contradictions", "## What remains unknown",
                    "## Confidence", "## Methodology", "## Sources"):
        assert heading in report
    summary = report.split("\n## Executive summary\n", 1)[1].split("\n## ", 1)[0]
    assert _MARK.search(summary), summary  # the model's prose carries computed citations
    # The report call saw the claims as data blocks and its tokens are the job's.
    prompt = next(r for r in mine if r.forced_tool == "write_report").prompt
    assert blocks(prompt, "claim")
    usage = result["tokenUsage"]
    assert usage["by_stage"]["synthesize"]["calls"] >= 1
    assert usage["input_tokens"] == sum(r.input_tokens for r in mine)
    assert_every_citation_resolves_and_verifies(claude_system, job_id, result, digested=False)


def test_an_adversarial_model_loses_every_invented_sentence(claude_system: System, claude: AnthropicFake) -> None:
    claude.responder = ReportWriter(adversarial=True)
    n = len(claude.delivered)
    job_id, result = _run(claude_system)
    mine = claude.delivered[n:]
    prompt = next(r for r in mine if r.forced_tool == "write_report").prompt
    sections = len(blocks(prompt, "checklist_item"))
    assert sections >= 1
    lies = 3 * (1 + sections)  # three in the summary and in every section
    report = result["report"]
    assert f"({lies} sentences removed)" in report
    assert f"; {lies} sentences removed (" in report  # the methodology says it too, by reason
    assert sum(result["verification"]["sentences_removed"].values()) == lies
    for lie in INVENTED:
        assert lie not in report
    assert "Smith report" not in report and "Zorblatt" not in report
    assert [r.forced_tool for r in mine].count("revise_sentences") == 1  # one batched re-ask
    # The model's [7] markers never became citations.
    assert 7 not in {int(x) for x in _MARK.findall(report)} or len(result["output"]["sources"]) >= 7
    assert "[7]" not in report.split("\n## Verified Findings\n", 1)[0] or len(result["output"]["sources"]) >= 7
    assert_every_citation_resolves_and_verifies(claude_system, job_id, result, digested=False)


# -- the council ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def second_opinion() -> Iterator[OpenAIFake]:
    with OpenAIFake(responder=ReportWriter(agree=False, reason="Findings disagree on when keepers left.")) as fake:
        yield fake


def test_a_council_that_disagrees_is_heard_in_the_report_and_the_events(
    tmp_root: Path, postgres: Any, claude: AnthropicFake, second_opinion: OpenAIFake,
) -> None:
    claude.responder = ReportWriter(disagreeing=("council-a",), reason="The plan ignores the keepers' own accounts.")
    env = {
        **claude.env(), "OPENAI_BASE_URL": second_opinion.base_url, "OPENAI_API_KEY": second_opinion.api_key,
        "RESEARCH_COUNCIL_MODELS": "anthropic:council-a,openai:council-b", "LLM_MAX_RETRIES": "1",
    }
    a0, b0 = len(claude.delivered), len(second_opinion.delivered)
    with running_system(tmp_root, postgres, env_overrides=env) as system:
        job_id, result = _run(system)
        events = system.events(job_id)
        assert_every_citation_resolves_and_verifies(system, job_id, result, digested=True)  # DIGEST_POLICY=always
    reviews = [e for e in events if e["type"] == "council"]
    by = {(e["stage"], e["review"]["model"]) for e in reviews}
    assert by == {(stage, model) for stage in ("plan", "synthesize")
                  for model in ("anthropic:council-a", "openai:council-b")}
    assert all(e["review"]["agree"] is False and e["review"]["reasons"] for e in reviews)
    section = result["report"].split("\n## Council review\n", 1)[1].split("\n## ", 1)[0]
    assert "anthropic:council-a **disagrees** with the research plan: The plan ignores the keepers' own accounts." in section
    assert "openai:council-b **disagrees** with the verified findings: Findings disagree on when keepers left." in section
    # Council calls are the job's: every token both fakes delivered is in its usage.
    usage = result["tokenUsage"]
    delivered = claude.delivered[a0:] + second_opinion.delivered[b0:]
    assert usage["llm_calls"] == len(delivered)
    assert usage["input_tokens"] + usage["output_tokens"] == sum(r.input_tokens + r.output_tokens for r in delivered)
    assert [r.body["model"] for r in second_opinion.delivered[b0:]] == ["council-b", "council-b"]
