"""Chunking: a canonical text cut into ``(start, end)`` spans for the BM25 index.

Spans end on sentence boundaries and prefer paragraph ones, so a chunk reads as a
passage and ``text[start:end]`` is what a locator built from it quotes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from shared.research.text import sentence_spans

__all__ = ["CHUNK_MAX_CHARS", "CHUNK_TARGET_CHARS", "chunk_spans", "document_spans"]

CHUNK_TARGET_CHARS = 800
CHUNK_MAX_CHARS = 1_200


def chunk_spans(
    text: str, *, target: int = CHUNK_TARGET_CHARS, max_chars: int = CHUNK_MAX_CHARS
) -> list[tuple[int, int]]:
    """(start, end) spans of ``text`` of about ``target`` chars, at most ``max_chars``.

    Chunks end on sentence boundaries and prefer paragraph boundaries; only a single
    sentence longer than ``max_chars`` is cut inside, at a space when there is one.
    Spans are trimmed, non-overlapping and in order.
    """
    pieces: list[tuple[int, int]] = []
    for s, e in sentence_spans(text):
        pieces.extend(_split_long(text, s, e, max_chars))

    chunks: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    for s, e in pieces:
        if current:
            cs, ce = current[0][0], current[-1][1]
            paragraph_break = "\n\n" in text[ce:s]
            if (
                e - cs > max_chars
                or ce - cs >= target
                or (paragraph_break and e - cs > target)
            ):
                carried = _carry_heading(text, current, e, max_chars)
                if current:
                    chunks.append((current[0][0], current[-1][1]))
                current = carried
        current.append((s, e))
    if current:
        chunks.append((current[0][0], current[-1][1]))
    return chunks


def _carry_heading(
    text: str, current: list[tuple[int, int]], next_end: int, max_chars: int
) -> list[tuple[int, int]]:
    """A heading that would end a chunk belongs with the text after it."""
    last_start = current[-1][0]
    if len(current) > 1 and text.startswith("#", last_start) and next_end - last_start <= max_chars:
        return [current.pop()]
    return []


def _split_long(text: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int]]:
    while end - start > max_chars:
        cut = start + max_chars
        space = text.rfind(" ", start + max_chars // 2, cut + 1)
        space = max(space, text.rfind("\n", start + max_chars // 2, cut + 1))
        if space > start:
            cut = space
        piece_end = cut
        while piece_end > start and text[piece_end - 1].isspace():
            piece_end -= 1
        yield start, piece_end
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        yield start, end


def document_spans(text: str, page_starts: list[int] | None) -> list[tuple[int, int]]:
    """Chunks of a document; a PDF is chunked page by page, so a chunk (and any quote
    inside it) lies on one page and its locator can name that page."""
    if not page_starts:
        return chunk_spans(text)
    bounds = [*page_starts, len(text)]
    spans: list[tuple[int, int]] = []
    for start, end in itertools.pairwise(bounds):
        spans.extend((start + s, start + e) for s, e in chunk_spans(text[start:end]))
    return spans
