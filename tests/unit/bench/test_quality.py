"""bench/quality.py's scoring: what counts as a recalled fact, and the question set."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("bench_quality", ROOT / "bench" / "quality.py")
assert _spec is not None and _spec.loader is not None
quality = importlib.util.module_from_spec(_spec)
sys.modules["bench_quality"] = quality
_spec.loader.exec_module(quality)

REPORT = """# What is the GIL and what does it prevent?

Refined question: What is the global interpreter lock?

## Summary

"The GIL is released when doing I/O." [1]

## Definition of the global interpreter lock

Coverage: covered.

- "Only one thread executes Python
  bytecode at a time." (confidence 80%) [1][2] \\[3\\]

## Gaps

- Examples of lock-free bytecode execution

## Sources

[1] Glossary — pydocs://glossary.html
> "Only one thread executes Python bytecode at a time."
"""


def test_answer_text_keeps_findings_and_quotes_but_not_headings_or_gaps() -> None:
    text = quality.answer_text(REPORT)
    assert "Only one thread executes Python bytecode at a time." in text  # across a line break
    assert "released when doing I/O" in text
    assert "global interpreter lock" not in text  # heading and refined question only
    assert "lock-free" not in text  # the gaps repeat the checklist
    assert "[3]" in text and "\\[" not in text


def test_a_fact_needs_all_its_patterns() -> None:
    text = quality.answer_text(REPORT)
    assert quality.recalled(text, [re.compile("one thread", re.I), re.compile("bytecode", re.I)])
    assert not quality.recalled(text, [re.compile("one thread", re.I), re.compile("mutex", re.I)])


def test_citations_per_thousand_words_skip_escaped_brackets() -> None:
    assert quality.citations_per_1000_words("a b c d [1] [2] \\[3\\]") == pytest.approx(1000 * 2 / 7)


def test_the_shipped_question_set_loads_with_both_parts() -> None:
    questions = quality.load_questions()
    assert len(questions) >= 12
    assert {q.split for q in questions} == {"tuning", "held-out"}
    assert len({q.id for q in questions}) == len(questions)


def test_a_fact_the_question_would_recall_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.toml"
    path.write_text('[[question]]\nid = "x"\nsplit = "tuning"\nquestion = "What is the GIL?"\n'
                    'facts = [["GIL"]]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="question itself matches"):
        quality.load_questions(path)


def test_missing_documentation_exits_with_the_install_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert quality.main(["--docs", str(tmp_path)]) == 3
    assert "apt-get install -y python3-doc" in capsys.readouterr().err
