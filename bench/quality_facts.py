"""The quality benchmark's question sets, how a report is scored against them, and the
corpora they run over: Python's HTML documentation from Debian's ``python3-doc`` (set
``python``) and Git's manual pages and guides from Debian's ``git-doc`` (set ``git``).

Kept apart from ``bench/quality.py``, which runs the systems and prints the figures.

Relevance share (:func:`relevance`): of the sentences of a report's body, the share
that answer the question or their checklist item. The body is the executive summary,
the checklist sections (a ``##`` heading that is a checklist item), "Other findings"
and the Verified Findings; the title, writer's note and refined question before the
summary, the contradictions, what remains unknown, gaps, confidence, council review,
methodology and sources are not. Code's notes in the body are not sentences of the
answer and are skipped: italic lines (``*...*``), ``Coverage:`` lines, quoted source
passages (``>`` lines under a finding), "Also answered by ..." pointers, the findings'
preamble and "No claim ..." placeholders. Citation markers, daggers and the
``(confidence n%)`` and ``(listed under "...")`` tails are removed, and what is left
is split with the project's sentence splitter (``shared.research.text.sentence_spans``).
A sentence without a content term counts for nothing, and so does a line with no
citation at all: the report's own framing ("20 claims from 18 sources passed the claim
check. The best-supported findings follow.") states nothing about the subject and is
not a finding; an uncited sentence on a line with citations (a model's connective)
counts like any other.

A sentence answers when, by the project's own coverage rule
(``shared.research.claims.claim_matches_item``: at least min(2, n) of the n subject
terms, and half of them for a long one, terms stemmed by ``shared.research.text.terms``,
subject terms by ``shared.research.claims.item_terms``), its terms cover the question,
or the item it answers: the section's heading in a checklist section; in the Verified
Findings, the checklist items of the finding's claim (the result's
``verified_findings[n].claim_id`` -> ``claims[].checklist_item_ids`` -> the checklist's
descriptions; any item of the report when that cannot be followed); in the executive
summary, any checklist item of the report; in "Other findings" only the question.
Deterministic: the same report and result always give the same figure.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from shared.research.claims import claim_matches_item, item_terms
from shared.research.text import sentence_spans, terms

__all__ = [
    "DOC_SETS", "GIT", "INSTALL_HINT", "PYTHON", "QUESTIONS_FILE", "SPLITS", "DocSet", "Question", "answer_text",
    "body_sentences", "citations_per_1000_words", "copy_corpus", "doc_pages", "find_docs", "load_questions",
    "recalled", "rejected_count", "relevance", "tokens_of",
]

HERE = Path(__file__).resolve().parent
SPLITS = ("tuning", "held-out")


# -- the documentation sets --------------------------------------------------------------


@dataclass(frozen=True)
class DocSet:
    """A question set and the documentation it is asked of: the Debian package that
    installs it, where to look for its HTML, how to recognise that folder, which pages
    to leave out of the corpus, and what to say when it is missing."""

    name: str
    title: str  # "Python's documentation"
    package: str  # the Debian package
    corpus_name: str  # the local corpus the pages are indexed as
    questions: Path
    globs: tuple[str, ...]  # folders to try, newest first within each glob
    markers: tuple[str, ...]  # paths a found folder must hold
    explicit_marker: str  # the file a folder given with --docs must hold
    skip: re.Pattern[str]  # pages left out: searched in the path relative to the folder, "/"-separated
    skip_note: str  # what the corpus is, for the report's header
    install_hint: str


PYTHON = DocSet(
    name="python", title="Python's documentation", package="python3-doc", corpus_name="pydocs",
    questions=HERE / "quality_questions.toml",
    globs=("/usr/share/doc/python3-doc/html", "/usr/share/doc/python3*-doc/html", "/usr/share/doc/python3*/html"),
    markers=("glossary.html", "library"), explicit_marker="index.html",
    # Sphinx's generated pages: an index of every name on the site would match any query.
    skip=re.compile(r"(?:^|/)(?:genindex.*|search|py-modindex)\.html$"),
    skip_note="all but Sphinx's generated index pages",
    install_hint=(
        "Python's documentation is not installed. On Debian or Ubuntu: apt-get install -y python3-doc "
        "(as root), which puts its HTML under /usr/share/doc/python3*/html; or pass --docs DIR with "
        "the HTML of the Python documentation (the folder holding index.html, glossary.html, library/)."
    ),
)

GIT = DocSet(
    name="git", title="Git's documentation", package="git-doc", corpus_name="gitdocs",
    questions=HERE / "quality_questions_git.toml",
    globs=("/usr/share/doc/git-doc", "/usr/share/doc/git/html"),
    markers=("git.html", "gitglossary.html", "user-manual.html"), explicit_marker="git.html",
    # index.html is a link to git.html (the same page twice); howto-index.html and
    # technical/api-index.html only list other pages.
    skip=re.compile(r"^(?:index|howto-index|technical/api-index)\.html$"),
    skip_note="the manual pages, guides, how-tos and technical notes; not the index pages",
    install_hint=(
        "Git's documentation is not installed. On Debian or Ubuntu: apt-get install -y git-doc "
        "(as root), which puts its HTML under /usr/share/doc/git-doc (also /usr/share/doc/git/html); "
        "or pass --docs DIR with the HTML of Git's documentation (the folder holding git.html, "
        "gitglossary.html, user-manual.html)."
    ),
)

DOC_SETS: dict[str, DocSet] = {s.name: s for s in (PYTHON, GIT)}

# The python set's names, as they were before there were two sets.
QUESTIONS_FILE = PYTHON.questions
DOC_GLOBS = PYTHON.globs
INSTALL_HINT = PYTHON.install_hint


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


# Sections that restate the question's own words (the checklist, the queries), not findings.
_NOT_STATED = frozenset({"gaps", "knowledge gaps", "what remains unknown", "methodology"})


def answer_text(report: str) -> str:
    """What a report states: its findings, summary and source quotes, whitespace
    collapsed; headings, the refined question, coverage notes, the gaps and what remains
    unknown (which repeat the checklist, itself made from the question, and the queries
    that targeted it) and the methodology (which lists the queries) are left out."""
    kept: list[str] = []
    in_gaps = False
    for line in report.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            in_gaps = stripped.lstrip("#").strip().lower() in _NOT_STATED
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


_REJECTED_IN_REPORT = re.compile(r"(\d+) rejected by the claim check")


def rejected_count(result: dict) -> int | None:
    """Claims the check refused in one job: the result's list, or, when that list is
    empty, the count the report's methodology states (the list is bounded, and a
    result may not carry it); None when neither says."""
    listed = result.get("rejected_claims")
    count = len(listed) if isinstance(listed, list) else listed if isinstance(listed, int) else None
    if not count:
        m = _REJECTED_IN_REPORT.search(result.get("report") or "")
        if m is not None:
            return int(m.group(1))
    return count


def tokens_of(result: dict) -> int:
    """Tokens one job spent, input and output, over every stage (0 offline)."""
    usage = result.get("usage") or result.get("tokenUsage") or {}
    return sum(int(u.get("input_tokens", 0)) + int(u.get("output_tokens", 0))
               for u in (usage.get("by_stage") or {}).values() if isinstance(u, dict))


# -- relevance share (see the module's docstring) ------------------------------------------

SUMMARY, FINDINGS, OTHER, ITEM = "summary", "findings", "other", "item"
# Headings of the report's body that are not checklist items.
_BODY_HEADINGS = {"executive summary": SUMMARY, "summary": SUMMARY, "verified findings": FINDINGS,
                  "other findings": OTHER}
# Headings whose sections are not the answer: the rest of the report after the body.
_NOT_BODY = frozenset({"contradictions", "what remains unknown", "gaps", "knowledge gaps", "confidence",
                       "council review", "methodology", "sources"})
# Code's notes in the body: they state nothing about the subject.
_NOTE_PREFIXES = ("Coverage:", "Refined question:", "Also answered by", "Addressed by the findings",
                  "Also addressed by the findings", "Chosen by the service", "No claim ",
                  "Nothing on the checklist")
_ITALIC_NOTE = re.compile(r"^\*[^*].*\*$")
_LIST_MARK = re.compile(r"^(?:[-*+]\s+|(\d+)[.)]\s+)")
_CITATIONS = re.compile(r"\\?\[\d+\\?\]|\u2020")
_TAILS = re.compile(r"\s*\((?:(?:quoted|entailed|supported), )?confidence \d+%\)"
                    r"|\s*\(listed under \".*?\"\)")


@dataclass(frozen=True)
class BodySentence:
    text: str
    kind: str  # SUMMARY, FINDINGS, OTHER or ITEM
    heading: str | None = None  # ITEM: the section's heading (the checklist item)
    finding: int | None = None  # FINDINGS: the finding's number, from 1


def body_sentences(report: str) -> list[BodySentence]:
    """The sentences of a report's body, each with the part it is in (see the module's
    docstring for what is body and what is left out)."""
    out: list[BodySentence] = []
    kind: str | None = None  # None: outside the body
    heading: str | None = None
    finding: int | None = None
    for line in report.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            level = len(stripped) - len(stripped.lstrip("#"))
            title = stripped.lstrip("#").strip()
            if level == 1:
                kind = None  # the report's title: what precedes the summary is not body
            elif level == 2:
                key = title.lower()
                kind = _BODY_HEADINGS.get(key) or (None if key in _NOT_BODY else ITEM)
                heading = title if kind == ITEM else None
                finding = None
            continue
        if kind is None or not stripped or stripped.startswith((">", "|")) or _ITALIC_NOTE.match(stripped):
            continue
        mark = _LIST_MARK.match(stripped)
        if mark is not None:
            stripped = stripped[mark.end():]
            if kind == FINDINGS and mark.group(1):
                finding = int(mark.group(1))
        if stripped.startswith(_NOTE_PREFIXES) or not _CITATIONS.search(stripped):
            continue
        text = _TAILS.sub("", _CITATIONS.sub("", stripped))
        for start, end in sentence_spans(text):
            sentence = text[start:end]
            if terms(sentence):
                out.append(BodySentence(sentence, kind, heading, finding if kind == FINDINGS else None))
    return out


def _checklist(result: dict) -> dict[str, str]:
    """id -> description of the result's checklist (the bench keeps the scoring stage's)."""
    items = result.get("checklist") or []
    return {str(i["id"]): str(i["description"]) for i in items if isinstance(i, dict) and "id" in i
            and "description" in i}


def _finding_items(result: dict, checklist: dict[str, str]) -> dict[int, list[str]]:
    """Finding number (from 1) -> the descriptions of its claim's checklist items."""
    items_of = {str(c.get("id")): c.get("checklist_item_ids") or c.get("checklistItemIds") or []
                for c in result.get("claims") or [] if isinstance(c, dict)}
    out: dict[int, list[str]] = {}
    for n, f in enumerate(result.get("verified_findings") or [], start=1):
        if isinstance(f, dict):
            descriptions = [checklist[i] for i in items_of.get(str(f.get("claim_id")), []) if i in checklist]
            if descriptions:
                out[n] = descriptions
    return out


