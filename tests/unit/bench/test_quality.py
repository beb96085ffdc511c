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
facts = sys.modules["bench.quality_facts"]  # what quality.py imported: its sets, pages and scoring

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
    text = facts.answer_text(REPORT)
    assert "Only one thread executes Python bytecode at a time." in text  # across a line break
    assert "released when doing I/O" in text
    assert "global interpreter lock" not in text  # heading and refined question only
    assert "lock-free" not in text  # the gaps repeat the checklist
    assert "[3]" in text and "\\[" not in text


def test_a_fact_needs_all_its_patterns() -> None:
    text = facts.answer_text(REPORT)
    assert facts.recalled(text, [re.compile("one thread", re.I), re.compile("bytecode", re.I)])
    assert not facts.recalled(text, [re.compile("one thread", re.I), re.compile("mutex", re.I)])


def test_citations_per_thousand_words_skip_escaped_brackets() -> None:
    assert facts.citations_per_1000_words("a b c d [1] [2] \\[3\\]") == pytest.approx(1000 * 2 / 7)


def test_the_shipped_question_set_loads_with_both_parts() -> None:
    questions = facts.load_questions()
    assert len(questions) >= 12
    assert {q.split for q in questions} == {"tuning", "held-out"}
    assert len({q.id for q in questions}) == len(questions)


