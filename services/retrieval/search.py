"""Search over the local corpora: BM25 over the chunks :mod:`services.retrieval.index` stored.

Queries are tokenized with the same :func:`shared.research.text.terms` as the index. A corpus is
loaded on first use and reloaded when its manifest is replaced, so a re-index is seen
without a restart and a reader never sees a half-written generation.
"""

from __future__ import annotations

import bisect
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import bm25s
import numpy as np

from services.retrieval.index import INDEX_FORMAT, MANIFEST, generation_files, list_corpora
from shared.platform.errors import PermanentError
from shared.research.text import terms

__all__ = ["ChunkHit", "LocalSearcher"]


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
    files = generation_files(corpus_dir, manifest["generation"])
    docs: list[_Doc] = []
    with open(files.docs, encoding="utf-8") as f:
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
    chunks = np.load(files.chunks, allow_pickle=False)
    retriever = bm25s.BM25.load(files.bm25, show_progress=False)
    return _LoadedCorpus(
        name=name,
        stamp=stamp,
        generation=manifest["generation"],
        retriever=retriever,
        docs=docs,
        chunks=chunks,
        by_relpath={doc.relpath: i for i, doc in enumerate(docs)},
    )
