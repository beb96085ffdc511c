from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest

from services.retrieval.search import ChunkHit
from services.retrieval.merge import (
    canonical_url,
    corpus_url,
    dedupe_key,
    dedupe_keys,
    merge_hits,
    normalize_doi,
)
from shared.research.envelope import EXCERPT_MAX_CHARS, CredibilityTier, RetrievalMethod, Source

TIER = CredibilityTier.AUTHORITATIVE


def hit(relpath: str, score: float, start: int = 0, end: int = 10, *, corpus: str = "notes",
        text: str | None = None, text_hash: str | None = None, chars: int = 1000) -> ChunkHit:
    return ChunkHit(
        corpus=corpus,
        doc_relpath=relpath,
        doc_title=f"Title of {relpath}",
        doc_text_hash=text_hash or "sha256-" + hashlib.sha256(relpath.encode()).hexdigest(),
        published_at=datetime(2024, 1, 2, tzinfo=UTC),
        start=start,
        end=end,
        text=text if text is not None else f"chunk {relpath} {start}-{end}",
        score=score,
        doc_chars=chars,
    )


def test_corpus_url_encodes_path() -> None:
    assert corpus_url("notes", "a/b.md") == "corpus://notes/a/b.md"
    assert corpus_url("notes", "dir name/ü?#.md") == "corpus://notes/dir%20name/%C3%BC%3F%23.md"
    assert corpus_url("notes", "win\\path.txt") == "corpus://notes/win/path.txt"


def test_dedupe_across_queries_by_url() -> None:
    merged = merge_hits(
        {
            "q1": [hit("a.md", 8.0, 0, 100), hit("b.md", 4.0), hit("a.md", 2.0, 200, 300)],
            "q2": [hit("a.md", 3.0, 0, 100), hit("c.md", 6.0)],
        },
        tier=TIER,
        domain_authority=70,
    )
    by_url = {s.url: s for s in merged}
    assert sorted(by_url) == ["corpus://notes/a.md", "corpus://notes/b.md", "corpus://notes/c.md"]

    a = by_url["corpus://notes/a.md"]
    assert a.matched_spans == [(0, 100), (200, 300)]
    assert a.found_by == ["q1", "q2"]
    assert a.relevance_score == pytest.approx(1.0)
    assert a.text == "chunk a.md 0-100"  # the best chunk
    assert a.id == "src-" + hashlib.sha256(b"corpus://notes/a.md").hexdigest()[:12]
    assert a.retrieval_method is RetrievalMethod.RAG
    assert a.corpus == "notes" and a.credibility_tier is TIER and a.domain_authority == 70
    assert a.text_chars == 1000 and a.title == "Title of a.md"
    assert a.text_hash.startswith("sha256-")
    assert a.published_at == datetime(2024, 1, 2, tzinfo=UTC)

    assert by_url["corpus://notes/c.md"].found_by == ["q2"]
    # Same relpath in two corpora is two documents.
    two = merge_hits({"q": [hit("a.md", 1.0), hit("a.md", 1.0, corpus="other")]}, tier=TIER, domain_authority=1)
    assert len(two) == 2 and len({s.id for s in two}) == 2


def test_relevance_is_normalized_per_query() -> None:
    merged = merge_hits(
        {
            # Raw scores differ tenfold between queries; relevance does not.
            "q1": [hit("a.md", 20.0), hit("b.md", 5.0)],
            "q2": [hit("c.md", 2.0), hit("d.md", 1.0), hit("zero.md", 0.0), hit("neg.md", -1.0)],
        },
        tier=TIER,
        domain_authority=70,
    )
    rel = {s.url.rsplit("/", 1)[1]: s.relevance_score for s in merged}
    assert rel == pytest.approx({"a.md": 1.0, "c.md": 1.0, "d.md": 0.5, "b.md": 0.25})
    assert all(0 < s.relevance_score <= 1 for s in merged)
    # Sorted by relevance desc, then URL.
    assert [s.url for s in merged] == [
        "corpus://notes/a.md", "corpus://notes/c.md", "corpus://notes/d.md", "corpus://notes/b.md",
    ]
    # A document keeps the max relevance over its hits.
    both = merge_hits({"q1": [hit("x.md", 10.0), hit("y.md", 2.0)], "q2": [hit("y.md", 3.0)]},
                      tier=TIER, domain_authority=70)
    assert {s.url: s.relevance_score for s in both}["corpus://notes/y.md"] == pytest.approx(1.0)


def test_excerpt_is_bounded() -> None:
    merged = merge_hits({"q": [hit("long.md", 1.0, text="w" * (EXCERPT_MAX_CHARS + 500))]},
                        tier=TIER, domain_authority=70)
    assert len(merged[0].text) == EXCERPT_MAX_CHARS


