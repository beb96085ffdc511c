from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.retrieval.chunking import CHUNK_MAX_CHARS, chunk_spans
from services.retrieval.documents import html_to_text, load_document
from services.retrieval.index import index_corpus, list_corpora, validate_corpus_name
from services.retrieval.merge import merge_hits
from services.retrieval.search import LocalSearcher
from shared.research.envelope import CredibilityTier
from shared.platform.errors import PermanentError
from shared.research.text import canonicalize, text_hash
from tests.fixtures.pdf import make_pdf

HTML_PAGE = """<!doctype html>
<html><head><title>Garbage Collection Guide</title>
<style>body { color: red }</style>
<script>trackVisitor("SCRIPTMARKER");</script>
</head><body>
<nav><a href="/">NAVMARKER home</a> <a href="/about">About</a></nav>
<header>HEADERMARKER site banner</header>
<main>
<p>Generational garbage collectors divide the heap into young and old regions.</p>
<p>Most objects die young, so the nursery is collected often and cheaply.</p>
<ul><li>Minor collections scan the nursery.</li><li>Major collections scan everything.</li></ul>
</main>
<aside>ASIDEMARKER related links</aside>
<footer>FOOTERMARKER copyright</footer>
<noscript>NOSCRIPTMARKER enable js</noscript>
</body></html>
"""

MD_FRONT_MATTER = """---
title: "Mutex Handbook"
date: 2023-05-17
tags: [sync]
---
# Locks in practice

A mutex deadlock occurs when two threads each hold a lock the other one needs.
Lock ordering prevents the circular wait that causes a deadlock.
"""

MD_PLAIN = """# Rust Ownership

Every value in Rust has a single owner. When the owner goes out of scope, the value is dropped.

Borrowing lets code use a value without taking ownership of it.
"""

TXT = "Photosynthesis converts light energy into chemical energy in chloroplasts.\r\nPlants release oxygen as a by-product.\r\n"


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    _write(
        root,
        {
            "sync/mutex.md": MD_FRONT_MATTER,
            "rust.markdown": MD_PLAIN,
            "biology/photo.txt": TXT,
            "web/gc.html": HTML_PAGE,
            "blob.bin": b"\x00\x01binary mutex deadlock\xff",
            ".hidden/secret.md": "# Secret\n\nmutex deadlock hidden text here.",
            ".dotfile.md": "# Dot\n\nmutex deadlock dot file text.",
        },
    )
    return root


@pytest.fixture
def corpora(tmp_path: Path) -> Path:
    return tmp_path / "corpora"


def test_index_counts_skips_and_search_ranks(src: Path, corpora: Path) -> None:
    stats = index_corpus(src, name="notes", corpora_dir=corpora)

    assert stats.name == "notes"
    assert stats.files_indexed == 4
    assert stats.chunks >= 4
    assert stats.skipped == [("blob.bin", "unsupported file type '.bin'")]
    assert stats.seconds >= 0
    assert list_corpora(corpora) == ["notes"]

    searcher = LocalSearcher(corpora)
    hits = searcher.search("mutex deadlock", corpora=["notes"], k=5)
    assert hits, "expected a hit for an indexed phrase"
    assert hits[0].doc_relpath == "sync/mutex.md"
    assert hits[0].doc_title == "Mutex Handbook"
    assert hits[0].published_at == datetime(2023, 5, 17, tzinfo=UTC)
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # Hidden files and directories are never indexed.
    assert {h.doc_relpath for h in hits} <= {"sync/mutex.md", "rust.markdown", "biology/photo.txt", "web/gc.html"}

    gc_hits = searcher.search("nursery collections", corpora=None, k=3)
    assert gc_hits[0].doc_relpath == "web/gc.html"
    assert gc_hits[0].doc_title == "Garbage Collection Guide"

    # Stemming agrees on both sides: "owners" finds "owner".
    assert searcher.search("owners", corpora=None, k=3)[0].doc_relpath == "rust.markdown"


