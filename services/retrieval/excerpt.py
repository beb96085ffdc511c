"""The excerpt of a source: one contiguous window of its canonical text.

A web page or record found by a search API is excerpted where its snippet occurs
(:func:`excerpt_of`); a local document around the chunks its queries matched
(:func:`excerpt_window`).

A search of local documents returns chunks of about 800 characters; a document matched by several
queries, or in several places, has more to say than its best chunk. The excerpt is
the window of at most ``EXCERPT_MAX_CHARS`` characters that covers the most matched
text (each chunk weighed by its relevance), always holding the best chunk whole, from
the start of its first matched chunk to the end of its last one (text no query
matched only pads the excerpt and crowds out what did match); a document no longer
than the limit is its own excerpt.

The window is a single slice ``text[start:end]`` on purpose: claims are located in
the document by adding their offset in the excerpt to ``excerpt_start``, which only
holds for a contiguous excerpt.
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.research.envelope import EXCERPT_MAX_CHARS
from shared.research.text import canonicalize

__all__ = ["excerpt_of", "excerpt_window"]


def excerpt_window(
    text: str,
    spans: Mapping[tuple[int, int], float],
    best: tuple[int, int],
    *,
    limit: int = EXCERPT_MAX_CHARS,
) -> tuple[int, int]:
    """(start, end) of the excerpt of ``text``: ``spans`` maps each matched chunk
    to its relevance (0..1), ``best`` is the best chunk, which the window holds whole
    when it fits. Deterministic: ties go to the earliest window."""
    if len(text) <= limit:
        return 0, len(text)
    best_start, best_end = best
    if best_end - best_start >= limit:
        return best_start, best_start + limit
    # A window that starts where a matched chunk starts begins on a sentence; the
    # best window is one of those (moving it right of a chunk start only loses text).
    candidates = sorted({s for s, _ in spans} | {best_start})
    fits = [c for c in candidates if c <= best_start and best_end <= c + limit]

    def covered(start: int) -> float:
        end = start + limit
        return sum(w * (e - s) for (s, e), w in spans.items() if start <= s and e <= end)

    start = max(fits or [best_start], key=lambda c: (covered(c), -c))
    # Only matched text (and what lies between): the window ends with the last
    # matched chunk it holds whole, never on text no query asked for.
    end = max(e for s, e in [*spans, best] if start <= s and e <= start + limit)
    return start, end


def excerpt_of(text: str, snippet: str) -> tuple[str, list[tuple[int, int]]]:
    """The bounded excerpt of ``text`` and its span: the search snippet where it occurs
    verbatim in the canonical text (so quoting the excerpt quotes the source), else the
    text's beginning."""
    snippet = canonicalize(snippet)[:EXCERPT_MAX_CHARS]
    if snippet:
        start = text.find(snippet)
        if start >= 0:
            return snippet, [(start, start + len(snippet))]
    head = text[:EXCERPT_MAX_CHARS]
    return head, [(0, len(head))] if head else []
