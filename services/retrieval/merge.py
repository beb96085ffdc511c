"""Local-corpus hits as seed 000 source objects, one per document, merged across queries
and research iterations.

Guarantees:

* One :class:`~shared.envelope.Source` per URL; a document's URL is
  ``corpus://<corpus>/<percent-encoded relpath>`` and its id ``src-<12 hex>`` is derived
  from the URL, so the same document gets the same id in every job and iteration.
* ``relevance_score`` is in 0..1: a hit's BM25 score divided by the best score of the
  query that found it (raw BM25 scores of different queries are not comparable).
* An existing source keeps its id; spans and queries are unioned and the higher
  relevance kept. Spans always index the canonical text named by ``text_hash``: if a
  re-index changed the document, the new text's spans replace the old ones.
* The output is sorted by relevance (desc), then URL: the same input gives the same list.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from services.retrieval.index import ChunkHit
from shared.envelope import EXCERPT_MAX_CHARS, CredibilityTier, RetrievalMethod, Source


def corpus_url(corpus: str, relpath: str) -> str:
    """``corpus://<corpus>/<relpath>``, path segments percent-encoded, '/' separators."""
    path = relpath.replace("\\", "/").lstrip("/")
    return f"corpus://{quote(corpus, safe='')}/{quote(path, safe='/')}"


def source_id(url: str) -> str:
    return "src-" + hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]


@dataclass
class _Doc:
    url: str
    best: ChunkHit
    best_relevance: float
    spans: set[tuple[int, int]] = field(default_factory=set)
    found_by: list[str] = field(default_factory=list)


def merge_hits(
    hits_by_query: Mapping[str, Sequence[ChunkHit]],
    *,
    tier: CredibilityTier,
    domain_authority: int,
    existing: Sequence[Source] = (),
) -> list[Source]:
    """Every source in ``existing`` plus one per document hit, merged by URL."""
    docs: dict[str, _Doc] = {}
    for query, hits in hits_by_query.items():
        positive = [h for h in hits if h.score > 0]
        if not positive:
            continue
        top = max(h.score for h in positive)
        for hit in positive:
            relevance = min(1.0, hit.score / top)
            url = corpus_url(hit.corpus, hit.doc_relpath)
            doc = docs.get(url)
            if doc is None:
                doc = docs[url] = _Doc(url=url, best=hit, best_relevance=relevance)
            elif _better(hit, relevance, doc.best, doc.best_relevance):
                doc.best, doc.best_relevance = hit, relevance
            doc.spans.add((hit.start, hit.end))
            if query not in doc.found_by:
                doc.found_by.append(query)

    merged: dict[str, Source] = {}
    for source in existing:
        merged.setdefault(source.url, source)
    for url, doc in docs.items():
        fresh = _to_source(doc, tier=tier, domain_authority=domain_authority)
        old = merged.get(url)
        merged[url] = fresh if old is None else _merge(old, fresh)
    return sorted(merged.values(), key=lambda s: (-s.relevance_score, s.url))


def _better(hit: ChunkHit, relevance: float, best: ChunkHit, best_relevance: float) -> bool:
    return (relevance, hit.score, -hit.start) > (best_relevance, best.score, -best.start)


def _to_source(doc: _Doc, *, tier: CredibilityTier, domain_authority: int) -> Source:
    hit = doc.best
    return Source(
        id=source_id(doc.url),
        text=hit.text[:EXCERPT_MAX_CHARS],
        url=doc.url,
        title=hit.doc_title,
        published_at=hit.published_at,
        relevance_score=doc.best_relevance,
        credibility_tier=tier,
        domain_authority=domain_authority,
        retrieval_method=RetrievalMethod.RAG,
        text_hash=hit.doc_text_hash,
        text_chars=hit.doc_chars,
        corpus=hit.corpus,
        matched_spans=sorted(doc.spans),
        found_by=doc.found_by,
    )


def _merge(old: Source, fresh: Source) -> Source:
    found_by = list(dict.fromkeys([*old.found_by, *fresh.found_by]))
    if old.text_hash != fresh.text_hash:
        # The document was re-indexed: old spans and digest point into a text that is
        # gone, so the new version wins; only the identity and history carry over.
        return fresh.model_copy(update={"id": old.id, "found_by": found_by})
    update: dict[str, object] = {
        "matched_spans": sorted(set(old.matched_spans) | set(fresh.matched_spans)),
        "found_by": found_by,
    }
    if fresh.relevance_score > old.relevance_score:
        update["relevance_score"] = fresh.relevance_score
        update["text"] = fresh.text
    return old.model_copy(update=update)
