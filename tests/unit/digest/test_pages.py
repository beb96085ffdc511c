"""PDF page locators: ``page:{n}:char:{start}-{end}``, pages 1-based, offsets into the
whole canonical text (so the same check verifies them)."""

from __future__ import annotations

import pytest

from services.digest.evidence import build_digest, page_map_problem, verify_snippet, with_pages
from shared.research.locators import page_of, parse_locator
from shared.stores.archive import ArchivedText, check_snippet
from shared.research.envelope import EvidenceSnippet
from shared.research.text import canonicalize, text_hash

PAGES = [
    "Title page of the lighthouse report.",
    "Automation replaced lighthouse keepers across the coast. Keepers trimmed wicks nightly.",
    "Fog signals used compressed air. Automation also reached fog signals by 1980.",
]
TEXT = canonicalize("\n\n".join(PAGES))
STARTS = [TEXT.index(p) for p in PAGES]


def test_page_of_boundaries() -> None:
    assert STARTS[0] == 0
    assert page_of(STARTS, 0) == 1
    assert page_of(STARTS, STARTS[1] - 1) == 1
    assert page_of(STARTS, STARTS[1]) == 2
    assert page_of(STARTS, len(TEXT) - 1) == 3


def test_digest_of_a_pdf_carries_page_locators_that_verify() -> None:
    digest = with_pages(build_digest(TEXT, query="automation fog signals", source_text_hash=text_hash(TEXT)), STARTS)
    assert digest.evidence_snippets
    for s in digest.evidence_snippets:
        page, start, end = parse_locator(s.locator)
        assert s.locator.startswith(f"page:{page}:char:")
        assert TEXT[start:end] == s.text and verify_snippet(TEXT, s)
        assert PAGES[page - 1].find(s.text) >= 0  # the quote is on the page it names
    pages = {parse_locator(s.locator)[0] for s in digest.evidence_snippets}
    assert pages == {2, 3}


def test_archive_check_of_page_locators() -> None:
    archived = ArchivedText(text_hash(TEXT), TEXT, STARTS)
    start = TEXT.index("Fog signals used compressed air.")
    quote = "Fog signals used compressed air."
    ok = EvidenceSnippet(text=quote, locator=f"page:3:char:{start}-{start + len(quote)}", relevance_score=1)
    wrong_page = ok.model_copy(update={"locator": f"page:2:char:{start}-{start + len(quote)}"})
    assert check_snippet(archived, ok).verified
    check = check_snippet(archived, wrong_page)
    assert not check.verified and "page 3" in (check.reason or "")
    no_map = ArchivedText(archived.key, TEXT, None)
    assert not check_snippet(no_map, ok).verified
    assert not check_snippet(None, ok).verified


@pytest.mark.parametrize(
    ("starts", "problem"),
    [([], "empty"), ([5, 10], "first page"), ([0, 20, 10], "decrease"), ([0, 10**6], "after the text")],
)
def test_unusable_page_maps_are_named(starts: list[int], problem: str) -> None:
    assert problem in (page_map_problem(starts, len(TEXT)) or "")


def test_a_good_page_map_has_no_problem() -> None:
    assert page_map_problem(STARTS, len(TEXT)) is None
    assert page_map_problem([0, 0, 5], 10) is None  # an empty page