def relevance(result: dict, question: str) -> tuple[int, int]:
    """(sentences that answer, sentences) of the report's body: see the module's docstring."""
    sentences = body_sentences(result.get("report") or "")
    checklist = _checklist(result)
    headings = [s.heading for s in sentences if s.kind == ITEM and s.heading]
    every_item = [item_terms(d) for d in dict.fromkeys([*checklist.values(), *headings])]
    by_finding = {n: [item_terms(d) for d in ds] for n, ds in _finding_items(result, checklist).items()}
    subject = item_terms(question)
    answering = 0
    for s in sentences:
        have = set(terms(s.text))
        if s.kind == ITEM:
            items = [item_terms(s.heading or "")]
        elif s.kind == FINDINGS:
            items = by_finding.get(s.finding or 0, every_item)
        elif s.kind == SUMMARY:
            items = every_item
        else:
            items = []
        if claim_matches_item(have, subject) or any(claim_matches_item(have, item) for item in items):
            answering += 1
    return answering, len(sentences)


# -- the corpus ----------------------------------------------------------------------------


def find_docs(explicit: str | None, doc_set: DocSet = PYTHON) -> Path | None:
    """The folder of ``doc_set``'s HTML: ``explicit`` when it holds the set's marker
    page, else the first of the set's folders that holds all its markers; None when
    neither (the documentation is not installed)."""
    if explicit:
        path = Path(explicit)
        return path if (path / doc_set.explicit_marker).is_file() else None
    for pattern in doc_set.globs:
        for candidate in sorted(Path("/").glob(pattern.lstrip("/")), reverse=True):
            if all((candidate / marker).exists() for marker in doc_set.markers):
                return candidate.resolve()
    return None


def doc_pages(docs: Path, sections: Iterable[str] | None, doc_set: DocSet = PYTHON) -> list[Path]:
    """The HTML pages of ``docs`` that make the corpus: not those ``doc_set`` skips nor
    the ``_static``/``_sources`` kind of folder; with ``sections``, only the pages of
    those top-level folders or top-level pages (named without ``.html``)."""
    wanted = set(sections) if sections else None
    pages = []
    for path in sorted(docs.rglob("*.html")):
        rel = path.relative_to(docs)
        top = rel.parts[0]
        if top.startswith("_") or doc_set.skip.search(rel.as_posix()):
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
