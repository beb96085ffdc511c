"""The quality benchmark's outcomes and what it prints: one question's run and its
scores (:class:`Outcome`), the report of one engine's run, the comparison of two, and
the ``--json`` records. Kept apart from ``bench/quality.py``, which starts the systems
and runs the questions, so that the figures can be computed from saved results alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.jobs import STAGES
from bench.quality_facts import (
    PYTHON,
    SPLITS,
    Question,
    answer_text,
    citations_per_1000_words,
    recalled,
    rejected_count,
    relevance,
    tokens_of,
)


@dataclass
class Outcome:
    """One question's run: its status, result JSON and scores."""

    question: Question
    status: str
    reason: str | None = None
    seconds: float = 0.0
    result: dict = field(default_factory=dict)
    found: list[bool] = field(default_factory=list)
    answering: int = 0  # sentences of the report's body that answer (relevance share)
    sentences: int = 0  # sentences of the report's body

    def score(self) -> None:
        text = answer_text(self.result.get("report") or "")
        self.found = [recalled(text, fact) for fact in self.question.facts]
        self.answering, self.sentences = relevance(self.result, self.question.question)



def _recall(outcomes: list[Outcome]) -> tuple[int, int]:
    return sum(sum(o.found) for o in outcomes), sum(len(o.question.facts) for o in outcomes)


def _relevant(outcomes: list[Outcome]) -> tuple[int, int]:
    """(answering, sentences) pooled over the outcomes: each sentence weighs the same."""
    return sum(o.answering for o in outcomes), sum(o.sentences for o in outcomes)


def _share(got: int, total: int) -> float:
    return got / total if total else 0.0


def split_figures(outcomes: list[Outcome]) -> dict[str, float]:
    """Fact recall, relevance share and tokens per report (completed jobs) of a part."""
    done = [o for o in outcomes if o.status == "COMPLETED"]
    return {"fact_recall": _share(*_recall(outcomes)), "relevance_share": _share(*_relevant(outcomes)),
            "tokens_per_report": _mean([float(tokens_of(o.result)) for o in done])}


def _split_line(label: str, outcomes: list[Outcome]) -> str:
    got, total = _recall(outcomes)
    answering, sentences = _relevant(outcomes)
    tokens = split_figures(outcomes)["tokens_per_report"]
    return (f"{label:<22} fact recall {got}/{total} = {_share(got, total):.2f}   "
            f"relevance share {answering}/{sentences} = {_share(answering, sentences):.2f}   "
            f"tokens per report {tokens:.0f}")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def report(outcomes: list[Outcome], *, corpus_note: str, engine: str, doc_set: str = PYTHON.name) -> str:
    lines = ["deepresearch quality benchmark", "",
             f"set      {doc_set}", f"engine   {engine}", f"corpus   {corpus_note}", f"questions {len(outcomes)}", ""]
    lines.append(f"{'question':<22} {'split':<9} {'status':<9} {'facts':>6} {'claims':>6} {'cit/1kw':>8} "
                 f"{'relevant':>9} {'tokens':>8}")
    for o in outcomes:
        claims = o.result.get("claims") or []
        lines.append(f"{o.question.id:<22} {o.question.split:<9} {o.status:<9} "
                     f"{sum(o.found):>3}/{len(o.found):<2} {len(claims):>6} "
                     f"{citations_per_1000_words(o.result.get('report') or ''):>8.1f} "
                     f"{f'{o.answering}/{o.sentences}':>9} {tokens_of(o.result):>8}")
    lines.append("")
    for split in SPLITS:
        part = [o for o in outcomes if o.question.split == split]
        if part:
            lines.append(_split_line(split, part))
    lines.append(_split_line("all", outcomes))

    done = [o for o in outcomes if o.status == "COMPLETED"]
    lines.append("")
    lines.append(f"claims kept per report      {_mean([len(o.result.get('claims') or []) for o in done]):.1f}")
    rejected = [n for o in done if (n := rejected_count(o.result)) is not None]
    if rejected:
        lines.append(f"claims rejected per report  {_mean(rejected):.1f}")
    else:
        lines.append("claims rejected per report  not reported by this engine")
    lines.append(f"citations per 1,000 words   {_mean([citations_per_1000_words(o.result.get('report') or '') for o in done]):.1f}")
    removed = [o.result["sentences_removed"] for o in done if isinstance(o.result.get("sentences_removed"), int)]
    if removed:
        lines.append(f"sentences removed by verification per report  {_mean(removed):.1f}")
    else:
        lines.append("sentences removed by verification  not reported by this engine")

    lines += ["", "tokens per report by stage (mean input / output / calls)"]
    for stage in STAGES:
        usage = [((o.result.get("usage") or o.result.get("tokenUsage") or {}).get("by_stage") or {}).get(stage) or {}
                 for o in done]
        lines.append(f"  {stage:<11} {_mean([u.get('input_tokens', 0) for u in usage]):>9.0f} "
                     f"{_mean([u.get('output_tokens', 0) for u in usage]):>9.0f} "
                     f"{_mean([u.get('calls', 0) for u in usage]):>6.1f}")

    tuning_misses = [(o.question.id, [p.pattern for p in fact])
                     for o in outcomes if o.question.split == "tuning"
                     for fact, hit in zip(o.question.facts, o.found, strict=True) if not hit]
    if tuning_misses:
        lines += ["", "missed facts (tuning part only; the held-out part is never shown)"]
        lines += [f"  {qid}: {patterns}" for qid, patterns in tuning_misses]
    problems = [o for o in outcomes if o.status != "COMPLETED"]
    if problems:
        lines += ["", "jobs that did not complete"]
        lines += [f"  {o.question.id}: {o.status} {o.reason or ''}" for o in problems]
    return "\n".join(lines)


