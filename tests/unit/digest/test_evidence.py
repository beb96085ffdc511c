from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.digest.evidence import build_digest, verify_snippet
from shared.research.locators import format_locator, parse_locator
from shared.research.envelope import EvidenceSnippet
from shared.research.text import canonicalize, short_hash, text_hash, words

# -- locators --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "loc"),
    [((0, 0, None), "char:0-0"), ((1500, 1800, None), "char:1500-1800"), ((200, 450, 3), "page:3:char:200-450")],
)
def test_locator_round_trip(args: tuple[int, int, int | None], loc: str) -> None:
    start, end, page = args
    assert format_locator(start, end, page) == loc
    assert parse_locator(loc) == (page, start, end)


@pytest.mark.parametrize(
    "junk",
    ["", "char:", "char:1-", "char:-1-5", "char:5-1", "chars:1-2", "char:1-2 ", " char:1-2",
     "page:0:char:1-2", "page::char:1-2", "page:1:char:a-b", "char:1-2:page:3", "char:1_2",
     "page:1:", "char:１-２"],
)
def test_parse_locator_rejects_junk(junk: str) -> None:
    with pytest.raises(ValueError):
        parse_locator(junk)


def test_format_locator_rejects_bad_spans() -> None:
    for args in [(-1, 2, None), (5, 4, None), (1, 2, 0)]:
        with pytest.raises(ValueError):
            format_locator(*args)


def test_verify_snippet() -> None:
    text = "Alpha beta gamma."
    assert verify_snippet(text, EvidenceSnippet(text="beta", locator="char:6-10", relevance_score=1))
    assert verify_snippet(text, EvidenceSnippet(text="beta", locator="page:2:char:6-10", relevance_score=1))
    assert not verify_snippet(text, EvidenceSnippet(text="beta", locator="char:5-9", relevance_score=1))
    assert not verify_snippet(text, EvidenceSnippet(text="gamma.", locator="char:11-99", relevance_score=1))
    assert not verify_snippet(text, EvidenceSnippet(text="beta", locator="junk", relevance_score=1))


# -- digests -----------------------------------------------------------------------

DOC = canonicalize(
    """# Concurrency notes

## Why a mutex deadlock happens in practice

Threads share memory inside one process and need synchronization.
A mutex deadlock happens when two threads each wait for a lock held by the other.
Message passing avoids shared state by sending values between tasks.
Garbage collection pauses can add latency to request handling.
Ok.
"""
)


def test_relevant_sentence_ranks_first() -> None:
    digest = build_digest(DOC, query="deadlock", focus=[], source_text_hash=text_hash(DOC))
    snippets = digest.evidence_snippets
    assert snippets, "the deadlock sentence must be quoted"
    assert snippets[0].text == "A mutex deadlock happens when two threads each wait for a lock held by the other."
    assert snippets[0].relevance_score == 1.0
    assert all(0 < s.relevance_score <= 1 for s in snippets)
    # Only sentences that match the query are quoted, never the heading.
    assert all("deadlock" in s.text for s in snippets)
    assert all(verify_snippet(DOC, s) for s in snippets)
    assert digest.key_points[0] == snippets[0].text


def test_focus_and_rare_terms_weigh_in() -> None:
    # "thread" is in two sentences, "synchronization" in one: the rarer term wins,
    # although a "thread" sentence comes first.
    text = canonicalize(
        "Threads run code in parallel here. Threads may also sleep for a while. "
        "Synchronization is required for shared data."
    )
    digest = build_digest(text, query="thread synchronization", focus=[], source_text_hash="sha256-ab")
    assert [s.text for s in digest.evidence_snippets] == [
        "Synchronization is required for shared data.",
        "Threads run code in parallel here.",  # a tie goes to the earlier sentence
        "Threads may also sleep for a while.",
    ]
    assert digest.evidence_snippets[1].relevance_score < 1.0
    # Focus texts (checklist items) also pull sentences in.
    digest = build_digest(DOC, query="deadlock", focus=["garbage collection latency"], source_text_hash="sha256-ab")
    quoted = {s.text for s in digest.evidence_snippets}
    assert "Garbage collection pauses can add latency to request handling." in quoted


def test_summary_headers_and_compression_fields() -> None:
    digest = build_digest(DOC, query="deadlock threads", focus=[], source_text_hash="sha256-abc",
                          summary_sentences=2)
    assert digest.content_type == "digest/v1" and digest.version == "1.0"
    assert digest.query_hash == short_hash("deadlock threads") and len(digest.query_hash) == 8
    assert digest.source_text_hash == "sha256:abc"
    # Summary: the top sentences, in document order.
    assert digest.summary == (
        "Threads share memory inside one process and need synchronization. "
        "A mutex deadlock happens when two threads each wait for a lock held by the other."
    )
    assert len(digest.key_points) <= 5
    assert "Ok." not in digest.key_points and "# Concurrency notes" not in digest.key_points
    assert digest.original_chars == len(DOC)
    assert digest.digest_chars == (
        len(digest.summary) + sum(map(len, digest.key_points))
        + sum(len(s.text) for s in digest.evidence_snippets)
    )
    assert digest.compression_ratio == round(digest.digest_chars / digest.original_chars, 4)


