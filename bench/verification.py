"""Verification benchmark: does the grounding check keep faithful sentences and drop false ones?

The engine keeps a model-written sentence (or claim) only if it rests on the source
quotes it cites. ``bench/data/verification_pairs.jsonl`` holds labelled pairs of a
sentence and its quotes, written before the meaning checks were tuned:

- false sentences (label "reject"), by the way they turn the quote's meaning:
  negation, quantifier, modality, comparative, role, number, merge, scope, unsupported;
- faithful sentences (label "keep"): quoted, paraphrase, summary, and derived (figures
  a careful writer would derive, "more than 1,000" from "1,214"; their rejection is a
  cost, not a target).

Each pair says its split: "held" (for measuring only) or "dev" (for tuning). In the
first two batches the third, sixth, ninth... pair of each category (in file order) is
held; the third to thirty-second batches are all dev, the thirty-third all held (see ``PAIRS_FILES``).

Figures, per split: for each false category the share kept (false accepts), for each
faithful category the share rejected (false rejects), overall rates, and the failure
categories the check gave per true category. Then the veto-only judge path, simulated
with two adversarial fake judges: a sentence is kept iff the check keeps it AND (its
level is "quoted" OR the judge says "entailed"); ``approve_all`` can never rescue a
false sentence (it must equal the check's false accepts), ``veto_all`` keeps only
quoted ones. Last, the ratio reference: a plain rule keeping a sentence when >= 60% of
its content words occur in the quotes.

Targets, on the held split: false sentences kept <= 15% overall and <= 10% in each of
negation, quantifier, comparative and number; faithful (quoted, paraphrase, summary)
rejected <= 15%. Exits 0 when every target is met or none was checked, 1 otherwise.

    python bench/verification.py                 # both splits, targets on held
    python bench/verification.py --split dev     # tuning part only, no targets
    python bench/verification.py --json          # the figures as JSON
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/verification.py` from a checkout
    sys.path.insert(0, str(ROOT))

# Thirty-three batches, each written before any tuning on it: the first with the meaning checks;
# the second later, by an author who never saw the checks (its held part measures how
# the checks meet wording they were not written against); the third to eighth by other
# such authors, each held out whole until its figures had been measured once or a few
# times, then given to tuning whole (the ninth, by an eighth such author, was measured
# once, at the end of the round of changes made while it was held out; the tenth, by a
# ninth, measured twice while held out, with the round's starting and a later code); the
# eleventh by a tenth such author, measured once at the end of its round; the twelfth by
# an eleventh, measured twice while held out (with its round's starting and final code);
# the thirteenth to thirty-second by a twelfth to thirty-first such author, each measured
# the same way; the thirty-third by a thirty-second such author, held out whole.
PAIRS_FILES = (ROOT / "bench" / "data" / "verification_pairs.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b2.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b3.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b4.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b5.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b6.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b7.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b8.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b9.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b10.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b11.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b12.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b13.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b14.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b15.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b16.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b17.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b18.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b19.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b20.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b21.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b22.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b23.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b24.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b25.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b26.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b27.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b28.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b29.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b30.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b31.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b32.jsonl",
               ROOT / "bench" / "data" / "verification_pairs_b33.jsonl")
SPLITS = ("dev", "held")
REJECT_CATEGORIES = ("negation", "quantifier", "modality", "comparative", "role", "number", "merge", "scope",
                     "unsupported")
KEEP_CATEGORIES = ("quoted", "paraphrase", "summary", "derived")
FAITHFUL = ("quoted", "paraphrase", "summary")  # the false-reject target; "derived" is reported apart
STRICT = ("negation", "quantifier", "comparative", "number")
MAX_FALSE_ACCEPT, MAX_FALSE_ACCEPT_STRICT, MAX_FALSE_REJECT = 0.15, 0.10, 0.15
BASELINE_SHARE = 0.6


@dataclass(frozen=True)
class Pair:
    """One labelled sentence and the quotes it cites."""

    id: str
    split: str
    category: str
    label: str
    sentence: str
    quotes: tuple[str, ...]
    note: str = ""
    batch: str = ""  # the file it comes from


@dataclass(frozen=True)
class Verdict:
    """What a check says of one sentence: kept or not, why not, and how it rests."""

    ok: bool
    category: str | None = None
    level: str | None = None


Checker = Callable[[str, list[str]], Verdict]
Judge = Callable[[str, list[str]], str]


def load_pairs(paths: Path | tuple[Path, ...] = PAIRS_FILES) -> list[Pair]:
    """The pairs of JSONL files, in file order."""
    pairs = []
    for path in (paths,) if isinstance(paths, Path) else paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                pairs.append(Pair(row["id"], row["split"], row["category"], row["label"], row["sentence"],
                                  tuple(row["quotes"]), row.get("note", ""), path.stem))
    return pairs


# -- checkers ---------------------------------------------------------------------------


def deterministic(sentence: str, quotes: list[str]) -> Verdict:
    """The engine's grounding check (imported here, so the bench loads without it)."""
    from shared.verification.grounding import check_grounding

    g = check_grounding(sentence, quotes)
    return Verdict(bool(g.ok), getattr(g, "category", None), getattr(g, "level", None))


