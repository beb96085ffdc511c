"""The local corpus index (the search stage's "RAG index"): documents on disk, BM25 over chunks.

Guarantees:

* Every document is stored as its canonical text (:func:`shared.text.canonicalize`),
  with its ``sha256-…`` hash; every chunk is a ``(start, end)`` span of that text, so
  ``canonical[start:end] == chunk_text`` and locators built from hits verify.
* Indexing and querying tokenize with the same :func:`shared.text.terms`, so stop words
  and stemming agree on both sides.
* A corpus is replaced atomically. ``corpora_dir/<name>/`` holds one directory per
  index generation and a ``manifest.json`` naming the live one; a new generation is
  built completely beside the live one and becomes live when ``manifest.json`` is
  swapped with :func:`os.replace`. A reader sees the old index or the new one, never a
  half-written one. (A non-empty directory cannot be ``os.replace``d onto another, so
  the pointer file is what gets swapped.)
* Bad input (an invalid name, nothing indexable, an unknown corpus) raises
  :class:`shared.errors.PermanentError` with a message meant for the user.
"""

from __future__ import annotations

import bisect
import fcntl
import hashlib
import io
import itertools
import json
import logging
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import bm25s
import numpy as np
from selectolax.lexbor import LexborHTMLParser, LexborNode

from shared.dates import parse_date
from shared.errors import PermanentError
from shared.text import canonicalize, sentence_spans, short_hash, terms, text_hash

SUPPORTED_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".html", ".htm", ".pdf"})
CORPUS_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

CHUNK_TARGET_CHARS = 800
CHUNK_MAX_CHARS = 1_200

# 2: per-file stamps, chunk spans and terms kept for incremental re-index; PDF pages.
# 3: terms are Snowball stems (shared.text.terms); a format-2 index holds the old
# stems, which queries would silently miss, so it is re-parsed and never searched.
# 4: "-ator" nouns keep their own stem ("generator" no longer meets "generates").
INDEX_FORMAT = 4
MANIFEST = "manifest.json"
_DOCS = "docs.jsonl"
_TOKENS = "tokens.jsonl"
_CHUNKS = "chunks.npy"
_BM25 = "bm25"
_LOCK = ".lock"
_TMP_PREFIX = ".tmp-"
_GEN_PREFIX = "gen-"

_MARKDOWN = frozenset({".md", ".markdown"})
_HTML = frozenset({".html", ".htm"})
_PDF = frozenset({".pdf"})


# -- names ---------------------------------------------------------------------


def validate_corpus_name(name: str) -> str:
    """``name`` if it is a valid corpus name; it becomes a directory name and a URL host."""
    if not isinstance(name, str) or not CORPUS_NAME_RE.fullmatch(name):
        raise PermanentError(
            f"invalid corpus name {name!r}: use 1-64 characters, letters, digits, '_', '.' "
            "or '-', starting with a letter or digit"
        )
    return name


# -- HTML to text ----------------------------------------------------------------

_DROPPED_TAGS = [
    "script", "style", "nav", "header", "footer", "aside", "noscript",
    "template", "iframe", "svg", "form", "button", "select", "object", "embed",
]  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCK_TAGS = frozenset(
    """address article blockquote body caption dd details dialog div dl dt fieldset
    figcaption figure h1 h2 h3 h4 h5 h6 hr html legend li main ol p pre section summary
    table tbody td tfoot th thead tr ul""".split()
)
_WS_RUN = re.compile(r"\s+")


def html_to_text(html: str) -> tuple[str | None, str]:
    """(title, text) of an HTML page: boilerplate dropped, one paragraph per block.

    Headings become markdown-style ``#`` lines so that the sentence splitter and the
    digest treat them as headings, exactly as in markdown documents.
    """
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = _clean_inline(title_node.text()) if title_node is not None else ""
    tree.strip_tags(_DROPPED_TAGS, recursive=True)
    root = tree.body or tree.root
    text = "\n\n".join(_blocks(root)) if root is not None else ""
    return (title or None), text


def _clean_inline(text: str) -> str:
    return _WS_RUN.sub(" ", text).strip()


