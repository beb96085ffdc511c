"""``bench/quality.py`` end to end, both modes, one question over the sample corpus:
the bench starts its own systems (offline, then against the fake research model)
and prints each mode's figures and their comparison. The fake mode must show the
verification at work: claims rejected, sentences removed, tokens spent by the stages
that called the model; the offline mode spends none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.report_writer import INVENTED

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = """
[[question]]
id = "gil-sample"
split = "tuning"
question = "What does the global interpreter lock prevent in CPython?"
facts = [["bytecode"], ["releases? the GIL"]]
"""


def _figure(section: str, name: str) -> list[float]:
    line = next(line for line in section.splitlines() if line.strip().startswith(name))
    return [float(v) for v in line.strip()[len(name):].split()]


def test_both_modes_over_the_sample_corpus(tmp_path: Path) -> None:
    questions = tmp_path / "questions.toml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    out = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_", "LLM_"))}
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "quality.py"), "--corpus", str(ROOT / "samples" / "corpus"),
         "--questions", str(questions), "--json", str(out), "--timeout", "120"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=420, check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    stdout = run.stdout
    assert "engine   none (offline" in stdout and "engine   fake (loopback Anthropic" in stdout

    compared = stdout.split("modes compared", 1)[1]
    offline_rejected, fake_rejected = _figure(compared, "claims rejected")
    assert fake_rejected >= 3  # a bogus snippet id, a paraphrase, a number, per claims call
    assert _figure(compared, "sentences removed")[1] > 0
    for stage in ("plan", "score", "synthesize"):
        offline_tokens, fake_tokens = _figure(compared, f"tokens, {stage}")
        assert offline_tokens == 0 and fake_tokens > 0, stage
    assert _figure(compared, "fact recall")[0] == 1.0  # offline: both facts are in python-gil.md

    results = json.loads(out.read_text(encoding="utf-8"))
    assert [r["engine"] for r in results] == ["none", "fake"]
    fake = results[1]["result"]
    assert fake["engine"].startswith("anthropic")
    assert fake["claims"] and not any(sentence in fake["report"] for sentence in INVENTED)