def overlap_baseline(sentence: str, quotes: list[str]) -> Verdict:
    """Kept when at least 60% of the sentence's content words occur in the quotes."""
    from shared.research.text import terms

    words, known = terms(sentence), {t for q in quotes for t in terms(q)}
    share = sum(w in known for w in words) / len(words) if words else 0.0
    return Verdict(share >= BASELINE_SHARE, None if share >= BASELINE_SHARE else "overlap")


def approve_all(_sentence: str, _quotes: list[str]) -> str:
    """A fake judge that finds every sentence entailed."""
    return "entailed"


def veto_all(_sentence: str, _quotes: list[str]) -> str:
    """A fake judge that finds no sentence supported."""
    return "not_supported"


def with_judge(check: Checker, judge: Judge) -> Checker:
    """The veto-only rule: kept iff the check keeps it and (it is quoted or the judge entails it)."""

    def judged(sentence: str, quotes: list[str]) -> Verdict:
        v = check(sentence, quotes)
        if not v.ok or v.level == "quoted" or judge(sentence, quotes) == "entailed":
            return v
        return Verdict(False, "judge", v.level)

    return judged


# -- figures ----------------------------------------------------------------------------


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def summarise(pairs: list[Pair], check: Checker) -> dict:
    """Run ``check`` on every pair; figures per category, overall rates and a confusion table.

    ``by_category[c]`` is {n, wrong, rate}: for a false category the sentences kept,
    for a faithful one those rejected. ``false_accept`` is over all false sentences,
    ``false_reject`` over the faithful categories (quoted, paraphrase, summary).
    ``confusion[c]`` counts the failure categories the check gave (kept as "kept").
    """
    by_category: dict[str, dict] = {}
    confusion: dict[str, Counter[str]] = {}
    for pair in pairs:
        v = check(pair.sentence, list(pair.quotes))
        wrong = v.ok if pair.label == "reject" else not v.ok
        row = by_category.setdefault(pair.category, {"label": pair.label, "n": 0, "wrong": 0})
        row["n"] += 1
        row["wrong"] += int(wrong)
        confusion.setdefault(pair.category, Counter())["kept" if v.ok else (v.category or "none")] += 1
    for row in by_category.values():
        row["rate"] = _rate(row["wrong"], row["n"])

    def total(cats: tuple[str, ...], key: str) -> int:
        return sum(by_category[c][key] for c in cats if c in by_category)

    return {"pairs": len(pairs), "by_category": by_category,
            "false_accept": _rate(total(REJECT_CATEGORIES, "wrong"), total(REJECT_CATEGORIES, "n")),
            "false_reject": _rate(total(FAITHFUL, "wrong"), total(FAITHFUL, "n")),
            "confusion": {c: dict(counts.most_common()) for c, counts in confusion.items()}}


def targets(held: dict) -> list[tuple[str, float | None, float, bool]]:
    """(name, value, limit, met) for each target, from the held split's summary."""
    cats = held["by_category"]
    rows = [("false sentences kept, overall", held["false_accept"], MAX_FALSE_ACCEPT)]
    rows += [(f"false sentences kept, {c}", cats.get(c, {}).get("rate"), MAX_FALSE_ACCEPT_STRICT) for c in STRICT]
    rows.append(("faithful sentences rejected", held["false_reject"], MAX_FALSE_REJECT))
    return [(name, value, limit, value is not None and value <= limit) for name, value, limit in rows]


