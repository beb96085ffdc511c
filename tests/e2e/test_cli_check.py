"""`deepresearch check` as a user runs it: JSON Lines in, one verdict line out per
input line; deterministic checks alone offline, and with the fake Anthropic server as
the model, the entailment judge's veto (quoted sentences are never sent to it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Fail, RecordedRequest, Step, ToolCall

ROOT = Path(__file__).resolve().parents[2]

QUOTE = "The lighthouse on the north cape was automated in 1990."
QUOTED = {"sentence": QUOTE, "quotes": [QUOTE]}
CHANGED_FIGURE = {"sentence": "The lighthouse on the north cape was automated in 1991.", "quotes": [QUOTE]}
SUPPORTED = {"sentence": "Keepers lit the lamp at dusk every day.", "quotes": ["Every day at dusk the keepers lit the lamp."]}


def check(lines: list[Any], cwd: Path, *args: str, **env: str) -> tuple[int, list[dict[str, Any]], str]:
    """Run `deepresearch check` on ``lines`` (dicts as JSON, strings as they are) with a
    clean model environment plus ``env``; (exit code, output lines, stderr)."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("RESEARCH_", "ANTHROPIC_", "OPENAI_", "LLM_")) and k not in ("NATS_URL", "DATABASE_URL")}
    stdin = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    r = subprocess.run([sys.executable, "-m", "services.cli", "check", *args], input=stdin, cwd=cwd,
                       env={**clean, "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True, timeout=120)
    return r.returncode, [json.loads(line) for line in r.stdout.splitlines()], r.stderr


def judging(verdict: str, span: bool = False) -> Any:
    """A fake judge giving ``verdict`` to every statement it is asked (with the
    statement's first quote as its span when ``span``)."""
    def respond(rec: RecordedRequest) -> Step:
        quotes = dict(re.findall(r'<quote number="(\d+)">\n(.*?)\n</quote>', rec.prompt, re.S)[::-1])
        numbers = re.findall(r'<statement number="(\d+)">', rec.prompt)
        return ToolCall(input={"judgements": [
            {"number": int(n), "verdict": verdict, "span": quotes[n] if span else "", "reason": f"fake judge: {verdict}"}
            for n in numbers]})
    return respond


@pytest.fixture
def fake() -> Iterator[AnthropicFake]:
    with AnthropicFake() as f:
        yield f


def model_env(fake: AnthropicFake) -> dict[str, str]:
    return {**fake.env(), "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "10"}


def test_offline_the_deterministic_checks_alone_say_why(tmp_path: Path) -> None:
    code, out, err = check([QUOTED, "", CHANGED_FIGURE, SUPPORTED], tmp_path)
    assert code == 0, err
    assert out[0] == {"ok": True, "level": "quoted", "reasons": []}
    assert out[1]["ok"] is False and out[1]["level"] is None
    assert len(out[1]["reasons"]) == 1 and "number" in out[1]["reasons"][0] and "1991" in out[1]["reasons"][0]
    assert out[2] == {"ok": True, "level": "supported", "reasons": []}  # no judge: nothing extra on stdout
    assert len(out) == 3  # the empty line is skipped
    assert "judge did not run" in err and len(err.strip().splitlines()) == 1

    code, again, err = check([QUOTED, CHANGED_FIGURE, SUPPORTED], tmp_path, "--offline")
    assert code == 0 and again == out and err == ""


def test_malformed_lines_get_an_input_reason_and_exit_1(tmp_path: Path) -> None:
    bad = ["{not json", '["a list"]', {"quotes": [QUOTE]}, {"sentence": "  ", "quotes": [QUOTE]},
           {"sentence": "A sentence.", "quotes": QUOTE}, {"sentence": "A sentence.", "quotes": [QUOTE, 3]}]
    code, out, _ = check([bad[0], QUOTED, *bad[1:]], tmp_path, "--offline")
    assert code == 1 and len(out) == 7
    assert out[1] == {"ok": True, "level": "quoted", "reasons": []}  # the good line is still checked
    for result in (out[0], *out[2:]):
        assert result["ok"] is False and result["level"] is None
        assert len(result["reasons"]) == 1 and result["reasons"][0].startswith("input: ")
    assert "not JSON" in out[0]["reasons"][0] and "quotes" in out[6]["reasons"][0] and "sentence" in out[4]["reasons"][0]


def test_a_vetoing_judge_removes_a_supported_sentence_and_never_sees_a_quoted_one(
        fake: AnthropicFake, tmp_path: Path) -> None:
    fake.responder = judging("not_supported")
    code, out, err = check([QUOTED, SUPPORTED, CHANGED_FIGURE], tmp_path, **model_env(fake))
    assert code == 0, err
    assert out[0] == {"ok": True, "level": "quoted", "reasons": []}
    assert out[1] == {"ok": False, "level": None, "reasons": ["judge: not_supported: fake judge: not_supported"]}
    assert out[2]["ok"] is False and "judge" not in " ".join(out[2]["reasons"])
    assert len(fake.delivered) == 1
    prompt = fake.delivered[0].prompt
    assert SUPPORTED["sentence"] in prompt and QUOTE not in prompt  # only the supported line is judged


def test_an_approving_judge_raises_the_level_and_a_failing_one_says_it_did_not_run(
        fake: AnthropicFake, tmp_path: Path) -> None:
    fake.responder = judging("entailed", span=True)
    code, out, err = check([SUPPORTED, QUOTED], tmp_path, **model_env(fake))
    assert code == 0, err
    assert out == [{"ok": True, "level": "entailed", "reasons": []}, {"ok": True, "level": "quoted", "reasons": []}]

    fake.responder = lambda rec: Fail(500)
    code, out, err = check([SUPPORTED], tmp_path, **model_env(fake))
    assert code == 0
    assert out[0]["ok"] is True and out[0]["level"] == "supported"
    assert len(out[0]["reasons"]) == 1 and out[0]["reasons"][0].startswith("judge: not run: provider failed")
