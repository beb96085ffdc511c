"""Passages chosen by the question, from a source's whole canonical text.

A source reaches scoring with its excerpt (the window the search matched) and, when it
was digested, a handful of evidence snippets. A fact that sits deeper in a page than the
search's best chunk is in neither. Scoring has every source's canonical text at hand (it
verifies quotes against it), so before claims are proposed each source is read again for
what the job still needs to know: its sentences are ranked with BM25 (bm25s, over the
project's own terms, so "threads" meets "thread") against each of the job's questions —
the question, the sub-questions and the checklist items still open — and the best ones,
taken in turn for each question so that one broad question cannot crowd out the others,
become passages of one or two sentences with their exact place in the text.

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

__all__ = ["PASSAGES_PER_SOURCE", "PASSAGE_MAX_CHARS", "Passage", "heading_before", "passages_by_source",
           "question_passages"]

PASSAGES_PER_SOURCE = 6
PASSAGE_MAX_CHARS = 400  # as the digest's evidence snippets, so either can be offered to a model
MAX_TEXT_CHARS = 400_000
# A sentence must match a question this well (BM25, relative to that question's best
# sentence in the source) to be taken for it: the tail of the ranking shares one common
# word with the question and answers nothing.
MIN_RELATIVE_SCORE = 0.35
MAX_SENTENCE_CHARS = PASSAGE_MAX_CHARS

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Passage:
    """Consecutive sentences of a canonical text: ``text[start:end] == passage.text``."""

    text: str
    start: int
    end: int
    locator: str
    score: float  # BM25 for the question it was chosen for, over that question's best
    heading: str = ""  # the title the passage opens the section of, "" when none


def heading_before(text: str, start: int) -> str:
    """The heading a sentence at ``start`` opens the section of: the paragraph right
    before it when that is a short line without final punctuation (a title, a glossary
    term, a definition-list term); "" when the sentence does not start a paragraph or
    nothing heads it."""
    before = text[:start].rstrip(" ")
    if start and not before.endswith("\n"):
        return ""
    paragraph = before.rstrip("\n").rsplit("\n\n", 1)[-1].strip()
    line = paragraph.rsplit("\n", 1)[-1].strip().lstrip("#").strip()
    if not line or len(line.split()) > 8 or line.rstrip("¶ ").endswith((".", "!", "?", ":", ";", ",")):
        return ""
    return line


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


def _window(text: str, spans: Sequence[tuple[int, int]], at: int) -> tuple[int, int]:
    """The sentence ``at`` and, when it fits and the paragraph goes on, the next one: a
    fact and the sentence that finishes it ("It is released when doing I/O.")."""
    start, end = spans[at]
    if at + 1 < len(spans):
        s, e = spans[at + 1]
        if e - start <= PASSAGE_MAX_CHARS and not _PARAGRAPH_BREAK.search(text, end, s):
            end = e
    return start, end


def question_passages(text: str, questions: Sequence[str], *, page_starts: Sequence[int] | None = None,
                      limit: int = PASSAGES_PER_SOURCE) -> list[Passage]:
    """Up to ``limit`` passages of ``text`` that best answer ``questions``, taken in turn
    for each question (its best, then the next question's best...), none overlapping;
    deterministic (ties go to the earlier sentence)."""
    spans = _sentences(text)
    asked = [terms(q) for q in questions]
    if not spans or not any(asked):
        return []
    ranked = _ranked([terms(text[s:e]) for s, e in spans], asked)
    chosen: list[Passage] = []
    taken: set[int] = set()
    for depth in range(max((len(r) for r in ranked), default=0)):
        for ranking in ranked:
            if len(chosen) >= limit:
                return chosen
            if depth >= len(ranking):
                continue
            score, at = ranking[depth]
            if at in taken:
                continue
            start, end = _window(text, spans, at)
            taken.update(i for i, (s, e) in enumerate(spans) if s < end and e > start)
            chosen.append(Passage(text[start:end], start, end, locate(start, end, page_starts), round(score, 4),
                                  heading_before(text, start)))
    return chosen


def passages_by_source(scored: Sequence[ScoredSource], texts: Mapping[str, str | None],
                       questions: Sequence[str]) -> dict[int, list[Passage]]:
    """Source index -> its passages for ``questions``; a source whose canonical text is
    not at hand (missing from the store) has none and keeps its excerpt and digest."""
    out: dict[int, list[Passage]] = {}
    for index, source in enumerate(scored):
        text = texts.get(source.text_hash)
        if text:
            out[index] = question_passages(text, questions, page_starts=source.page_starts)
    return out