def evaluate(pairs: list[Pair], splits: tuple[str, ...], check: Checker = deterministic,
             baseline: Checker = overlap_baseline) -> dict:
    """Every figure of the bench for the given splits."""
    out: dict = {"splits": {}, "judge": {}, "baseline": {}}
    for split in splits:
        part = [p for p in pairs if p.split == split]
        out["splits"][split] = summarise(part, check)
        out["splits"][split]["batches"] = {
            batch: {k: s[k] for k in ("pairs", "false_accept", "false_reject")}
            for batch in dict.fromkeys(p.batch for p in part)
            for s in [summarise([p for p in part if p.batch == batch], check)]}
        out["judge"][split] = {name: {k: s[k] for k in ("false_accept", "false_reject")}
                               for name, judge in (("approve_all", approve_all), ("veto_all", veto_all))
                               for s in [summarise(part, with_judge(check, judge))]}
        b = summarise(part, baseline)
        out["baseline"][split] = {"false_accept": b["false_accept"], "false_reject": b["false_reject"]}
    if "held" in splits:
        out["targets"] = [{"name": n, "value": v, "limit": lim, "met": met}
                          for n, v, lim, met in targets(out["splits"]["held"])]
    return out


# -- the report ---------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "   n/a" if value is None else f"{100 * value:5.1f}%"


def report(figures: dict) -> str:
    """The figures as readable tables."""
    lines = ["deepresearch verification benchmark", ""]
    if "synonyms" in figures:
        lines += [f"synonyms: {figures['synonyms']}", ""]
    for split, s in figures["splits"].items():
        lines += [f"split {split} ({s['pairs']} pairs)",
                  f"  {'category':<13} {'label':<7} {'n':>4} {'wrong':>6} {'rate':>7}   failure categories given"]
        for cat in (*REJECT_CATEGORIES, *KEEP_CATEGORIES):
            row = s["by_category"].get(cat)
            if row:
                given = ", ".join(f"{k} {n}" for k, n in s["confusion"][cat].items())
                lines.append(f"  {cat:<13} {row['label']:<7} {row['n']:>4} {row['wrong']:>6} {_pct(row['rate']):>7}"
                             f"   {given}")
        judge, base = figures["judge"][split], figures["baseline"][split]
        lines += [f"  false accepts (false sentences kept)     {_pct(s['false_accept'])}",
                  f"  false rejects (faithful, not derived)    {_pct(s['false_reject'])}"]
        lines += [f"    batch {name:<24} {b['pairs']:>4} pairs: accepts {_pct(b['false_accept'])}, "
                  f"rejects {_pct(b['false_reject'])}" for name, b in s.get("batches", {}).items()]
        lines += [
                  f"  judge approve_all: accepts {_pct(judge['approve_all']['false_accept'])}, "
                  f"rejects {_pct(judge['approve_all']['false_reject'])}",
                  f"  judge veto_all:    accepts {_pct(judge['veto_all']['false_accept'])}, "
                  f"rejects {_pct(judge['veto_all']['false_reject'])}",
                  f"  baseline (>= {BASELINE_SHARE:.0%} content words in quotes): accepts "
                  f"{_pct(base['false_accept'])}, rejects {_pct(base['false_reject'])}", ""]
    if "targets" in figures:
        lines.append("targets (held split)")
        lines += [f"  {'PASS' if t['met'] else 'MISS'}  {t['name']:<36} {_pct(t['value'])} (limit {_pct(t['limit'])})"
                  for t in figures["targets"]]
    else:
        lines.append("targets: checked on the held split only (--split held or all)")
    return "\n".join(lines)


def _synonyms() -> str:
    """Where the checks found WordNet, or that they had no synonyms (their figures differ)."""
    from shared.verification import synonyms

    return f"WordNet at {synonyms.wordnet_dir()}" if synonyms.available() else \
        f"none (WordNet not found at {synonyms.wordnet_dir()}: apt-get install wordnet-base)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="which part of the pairs to run")
    p.add_argument("--pairs", type=Path, nargs="+", default=list(PAIRS_FILES), help="labelled pairs (JSONL files)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead of tables")
    args = p.parse_args(argv)
    splits = SPLITS if args.split == "all" else (args.split,)
    figures = evaluate(load_pairs(tuple(args.pairs)), splits)
    figures["synonyms"] = _synonyms()
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    return 0 if all(t["met"] for t in figures.get("targets", [])) else 1


if __name__ == "__main__":
    sys.exit(main())
