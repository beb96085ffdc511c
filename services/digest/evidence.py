"""Query-conditioned extractive digests with verifiable locators.

Guarantees:

* Every evidence snippet is an exact quotation: ``canonical_text[start:end] ==
  snippet.text`` for the ``char:start-end`` in its locator. Snippets are checked with
  :func:`verify_snippet` before they are returned, and one that fails is dropped.
* A snippet is at most ``max_chars`` long, cut at a word boundary when it has one.
* The digest is deterministic: the same text, query and focus give the same payload.
* A text without sentences gives an empty digest, not an error.

Locator offsets are 0-based, end-exclusive positions in the whole canonical text; the
``page:{n}:`` prefix (1-based) tells a reader which page the quote starts on, so the
one check ``canonical_text[start:end] == text`` holds for every locator (the rule the
verify endpoint applies), PDF or not.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from itertools import pairwise

from shared.research.envelope import DigestPayload, EvidenceSnippet
from shared.research.locators import format_locator, page_of, parse_locator
from shared.research.text import hash_label, is_statement, sentence_spans, short_hash, terms

log = logging.getLogger(__name__)

MIN_SNIPPET_WORDS = 4
KEY_POINTS = 5

def conditioning_hash(query: str, focus: Sequence[str] = ()) -> str:
    """The 8-hex hash of everything a digest is conditioned on: the question plus the
    focus texts (the plan's sub-questions and open checklist items). The cache key's query part; the payload's
    ``query_hash`` is the question's alone, so that a source digested for a job's
    question is not digested again when a later iteration refines the sub-questions."""
    return short_hash("\n".join([query, *focus]) if focus else query)


def page_map_problem(page_starts: Sequence[int], text_chars: int) -> str | None:
    """Why a PDF's page map cannot place locators on pages; None when it can."""
    if not page_starts:
        return "the page map is empty"
    if page_starts[0] != 0:
        return f"the first page starts at {page_starts[0]}, not 0"
    if any(b < a for a, b in pairwise(page_starts)):
        return "page start offsets decrease"
    if page_starts[-1] > text_chars:
        return f"a page starts at {page_starts[-1]}, after the text's end ({text_chars})"
    return None


def with_pages(payload: DigestPayload, page_starts: Sequence[int]) -> DigestPayload:
    """``payload`` with ``page:{n}:`` locators (the page each snippet starts on)."""
    snippets = []
    for s in payload.evidence_snippets:
        _page, start, end = parse_locator(s.locator)
        snippets.append(s.model_copy(update={"locator": format_locator(start, end, page_of(page_starts, start))}))
    return payload.model_copy(update={"evidence_snippets": snippets})


def verify_snippet(canonical_text: str, snippet: EvidenceSnippet) -> bool:
    """Whether the snippet's locator points at exactly its text."""
    try:
        _page, start, end = parse_locator(snippet.locator)
    except ValueError:
        return False
    return end <= len(canonical_text) and canonical_text[start:end] == snippet.text


def build_digest(
    canonical_text: str,
    *,
    query: str,
    focus: Sequence[str] = (),
    source_text_hash: str,
    max_snippets: int = 5,
    max_chars: int = 400,
    summary_sentences: int = 3,
) -> DigestPayload:
    """The ``digest/v1`` payload of ``canonical_text`` for ``query`` (and the ``focus`` texts,
    e.g. checklist items), by extraction only."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    spans = sentence_spans(canonical_text)
    sentence_terms = [set(terms(canonical_text[s:e])) for s, e in spans]
    wanted = set(terms(query)).union(*(terms(f) for f in focus))
    scores = _scores(sentence_terms, wanted)

    eligible = [i for i, (s, e) in enumerate(spans) if is_statement(canonical_text[s:e], min_words=MIN_SNIPPET_WORDS)]
    # A document of headings and fragments still gets a summary of what it has.
    candidates = eligible or list(range(len(spans)))
    ranked = sorted(candidates, key=lambda i: (-scores[i], i))

    snippets = _snippets(canonical_text, spans, scores, eligible, max_snippets, max_chars)

    summary_spans = sorted(_distinct(canonical_text, spans, ranked, summary_sentences, None))
    summary = " ".join(canonical_text[s:e] for s, e in summary_spans)
    key_points = [
        canonical_text[s:e] for s, e in _distinct(canonical_text, spans, ranked, KEY_POINTS, max_chars)
    ]

    original_chars = len(canonical_text)
    digest_chars = len(summary) + sum(map(len, key_points)) + sum(len(s.text) for s in snippets)
    return DigestPayload(
        query_hash=short_hash(query),
        summary=summary,
        key_points=key_points,
        evidence_snippets=snippets,
        original_chars=original_chars,
        digest_chars=digest_chars,
        compression_ratio=round(digest_chars / original_chars, 4) if original_chars else 0.0,
        source_text_hash=hash_label(source_text_hash),
    )


def _scores(sentence_terms: list[set[str]], wanted: set[str]) -> list[float]:
    """Sum of the idf of the wanted terms each sentence contains: a rare term that
    matches says more about a sentence than one that is in every sentence."""
    n = len(sentence_terms)
    df: dict[str, int] = {}
    for st in sentence_terms:
        for t in st & wanted:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + n / d) for t, d in df.items()}
    return [sum(idf[t] for t in st & wanted) for st in sentence_terms]


def _distinct(
    text: str, spans: list[tuple[int, int]], ranked: list[int], limit: int, max_chars: int | None
) -> list[tuple[int, int]]:
    """Spans of the first ``limit`` of ``ranked``, each cut to ``max_chars`` (None: not
    cut), skipping any whose text repeats one already taken (repeated passages, or two
    sentences that cut to the same words)."""
    seen: set[str] = set()
    out: list[tuple[int, int]] = []
    for i in ranked:
        if len(out) >= limit:
            break
        start, end = spans[i]
        if max_chars is not None:
            end = cut_end(text, start, end, max_chars)
        if text[start:end] not in seen:
            seen.add(text[start:end])
            out.append((start, end))
    return out


def _snippets(
    text: str,
    spans: list[tuple[int, int]],
    scores: list[float],
    eligible: list[int],
    limit: int,
    max_chars: int,
) -> list[EvidenceSnippet]:
    matching = sorted((i for i in eligible if scores[i] > 0), key=lambda i: (-scores[i], i))
    if not matching or limit <= 0:
        return []
    best = scores[matching[0]]
    score_at = {spans[i][0]: scores[i] for i in matching}
    out: list[EvidenceSnippet] = []
    for start, end in _distinct(text, spans, matching, limit, max_chars):
        snippet = EvidenceSnippet(
            text=text[start:end],
            locator=format_locator(start, end),
            relevance_score=round(score_at[start] / best, 4),
        )
        if verify_snippet(text, snippet) and len(snippet.text) <= max_chars:
            out.append(snippet)
        else:  # cannot happen by construction; an unverifiable quote is worse than none
            log.warning("dropped unverifiable snippet at %s", snippet.locator)
    return out


def cut_end(text: str, start: int, end: int, max_chars: int) -> int:
    """The end of ``text[start:end]`` cut to ``max_chars`` at a word boundary if one
    exists, without trailing whitespace; never before ``start + 1``."""
    if end - start <= max_chars:
        return end
    limit = start + max_chars
    if text[limit].isspace():
        cut = limit  # the limit itself falls between two words
    else:
        cut = limit
        while cut > start and not text[cut - 1].isspace():
            cut -= 1
        if cut == start:
            cut = limit  # one long "word" (CJK, a URL): cut inside it
    while cut > start + 1 and text[cut - 1].isspace():
        cut -= 1
    return cut
