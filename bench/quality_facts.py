"""The quality benchmark's question set, how a report is scored against it, and the
corpus it runs over (Python's HTML documentation from Debian's ``python3-doc``).

Kept apart from ``bench/quality.py``, which runs the systems and prints the figures.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "INSTALL_HINT", "QUESTIONS_FILE", "SPLITS", "Question", "answer_text", "citations_per_1000_words",
    "copy_corpus", "doc_pages", "find_docs", "load_questions", "recalled",
]

QUESTIONS_FILE = Path(__file__).resolve().parent / "quality_questions.toml"
DOC_GLOBS = ("/usr/share/doc/python3-doc/html", "/usr/share/doc/python3*-doc/html", "/usr/share/doc/python3*/html")
INSTALL_HINT = (
    "Python's documentation is not installed. On Debian or Ubuntu: apt-get install -y python3-doc "
    "(as root), which puts its HTML under /usr/share/doc/python3*/html; or pass --docs DIR with "
    "the HTML of the Python documentation (the folder holding index.html, glossary.html, library/)."
)
# Sphinx's generated pages: an index of every name on the site would match any query.
_GENERATED = re.compile(r"^(?:genindex.*|search|py-modindex)\.html$")
SPLITS = ("tuning", "held-out")


# -- the question set ----------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    id: str
    split: str
    question: str
    facts: list[list[re.Pattern[str]]]


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    """The question set; ValueError names what is wrong with it. A fact the question
    itself would recall is refused: it would measure nothing."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: list[Question] = []
    seen: set[str] = set()
    for raw in data.get("question", []):
        qid = str(raw.get("id", ""))
        if not qid or qid in seen:
            raise ValueError(f"{path.name}: missing or repeated question id {qid!r}")
        seen.add(qid)
        split = raw.get("split")
        if split not in SPLITS:
            raise ValueError(f"{path.name}: question {qid}: split must be one of {SPLITS}, not {split!r}")
        facts = [[re.compile(p, re.IGNORECASE) for p in fact] for fact in raw.get("facts", [])]
        if not facts or any(not fact for fact in facts):
            raise ValueError(f"{path.name}: question {qid}: every question needs facts, every fact patterns")
        question = str(raw["question"])
        for fact in facts:
            if all(p.search(question) for p in fact):
                raise ValueError(f"{path.name}: question {qid}: the question itself matches {[p.pattern for p in fact]}")
        out.append(Question(qid, split, question, facts))
    if not out:
        raise ValueError(f"{path.name}: no [[question]] entries")
    return out


# -- scoring a report ------------------------------------------------------------------


_ESCAPED_CITATION = re.compile(r"\\\[(\d+)\\\]")
_CITATION = re.compile(r"(?<!\\)\[\d+\]")


def answer_text(report: str) -> str:
    """What a report states: its findings, summary and source quotes, whitespace
    collapsed; headings, the refined question, coverage notes and the gaps (which
    repeat the checklist, itself made from the question) are left out."""
    kept: list[str] = []
    in_gaps = False
    for line in report.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            in_gaps = stripped.lstrip("#").strip().lower() in ("gaps", "knowledge gaps")
            continue
        if in_gaps or stripped.startswith(("Refined question:", "Coverage:", "Addressed by the findings",
                                           "Also addressed by the findings")):
            continue
        kept.append(stripped)
    return _ESCAPED_CITATION.sub(r"[\1]", " ".join(" ".join(kept).split()))


def recalled(text: str, fact: list[re.Pattern[str]]) -> bool:
    return all(p.search(text) for p in fact)


def citations_per_1000_words(report: str) -> float:
    words = len(report.split())
    return 1000 * len(_CITATION.findall(report)) / words if words else 0.0


# -- the corpus ----------------------------------------------------------------------------


def find_docs(explicit: str | None) -> Path | None:
    if explicit:
        path = Path(explicit)
        return path if (path / "index.html").is_file() else None
    for pattern in DOC_GLOBS:
        for candidate in sorted(Path("/").glob(pattern.lstrip("/")), reverse=True):
            if (candidate / "glossary.html").is_file() and (candidate / "library").is_dir():
                return candidate.resolve()
    return None


def doc_pages(docs: Path, sections: Iterable[str] | None) -> list[Path]:
    wanted = set(sections) if sections else None
    pages = []
    for path in sorted(docs.rglob("*.html")):
        rel = path.relative_to(docs)
        top = rel.parts[0]
        if top.startswith("_") or _GENERATED.match(rel.name):
            continue
        section = top if len(rel.parts) > 1 else top.removesuffix(".html")
        if wanted is not None and section not in wanted:
            continue
        pages.append(path)
    return pages


def copy_corpus(docs: Path, pages: list[Path], dest: Path) -> None:
    """A real copy: the indexer does not follow links that lead out of its folder."""
    for page in pages:
        target = dest / page.relative_to(docs)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)