def test_long_sentence_cut_at_word_boundary() -> None:
    sentence = "The deadlock " + " ".join(f"word{i}" for i in range(200)) + "."
    text = canonicalize(f"Intro sentence is here.\n\n{sentence}")
    digest = build_digest(text, query="deadlock", focus=[], source_text_hash="sha256-x", max_chars=50)
    snippet = digest.evidence_snippets[0]
    assert len(snippet.text) <= 50
    assert snippet.text.startswith("The deadlock word0")
    assert not snippet.text.endswith(" ")
    assert text[text.index(snippet.text) + len(snippet.text)] == " "  # ends at a word boundary
    assert verify_snippet(text, snippet)


def test_empty_and_sentence_free_texts() -> None:
    for text in ["", "   ", "\n\n"]:
        digest = build_digest(canonicalize(text), query="anything", focus=[], source_text_hash="sha256-0")
        assert digest.summary == "" and digest.key_points == [] and digest.evidence_snippets == []
        assert digest.original_chars == 0 and digest.digest_chars == 0 and digest.compression_ratio == 0


def test_repeated_passages_are_quoted_once() -> None:
    passage = "The mutex deadlock stalls every worker thread."
    text = canonicalize("\n\n".join([passage, "Unrelated filler sentence about weather.", passage, passage]))
    digest = build_digest(text, query="mutex deadlock", focus=[], source_text_hash="sha256-r")
    assert [s.text for s in digest.evidence_snippets] == [passage]
    assert digest.evidence_snippets[0].locator == f"char:0-{len(passage)}"  # the first occurrence


# -- property: every snippet verifies ------------------------------------------------------

_WORDS = ["mutex", "deadlock", "thread", "café", "naïve", "Ünïcödé", "数据库", "锁", "🙂", "🧵x",
          "e\u0301t\u00e9", "ok", "résumé", "straße", "δοκιμή", "a", "lock-free", "it's"]
_INNER = [" ", " ", " ", ", ", "\t", "  ", "\u00a0", "\r\n", " - "]
_ENDS = [". ", "! ", "? ", "。", "\n\n", "\r\n\r\n", "\r\n", ""]

# Mostly known words, so that queries match and snippets get emitted; some arbitrary text.
_token = st.one_of(st.sampled_from(_WORDS), st.sampled_from(_WORDS), st.sampled_from(_WORDS),
                   st.text(min_size=1, max_size=8))


@st.composite
def _sentence(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(_token, min_size=1, max_size=40))
    seps = draw(st.lists(st.sampled_from(_INNER), min_size=len(tokens), max_size=len(tokens)))
    body = "".join(t + sep for t, sep in zip(tokens, seps)).strip()
    heading = "# " if draw(st.integers(0, 9)) == 0 else ""
    return heading + body + draw(st.sampled_from(_ENDS))


@st.composite
def documents(draw: st.DrawFn) -> str:
    paragraphs = draw(st.lists(st.lists(_sentence(), min_size=1, max_size=6).map("".join), min_size=1, max_size=5))
    repeats = draw(st.integers(min_value=1, max_value=3))
    # Repeated passages: the same paragraph occurs several times at different offsets.
    return draw(st.sampled_from(["\n\n", "\r\n\r\n", "\r\n"])).join(paragraphs + paragraphs[:1] * (repeats - 1))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    raw=documents(),
    query=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=4).map(" ".join),
    max_chars=st.integers(min_value=1, max_value=120),
    max_snippets=st.integers(min_value=0, max_value=6),
)
def test_every_snippet_verifies(raw: str, query: str, max_chars: int, max_snippets: int) -> None:
    canonical = canonicalize(raw)
    digest = build_digest(canonical, query=query, focus=["thread safety"], source_text_hash=text_hash(canonical),
                          max_chars=max_chars, max_snippets=max_snippets)
    assert len(digest.evidence_snippets) <= max_snippets
    texts = [s.text for s in digest.evidence_snippets]
    assert len(texts) == len(set(texts))
    for snippet in digest.evidence_snippets:
        assert verify_snippet(canonical, snippet)
        assert 0 < len(snippet.text) <= max_chars
        assert snippet.text == snippet.text.strip()
        assert not snippet.text.startswith("#")
        assert 0 < snippet.relevance_score <= 1
    assert len(digest.key_points) <= 5 and len(set(digest.key_points)) == len(digest.key_points)
    assert all(0 < len(kp) <= max_chars and kp in canonical for kp in digest.key_points)
    if digest.evidence_snippets:
        assert max(s.relevance_score for s in digest.evidence_snippets) == 1.0
        assert len(words(canonical)) >= 4
    assert digest.original_chars == len(canonical)
    assert digest.digest_chars == len(digest.summary) + sum(map(len, digest.key_points)) + sum(map(len, texts))
    expected_ratio = round(digest.digest_chars / digest.original_chars, 4) if canonical else 0.0
    assert digest.compression_ratio == expected_ratio
    # The same input gives the same digest.
    again = build_digest(canonical, query=query, focus=["thread safety"], source_text_hash=text_hash(canonical),
                         max_chars=max_chars, max_snippets=max_snippets)
    assert again == digest