# -- comparing modes -------------------------------------------------------------------------


def figures(outcomes: list[Outcome]) -> dict[str, float]:
    """The per-report means of one mode (completed jobs), and its fact recall."""
    done = [o for o in outcomes if o.status == "COMPLETED"]
    got, total = _recall(outcomes)
    out = {"fact recall": got / total if total else 0.0,
           "relevance share": _share(*_relevant(outcomes)),
           "tokens per report": _mean([float(tokens_of(o.result)) for o in done]),
           "claims kept": _mean([len(o.result.get("claims") or []) for o in done]),
           "claims rejected": _mean([rejected_count(o.result) or 0 for o in done]),
           "sentences removed": _mean([o.result.get("sentences_removed") or 0 for o in done]),
           "citations per 1,000 words": _mean([citations_per_1000_words(o.result.get("report") or "") for o in done])}
    for stage in STAGES:
        usage = [((o.result.get("usage") or {}).get("by_stage") or {}).get(stage) or {} for o in done]
        out[f"tokens, {stage}"] = _mean([u.get("input_tokens", 0) + u.get("output_tokens", 0) for u in usage])
    return out


def compare(runs: list[tuple[str, list[Outcome]]]) -> str:
    """One line per figure, one column per mode."""
    table = [(engine, figures(outcomes)) for engine, outcomes in runs]
    lines = ["modes compared (means per report; tokens = input + output)",
             f"  {'':<27}" + "".join(f"{engine:>12}" for engine, _ in table)]
    for name in table[0][1]:
        fmt = ("{:>12.2f}" if name in ("fact recall", "relevance share")
               else "{:>12.0f}" if name.startswith("tokens") else "{:>12.1f}")
        lines.append(f"  {name:<27}" + "".join(fmt.format(values[name]) for _, values in table))
    return "\n".join(lines)


def json_records(runs: list[tuple[str, list[Outcome]]], doc_set: str) -> list[dict]:
    """What ``--json`` writes: one record per (engine, question), in run order, with
    its scores and result; ``split_figures`` repeats, in every record, the figures of
    its engine's part (fact recall, relevance share, tokens per report) as printed."""
    records = []
    for engine, outcomes in runs:
        parts = {split: split_figures([o for o in outcomes if o.question.split == split]) for split in SPLITS}
        for o in outcomes:
            records.append({
                "engine": engine, "set": doc_set, "id": o.question.id, "split": o.question.split,
                "status": o.status, "reason": o.reason, "found": o.found,
                "relevance": {"answering": o.answering, "sentences": o.sentences,
                              "share": _share(o.answering, o.sentences)},
                "tokens": tokens_of(o.result), "split_figures": parts[o.question.split], "result": o.result})
    return records


