"""shared.research.text: the stemmer behind terms(), sentence spans, canonical text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.research.text import canonicalize, sentence_spans, stem, terms


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


# -- stemming ----------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b"), [
    ("threading", "thread"),
    ("threads", "thread"),
    ("processes", "process"),
    ("processing", "process"),
    ("settings", "setting"),
    ("vacuuming", "vacuum"),
    ("generators", "generator"),
    ("studies", "study"),
    ("connections", "connected"),
])
def test_inflections_meet(a: str, b: str) -> None:
    assert stem(a) == stem(b)


def test_distinct_words_stay_apart() -> None:
    assert stem("process") != stem("procedure")
    assert stem("thread") != stem("threat")


def test_terms_drop_stop_words_and_stem_in_order() -> None:
    assert terms("The threads of a process are processing the queues") == \
        ["thread", "process", "process", "queue"]


def test_terms_are_case_insensitive() -> None:
    assert terms("GIL Threading") == terms("gil threading")


# -- sentence spans ----------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "Use a pool, e.g. a thread pool, for blocking calls.",
    "Some calls block, i.e. they wait for the kernel.",
    "Dr. Smith measured the latency twice.",
    "Mr. Jones and Mrs. Jones agreed on the design.",
    "Smith et al. showed that locks scale poorly.",
    "As Fig. 3 shows, the curve flattens.",
    "The U.S. standard differs from the European one.",
    "Threads vs. processes is an old debate.",
    "The median latency was 2.5 ms under load.",
    "Python 3.11 added exception groups and task groups.",
    "The book by J. R. R. Tolkien has three volumes.",
    "Donald E. Knuth wrote about it.",
    "It is defined in Sec. 4 of the paper.",
    "It costs approx. three microseconds per switch.",
])
def test_abbreviations_numbers_and_initials_do_not_split(text: str) -> None:
    assert sentences(text) == [text]


def test_a_capital_ending_a_word_is_no_initial() -> None:
    text = "The GIL is released when doing I/O. Bananas are yellow."
    assert sentences(text) == ["The GIL is released when doing I/O.", "Bananas are yellow."]


def test_ordinary_sentences_split() -> None:
    text = "Threads share memory. Processes do not! Why? Because of isolation."
    assert sentences(text) == ["Threads share memory.", "Processes do not!", "Why?", "Because of isolation."]


def test_words_that_are_only_abbreviations_before_numbers_still_end_sentences() -> None:
    text = "The answer is no. The switch takes 3 ms. Then it resumes."
    assert sentences(text) == ["The answer is no.", "The switch takes 3 ms.", "Then it resumes."]


def test_abbreviation_list_is_not_a_blanket_exception() -> None:
    # "etc." ends sentences as often as not.
    text = "It covers locks, queues, etc. The next part covers pools."
    assert sentences(text) == ["It covers locks, queues, etc.", "The next part covers pools."]


def test_closing_quotes_stay_with_their_sentence() -> None:
    text = 'He said "it works." Then he left.'
    assert sentences(text) == ['He said "it works."', "Then he left."]


def test_blank_lines_headings_and_list_items_split() -> None:
    text = "# Threads\nA thread runs code\n\nAnother paragraph e.g. this\n- item one\n- item two\n1. first"
    assert sentences(text) == ["# Threads\nA thread runs code", "Another paragraph e.g. this",
                               "- item one", "- item two", "1. first"]


def test_spans_are_exact_offsets() -> None:
    text = "  Dr. Who lives in the U.S. now.  It is 3.11 o'clock!\n\nNew   paragraph here.  "
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ["Dr. Who lives in the U.S. now.", "It is 3.11 o'clock!",
                                            "New   paragraph here."]
    for s, e in spans:
        assert not text[s].isspace() and not text[e - 1].isspace()


@given(st.text(alphabet=st.sampled_from(list("ab. \n!?\"E3")), max_size=80))
def test_spans_are_ordered_trimmed_and_cover_every_word(text: str) -> None:
    spans = sentence_spans(text)
    previous_end = 0
    for s, e in spans:
        assert previous_end <= s < e <= len(text)
        assert text[s:e] == text[s:e].strip()
        previous_end = e
    covered = "".join(text[s:e] for s, e in spans)
    assert covered.replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")


# -- canonical text ----------------------------------------------------------------


def test_nul_and_other_c0_controls_are_removed() -> None:
    assert canonicalize("a\x00b\x01c\x08d\x1be\x7ff") == "abcdef"


def test_tabs_and_line_ends_are_kept_as_whitespace() -> None:
    assert canonicalize("a\tb\r\nc\rd\x0be\x0cf") == "a b\nc\nd e f"


def test_unicode_line_separators_become_line_ends() -> None:
    assert canonicalize("a\u2028b\u2029c\x85d\x1ee") == "a\nb\nc\nd\ne"


def test_lone_surrogates_become_replacement_characters() -> None:
    text = canonicalize("bad \ud800 half \udfff")
    assert text == "bad \ufffd half \ufffd"
    text.encode("utf-8")  # storable and hashable


@given(st.text())
def test_canonical_text_has_no_control_character_but_newline(text: str) -> None:
    out = canonicalize(text)
    assert all(ch == "\n" or (ord(ch) >= 0x20 and ord(ch) != 0x7F) for ch in out)
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in out)
    out.encode("utf-8")
    assert canonicalize(out) == out  # idempotent


def test_agent_nouns_keep_apart_from_their_verbs() -> None:
    assert stem("generators") == stem("generator") != stem("generates")
    assert stem("decorator") != stem("decorated")
    assert terms("iterators") == ["iterator"]
