"""Local-corpus hits as research sources, one per document, merged across queries
and research iterations.

Guarantees:

* One :class:`~shared.research.envelope.Source` per URL; a document's URL is
  ``corpus://<corpus>/<percent-encoded relpath>`` and its id ``src-<12 hex>`` is derived
  from the URL, so the same document gets the same id in every job and iteration.
* ``relevance_score`` is in 0..1: a hit's BM25 score divided by the best score of the
  query that found it (raw BM25 scores of different queries are not comparable).
* A source's excerpt is one contiguous window of its document covering the most
  matched chunks, the best one whole (:mod:`services.retrieval.excerpt`), or, for a
  document longer than ``window_max_chars``, its best chunk; ``excerpt_start`` is its
  offset in the canonical text.
* An existing source keeps its id; spans and queries are unioned and the higher
  relevance kept (with the excerpt of the pass that gave it). Spans always index the
  canonical text named by ``text_hash``: if a re-index changed the document, the new
  text's spans replace the old ones. Sources from every provider are merged by the
  same rule (:func:`combine_sources`).
* The output is sorted by relevance (desc), then URL: the same input gives the same list.

Web and PubMed results deduplicate on :func:`dedupe_key`: a PubMed record by its PMID
(or DOI), anything else by :func:`canonical_url`, which folds the spellings of one page
(fragment, tracking parameters, host case, default port, trailing slash, parameter
order) into one string.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from services.retrieval.excerpt import excerpt_window
from services.retrieval.search import ChunkHit
from shared.research.envelope import EXCERPT_MAX_CHARS, CredibilityTier, RetrievalMethod, Source


def corpus_url(corpus: str, relpath: str) -> str:
    """``corpus://<corpus>/<relpath>``, path segments percent-encoded, '/' separators."""
    path = relpath.replace("\\", "/").lstrip("/")
    return f"corpus://{quote(corpus, safe='')}/{quote(path, safe='/')}"


def source_id(url: str) -> str:
    return "src-" + hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]


# -- identity of web and PubMed results ----------------------------------------------

# Parameters that say how a visitor arrived, never which page it is. Matched on the
# lower-cased name; the prefixes cover the utm_*/hs* families.
_TRACKING_PARAMS = frozenset({
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid", "twclid",
    "ttclid", "li_fat_id", "igshid", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi",
    "__hstc", "__hssc", "__hsfp", "hsctatracking", "mkt_tok", "oly_anon_id", "oly_enc_id",
    "vero_id", "vero_conv", "wickedid", "rb_clickid", "s_cid", "ref_src", "ref_url", "cmpid",
    "sr_share", "spm",
})  # fmt: skip
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "ga_")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_PARAMS or lowered.startswith(_TRACKING_PREFIXES)


def canonical_url(url: str) -> str:
    """One spelling per page: the dedupe key of web results.

    Scheme and host lower-cased (a trailing dot on the host dropped); the default port,
    the fragment, user-info (credentials never belong in a key) and tracking parameters
    (``utm_*``, ``gclid``, ``fbclid``...) removed; the remaining parameters sorted; an
    empty path made ``/`` and a trailing slash on any other path removed. Path case and percent-encoding are kept: servers
    may treat them as different pages. A string that is not a URL comes back stripped.
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    if not scheme or not parts.netloc:
        return url
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    params = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k)]
    query = urlencode(sorted(params), doseq=True)
    return urlunsplit((scheme, host, path, query, ""))


_DOI_RE = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)
_DOI_URL_HOSTS = ("doi.org", "dx.doi.org")
_PUBMED_URL = re.compile(r"^https?://pubmed\.ncbi\.nlm\.nih\.gov/(\d+)/?$", re.IGNORECASE)


def normalize_doi(doi: str) -> str | None:
    """``10.xxxx/...`` lower-cased, without ``doi:`` or resolver prefixes; None if it is not a DOI.

    DOIs are case-insensitive by definition (DOI Handbook 2.4), so lower case is safe.
    """
    value = unquote(doi.strip())
    m = _DOI_RE.search(value)
    if m is None:
        return None
    return m.group(0).rstrip(".,;)").lower()


def dedupe_keys(source: Source) -> list[str]:
    """Every identity of ``source``, strongest first: ``pmid:N``, ``doi:10.…``, then the
    canonical URL. Two results that share any key are the same work; a merger that
    wants to join a PubMed record with a web page at its DOI unions on these."""
    keys: list[str] = []
    pmid = (source.metadata.get("pmid") or "").strip()
    if not pmid:
        m = _PUBMED_URL.match(canonical_url(source.url))
        pmid = m.group(1) if m else ""
    if pmid.isdigit():
        keys.append(f"pmid:{int(pmid)}")
    doi = normalize_doi(source.metadata.get("doi") or "")
    if doi is None:
        parts = urlsplit(source.url)
        if (parts.hostname or "").lower() in _DOI_URL_HOSTS:
            doi = normalize_doi(parts.path.lstrip("/"))
    if doi is not None:
        keys.append(f"doi:{doi}")
    keys.append(canonical_url(source.url))
    return keys


def dedupe_key(source: Source) -> str:
    """The identity results are merged on: PubMed by PMID (``metadata["pmid"]``, or
    the PMID in a ``pubmed.ncbi.nlm.nih.gov/<pmid>/`` URL), else by DOI
    (``metadata["doi"]`` or a ``doi.org`` URL), else the canonical URL."""
    return dedupe_keys(source)[0]


@dataclass
class _Doc:
    url: str
    best: ChunkHit
    best_relevance: float
    spans: dict[tuple[int, int], float] = field(default_factory=dict)  # span -> best relevance
    found_by: list[str] = field(default_factory=list)


def merge_hits(
    hits_by_query: Mapping[str, Sequence[ChunkHit]],
    *,
    tier: CredibilityTier,
    domain_authority: int,
    existing: Sequence[Source] = (),
    window_max_chars: int | None = None,
) -> list[Source]:
    """Every source in ``existing`` plus one per document hit, merged by URL.
    ``window_max_chars``: a longer document's excerpt is its best chunk alone (None:
    every document's excerpt is the window over its matched chunks)."""
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
            span = (hit.start, hit.end)
            doc.spans[span] = max(relevance, doc.spans.get(span, 0.0))
            if query not in doc.found_by:
                doc.found_by.append(query)

    merged: dict[str, Source] = {}
    for source in existing:
        merged.setdefault(source.url, source)
    for url, doc in docs.items():
        fresh = _to_source(doc, tier=tier, domain_authority=domain_authority, window_max_chars=window_max_chars)
        old = merged.get(url)
        merged[url] = fresh if old is None else combine_sources(old, fresh)
    return sorted(merged.values(), key=lambda s: (-s.relevance_score, s.url))