def _blocks(root: LexborNode) -> Iterator[str]:
    """Paragraphs of ``root`` in document order (iterative: pages nest deeply)."""
    inline: list[str] = []

    def flush(prefix: str = "") -> Iterator[str]:
        para = _clean_inline("".join(inline))
        inline.clear()
        if para:
            yield prefix + para

    # ("enter", node) walks into a node; ("exit", tag) closes a block element.
    stack: list[tuple[str, LexborNode | str]] = [("enter", root)]
    while stack:
        action, item = stack.pop()
        if action == "exit":
            assert isinstance(item, str)
            level = _HEADINGS.get(item)
            yield from flush("#" * level + " " if level else "")
            continue
        assert isinstance(item, LexborNode)
        node = item
        if node.is_text_node:
            inline.append(node.text_content or "")
            continue
        if not node.is_element_node and not node.is_document_node:
            continue  # comments
        tag = (node.tag or "").lower()
        if tag == "br":
            inline.append(" ")
            continue
        if tag == "pre":
            yield from flush()
            # Keep the line structure of code; canonicalize() normalizes the rest.
            pre = node.text(deep=True).strip("\n")
            if pre.strip():
                yield pre
            continue
        if tag in _BLOCK_TAGS:
            yield from flush()
            stack.append(("exit", tag))
        children = list(node.iter(include_text=True))
        stack.extend(("enter", child) for child in reversed(children))
    yield from flush()


def _html_published_at(html: str) -> datetime | None:
    tree = LexborHTMLParser(html)
    for selector in (
        'meta[property="article:published_time"]',
        'meta[name="date"]',
        'meta[name="dc.date"]',
        "time[datetime]",
    ):
        node = tree.css_first(selector)
        if node is not None:
            value = node.attributes.get("content") or node.attributes.get("datetime")
            if parsed := _parse_date(value):
                return parsed
    return None


# -- PDF to text --------------------------------------------------------------------


@dataclass(frozen=True)
class PdfText:
    """A PDF's canonical text with the offset where each page starts in it.

    Page ``n`` (1-based) is ``text[page_starts[n-1]:page_starts[n]]`` (the last page runs
    to the end), the blank line that joins it to the next page included; a page without
    text adds no text. The join keeps the whole text canonical, not only each page.
    """

    title: str | None
    text: str
    page_starts: list[int]
    published_at: datetime | None = None


def pdf_to_text(data: bytes) -> PdfText:
    """Text of every page of a PDF with ``pypdf``, canonicalized once.

    Raises :class:`PermanentError` for a file pypdf cannot read, an encrypted file that
    does not open with the empty password, or one without any extractable text (a
    scanned PDF needs OCR, which this project does not do).
    """
    import pypdf  # imported here: the index loads without it for text-only corpora

    # pypdf logs every repair it makes to a malformed file ("EOF marker not found") as
    # a warning; the outcome (text, or our error) is what the user needs to see.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PermanentError("the PDF is encrypted with a password")
        pages = [canonicalize(page.extract_text() or "") for page in reader.pages]
        meta = reader.metadata
        meta_title = meta.title if meta is not None else None
        created = _pdf_date(meta) if meta is not None else None
    except PermanentError:
        raise
    except Exception as exc:  # pypdf documents that broken files may raise any exception
        raise PermanentError(f"not a readable PDF ({type(exc).__name__}: {exc})") from exc
    parts: list[str] = []
    page_starts: list[int] = []
    offset = 0
    for page in pages:
        if page and parts:
            offset += 2  # the blank line between pages
        page_starts.append(offset)
        if page:
            parts.append(page)
            offset += len(page)
    text = "\n\n".join(parts)
    if not text:
        raise PermanentError("the PDF has no extractable text (scanned pages need OCR)")
    title = canonicalize(str(meta_title)) if meta_title else None
    return PdfText(title=title or None, text=text, page_starts=page_starts, published_at=created)


def _pdf_date(meta: object) -> datetime | None:
    """The PDF's creation date as aware UTC, None when absent or malformed."""
    from pypdf.errors import PyPdfError

    try:
        created = meta.creation_date  # type: ignore[attr-defined]
    except (ValueError, PyPdfError):  # a malformed date string, or a broken reference to it
        return None  # the date is optional
    if not isinstance(created, datetime):
        return None
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return created.astimezone(UTC)


