"""A local source's excerpt: one contiguous window of its document that covers the
most matched chunks, located by ``excerpt_start`` in the canonical text."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from services.retrieval.excerpt import excerpt_window
from services.retrieval.chunking import chunk_spans
from services.retrieval.search import ChunkHit
from services.retrieval.merge import merge_hits
from shared.research.envelope import EXCERPT_MAX_CHARS, CredibilityTier

TIER = CredibilityTier.AUTHORITATIVE


def _document(paragraphs: int = 80) -> str:
    return "\n\n".join(
        f"Paragraph {n} opens here. It says fact number {n} about the topic at some length, "
        f"with words enough to fill a line or two of a page. It ends with its own point {n}."
        for n in range(paragraphs)
    )


def _hit(doc: str, span: tuple[int, int], score: float, relpath: str = "doc.md") -> ChunkHit:
    return ChunkHit(
        corpus="notes", doc_relpath=relpath, doc_title="Doc",
        doc_text_hash="sha256-" + hashlib.sha256(doc.encode()).hexdigest(),
        published_at=datetime(2024, 1, 2, tzinfo=UTC), start=span[0], end=span[1],
        text=doc[span[0]:span[1]], score=score, doc_chars=len(doc), document=doc,
    )


def test_short_document_is_its_own_excerpt() -> None:
    doc = _document(6)
    assert len(doc) < EXCERPT_MAX_CHARS
    chunks = chunk_spans(doc, target=200, max_chars=300)
    (source,) = merge_hits({"q": [_hit(doc, chunks[-1], 3.0)]}, tier=TIER, domain_authority=70)
    assert source.text == doc and source.excerpt_start == 0


def test_window_covers_the_matched_chunks_and_locates_them() -> None:
    doc = _document()
    chunks = chunk_spans(doc, target=300, max_chars=400)
    assert len(doc) > 3 * EXCERPT_MAX_CHARS and len(chunks) > 12
    # Two weaker chunks near the best one, in both directions, and one out of reach.
    best, near, far = chunks[3], [chunks[2], chunks[5]], chunks[20]
    hits = {"q1": [_hit(doc, best, 10.0), _hit(doc, near[0], 6.0)],
            "q2": [_hit(doc, near[1], 5.0), _hit(doc, far, 5.0)]}
    (source,) = merge_hits(hits, tier=TIER, domain_authority=70)
    start = source.excerpt_start
    assert start is not None and source.text == doc[start:start + len(source.text)]
    assert len(source.text) <= EXCERPT_MAX_CHARS
    # From the first matched chunk in reach to the last, the best one included.
    assert (start, start + len(source.text)) == (near[0][0], near[1][1])
    assert source.matched_spans == sorted([best, *near, far])


def test_window_prefers_the_most_matched_text_and_holds_only_it() -> None:
    doc = _document()
    chunks = chunk_spans(doc, target=300, max_chars=400)
    best = chunks[10]
    # Chunks 11 and 12 follow the best one; chunk 3 lies before, out of reach.
    spans = {best: 1.0, chunks[11]: 0.9, chunks[12]: 0.9, chunks[3]: 0.5}
    assert excerpt_window(doc, spans, best) == (best[0], chunks[12][1])
    # A lone chunk far from the others: the window is the best chunk with whichever
    # neighbours fit, ending where a matched chunk ends.
    spans = {best: 1.0, chunks[30]: 0.9}
    assert excerpt_window(doc, spans, best) == best


def test_window_starts_before_the_best_chunk_when_that_covers_more() -> None:
    doc = _document()
    chunks = chunk_spans(doc, target=300, max_chars=400)
    best = chunks[12]
    spans = {best: 1.0, chunks[10]: 0.8, chunks[11]: 0.8, chunks[13]: 0.2}
    start, end = excerpt_window(doc, spans, best)
    assert start == chunks[10][0] and end in (chunks[12][1], chunks[13][1])
    assert end - start <= EXCERPT_MAX_CHARS


def test_chunk_longer_than_the_limit_is_cut_at_the_limit() -> None:
    doc = "x" * (EXCERPT_MAX_CHARS * 3)
    assert excerpt_window(doc, {(100, 100 + EXCERPT_MAX_CHARS * 2): 1.0}, (100, 100 + EXCERPT_MAX_CHARS * 2)) == (
        100, 100 + EXCERPT_MAX_CHARS)


def test_a_better_pass_replaces_excerpt_and_its_offset_together() -> None:
    doc = _document()
    chunks = chunk_spans(doc, target=300, max_chars=400)
    first = merge_hits({"q1": [_hit(doc, chunks[20], 2.0), _hit(doc, chunks[2], 8.0, "other.md")]},
                       tier=TIER, domain_authority=70)
    second = merge_hits({"q2": [_hit(doc, chunks[1], 5.0)]}, tier=TIER, domain_authority=70, existing=first)
    source = {s.url: s for s in second}["corpus://notes/doc.md"]
    assert source.relevance_score == 1.0
    start = source.excerpt_start
    assert start is not None and source.text == doc[start:start + len(source.text)]
    assert start <= chunks[1][0]


def test_documents_past_the_window_limit_keep_their_best_chunk() -> None:
    doc = _document()
    chunks = chunk_spans(doc, target=300, max_chars=400)
    hits = {"q": [_hit(doc, chunks[4], 9.0), _hit(doc, chunks[5], 8.0)]}
    (long,) = merge_hits(hits, tier=TIER, domain_authority=70, window_max_chars=len(doc) - 1)
    assert (long.excerpt_start, long.text) == (chunks[4][0], doc[chunks[4][0]:chunks[4][1]])
    (short,) = merge_hits(hits, tier=TIER, domain_authority=70, window_max_chars=len(doc))
    assert (short.excerpt_start, short.text) == (chunks[4][0], doc[chunks[4][0]:chunks[5][1]])


def test_window_limit_follows_the_digest_policy() -> None:
    from services.retrieval.service import excerpt_window_limit
    from shared.settings import DigestSettings

    assert excerpt_window_limit(DigestSettings(digest_policy="off")) is None
    assert excerpt_window_limit(DigestSettings(digest_policy="always")) == 0
    assert excerpt_window_limit(DigestSettings(digest_policy="auto", digest_min_chars=1234)) == 1234
