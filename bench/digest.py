"""Digest benchmark: compression ratios and digest times on the sample corpus.

Digests every document of ``samples/corpus`` (34 documents, 2-6 KB each) and longer
documents made by concatenating them (about 10, 25, 50 and 100 thousand characters,
the sizes DIGEST_POLICY=auto digests), for a handful of research questions, with the
offline engine (what runs without API keys) and, on a sample, the quote relocation a
model answer goes through. Prints per size class: documents, mean and median
compression ratio (digest_chars / original_chars), snippets per digest, and median /
p95 / max digest time. Needs no servers: it times the compression itself; the
archive and cache round trips are NATS latency on top (see bench/pipeline.py).

    python bench/digest.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from services.digest.compress import DigestLimits, draft_of, finalize, offline_digest  # noqa: E402
from services.retrieval.documents import load_document  # noqa: E402
from shared.research.text import canonicalize, text_hash  # noqa: E402

QUESTIONS = [
    "Why do threads deadlock and how can programs avoid it?",
    "When should a server use processes instead of threads?",
    "How do message queues give at-least-once delivery and what does idempotency have to do with it?",
    "What does the Python GIL prevent and how do multiprocessing and asyncio work around it?",
]
SIZES = [10_000, 25_000, 50_000, 100_000]


def load_corpus() -> list[tuple[str, str]]:
    docs = []
    for path in sorted((ROOT / "samples" / "corpus").iterdir()):
        if path.is_file():
            docs.append((path.name, load_document(path)[1]))
    return docs


def long_documents(docs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Documents of at least each size in SIZES, by concatenating corpus documents in
    rotation (each size starts at a different document)."""
    out = []
    for n, size in enumerate(SIZES):
        parts: list[str] = []
        i = n * 7
        while sum(map(len, parts)) < size:
            parts.append(docs[i % len(docs)][1])
            i += 1
        out.append((f"concat-{size // 1000}k", canonicalize("\n\n".join(parts))))
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing repetitions per digest (the best counts)")
    args = parser.parse_args()
    limits = DigestLimits()
    docs = load_corpus()
    classes = {"corpus docs": docs, **{name: [(name, text)] for name, text in long_documents(docs)}}

    print(f"{'class':<14}{'docs':>5}{'chars':>9}{'ratio mean':>12}{'ratio p50':>11}{'snippets':>10}"
          f"{'ms p50':>9}{'ms p95':>9}{'ms max':>9}{'relocate ms':>13}")
    for label, items in classes.items():
        ratios: list[float] = []
        snippets: list[int] = []
        times: list[float] = []
        relocate_times: list[float] = []
        for _name, text in items:
            for question in QUESTIONS:
                best = float("inf")
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    payload = offline_digest(text, question=question, focus=[], text_key=text_hash(text), limits=limits)
                    best = min(best, time.perf_counter() - t0)
                times.append(best * 1000)
                ratios.append(payload.compression_ratio)
                snippets.append(len(payload.evidence_snippets))
                # A model answer's quotes, re-spaced, go through relocation.
                draft = draft_of(payload)
                for ev in draft.evidence:
                    ev.text = ev.text.replace(" ", "  ")
                t0 = time.perf_counter()
                relocated, dropped = finalize(draft, text, question=question, focus=[], text_key=text_hash(text), limits=limits)
                relocate_times.append((time.perf_counter() - t0) * 1000)
                assert dropped == 0 and len(relocated.evidence_snippets) == len(payload.evidence_snippets)
        chars = statistics.mean(len(t) for _, t in items)
        print(f"{label:<14}{len(items):>5}{chars:>9.0f}{statistics.mean(ratios):>12.3f}{statistics.median(ratios):>11.3f}"
              f"{statistics.mean(snippets):>10.1f}{statistics.median(times):>9.1f}{pct(times, 0.95):>9.1f}"
              f"{max(times):>9.1f}{statistics.median(relocate_times):>13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
