"""Corpus storage: the local corpora on disk, indexed for BM25 search.

Documents are read through :mod:`services.retrieval.documents`, cut into chunks by
:mod:`services.retrieval.chunking` and searched by :mod:`services.retrieval.search`;
this module owns what lies on disk between them.

Guarantees:

* Every document is stored as its canonical text (:func:`shared.research.text.canonicalize`),
  with its ``sha256-…`` hash; every chunk is a ``(start, end)`` span of that text, so
  ``canonical[start:end] == chunk_text`` and locators built from hits verify.
* Indexing and querying tokenize with the same :func:`shared.research.text.terms`, so stop words
  and stemming agree on both sides.
* A corpus is replaced atomically. ``corpora_dir/<name>/`` holds one directory per
  index generation and a ``manifest.json`` naming the live one; a new generation is
  built completely beside the live one and becomes live when ``manifest.json`` is
  swapped with :func:`os.replace`. A reader sees the old index or the new one, never a
  half-written one. (A non-empty directory cannot be ``os.replace``d onto another, so
  the pointer file is what gets swapped.)
* A symbolic link that leads outside the indexed folder is skipped, not followed.
* Bad input (an invalid name, nothing indexable, an unknown corpus) raises
  :class:`shared.platform.errors.PermanentError` with a message meant for the user.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import bm25s
import numpy as np

from services.retrieval.chunking import document_spans
from services.retrieval.documents import SUPPORTED_SUFFIXES, parse_document
from shared.platform.errors import PermanentError
from shared.research.text import short_hash, terms, text_hash

__all__ = [
    "CORPUS_NAME_RE",
    "INDEX_FORMAT",
    "MANIFEST",
    "GenerationFiles",
    "IndexStats",
    "generation_files",
    "index_corpus",
    "list_corpora",
    "validate_corpus_name",
]

CORPUS_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

# 2: per-file stamps, chunk spans and terms kept for incremental re-index; PDF pages.
# 3: terms are Snowball stems (shared.research.text.terms); a format-2 index holds the old
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


@dataclass(frozen=True)
class GenerationFiles:
    """Where one index generation keeps what a searcher reads."""

    docs: Path  # one JSON row per document: relpath, title, canonical text, hash, pages
    chunks: Path  # (n, 3) array: document index, start, end
    bm25: Path  # the BM25 model over the chunks' terms


def generation_files(corpus_dir: Path, generation: str) -> GenerationFiles:
    gen_dir = corpus_dir / f"{_GEN_PREFIX}{generation}"
    return GenerationFiles(docs=gen_dir / _DOCS, chunks=gen_dir / _CHUNKS, bm25=gen_dir / _BM25)


# -- names ---------------------------------------------------------------------


def validate_corpus_name(name: str) -> str:
    """``name`` if it is a valid corpus name; it becomes a directory name and a URL host."""
    if not isinstance(name, str) or not CORPUS_NAME_RE.fullmatch(name):
        raise PermanentError(
            f"invalid corpus name {name!r}: use 1-64 characters, letters, digits, '_', '.' "
            "or '-', starting with a letter or digit"
        )
    return name


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
        scan = _scan(src_dir, previous, same_source=previous_source == str(src_dir))
        if not scan.entries:
            found = f"; skipped: {_describe_skipped(scan.skipped)}" if scan.skipped else ""
            raise PermanentError(
                f"nothing to index in {str(src_dir)!r}: no {_supported_list()} files with text{found}"
            )
        chunk_rows, chunk_tokens = _chunks(scan.entries)
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
            "documents": len(scan.entries),
            "chunks": len(chunk_rows),
            "skipped": [list(item) for item in scan.skipped],
            "changes": scan.changes,
        }
        _write_generation(corpus_dir, generation, scan.entries, chunk_rows, retriever, manifest)

    return IndexStats(
        name=name,
        files_indexed=len(scan.entries),
        chunks=len(chunk_rows),
        skipped=scan.skipped,
        seconds=round(time.monotonic() - started, 3),
        **scan.changes,
    )


@dataclass
class _Scan:
    """What a walk of the source folder found, against the previous index."""

    entries: list[_Entry]
    skipped: list[tuple[str, str]]
    changes: dict[str, int]  # added, changed, unchanged, removed


def _scan(src_dir: Path, previous: dict[str, _Entry], *, same_source: bool) -> _Scan:
    """Every file under ``src_dir``: indexed (reused when unchanged) or skipped with why."""
    entries: list[_Entry] = []
    skipped: list[tuple[str, str]] = []
    changes = {"added": 0, "changed": 0, "unchanged": 0, "removed": 0}
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
        changes["unchanged" if reused else "added" if prev is None else "changed"] += 1
    changes["removed"] = len(previous.keys() - {str(e.row["relpath"]) for e in entries})
    return _Scan(entries, skipped, changes)


def _chunks(entries: list[_Entry]) -> tuple[list[tuple[int, int, int]], list[list[str]]]:
    """(document index, start, end) of every chunk, and each chunk's terms, in order."""
    chunk_rows: list[tuple[int, int, int]] = []
    chunk_tokens: list[list[str]] = []
    for doc_index, entry in enumerate(entries):
        for (s, e), toks in zip(entry.row["spans"], entry.tokens, strict=True):  # type: ignore[call-overload]
            chunk_rows.append((doc_index, s, e))
            chunk_tokens.append(toks.split())
    return chunk_rows, chunk_tokens


def _write_generation(corpus_dir: Path, generation: str, entries: list[_Entry], chunk_rows: list[tuple[int, int, int]],
                      retriever: bm25s.BM25, manifest: dict[str, object]) -> None:
    """Write the generation in a temporary folder, then put it in place in one rename
    and point the corpus's manifest at it: a reader sees the old index or the new one,
    never half of one."""
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
    spans = document_spans(doc.text, doc.page_starts)
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