def test_merge_with_existing_keeps_ids_and_unions() -> None:
    first = merge_hits({"q1": [hit("a.md", 5.0, 0, 10), hit("b.md", 1.0)]}, tier=TIER, domain_authority=70)
    # An id from an earlier iteration that does not match the URL hash must survive.
    first = [s.model_copy(update={"id": "src-keepme"}) if s.url.endswith("a.md") else s for s in first]
    web = Source(
        id="src-web", text="web page", url="https://example.org/", title="Web",
        relevance_score=0.9, credibility_tier=CredibilityTier.SECONDARY, domain_authority=50,
        retrieval_method=RetrievalMethod.WEB, text_hash="sha256-00", text_chars=8,
    )

    second = merge_hits(
        {"q2": [hit("b.md", 9.0, 50, 60), hit("a.md", 4.5, 20, 30), hit("new.md", 3.0)]},
        tier=TIER,
        domain_authority=70,
        existing=[*first, web],
    )
    by_url = {s.url: s for s in second}
    assert set(by_url) == {"corpus://notes/a.md", "corpus://notes/b.md", "corpus://notes/new.md",
                           "https://example.org/"}
    a = by_url["corpus://notes/a.md"]
    assert a.id == "src-keepme"
    assert a.matched_spans == [(0, 10), (20, 30)]
    assert a.found_by == ["q1", "q2"]
    assert a.relevance_score == pytest.approx(1.0)  # max(1.0 before, 0.5 now)

    b = by_url["corpus://notes/b.md"]
    assert b.id == first[[s.url for s in first].index("corpus://notes/b.md")].id
    assert b.relevance_score == pytest.approx(1.0)  # raised from 0.2
    assert b.text == "chunk b.md 50-60"  # the better excerpt replaces the old one
    assert by_url["https://example.org/"] == web  # untouched

    # A re-indexed document (new hash): new spans replace old ones, the id stays.
    third = merge_hits({"q3": [hit("a.md", 1.0, 5, 15, text_hash="sha256-new")]},
                       tier=TIER, domain_authority=70, existing=second)
    a3 = {s.url: s for s in third}["corpus://notes/a.md"]
    assert a3.id == "src-keepme"
    assert a3.text_hash == "sha256-new" and a3.matched_spans == [(5, 15)]
    assert a3.found_by == ["q1", "q2", "q3"]


def test_deterministic() -> None:
    hits = {"q": [hit("b.md", 1.0), hit("a.md", 1.0), hit("c.md", 1.0)]}
    out1 = merge_hits(hits, tier=TIER, domain_authority=70)
    out2 = merge_hits(dict(reversed(list(hits.items()))), tier=TIER, domain_authority=70)
    assert [s.url for s in out1] == ["corpus://notes/a.md", "corpus://notes/b.md", "corpus://notes/c.md"]
    assert [s.model_dump() for s in out1] == [s.model_dump() for s in out2]
    assert merge_hits({}, tier=TIER, domain_authority=70) == []


# -- canonical URLs and dedupe keys ----------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/a", "https://example.com/a"),
        ("HTTPS://Example.COM/a", "https://example.com/a"),
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
        ("https://example.com/a?utm_source=x&utm_medium=y&UTM_Campaign=z", "https://example.com/a"),
        ("https://example.com/a?id=7&gclid=1&fbclid=2&msclkid=3&mc_cid=4&_ga=5", "https://example.com/a?id=7"),
        ("https://example.com/a?q=&x=1", "https://example.com/a?q=&x=1"),
        ("https://example.com./a", "https://example.com/a"),
        ("https://user:secret@example.com/a", "https://example.com/a"),
        ("https://[2001:DB8::1]:443/a/", "https://[2001:db8::1]/a"),
        ("https://example.com/Case/Path", "https://example.com/Case/Path"),
        ("  https://example.com/a  ", "https://example.com/a"),
        ("not a url", "not a url"),
    ],
)
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected
    assert canonical_url(expected) == expected  # idempotent


def test_canonical_url_folds_spellings_of_one_page() -> None:
    spellings = [
        "https://www.Example.org/news/story/?b=2&a=1#top",
        "https://www.example.org:443/news/story?a=1&b=2&utm_source=newsletter",
        "HTTPS://WWW.EXAMPLE.ORG/news/story?fbclid=abc&a=1&b=2",
    ]
    assert len({canonical_url(u) for u in spellings}) == 1


def _web(url: str, **metadata: str) -> Source:
    return Source(
        id="src-x", text="t", url=url, title="t", relevance_score=0.5,
        credibility_tier=CredibilityTier.UNVERIFIED, domain_authority=30,
        retrieval_method=RetrievalMethod.WEB, text_hash="sha256-00", text_chars=1, metadata=metadata,
    )


def test_normalize_doi() -> None:
    assert normalize_doi("10.1038/NATURE12373") == "10.1038/nature12373"
    assert normalize_doi("doi:10.1000/xyz123") == "10.1000/xyz123"
    assert normalize_doi("https://doi.org/10.1000/xyz123.") == "10.1000/xyz123"
    assert normalize_doi("https://dx.doi.org/10.1000%2Fabc") == "10.1000/abc"
    assert normalize_doi("not a doi") is None
    assert normalize_doi("") is None


def test_dedupe_key_pubmed_doi_url() -> None:
    pubmed = _web("https://pubmed.ncbi.nlm.nih.gov/31978945/", pmid="31978945", doi="10.1056/NEJMoa2001017")
    assert dedupe_key(pubmed) == "pmid:31978945"
    assert dedupe_keys(pubmed) == ["pmid:31978945", "doi:10.1056/nejmoa2001017",
                                   "https://pubmed.ncbi.nlm.nih.gov/31978945"]
    # A web result that is the same PubMed page, without metadata.
    assert dedupe_key(_web("https://pubmed.ncbi.nlm.nih.gov/31978945/?utm_source=x")) == "pmid:31978945"
    # DOI when there is no PMID: metadata, or a doi.org URL.
    assert dedupe_key(_web("https://www.nejm.org/doi/full/x", doi="doi:10.1056/NEJMoa2001017")) == \
        "doi:10.1056/nejmoa2001017"
    assert dedupe_key(_web("https://doi.org/10.1056/NEJMoa2001017")) == "doi:10.1056/nejmoa2001017"
    # Otherwise the canonical URL.
    assert dedupe_key(_web("https://Example.com/a/?utm_campaign=x#f")) == "https://example.com/a"
    # A PMID with leading zeros or spaces is the same PMID; junk is ignored.
    assert dedupe_key(_web("https://x.org/", pmid=" 0042 ")) == "pmid:42"
    assert dedupe_key(_web("https://x.org/", pmid="PMC123")) == "https://x.org/"
