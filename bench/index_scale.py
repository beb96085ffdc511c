"""Local-corpus benchmark: index 10,000 documents, re-index after 1% changed, query.

Generates a deterministic synthetic corpus in a temporary folder (``--seed``): each
document a few KB of markdown, with a title and paragraphs drawn from a vocabulary of
about 6,000 made-up words (Zipf-distributed, as real text is, so BM25's posting lists
are realistically skewed) plus a few topic words per document. Then it measures, with
the same code `deepresearch index` and the retrieval service run:

- full index: ``index_corpus`` over every document (parse, chunk, tokenize, BM25,
  write a generation, swap);
- incremental re-index: 1% of the documents rewritten, then ``index_corpus`` again
  (only those are parsed; BM25 is rebuilt over all chunks);
- query latency: the first query (which loads the index from disk) reported apart,
  then p50/p95/max over ``--queries`` queries of 2-4 words on a warm searcher,
  ``k=10`` as the retrieval service asks.

    python bench/index_scale.py                 # 10,000 documents, 100 queries
    python bench/index_scale.py --docs 2000 --queries 50
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from services.retrieval.index import index_corpus
from services.retrieval.search import LocalSearcher

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "da", "go", "fu", "zi", "be", "yo", "xa", "wen",
              "tor", "lis", "mar", "quo", "hen", "dul", "sap", "rix"]  # fmt: skip


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _document(rng: random.Random, vocab: list[str], cum_weights: list[float], n: int, version: int) -> str:
    topic = rng.sample(vocab, 4)
    title = " ".join(w.capitalize() for w in topic[:3])
    paragraphs = []
    for _ in range(rng.randint(4, 8)):
        sentences = []
        for _ in range(rng.randint(3, 6)):
            words = rng.choices(vocab, cum_weights=cum_weights, k=rng.randint(8, 18))
            words[rng.randrange(len(words))] = rng.choice(topic)
            sentences.append(" ".join(words).capitalize() + ".")
        paragraphs.append(" ".join(sentences))
    return f"---\ntitle: {title} {n}\ndate: 2024-01-{1 + n % 28:02d}\n---\n# {title}\n\n" + (
        f"Revision {version}.\n\n" if version else ""
    ) + "\n\n".join(paragraphs) + "\n"


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--changed", type=float, default=0.01, help="fraction rewritten before the re-index")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    vocab = _vocabulary(rng, 6_000)
    weights = list(itertools.accumulate(1 / (rank + 1) ** 1.05 for rank in range(len(vocab))))
    root = Path(tempfile.mkdtemp(prefix="dr-index-bench-"))
    src, corpora = root / "src", root / "corpora"
    try:
        _generate(src, args.docs, rng, vocab, weights)
        _index_full_then_incremental(src, corpora, args.docs, args.changed, rng, vocab, weights)
        _queries(corpora, args.queries, rng, vocab)
        size = sum(f.stat().st_size for f in corpora.rglob("*") if f.is_file())
        print(f"index on disk: {size / 1e6:.1f} MB; cpus: {os.cpu_count()}")
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


def _doc_path(src: Path, n: int) -> Path:
    return src / f"d{n // 1000:02d}" / f"doc{n:05d}.md"


def _generate(src: Path, docs: int, rng: random.Random, vocab: list[str], weights: list[float]) -> None:
    started = time.perf_counter()
    total_bytes = 0
    for n in range(docs):
        path = _doc_path(src, n)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = _document(rng, vocab, weights, n, 0)
        path.write_text(text, encoding="utf-8")
        total_bytes += len(text.encode())
    print(f"generated {docs} documents, {total_bytes / 1e6:.1f} MB "
          f"({total_bytes / docs / 1024:.1f} KiB each) in {time.perf_counter() - started:.1f}s")


def _index_full_then_incremental(src: Path, corpora: Path, docs: int, fraction: float, rng: random.Random,
                                 vocab: list[str], weights: list[float]) -> None:
    """The full index, then a re-index after ``fraction`` of the documents were rewritten."""
    t0 = time.perf_counter()
    full = index_corpus(src, name="bench", corpora_dir=corpora)
    full_s = time.perf_counter() - t0
    print(f"full index:         {full_s:7.2f}s  {full.files_indexed} documents, {full.chunks} chunks "
          f"({full.files_indexed / full_s:.0f} documents/s)")

    changed = rng.sample(range(docs), max(1, round(docs * fraction)))
    for n in changed:
        _doc_path(src, n).write_text(_document(rng, vocab, weights, n, 1), encoding="utf-8")
    t0 = time.perf_counter()
    incr = index_corpus(src, name="bench", corpora_dir=corpora)
    incr_s = time.perf_counter() - t0
    print(f"incremental index:  {incr_s:7.2f}s  added {incr.added}, changed {incr.changed}, "
          f"unchanged {incr.unchanged}, removed {incr.removed} ({len(changed)} files rewritten)")


def _queries(corpora: Path, count: int, rng: random.Random, vocab: list[str]) -> None:
    """The first query's time (it loads the index), then latencies on a warm searcher."""
    searcher = LocalSearcher(corpora)
    queries = [" ".join(rng.sample(vocab[:2_000], rng.randint(2, 4))) for _ in range(count)]
    t0 = time.perf_counter()
    first_hits = searcher.search(queries[0], corpora=["bench"], k=10)
    cold_ms = (time.perf_counter() - t0) * 1000
    latencies = []
    hits = 0
    for query in queries:
        t0 = time.perf_counter()
        found = searcher.search(query, corpora=["bench"], k=10)
        latencies.append((time.perf_counter() - t0) * 1000)
        hits += len(found)
    print(f"first query (loads the index): {cold_ms:.0f} ms, {len(first_hits)} hits")
    print(f"query latency over {len(queries)} queries (k=10, warm): p50 {statistics.median(latencies):.1f} ms, "
          f"p95 {_percentile(latencies, 95):.1f} ms, max {max(latencies):.1f} ms, "
          f"{hits / len(queries):.1f} hits/query")


if __name__ == "__main__":
    sys.exit(main())
