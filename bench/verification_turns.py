"""Turned corpus sentences: how many does the grounding check keep?

A second, larger and machine-made measure beside ``bench/verification.py``: every
statement sentence of a corpus (default ``samples/corpus``) is turned the way the
adversarial report writers of the test suite turn claims
(``tests.fakes.turning_writer.turn``: a negation inserted or removed, a quantifier or
frequency made universal, a directional word reversed or a comparison added, a figure
changed), and checked against the sentence it came from as its only quote. Every turned
sentence is false, so every one kept is a false accept. The untouched sentences are
checked too (each must come back ``quoted``), as a control.

Last, merges (``tests.fakes.turning_writer.merge``): the subject of one sentence with the
predicate of one of the next five, checked against both. Most are false, but not every
one (two sentences may say their predicates of the same thing), so the share kept is
an upper bound on false accepts of this kind.

    python bench/verification_turns.py
    python bench/verification_turns.py --corpus path/to/docs --show 5 --json

Takes a few seconds on 2 CPUs for the sample corpus (some 3,000 turned sentences).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # noqa: E402 - run as a script from anywhere

from shared.verification.grounding import check_grounding  # noqa: E402
from shared.research.text import canonicalize, is_statement, sentence_spans  # noqa: E402
from tests.fakes.turning_writer import merge, turn  # noqa: E402

KINDS = ("negation", "quantifier", "comparative", "number")
MAX_CHARS = 400  # as a claim's quote
MERGE_SPAN = 5  # a sentence's predicate is grafted onto each of the five before it


def sentences(corpus: Path) -> list[str]:
    """The corpus's statement sentences of at most MAX_CHARS, in file order."""
    out: list[str] = []
    for path in sorted(p for p in corpus.rglob("*") if p.suffix in (".md", ".txt")):
        text = canonicalize(path.read_text(encoding="utf-8", errors="replace"))
        out += [text[a:b] for a, b in sentence_spans(text) if is_statement(text[a:b]) and b - a <= MAX_CHARS]
    return out


def measure(sents: list[str], show: int) -> dict[str, object]:
    figures: dict[str, object] = {"sentences": len(sents),
                                  "control_quoted": sum(check_grounding(s, [s]).level == "quoted" for s in sents)}
    for kind in KINDS:
        turned = [(w, s) for i, s in enumerate(sents) if (w := turn(kind, s, i)) is not None and w != s]
        kept = [(w, s) for w, s in turned if check_grounding(w, [s]).ok]
        figures[kind] = {"turned": len(turned), "kept": len(kept),
                         "share_kept": len(kept) / len(turned) if turned else 0.0,
                         "examples": [{"sentence": w, "quote": s} for w, s in kept[:show]]}
    merged = [(m, a, b) for i, a in enumerate(sents) for b in sents[i + 1:i + 1 + MERGE_SPAN]
              if (m := merge(a, b)) is not None]
    kept_merges = [(m, a, b) for m, a, b in merged if check_grounding(m, [a, b]).ok]
    figures["merge"] = {"turned": len(merged), "kept": len(kept_merges),
                        "share_kept": len(kept_merges) / len(merged) if merged else 0.0,
                        "examples": [{"sentence": m, "quote": f"{a} | {b}"} for m, a, b in kept_merges[:show]]}
    return figures


def report(figures: dict[str, object]) -> str:
    lines = [f"sentences {figures['sentences']}, of which checked as quoted against themselves "
             f"{figures['control_quoted']}", "", f"{'turn':<12} {'turned':>7} {'kept':>5} {'kept %':>7}"]
    for kind in (*KINDS, "merge"):
        f = figures[kind]
        assert isinstance(f, dict)
        lines.append(f"{kind:<12} {f['turned']:>7} {f['kept']:>5} {100 * f['share_kept']:>6.1f}%")
        lines += [f"    kept: {e['sentence']}\n    from: {e['quote']}" for e in f["examples"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[1] / "samples" / "corpus")
    p.add_argument("--show", type=int, default=3, help="kept examples printed per kind")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    figures = measure(sentences(args.corpus), args.show)
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
