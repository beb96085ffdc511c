"""Passages chosen by the question, from a source's whole canonical text.

A source reaches scoring with its excerpt (the window the search matched) and, when it
was digested, a handful of evidence snippets. A fact that sits deeper in a page than the
search's best chunk is in neither. Scoring has every source's canonical text at hand (it
verifies quotes against it), so before claims are proposed each source is read again for
what the job still needs to know: its sentences are ranked with BM25 (bm25s, over the
project's own terms, so "threads" meets "thread") against each of the job's questions —
the question, the sub-questions and the checklist items still open — and the best ones,
taken in turn for each question so that one broad question cannot crowd out the others,
become passages of one or two sentences (or a sentence ending in a colon with the
one-line command it introduces) with their exact place in the text.

Bounds: at most ``PASSAGES_PER_SOURCE`` passages of at most ``PASSAGE_MAX_CHARS``
characters per source (the claim step's prompt carries at most its snippet bound per
source, so the model's budget holds), and a source longer than ``MAX_TEXT_CHARS`` is read
up to that point only (a whole book would cost seconds for little).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

from shared.research.envelope import ScoredSource
from shared.research.locators import locate
from shared.research.text import is_statement, sentence_spans, terms

__all__ = ["PASSAGES_PER_SOURCE", "PASSAGE_MAX_CHARS", "Passage", "example_end", "heading_before", "is_code_term",
           "passages_by_source", "question_passages", "term_start"]

# Room for more than one sentence per question in a source that answers several (a
# manual page read for the question, its sub-questions and its checklist items); the
# model's prompt still takes at most its own snippet bound of them per source.
PASSAGES_PER_SOURCE = 10
PASSAGE_MAX_CHARS = 400  # as the digest's evidence snippets, so either can be offered to a model
MAX_TEXT_CHARS = 400_000
# A sentence must match a question this well (BM25, relative to that question's best
# sentence) to be taken for it: the tail of the ranking shares one common word with the
# question and answers nothing, and a sentence that has only the commoner of two
# question words scores over a third of one that has both.
MIN_RELATIVE_SCORE = 0.5
MAX_SENTENCE_CHARS = PASSAGE_MAX_CHARS

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A paragraph of one short line, right after a blank line (canonical text has no other
# blank lines than "\n\n"), ending the paragraph.
_EXAMPLE = re.compile(r"\n\n(?!#)([^\n]{1,120})(?=\n\n|$)")
_PROMPTS = ("$", "%", ">>>")  # a shell's or Python's prompt, or a variable


@dataclass(frozen=True)
class Passage:
    """Consecutive sentences of a canonical text: ``text[start:end] == passage.text``."""

    text: str
    start: int
    end: int
    locator: str
    score: float  # BM25 for the question it was chosen for, over that question's best
    heading: str = ""  # the title the passage opens the section of, "" when none
    # Characters of ``text`` before its first sentence: the code term it describes
    # (:func:`term_start`), quoted with it; 0 when none.
    term: int = 0


def heading_before(text: str, start: int) -> str:
    """The heading a sentence at ``start`` opens the section of: the paragraph right
    before it when that is a short line without final punctuation (a title, a glossary
    term, a definition-list term); "" when the sentence does not start a paragraph or
    nothing heads it. A command line is no heading: one at a prompt or naming a
    variable ("$ git fetch ...", "$GIT_DIR/hooks/update refname"), or one the
    sentence goes on from ("git fetch origin tag X" above "to get my updated tag.")."""
    found = _heading(text, start)
    return found[1] if found else ""


def _heading(text: str, start: int) -> tuple[int, str] | None:
    """(where its text starts, the heading) of :func:`heading_before`, or None."""
    before = text[:start].rstrip(" ")
    if start and not before.endswith("\n"):
        return None
    paragraph = before.rstrip("\n").rsplit("\n\n", 1)[-1].strip()
    line = paragraph.rsplit("\n", 1)[-1].strip().lstrip("#").strip()
    if not line or len(line.split()) > 8 or line.rstrip("¶ ").endswith((".", "!", "?", ":", ";", ",")):
        return None
    if line.startswith(_PROMPTS) or text[start:start + 1].islower():
        return None
    return before.rindex(line), line


# A definition list's term written in code: an option ("--ignore-rev <rev>"), a
# signature ("contextvars.copy_context()", "class contextvars.ContextVar(name)"), a
# subcommand, hook or setting ("prune", "pre-commit", "core.autocrlf"). Titles are
# capitalised words ("Context Variables"), numbered ("3.1. Objects") or long.
_TERM_WORDS = 4
_CODE_CHARS = re.compile(r"[-_.()=<>\[\]/$@{}*:|]")


def is_code_term(heading: str) -> bool:
    """Whether a heading names a thing in code's characters rather than titling a
    section: its first word has code's characters or starts in lower case, and it has
    at most four words."""
    tokens = heading.rstrip("¶ ").split()
    if not tokens or len(tokens) > _TERM_WORDS or tokens[0][0].isdigit():
        return False
    first = tokens[1] if tokens[0] in ("class", "function", "method", "exception") and len(tokens) > 1 else tokens[0]
    return bool(_CODE_CHARS.search(first)) or first[0].islower()


def term_start(text: str, start: int) -> int | None:
    """Where the code term (:func:`is_code_term`) that a sentence at ``start`` is the
    description of begins, or None: a manual's option list names the option once, in
    the term, and its description never repeats it ("--rebase" above "When true, rebase
    the current branch on top of the upstream branch after fetching."). Not the
    one-line example a sentence ending in a colon introduces."""
    return _term_at(text, _heading(text, start))


def _term_at(text: str, found: tuple[int, str] | None) -> int | None:
    """:func:`term_start` for the heading :func:`_heading` found."""
    if not found or not is_code_term(found[1]):
        return None
    # A line that a sentence ending in a colon introduces is its example, no term.
    return None if text[:found[0]].rstrip().endswith(":") else found[0]


def _sentences(text: str) -> list[tuple[int, int]]:
    """The quotable sentences of ``text``: statements of a length one passage can hold."""
    return [(s, e) for s, e in sentence_spans(text[:MAX_TEXT_CHARS])
            if e - s <= MAX_SENTENCE_CHARS and is_statement(text[s:e])]


def _ranked(sentences: Sequence[list[str]], questions: Sequence[list[str]]) -> list[list[tuple[float, int]]]:
    """For each question, (relative score, sentence index) of the sentences it matches
    well enough, best first."""
    if not any(sentences):
        return [[] for _ in questions]
    index = bm25s.BM25()
    index.index([s or ["\x00"] for s in sentences], show_progress=False)
    out: list[list[tuple[float, int]]] = []
    for question in questions:
        scores = np.asarray(index.get_scores(question)) if question else np.zeros(len(sentences))
        best = float(scores.max()) if len(scores) else 0.0
        if best <= 0 or math.isnan(best):
            out.append([])
            continue
        order = np.argsort(-scores, kind="stable")
        out.append([(float(scores[i]) / best, int(i)) for i in order if scores[i] >= MIN_RELATIVE_SCORE * best])
    return out


def example_end(text: str, end: int) -> int | None:
    """Where the one-line example that a sentence ending at ``end`` with a colon
    introduces ends ("... by executing the command venv:" then "python3 -m venv
    /path/to/env" on a line of its own): the command is the answer the sentence
    announces. None when the sentence has no colon or what follows is prose, or more
    than one line."""
    if text[end - 1:end] != ":":
        return None
    example = _EXAMPLE.match(text, end)
    if example is None or is_statement(example.group(1)):
        return None
    return example.end(1)


def _window(text: str, spans: Sequence[tuple[int, int]], at: int) -> tuple[int, int]:
    """The sentence ``at`` and, when it fits and the paragraph goes on, the next one: a
    fact and the sentence that finishes it ("It is released when doing I/O."); or the
    one-line example a sentence ending in a colon introduces (:func:`example_end`)."""
    start, end = spans[at]
    shown = example_end(text, end)
    if shown is not None and shown - start <= PASSAGE_MAX_CHARS:
        return start, shown
    if at + 1 < len(spans):
        s, e = spans[at + 1]
        if e - start <= PASSAGE_MAX_CHARS and not _PARAGRAPH_BREAK.search(text, end, s):
            end = e
    return start, end


@dataclass(frozen=True)
class _Document:
    text: str
    spans: list[tuple[int, int]]
    page_starts: Sequence[int] | None


def _take(docs: Sequence[_Document], ranked: list[list[tuple[float, int]]], owner: Sequence[tuple[int, int]],
          limit: int) -> dict[int, list[Passage]]:
    """Per document, up to ``limit`` passages: each question's best sentences of that
    document in turn (its best, then the next question's best...), none overlapping."""
    out: dict[int, list[Passage]] = {}
    taken: dict[int, set[int]] = {}
    per_doc: list[list[list[tuple[float, int]]]] = [[[] for _ in ranked] for _ in docs]
    for q, ranking in enumerate(ranked):
        for score, at in ranking:
            d, i = owner[at]
            per_doc[d][q].append((score, i))
    for d, rankings in enumerate(per_doc):
        doc, chosen, used = docs[d], out.setdefault(d, []), taken.setdefault(d, set())
        for depth in range(max((len(r) for r in rankings), default=0)):
            for ranking in rankings:
                if len(chosen) >= limit or depth >= len(ranking):
                    continue
                score, i = ranking[depth]
                if i in used:
                    continue
                start, end = _window(doc.text, doc.spans, i)
                used.update(j for j, (s, e) in enumerate(doc.spans) if s < end and e > start)
                found = _heading(doc.text, start)  # (read once: it scans the text before the passage)
                heading = found[1] if found else ""
                lead = _with_term(doc.spans, i, end, _term_at(doc.text, found))
                if lead is not None:
                    (start, end), term = lead, doc.spans[i][0] - lead[0]
                else:
                    term = 0
                chosen.append(Passage(doc.text[start:end], start, end, locate(start, end, doc.page_starts),
                                      round(score, 4), heading, term))
    return out


def _with_term(spans: Sequence[tuple[int, int]], at: int, end: int, begin: int | None) -> tuple[int, int] | None:
    """The passage of the sentence ``at`` (ending at ``end``) widened back to ``begin``,
    where the code term it describes starts (:func:`term_start`), within
    PASSAGE_MAX_CHARS (its second sentence dropped when only the first fits); None when
    it has no such term or nothing fits."""
    if begin is None:
        return None
    for stop in (end, spans[at][1]):
        if stop - begin <= PASSAGE_MAX_CHARS:
            return begin, stop
    return None


def choose_passages(documents: Sequence[tuple[str, Sequence[int] | None]], questions: Sequence[str], *,
                    limit: int = PASSAGES_PER_SOURCE) -> dict[int, list[Passage]]:
    """Document index -> up to ``limit`` passages of that document for ``questions``.

    One BM25 index over the sentences of all the documents, so that a word is weighed by
    how rare it is among everything the job read (the page about the reflog says
    "reflog" in every sentence; within that page alone the word would count for
    nothing). A sentence is ranked by its words and its heading's: a definition list, a
    glossary or a manual page names its subject once, in the term it defines ("--soft",
    "GIL"), and the sentences under it never repeat it. Deterministic: ties go to the
    earlier sentence."""
    asked = [terms(q) for q in questions]
    docs = [_Document(text, _sentences(text), page_starts) for text, page_starts in documents]
    owner = [(d, i) for d, doc in enumerate(docs) for i in range(len(doc.spans))]
    if not owner or not any(asked):
        return {}
    sentences = [terms(f"{heading_before(docs[d].text, docs[d].spans[i][0])} "
                       f"{docs[d].text[docs[d].spans[i][0]:docs[d].spans[i][1]]}") for d, i in owner]
    return _take(docs, _ranked(sentences, asked), owner, limit)


def question_passages(text: str, questions: Sequence[str], *, page_starts: Sequence[int] | None = None,
                      limit: int = PASSAGES_PER_SOURCE) -> list[Passage]:
    """The passages of one text for ``questions`` (:func:`choose_passages` over it alone)."""
    return choose_passages([(text, page_starts)], questions, limit=limit).get(0, [])


def passages_by_source(scored: Sequence[ScoredSource], texts: Mapping[str, str | None],
                       questions: Sequence[str], *, limit: int = PASSAGES_PER_SOURCE) -> dict[int, list[Passage]]:
    """Source index -> its passages for ``questions`` (up to ``limit``); a source whose
    canonical text is not at hand (missing from the store) has none and keeps its excerpt
    and digest."""
    present = [(index, texts.get(source.text_hash)) for index, source in enumerate(scored)]
    present = [(index, text) for index, text in present if text]
    chosen = choose_passages([(text, scored[index].page_starts) for index, text in present], questions,
                             limit=limit)
    return {index: chosen.get(d, []) for d, (index, _) in enumerate(present)}