# -- documents -------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FM_LINE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")
_MD_H1 = re.compile(r"^# +(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    text: str  # canonical
    published_at: datetime | None
    page_starts: list[int] | None = None  # PDF only


def parse_document(data: bytes, *, suffix: str, stem: str) -> ParsedDocument:
    """The canonical text and metadata of a file's bytes, by its suffix.

    Title: front-matter ``title:``, else the first ``# `` heading, else the HTML
    ``<title>`` or PDF title, else the file stem. Raises :class:`PermanentError` for an
    unsupported type or an unreadable PDF.
    """
    suffix = suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise PermanentError(f"unsupported file type {suffix or '(none)'!r}: {stem}{suffix}")
    if suffix in _PDF:
        pdf = pdf_to_text(data)
        return ParsedDocument(
            title=canonicalize(pdf.title or stem),
            text=pdf.text,
            published_at=pdf.published_at,
            page_starts=pdf.page_starts,
        )
    raw = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    raw = raw.replace("\r\n", "\n").replace("\r", "\n")

    meta: dict[str, str] = {}
    html_title: str | None = None
    published_at: datetime | None = None
    if suffix in _HTML:
        html_title, body = html_to_text(raw)
        published_at = _html_published_at(raw)
    else:
        body = raw
        if suffix in _MARKDOWN:
            meta, body = _split_front_matter(raw)
            published_at = _parse_date(meta.get("date"))

    text = canonicalize(body)
    title = meta.get("title") or _first_heading(text) or html_title or stem
    return ParsedDocument(title=canonicalize(title), text=text, published_at=published_at)


def load_document(path: Path) -> tuple[str, str, datetime | None]:
    """(title, canonical_text, published_at) of a supported file (see :func:`parse_document`)."""
    path = Path(path)
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise PermanentError(f"unsupported file type {path.suffix.lower() or '(none)'!r}: {path.name}")
    doc = parse_document(path.read_bytes(), suffix=path.suffix, stem=path.stem)
    return doc.title, doc.text, doc.published_at


def _split_front_matter(raw: str) -> tuple[dict[str, str], str]:
    m = _FRONT_MATTER.match(raw)
    if not m:
        return {}, raw
    meta: dict[str, str] = {}
    for line in (m.group(1) or "").splitlines():
        fm = _FM_LINE.match(line)
        if fm and fm.group(1).lower() not in meta:
            meta[fm.group(1).lower()] = _unquote(fm.group(2))
    return meta, raw[m.end() :]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _first_heading(text: str) -> str | None:
    m = _MD_H1.search(text)
    return m.group(1).strip() if m else None


def _parse_date(value: str | None) -> datetime | None:
    """A metadata date (front matter may quote it) as an aware UTC datetime; None when it is not one."""
    return parse_date(_unquote(value.strip())) if value else None


# -- chunking ----------------------------------------------------------------------


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


# -- indexing -----------------------------------------------------------------------


@dataclass(frozen=True)
class IndexStats:
    name: str
    files_indexed: int  # documents in the corpus after this run
    chunks: int
    skipped: list[tuple[str, str]]  # (relpath, reason)
    seconds: float
    added: int = 0  # new files indexed
    changed: int = 0  # files whose content changed, parsed again
    unchanged: int = 0  # files reused from the previous index without parsing
    removed: int = 0  # documents of the previous index no longer there (deleted or now unreadable)


@dataclass
class _Entry:
    """One document of an index generation: its ``docs.jsonl`` row and, aligned with
    its chunks, the space-joined terms of each chunk (``tokens.jsonl``), so a re-index
    reuses an unchanged document without reading, parsing or tokenizing it again."""

    row: dict[str, object]
    tokens: list[str]


def index_corpus(src_dir: Path, *, name: str, corpora_dir: Path) -> IndexStats:
    """Index every supported file under ``src_dir`` as corpus ``name``.

    Incremental: a file whose size and modification time match the previous index is
    reused as it is; one whose stamp changed is read and hashed, and parsed only if its
    content changed; files that are gone disappear. The BM25 model is rebuilt over all
    chunks (its document frequencies are corpus-wide) and the new generation replaces
    the old one atomically, as before. A file that cannot be parsed (a broken PDF) is
    reported in ``skipped`` and left out; it does not stop the run.
    """
    started = time.monotonic()
    validate_corpus_name(name)
    src_dir = Path(src_dir).expanduser().resolve()
    if not src_dir.is_dir():
        raise PermanentError(f"cannot index {str(src_dir)!r}: not a directory")
    corpus_dir = Path(corpora_dir) / name
    corpus_dir.mkdir(parents=True, exist_ok=True)

    # One writer at a time per corpus: the previous generation we diff against cannot
    # be cleaned up under us, and the last writer's view of the folder wins.
    with _locked(corpus_dir / _LOCK):
        previous, previous_source = _read_previous(corpus_dir)
        same_source = previous_source == str(src_dir)
        entries: list[_Entry] = []
        skipped: list[tuple[str, str]] = []
        added = changed = unchanged = 0
        for path in _walk(src_dir):
            relpath = path.relative_to(src_dir).as_posix()
            outside = _link_problem(path, src_dir)
            if outside:
                skipped.append((relpath, outside))
                continue
            suffix = path.suffix.lower()
            if suffix not in SUPPORTED_SUFFIXES:
                skipped.append((relpath, f"unsupported file type {suffix or '(no extension)'!r}"))
                continue
            prev = previous.get(relpath)
            try:
                entry, reused = _index_file(path, relpath, prev, same_source=same_source)
            except OSError as exc:
                skipped.append((relpath, f"unreadable: {exc.strerror or exc}"))
                continue
            except PermanentError as exc:
                skipped.append((relpath, str(exc)))
                continue
            if entry is None:
                skipped.append((relpath, "no text after extraction"))
                continue
            entries.append(entry)
            if reused:
                unchanged += 1
            elif prev is None:
                added += 1
            else:
                changed += 1
        removed = len(previous.keys() - {str(e.row["relpath"]) for e in entries})

        if not entries:
            found = f"; skipped: {_describe_skipped(skipped)}" if skipped else ""
            raise PermanentError(
                f"nothing to index in {str(src_dir)!r}: no {_supported_list()} files with text{found}"
            )
        chunk_rows: list[tuple[int, int, int]] = []
        chunk_tokens: list[list[str]] = []
        for doc_index, entry in enumerate(entries):
            for (s, e), toks in zip(entry.row["spans"], entry.tokens, strict=True):  # type: ignore[call-overload]
                chunk_rows.append((doc_index, s, e))
                chunk_tokens.append(toks.split())
        if not any(chunk_tokens):
            raise PermanentError(
                f"nothing to index in {str(src_dir)!r}: the documents have no searchable words"
            )

        retriever = bm25s.BM25()
        retriever.index(chunk_tokens, show_progress=False)

        generation = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
        manifest = {
            "format": INDEX_FORMAT,
            "name": name,
            "source_dir": str(src_dir),
            "created_at": datetime.now(UTC).isoformat(),
            "generation": generation,
            "documents": len(entries),
            "chunks": len(chunk_rows),
            "skipped": [list(item) for item in skipped],
            "changes": {"added": added, "changed": changed, "unchanged": unchanged, "removed": removed},
        }
        tmp = corpus_dir / f"{_TMP_PREFIX}{generation}"
        try:
            tmp.mkdir()
            with open(tmp / _DOCS, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(e.row, ensure_ascii=False) + "\n" for e in entries)
            with open(tmp / _TOKENS, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(e.tokens, ensure_ascii=False) + "\n" for e in entries)
            np.save(tmp / _CHUNKS, np.asarray(chunk_rows, dtype=np.int64).reshape(-1, 3))
            retriever.save(tmp / _BM25, show_progress=False)
            _write_json(tmp / MANIFEST, manifest)
            _fsync_tree(tmp)
            tmp.rename(corpus_dir / f"{_GEN_PREFIX}{generation}")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _write_json_atomic(corpus_dir / MANIFEST, manifest)
        _remove_stale_generations(corpus_dir, keep=f"{_GEN_PREFIX}{generation}")

    return IndexStats(
        name=name,
        files_indexed=len(entries),
        chunks=len(chunk_rows),
        skipped=skipped,
        seconds=round(time.monotonic() - started, 3),
        added=added,
        changed=changed,
        unchanged=unchanged,
        removed=removed,
    )


def _index_file(
    path: Path, relpath: str, prev: _Entry | None, *, same_source: bool
) -> tuple[_Entry | None, bool]:
    """(entry, reused) for one file; entry None when it has no text."""
    st = path.stat()
    stamp = {"mtime_ns": st.st_mtime_ns, "size": st.st_size}
    prev_file = prev.row.get("file") if prev is not None else None
    if (
        prev is not None
        and isinstance(prev_file, dict)
        and same_source
        and prev_file.get("mtime_ns") == st.st_mtime_ns
        and prev_file.get("size") == st.st_size
    ):
        return prev, True
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if prev is not None and isinstance(prev_file, dict) and prev_file.get("sha256") == digest:
        # Touched, not changed: keep the parse, remember the new stamp.
        prev.row["file"] = {**stamp, "sha256": digest}
        return prev, True
    doc = parse_document(data, suffix=path.suffix, stem=path.stem)
    spans = _document_spans(doc.text, doc.page_starts)
    if not spans:
        return None, False
    # The title is indexed with every chunk: a chunk deep in a document about
    # "Rust ownership" may never name Rust itself.
    title_terms = terms(doc.title)
    tokens = [" ".join(title_terms + terms(doc.text[s:e])) for s, e in spans]
    row: dict[str, object] = {
        "id": "doc-" + short_hash(relpath, 12),
        "relpath": relpath,
        "title": doc.title,
        "published_at": doc.published_at.isoformat() if doc.published_at else None,
        "text_hash": text_hash(doc.text),
        "chars": len(doc.text),
        "text": doc.text,
        "page_starts": doc.page_starts,
        "spans": [list(span) for span in spans],
        "file": {**stamp, "sha256": digest},
    }
    return _Entry(row=row, tokens=tokens), False


def _document_spans(text: str, page_starts: list[int] | None) -> list[tuple[int, int]]:
    """Chunks of a document; a PDF is chunked page by page, so a chunk (and any quote
    inside it) lies on one page and its locator can name that page."""
    if not page_starts:
        return chunk_spans(text)
    bounds = [*page_starts, len(text)]
    spans: list[tuple[int, int]] = []
    for start, end in itertools.pairwise(bounds):
        spans.extend((start + s, start + e) for s, e in chunk_spans(text[start:end]))
    return spans


def _read_previous(corpus_dir: Path) -> tuple[dict[str, _Entry], str | None]:
    """The live generation's documents by relpath, and the folder it was built from.

    An index of another format, or one that cannot be read, yields nothing to reuse
    (the run re-parses everything); its relpaths still count as previous documents so
    the added/changed/removed figures stay truthful.
    """
    try:
        manifest = json.loads((corpus_dir / MANIFEST).read_text(encoding="utf-8"))
        gen_dir = corpus_dir / f"{_GEN_PREFIX}{manifest['generation']}"
        with open(gen_dir / _DOCS, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
    except (OSError, ValueError, KeyError):
        return {}, None
    source = manifest.get("source_dir")
    tokens: list[list[str]] | None = None
    if manifest.get("format") == INDEX_FORMAT:
        try:
            with open(gen_dir / _TOKENS, encoding="utf-8") as f:
                tokens = [json.loads(line) for line in f]
        except (OSError, ValueError):
            tokens = None
    if tokens is None or len(tokens) != len(rows):
        # Not reusable: keep only the identities, with no file stamp to match.
        return {row["relpath"]: _Entry(row={"relpath": row["relpath"]}, tokens=[]) for row in rows}, source
    return {row["relpath"]: _Entry(row=row, tokens=toks) for row, toks in zip(rows, tokens, strict=True)}, source


def _walk(root: Path) -> Iterator[Path]:
    """Non-hidden regular files and symbolic links under ``root``, sorted. Links to
    folders are yielded (for ``_link_problem`` to report), never walked into."""
    for dirpath, dirnames, filenames in os.walk(root):
        links = [d for d in dirnames if not d.startswith(".") and os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in links)
        for filename in sorted([*filenames, *links]):
            path = Path(dirpath) / filename
            if not filename.startswith(".") and (path.is_symlink() or path.is_file()):
                yield path


def _link_problem(path: Path, root: Path) -> str | None:
    """Why ``path`` must not be indexed, or None. A corpus is served to every user of
    the system, so a link may only lead to a regular file inside the folder being
    indexed: ``ln -s /etc/passwd docs/passwd.txt`` must not publish /etc/passwd."""
    if not path.is_symlink():
        return None
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return f"dangling link to {os.readlink(path)!r}"
    except (OSError, RuntimeError) as exc:  # a loop of links, or a component we cannot read
        return f"unresolvable link: {exc}"
    if not target.is_relative_to(root):
        return "link to a file outside the indexed folder"
    if target.is_dir():
        return "link to a folder (links are not followed into folders)"
    if not target.is_file():
        return "link to something that is not a regular file"
    return None


def _supported_list() -> str:
    return ", ".join(sorted(SUPPORTED_SUFFIXES))


def _describe_skipped(skipped: list[tuple[str, str]], limit: int = 5) -> str:
    shown = "; ".join(f"{path} ({reason})" for path, reason in skipped[:limit])
    more = len(skipped) - limit
    return shown + (f"; and {more} more" if more > 0 else "")


class _locked:
    def __init__(self, path: Path) -> None:
        self._path = path

    def __enter__(self) -> None:
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)


def _write_json(path: Path, data: object) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=2)
        f.flush()
        os.fsync(f.fileno())