def test_chunk_offsets_slice_canonical_text(src: Path, corpora: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    searcher = LocalSearcher(corpora)
    for query in ["mutex deadlock", "garbage nursery", "rust owner borrowing", "oxygen plants"]:
        for hit in searcher.search(query, corpora=["notes"], k=10):
            canonical = searcher.document_text("notes", hit.doc_relpath)
            assert canonical[hit.start : hit.end] == hit.text
            assert hit.doc_chars == len(canonical)
            assert hit.doc_text_hash == text_hash(canonical)


def test_canonical_text_front_matter_and_boilerplate(src: Path, corpora: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    searcher = LocalSearcher(corpora)

    md = searcher.document_text("notes", "sync/mutex.md")
    assert md.startswith("# Locks in practice")
    assert "title:" not in md and "2023-05-17" not in md and "---" not in md

    html = searcher.document_text("notes", "web/gc.html")
    for marker in ("SCRIPTMARKER", "NAVMARKER", "HEADERMARKER", "ASIDEMARKER", "FOOTERMARKER",
                   "NOSCRIPTMARKER", "color: red"):
        assert marker not in html
    # Block elements become paragraphs.
    assert "young and old regions.\n\nMost objects die young" in html
    assert "Minor collections scan the nursery.\n\nMajor collections" in html

    txt = searcher.document_text("notes", "biology/photo.txt")
    assert "\r" not in txt
    assert txt == canonicalize(TXT)


def test_title_extraction(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "fm.md": MD_FRONT_MATTER,
            "heading.md": MD_PLAIN,
            "page.html": HTML_PAGE,
            "h1.html": "<html><head><title>Tab title</title></head><body><h1>Real heading</h1><p>Body text here.</p></body></html>",
            "plain_notes.txt": "No heading in this text at all.",
            "bad-date.md": "---\ndate: someday\n---\nText without a heading.",
        },
    )
    assert load_document(tmp_path / "fm.md")[0] == "Mutex Handbook"
    assert load_document(tmp_path / "heading.md")[0] == "Rust Ownership"
    assert load_document(tmp_path / "page.html")[0] == "Garbage Collection Guide"
    assert load_document(tmp_path / "h1.html")[0] == "Real heading"
    assert load_document(tmp_path / "plain_notes.txt")[0] == "plain_notes"
    title, text, published = load_document(tmp_path / "bad-date.md")
    assert (title, text, published) == ("bad-date", "Text without a heading.", None)


def test_html_to_text_structure() -> None:
    title, text = html_to_text(
        "<html><head><title> A  &amp; B </title></head><body>"
        "<h2>Section</h2><p>One <b>bold</b><br>line.</p><table><tr><td>x</td><td>y</td></tr></table>"
        "<script>bad()</script></body></html>"
    )
    assert title == "A & B"
    assert text == "## Section\n\nOne bold line.\n\nx\n\ny"


def test_chunks_are_bounded_and_exact() -> None:
    paragraph = " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(40))
    text = canonicalize("\n\n".join([paragraph, "# Heading", paragraph, "x" * 3000]))
    spans = chunk_spans(text)
    assert len(spans) > 5
    assert all(0 < e - s <= CHUNK_MAX_CHARS for s, e in spans)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    # Nothing but whitespace falls between chunks.
    covered = "".join(text[s:e] for s, e in spans)
    assert covered.replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")
    # Sentence boundaries: a chunk never starts in the middle of a sentence.
    assert all(text[s:].startswith(("Sentence", "# Heading", "x")) for s, e in spans)


def test_reindex_replaces_corpus(src: Path, corpora: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    searcher = LocalSearcher(corpora)
    assert searcher.search("photosynthesis", corpora=["notes"], k=3)

    new_src = src.parent / "new"
    _write(new_src, {"quantum.md": "# Qubits\n\nA qubit holds a superposition of states."})
    stats = index_corpus(new_src, name="notes", corpora_dir=corpora)
    assert stats.files_indexed == 1

    # The same searcher sees the new generation, and only it.
    assert searcher.search("photosynthesis", corpora=["notes"], k=3) == []
    hits = searcher.search("qubit superposition", corpora=["notes"], k=3)
    assert [h.doc_relpath for h in hits] == ["quantum.md"]
    with pytest.raises(PermanentError):
        searcher.document_text("notes", "biology/photo.txt")

    # Old generations are cleaned up: one index directory, one manifest.
    entries = sorted(p.name for p in (corpora / "notes").iterdir() if not p.name.startswith(".lock"))
    assert len(entries) == 2 and "manifest.json" in entries
    manifest = json.loads((corpora / "notes" / "manifest.json").read_text())
    assert manifest["name"] == "notes" and manifest["documents"] == 1
    assert manifest["source_dir"] == str(new_src.resolve())


def test_concurrent_reader_never_sees_half_index(src: Path, corpora: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        searcher = LocalSearcher(corpora)
        while not stop.is_set():
            try:
                searcher.search("mutex deadlock", corpora=["notes"], k=3)
            except BaseException as exc:  # noqa: BLE001 - the test reports any failure
                errors.append(exc)
                return

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(5):
            # A change each round, so every run builds and swaps in a new generation.
            (src / "round.md").write_text(f"# Round {n}\n\nmutex deadlock round {n}.", encoding="utf-8")
            index_corpus(src, name="notes", corpora_dir=corpora)
    finally:
        stop.set()
        reader.join()
    assert errors == []


def test_search_edge_cases(src: Path, corpora: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    searcher = LocalSearcher(corpora)
    assert searcher.search("the and of", corpora=None, k=5) == []  # only stop words
    assert searcher.search("", corpora=None, k=5) == []
    assert searcher.search("zyzzyva", corpora=None, k=5) == []  # no positive score
    assert searcher.search("mutex", corpora=None, k=0) == []
    # k larger than the number of chunks is fine.
    assert len(searcher.search("mutex deadlock", corpora=None, k=1000)) >= 1


def test_search_across_corpora(src: Path, corpora: Path, tmp_path: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    other = tmp_path / "other"
    _write(other, {"deadlock.txt": "Database deadlock detection aborts one transaction."})
    index_corpus(other, name="db", corpora_dir=corpora)
    searcher = LocalSearcher(corpora)

    assert {h.corpus for h in searcher.search("deadlock", corpora=None, k=10)} == {"notes", "db"}
    assert {h.corpus for h in searcher.search("deadlock", corpora=["db"], k=10)} == {"db"}


def test_unknown_corpus_error(src: Path, corpora: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    index_corpus(src, name="archive", corpora_dir=corpora)
    searcher = LocalSearcher(corpora)
    with pytest.raises(PermanentError, match=r"unknown corpus 'x'; indexed corpora: archive, notes"):
        searcher.search("mutex", corpora=["x"], k=3)
    with pytest.raises(PermanentError, match="unknown corpus"):
        searcher.document_text("x", "sync/mutex.md")


def test_empty_dir_errors(tmp_path: Path, corpora: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(PermanentError, match="nothing to index"):
        index_corpus(empty, name="c", corpora_dir=corpora)

    unsupported = tmp_path / "unsupported"
    _write(unsupported, {"a.pdf": b"%PDF-1.4", "b.docx": b"PK"})
    with pytest.raises(
        PermanentError, match=r"nothing to index.*a\.pdf \(not a readable PDF.*b\.docx \(unsupported file type '\.docx'\)"
    ):
        index_corpus(unsupported, name="c", corpora_dir=corpora)

    with pytest.raises(PermanentError, match="not a directory"):
        index_corpus(tmp_path / "missing", name="c", corpora_dir=corpora)
    assert list_corpora(corpora) == []


@pytest.mark.parametrize("name", ["", ".hidden", "-dash", "a/b", "../up", "x" * 65, "sp ace", "é"])
def test_invalid_corpus_name(name: str, src: Path, corpora: Path) -> None:
    with pytest.raises(PermanentError, match="invalid corpus name"):
        validate_corpus_name(name)
    with pytest.raises(PermanentError, match="invalid corpus name"):
        index_corpus(src, name=name, corpora_dir=corpora)
    assert not corpora.exists() or os.listdir(corpora) == []


@pytest.mark.parametrize("name", ["a", "notes", "My_Corpus-2.v1", "x" * 64])
def test_valid_corpus_name(name: str) -> None:
    assert validate_corpus_name(name) == name


# -- PDF documents ------------------------------------------------------------------------

PDF_PAGES = [
    ["Estuaries mix fresh river water with salt sea water.", "Their salinity changes with every tide."],
    ["Mangrove forests shelter juvenile fish in estuaries."],
    [],
    ["Dredging an estuary channel changes its tidal prism."],
]


def test_pdf_pages_offsets_and_locators(tmp_path: Path, corpora: Path) -> None:
    src = tmp_path / "pdfs"
    _write(src, {"estuary.pdf": make_pdf(PDF_PAGES, title="Estuary Primer"), "notes.md": MD_PLAIN})
    stats = index_corpus(src, name="papers", corpora_dir=corpora)
    assert (stats.files_indexed, stats.skipped) == (2, [])

    searcher = LocalSearcher(corpora)
    canonical = searcher.document_text("papers", "estuary.pdf")
    assert canonical == canonicalize(canonical)
    expected_pages = {"mangrove juvenile": 2, "dredging tidal prism": 4, "salinity tide": 1}
    for query, page in expected_pages.items():
        hit = searcher.search(query, corpora=["papers"], k=1)[0]
        assert hit.doc_relpath == "estuary.pdf" and hit.doc_title == "Estuary Primer"
        assert hit.page == page
        assert hit.page_starts is not None and len(hit.page_starts) == 4
        # The chunk lies inside its page: page:{n}:char:{s}-{e} locators are exact.
        starts = [*hit.page_starts, len(canonical)]
        assert starts[page - 1] <= hit.start < hit.end <= starts[page]
        assert canonical[hit.start : hit.end] == hit.text

    # Markdown hits carry no pages; the Source built from a PDF hit carries page_starts.
    assert searcher.search("rust owner", corpora=["papers"], k=1)[0].page_starts is None
    sources = merge_hits({"q": searcher.search("mangrove", corpora=["papers"], k=3)},
                         tier=CredibilityTier.AUTHORITATIVE, domain_authority=70)
    pdf_source = next(s for s in sources if s.url.endswith("estuary.pdf"))
    assert pdf_source.page_starts == searcher.search("mangrove", corpora=["papers"], k=1)[0].page_starts


def test_broken_pdf_is_reported_and_skipped(tmp_path: Path, corpora: Path) -> None:
    src = tmp_path / "mixed"
    _write(src, {
        "good.pdf": make_pdf([["Coral reefs bleach when the sea is too warm."]]),
        "broken.pdf": b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref",
        "scanned.pdf": make_pdf([[], []]),
        "ok.txt": "Kelp forests grow along cold coasts.",
    })
    stats = index_corpus(src, name="mixed", corpora_dir=corpora)
    assert stats.files_indexed == 2
    reasons = dict(stats.skipped)
    assert set(reasons) == {"broken.pdf", "scanned.pdf"}
    assert reasons["broken.pdf"].startswith("not a readable PDF")
    assert "no extractable text" in reasons["scanned.pdf"]
    assert LocalSearcher(corpora).search("coral bleach", corpora=["mixed"], k=1)[0].doc_relpath == "good.pdf"


# -- incremental re-index -------------------------------------------------------------------


@pytest.fixture
def parse_log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the indexer parses (reading and hashing is not parsing)."""
    import services.retrieval.index as index_module

    log: list[str] = []
    real = index_module.parse_document

    def logged(data: bytes, *, suffix: str, stem: str):  # type: ignore[no-untyped-def]
        log.append(stem + suffix)
        return real(data, suffix=suffix, stem=stem)

    monkeypatch.setattr(index_module, "parse_document", logged)
    return log


def _counts(stats) -> tuple[int, int, int, int]:  # type: ignore[no-untyped-def]
    return stats.added, stats.changed, stats.unchanged, stats.removed


def test_reindex_processes_only_changed_files(src: Path, corpora: Path, parse_log: list[str]) -> None:
    (src / "paper.pdf").write_bytes(make_pdf(PDF_PAGES))
    first = index_corpus(src, name="notes", corpora_dir=corpora)
    assert _counts(first) == (5, 0, 0, 0) and first.files_indexed == 5
    assert sorted(parse_log) == ["gc.html", "mutex.md", "paper.pdf", "photo.txt", "rust.markdown"]
    searcher = LocalSearcher(corpora)
    assert searcher.search("photosynthesis", corpora=["notes"], k=1)

    # Nothing changed: nothing is parsed, the index answers the same.
    parse_log.clear()
    again = index_corpus(src, name="notes", corpora_dir=corpora)
    assert _counts(again) == (0, 0, 5, 0) and parse_log == []
    assert again.chunks == first.chunks

    # One edit, one new file, one deletion, one file touched without changing.
    (src / "rust.markdown").write_text(MD_PLAIN + "\nLifetimes bound every borrow.\n", encoding="utf-8")
    (src / "new.md").write_text("# Qubits\n\nA qubit holds a superposition of states.", encoding="utf-8")
    (src / "biology" / "photo.txt").unlink()
    touched = src / "sync" / "mutex.md"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 5_000_000_000))
    parse_log.clear()
    third = index_corpus(src, name="notes", corpora_dir=corpora)
    assert _counts(third) == (1, 1, 3, 1)
    assert sorted(parse_log) == ["new.md", "rust.markdown"]  # not mutex.md, not the PDF
    assert third.files_indexed == 5

    # The same searcher sees the new generation: edits and additions found, deletions gone.
    assert searcher.search("photosynthesis", corpora=["notes"], k=3) == []
    assert searcher.search("lifetimes borrow", corpora=["notes"], k=1)[0].doc_relpath == "rust.markdown"
    assert searcher.search("qubit superposition", corpora=["notes"], k=1)[0].doc_relpath == "new.md"
    hit = searcher.search("mangrove juvenile", corpora=["notes"], k=1)[0]
    assert (hit.doc_relpath, hit.page) == ("paper.pdf", 2)  # a reused PDF keeps its pages
    for query in ("mutex deadlock", "rust owner", "estuary salinity"):
        for h in searcher.search(query, corpora=["notes"], k=5):
            assert searcher.document_text("notes", h.doc_relpath)[h.start : h.end] == h.text

    # The touched file's new stamp was remembered: the next run does not even hash it.
    parse_log.clear()
    assert _counts(index_corpus(src, name="notes", corpora_dir=corpora)) == (0, 0, 5, 0)
    assert parse_log == []
    manifest = json.loads((corpora / "notes" / "manifest.json").read_text())
    assert manifest["changes"] == {"added": 0, "changed": 0, "unchanged": 5, "removed": 0}


def test_reindex_rebuilds_scores_over_the_whole_corpus(tmp_path: Path, corpora: Path) -> None:
    """BM25's document frequencies are corpus-wide: adding documents re-weights the
    unchanged ones, so reuse must not freeze their scores."""
    src = tmp_path / "idf"
    _write(src, {"a.txt": "Alpha beta gamma.", "b.txt": "Delta epsilon zeta."})
    index_corpus(src, name="idf", corpora_dir=corpora)
    searcher = LocalSearcher(corpora)
    before = searcher.search("alpha", corpora=["idf"], k=1)[0].score
    _write(src, {f"more{i}.txt": f"Alpha filler text number {i}." for i in range(5)})
    stats = index_corpus(src, name="idf", corpora_dir=corpora)
    assert _counts(stats) == (5, 0, 2, 0)
    after = next(h for h in searcher.search("alpha", corpora=["idf"], k=10) if h.doc_relpath == "a.txt").score
    assert after < before  # "alpha" became common, so it counts for less


def test_reindex_from_another_folder_compares_content(tmp_path: Path, corpora: Path, parse_log: list[str]) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _write(one, {"same.md": MD_PLAIN, "diff.md": "# One\n\nFirst version."})
    _write(two, {"same.md": MD_PLAIN, "diff.md": "# Two\n\nSecond version."})
    index_corpus(one, name="c", corpora_dir=corpora)
    parse_log.clear()
    stats = index_corpus(two, name="c", corpora_dir=corpora)
    # Stamps from another folder prove nothing; identical content is still reused.
    assert _counts(stats) == (0, 1, 1, 0)
    assert parse_log == ["diff.md"]


def test_reindex_over_an_old_format_index_parses_everything(src: Path, corpora: Path, parse_log: list[str]) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    manifest_path = corpora / "notes" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["format"] = 1  # as written before incremental re-indexing existed
    manifest_path.write_text(json.dumps(manifest))
    parse_log.clear()
    stats = index_corpus(src, name="notes", corpora_dir=corpora)
    assert _counts(stats) == (0, 4, 0, 0)
    assert len(parse_log) == 4


def test_reindex_keeps_previous_index_when_folder_empties(src: Path, corpora: Path) -> None:
    index_corpus(src, name="notes", corpora_dir=corpora)
    for path in list(src.rglob("*")):
        if path.is_file():
            path.unlink()
    with pytest.raises(PermanentError, match="nothing to index"):
        index_corpus(src, name="notes", corpora_dir=corpora)
    assert LocalSearcher(corpora).search("mutex deadlock", corpora=["notes"], k=1)


def test_search_refuses_an_index_of_another_format(src: Path, corpora: Path) -> None:
    # An older index holds terms from another stemmer: searching it would silently
    # miss; the searcher says to index again instead.
    index_corpus(src, name="notes", corpora_dir=corpora)
    manifest_path = corpora / "notes" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["format"] = 2
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(PermanentError, match="index it again"):
        LocalSearcher(corpora).search("mutex deadlock", corpora=["notes"], k=1)
