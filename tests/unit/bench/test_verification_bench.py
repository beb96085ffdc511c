"""bench/verification.py: the labelled pairs it ships, and the rates it computes."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("bench_verification", ROOT / "bench" / "verification.py")
assert _spec is not None and _spec.loader is not None
verification = importlib.util.module_from_spec(_spec)
sys.modules["bench_verification"] = verification
_spec.loader.exec_module(verification)

Pair, Verdict = verification.Pair, verification.Verdict
FIELDS = {"id", "split", "category", "label", "sentence", "quotes"}


def test_every_line_of_the_dataset_is_a_well_formed_pair() -> None:
    lines = [line for path in verification.PAIRS_FILES
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [json.loads(line) for line in lines]
    for row in rows:
        assert FIELDS <= set(row) <= FIELDS | {"note"}, row.get("id")
        assert row["split"] in verification.SPLITS
        if row["label"] == "reject":
            assert row["category"] in verification.REJECT_CATEGORIES, row["id"]
        else:
            assert row["label"] == "keep" and row["category"] in verification.KEEP_CATEGORIES, row["id"]
        assert isinstance(row["sentence"], str) and row["sentence"].strip()
        assert isinstance(row["quotes"], list) and row["quotes"]
        assert all(isinstance(q, str) and q.strip() for q in row["quotes"])
    assert len({row["id"] for row in rows}) == len(rows)
    assert len(verification.load_pairs()) == len(rows)


def test_the_dataset_covers_every_category_in_both_splits() -> None:
    pairs = verification.load_pairs()
    counts = Counter(p.category for p in pairs)
    assert len(pairs) >= 360
    assert all(counts[c] >= 25 for c in verification.REJECT_CATEGORIES), counts
    assert sum(counts[c] for c in verification.KEEP_CATEGORIES) >= 100
    for category in (*verification.REJECT_CATEGORIES, *verification.KEEP_CATEGORIES):
        members = [p for p in pairs if p.category == category]
        assert {p.split for p in members} == {"dev", "held"}, category
        for batch in {p.batch for p in members}:
            # the fixed rule: every third pair of a category, in its file's order, is held out
            # (a batch written after the tuning is held out whole, or given to tuning whole)
            mine = [p.split for p in members if p.batch == batch]
            assert mine in (["held" if i % 3 == 2 else "dev" for i in range(len(mine))], ["held"] * len(mine),
                            ["dev"] * len(mine))


def test_merge_pairs_and_false_sentences_differ_from_their_quotes() -> None:
    for p in verification.load_pairs():
        if p.category == "merge":
            assert len(p.quotes) >= 2, p.id  # a merge joins two quotes or more
        if p.label == "reject":
            assert all(" ".join(p.sentence.split()) != " ".join(q.split()) for q in p.quotes), p.id


def _pair(n: int, category: str, label: str, sentence: str, split: str = "held") -> Pair:
    return Pair(f"t-{n}", split, category, label, sentence, (f"quote of {sentence}",))


TINY = [
    _pair(1, "negation", "reject", "kept one"),
    _pair(2, "negation", "reject", "dropped"),
    _pair(3, "number", "reject", "dropped"),
    _pair(4, "number", "reject", "dropped"),
    _pair(5, "quoted", "keep", "kept quoted"),
    _pair(6, "paraphrase", "keep", "dropped"),
    _pair(7, "paraphrase", "keep", "kept two"),
    _pair(8, "derived", "keep", "dropped"),
]


def stub(sentence: str, _quotes: list[str]) -> Verdict:
    """Keeps sentences that say "kept"; "quoted" ones at the quoted level."""
    if sentence.startswith("kept"):
        return Verdict(True, None, "quoted" if "quoted" in sentence else "supported")
    return Verdict(False, "number" if sentence == "dropped" else None)


def test_summarise_counts_false_accepts_false_rejects_and_failure_categories() -> None:
    s = verification.summarise(TINY, stub)
    cats = s["by_category"]
    assert s["pairs"] == 8
    assert (cats["negation"]["n"], cats["negation"]["wrong"], cats["negation"]["rate"]) == (2, 1, 0.5)
    assert cats["number"]["rate"] == 0.0
    assert cats["paraphrase"]["rate"] == 0.5 and cats["quoted"]["rate"] == 0.0
    assert cats["derived"]["rate"] == 1.0
    assert s["false_accept"] == pytest.approx(1 / 4)
    assert s["false_reject"] == pytest.approx(1 / 3)  # quoted + paraphrase + summary; derived apart
    assert s["confusion"]["negation"] == {"kept": 1, "number": 1}
    assert s["confusion"]["number"] == {"number": 2}


def test_the_fake_judges_can_veto_but_never_rescue() -> None:
    approve = verification.summarise(TINY, verification.with_judge(stub, verification.approve_all))
    veto = verification.summarise(TINY, verification.with_judge(stub, verification.veto_all))
    plain = verification.summarise(TINY, stub)
    assert approve["false_accept"] == plain["false_accept"]
    assert approve["false_reject"] == plain["false_reject"]
    assert veto["false_accept"] == 0.0
    assert veto["false_reject"] == pytest.approx(2 / 3)  # only the quoted sentence survives
    assert veto["confusion"]["paraphrase"] == {"number": 1, "judge": 1}


def test_targets_and_the_evaluation_of_the_held_split() -> None:
    figures = verification.evaluate(TINY, ("held",), check=stub, baseline=stub)
    met = {t["name"]: t["met"] for t in figures["targets"]}
    assert met["false sentences kept, number"] is True
    assert met["false sentences kept, negation"] is False
    assert met["false sentences kept, quantifier"] is False  # no pairs: not met
    assert met["faithful sentences rejected"] is False
    assert figures["judge"]["held"]["veto_all"]["false_accept"] == 0.0
    assert "dev" not in figures["splits"]
    assert "MISS" in verification.report(figures) and "PASS" in verification.report(figures)


def test_the_overlap_baseline_counts_content_words() -> None:
    quote = ["The garbage collector removes unreachable objects from the heap."]
    assert verification.overlap_baseline("The garbage collector removes objects.", quote).ok
    assert not verification.overlap_baseline("Reference counting frees cyclic structures promptly.", quote).ok