def _write_json_atomic(path: Path, data: object) -> None:
    tmp = path.with_name(f"{_TMP_PREFIX}{path.name}.{uuid.uuid4().hex[:8]}")
    try:
        _write_json(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        for filename in filenames:
            fd = os.open(os.path.join(dirpath, filename), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_generations(corpus_dir: Path, *, keep: str) -> None:
    for entry in corpus_dir.iterdir():
        if entry.name in (keep, MANIFEST, _LOCK):
            continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name.startswith(_TMP_PREFIX):
            entry.unlink(missing_ok=True)


def list_corpora(corpora_dir: Path) -> list[str]:
    """Names of the corpora that have a live index, sorted."""
    corpora_dir = Path(corpora_dir)
    if not corpora_dir.is_dir():
        return []
    return sorted(
        entry.name
        for entry in corpora_dir.iterdir()
        if CORPUS_NAME_RE.fullmatch(entry.name) and (entry / MANIFEST).is_file()
    )


# -- searching -----------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkHit:
    corpus: str
    doc_relpath: str
    doc_title: str
    doc_text_hash: str
    published_at: datetime | None
    start: int
    end: int
    text: str  # == the document's canonical text[start:end]
    score: float  # BM25, > 0
    doc_chars: int  # length of the document's canonical text
    page_starts: list[int] | None = None  # PDF: offset of each page in the canonical text
    page: int | None = None  # PDF: the 1-based page the chunk lies on
    # The whole canonical text (shared, not copied), so an excerpt can reach past the
    # chunk; "" when unknown, and the excerpt is then the chunk alone.
    document: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class _Doc:
    relpath: str
    title: str
    published_at: datetime | None
    text_hash: str
    text: str
    page_starts: list[int] | None = None


@dataclass
class _LoadedCorpus:
    name: str
    stamp: tuple[int, int, int]  # (st_ino, st_mtime_ns, st_size) of manifest.json
    generation: str
    retriever: bm25s.BM25
    docs: list[_Doc]
    chunks: np.ndarray  # (n, 3): doc index, start, end
    by_relpath: dict[str, int] = field(default_factory=dict)


class LocalSearcher:
    """BM25 search over indexed corpora; loads each corpus on first use and reloads it
    when its manifest is replaced (a re-index). Safe to share between threads."""

    def __init__(self, corpora_dir: Path) -> None:
        self._dir = Path(corpora_dir)
        self._cache: dict[str, _LoadedCorpus] = {}
        self._lock = threading.Lock()

    def search(self, query: str, *, corpora: list[str] | None = None, k: int = 10) -> list[ChunkHit]:
        """The ``k`` best chunks for ``query`` across ``corpora`` (None: all), best first."""
        names = self._resolve(corpora)
        query_terms = terms(query)
        if not query_terms or k <= 0:
            return []
        hits: list[ChunkHit] = []
        for name in names:
            hits.extend(self._search_one(self._corpus(name), query_terms, k))
        hits.sort(key=lambda h: (-h.score, h.corpus, h.doc_relpath, h.start))
        return hits[:k]

    def document_text(self, corpus: str, relpath: str) -> str:
        """The canonical text of one indexed document (what locators point into)."""
        loaded = self._corpus(self._resolve([corpus])[0])
        index = loaded.by_relpath.get(relpath)
        if index is None:
            raise PermanentError(f"corpus {corpus!r} has no document {relpath!r}")
        return loaded.docs[index].text

    def _resolve(self, corpora: list[str] | None) -> list[str]:
        available = list_corpora(self._dir)
        if corpora is None:
            return available
        for name in corpora:
            if name not in available:
                listed = ", ".join(available) if available else "none"
                raise PermanentError(f"unknown corpus {name!r}; indexed corpora: {listed}")
        return list(dict.fromkeys(corpora))

    def _corpus(self, name: str) -> _LoadedCorpus:
        with self._lock:
            manifest_path = self._dir / name / MANIFEST
            for attempt in range(3):
                try:
                    st = manifest_path.stat()
                    stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
                    cached = self._cache.get(name)
                    if cached is not None and cached.stamp == stamp:
                        return cached
                    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
                    if cached is not None and cached.generation == manifest["generation"]:
                        cached.stamp = stamp
                        return cached
                    loaded = _load(self._dir / name, name, manifest, stamp)
                    self._cache[name] = loaded
                    return loaded
                except FileNotFoundError:
                    # A re-index swapped the manifest and removed the generation we
                    # were reading; the new manifest names the one to read.
                    if attempt == 2 or not manifest_path.exists():
                        raise PermanentError(
                            f"corpus {name!r} is not readable; index it again"
                        ) from None
            raise AssertionError("unreachable")

    @staticmethod
    def _search_one(loaded: _LoadedCorpus, query_terms: list[str], k: int) -> list[ChunkHit]:
        scores = loaded.retriever.get_scores(query_terms)
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        # Stable sort on -score keeps ties in index order (document, then position).
        order = positive[np.argsort(-scores[positive], kind="stable")][:k]
        hits = []
        for i in order.tolist():
            doc_index, start, end = (int(v) for v in loaded.chunks[i])
            doc = loaded.docs[doc_index]
            hits.append(
                ChunkHit(
                    corpus=loaded.name,
                    doc_relpath=doc.relpath,
                    doc_title=doc.title,
                    doc_text_hash=doc.text_hash,
                    published_at=doc.published_at,
                    start=start,
                    end=end,
                    text=doc.text[start:end],
                    score=float(scores[i]),
                    doc_chars=len(doc.text),
                    page_starts=doc.page_starts,
                    page=bisect.bisect_right(doc.page_starts, start) if doc.page_starts else None,
                    document=doc.text,
                )
            )
        return hits


def _load(corpus_dir: Path, name: str, manifest: dict, stamp: tuple[int, int, int]) -> _LoadedCorpus:
    if manifest.get("format") != INDEX_FORMAT:
        # Its terms were made by another tokenizer: queries would match them wrongly.
        raise PermanentError(
            f"corpus {name!r} was indexed in format {manifest.get('format')!r}, this version "
            f"reads format {INDEX_FORMAT}; index it again"
        )
    gen_dir = corpus_dir / f"{_GEN_PREFIX}{manifest['generation']}"
    docs: list[_Doc] = []
    with open(gen_dir / _DOCS, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            published = row.get("published_at")
            docs.append(
                _Doc(
                    relpath=row["relpath"],
                    title=row["title"],
                    published_at=datetime.fromisoformat(published) if published else None,
                    text_hash=row["text_hash"],
                    text=row["text"],
                    page_starts=row.get("page_starts"),
                )
            )
    chunks = np.load(gen_dir / _CHUNKS, allow_pickle=False)
    retriever = bm25s.BM25.load(gen_dir / _BM25, show_progress=False)
    return _LoadedCorpus(
        name=name,
        stamp=stamp,
        generation=manifest["generation"],
        retriever=retriever,
        docs=docs,
        chunks=chunks,
        by_relpath={doc.relpath: i for i, doc in enumerate(docs)},
    )