def test_a_fact_the_question_would_recall_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.toml"
    path.write_text('[[question]]\nid = "x"\nsplit = "tuning"\nquestion = "What is the GIL?"\n'
                    'facts = [["GIL"]]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="question itself matches"):
        facts.load_questions(path)


def test_missing_documentation_exits_with_the_install_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert quality.main(["--docs", str(tmp_path)]) == 3
    assert "apt-get install -y python3-doc" in capsys.readouterr().err


# -- the question sets: --set chooses the documentation, its pages and its questions -------------


def _tree(root: Path, pages: list[str]) -> Path:
    for rel in pages:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><title>{rel}</title><body><p>{rel}</p></body></html>", encoding="utf-8")
    return root


PYTHON_PAGES = ["index.html", "glossary.html", "library/os.html", "library/index.html", "genindex.html",
                "genindex-A.html", "search.html", "py-modindex.html", "_static/x.html", "tutorial/index.html"]
GIT_PAGES = ["index.html", "git.html", "gitglossary.html", "user-manual.html", "git-rebase.html", "howto-index.html",
             "howto/revert-a-faulty-merge.html", "technical/api-index.html", "technical/racy-git.html"]


def test_the_sets_and_the_default() -> None:
    assert set(facts.DOC_SETS) == {"python", "git"}
    assert quality.parse_args([]).doc_set == "python"
    assert quality.parse_args(["--set", "git"]).doc_set == "git"
    assert facts.DOC_SETS["python"].questions == facts.QUESTIONS_FILE
    assert {s.corpus_name for s in facts.DOC_SETS.values()} == {"pydocs", "gitdocs"}
    with pytest.raises(SystemExit):
        quality.parse_args(["--set", "perl"])


def test_each_set_skips_its_own_generated_pages(tmp_path: Path) -> None:
    py = _tree(tmp_path / "py", PYTHON_PAGES)
    assert [p.relative_to(py).as_posix() for p in facts.doc_pages(py, None, facts.PYTHON)] == [
        "glossary.html", "index.html", "library/index.html", "library/os.html", "tutorial/index.html"]
    assert [p.relative_to(py).as_posix() for p in facts.doc_pages(py, ["library"])] == [
        "library/index.html", "library/os.html"]  # the python set is the default
    git = _tree(tmp_path / "git", GIT_PAGES)
    assert [p.relative_to(git).as_posix() for p in facts.doc_pages(git, None, facts.GIT)] == [
        "git-rebase.html", "git.html", "gitglossary.html", "howto/revert-a-faulty-merge.html",
        "technical/racy-git.html", "user-manual.html"]
    assert [p.name for p in facts.doc_pages(git, ["howto", "git-rebase"], facts.GIT)] == [
        "git-rebase.html", "revert-a-faulty-merge.html"]


def test_an_explicit_docs_folder_must_hold_the_sets_marker_page(tmp_path: Path) -> None:
    py, git = _tree(tmp_path / "py", PYTHON_PAGES), _tree(tmp_path / "git", ["git.html"])
    assert facts.find_docs(str(py), facts.PYTHON) == py
    assert facts.find_docs(str(git), facts.GIT) == git
    assert facts.find_docs(str(git), facts.PYTHON) is None
    assert facts.find_docs(str(tmp_path), facts.GIT) is None


def test_a_missing_git_documentation_exits_with_its_install_hint(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    assert quality.main(["--set", "git", "--docs", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert "apt-get install -y git-doc" in err and "python3-doc" not in err


def _captured_run(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    calls: list[dict] = []

    def run_mode(engine: str, questions: list, source: Path, pages: list[Path] | None, describe: str,
                 args: object, doc_set: object = facts.PYTHON) -> tuple[int, list]:
        calls.append({"engine": engine, "ids": [q.id for q in questions], "source": source, "pages": pages,
                      "describe": describe, "set": doc_set})
        return 0, []

    monkeypatch.setattr(quality, "run_mode", run_mode)
    return calls


def test_set_git_runs_the_git_questions_over_the_git_pages(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = _captured_run(monkeypatch)
    git = _tree(tmp_path / "git", GIT_PAGES)
    assert quality.main(["--set", "git", "--docs", str(git), "--llm", "none", "--split", "held-out"]) == 0
    [call] = calls
    expected = [q.id for q in facts.load_questions(facts.GIT.questions) if q.split == "held-out"]
    assert call["ids"] == expected and "detached-head" in expected
    assert call["set"] is facts.GIT and call["source"] == git
    assert "index.html" not in [p.name for p in call["pages"]] and len(call["pages"]) == 6


def test_the_default_set_and_an_explicit_question_file_still_work(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    calls = _captured_run(monkeypatch)
    py = _tree(tmp_path / "py", PYTHON_PAGES)
    assert quality.main(["--docs", str(py), "--llm", "none", "--only", "gil"]) == 0
    assert calls[-1]["ids"] == ["gil"] and calls[-1]["set"] is facts.PYTHON
    questions = tmp_path / "q.toml"
    questions.write_text('[[question]]\nid = "x"\nsplit = "tuning"\nquestion = "What is a reflog?"\n'
                         'facts = [["90 days"]]\n', encoding="utf-8")
    corpus = _tree(tmp_path / "corpus", ["a.html"])
    assert quality.main(["--set", "git", "--corpus", str(corpus), "--questions", str(questions), "--llm", "none"]) == 0
    assert calls[-1]["ids"] == ["x"] and calls[-1]["pages"] is None and calls[-1]["source"] == corpus
    assert calls[-1]["set"] is facts.GIT  # indexed as the set's corpus


def test_the_git_question_set_loads_16_tuning_8_held_out() -> None:
    questions = facts.load_questions(facts.GIT.questions)
    assert len(questions) >= 12 and len({q.id for q in questions}) == len(questions)
    splits = [q.split for q in questions]
    assert splits.count("tuning") == 16 and splits.count("held-out") == 8


@pytest.mark.parametrize("name", ["python", "git"])
def test_every_fact_is_in_the_installed_documentation(name: str) -> None:
    """Each fact's patterns all match one page of the corpus (as the indexer reads it);
    skipped when the set's Debian package is not installed."""
    from services.retrieval.documents import html_to_text

    doc_set = facts.DOC_SETS[name]
    docs = facts.find_docs(None, doc_set)
    if docs is None:
        pytest.skip(f"{doc_set.package} is not installed")
    texts = [" ".join(html_to_text(p.read_text(encoding="utf-8", errors="replace"))[1].split())
             for p in facts.doc_pages(docs, None, doc_set)]
    missing = [(q.id, [p.pattern for p in fact]) for q in facts.load_questions(doc_set.questions)
               for fact in q.facts if not any(facts.recalled(text, fact) for text in texts)]
    assert not missing