def _better(hit: ChunkHit, relevance: float, best: ChunkHit, best_relevance: float) -> bool:
    return (relevance, hit.score, -hit.start) > (best_relevance, best.score, -best.start)


def _to_source(doc: _Doc, *, tier: CredibilityTier, domain_authority: int, window_max_chars: int | None) -> Source:
    hit = doc.best
    if hit.document and (window_max_chars is None or len(hit.document) <= window_max_chars):
        start, end = excerpt_window(hit.document, doc.spans, (hit.start, hit.end), limit=EXCERPT_MAX_CHARS)
        text = hit.document[start:end]
    else:
        start, text = hit.start, hit.text[:EXCERPT_MAX_CHARS]
    return Source(
        id=source_id(doc.url),
        text=text,
        excerpt_start=start,
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
        page_starts=hit.page_starts,
        matched_spans=sorted(doc.spans),
        found_by=doc.found_by,
    )


# -- one source per work ---------------------------------------------------------------

# When two providers found the same work, the one with richer metadata wins.
_METHOD_RANK = {RetrievalMethod.PUBMED: 2, RetrievalMethod.RAG: 1, RetrievalMethod.WEB: 0}


def combine_sources(old: Source, fresh: Source) -> Source:
    """One source for one work found twice, keeping the old id and every query that
    found it.

    A re-indexed local document (a new text at the same corpus URL) replaces the old:
    the old spans and digest point into a text that is gone. A web page or record found
    again keeps the text first read, which its digest was made from. Otherwise the
    richer record wins (PubMed over a local corpus over the web; between two of a kind,
    the old one) with the best relevance; found twice with the same text, the spans are
    unioned and the excerpt is the more relevant pass's."""
    found_by = list(dict.fromkeys([*old.found_by, *fresh.found_by]))
    reindexed = old.retrieval_method is fresh.retrieval_method is RetrievalMethod.RAG
    if reindexed and fresh.text_hash != old.text_hash:
        return fresh.model_copy(update={"id": old.id, "found_by": found_by})
    winner = old
    if fresh.retrieval_method != old.retrieval_method and (
        (_METHOD_RANK[fresh.retrieval_method], fresh.relevance_score) > (_METHOD_RANK[old.retrieval_method], old.relevance_score)
    ):
        winner = fresh
    update: dict[str, object] = {
        "id": old.id,
        "found_by": found_by,
        "relevance_score": max(old.relevance_score, fresh.relevance_score),
        "metadata": {**(fresh.metadata if winner is old else old.metadata), **winner.metadata},
    }
    if winner is old and fresh.text_hash == old.text_hash:
        update["matched_spans"] = sorted(set(old.matched_spans) | set(fresh.matched_spans))
        if fresh.relevance_score > old.relevance_score:
            update["text"] = fresh.text
            update["excerpt_start"] = fresh.excerpt_start
    return winner.model_copy(update=update)


def merge_sources(existing: Sequence[Source], fresh: Iterable[Source]) -> list[Source]:
    """``existing`` plus ``fresh``, one source per work (any shared dedupe key), sorted
    by relevance then URL."""
    merged: list[Source] = []
    index: dict[str, int] = {}
    for source in [*existing, *fresh]:
        keys = dedupe_keys(source)
        slot = next((index[k] for k in keys if k in index), None)
        if slot is None:
            slot = len(merged)
            merged.append(source)
        else:
            merged[slot] = combine_sources(merged[slot], source)
        for k in (*keys, *dedupe_keys(merged[slot])):
            index.setdefault(k, slot)
    return sorted(merged, key=lambda s: (-s.relevance_score, s.url))
