"""`deepresearch check [--offline]`: why a sentence would be kept or removed.

Reads JSON Lines on stdin, each ``{"sentence": "...", "quotes": ["...", ...]}``, and
writes one JSON line per input line, in order: ``{"ok": ..., "level": ..., "reasons":
[...]}``. ``ok`` means the sentence would be kept as a cited sentence resting on those
quotes. The deterministic checks come first (``shared.verification.grounding.check_grounding``);
a sentence they pass that is not itself a quote then goes to the entailment judge
(``shared.verification.judge``) when a model is configured and ``--offline`` is not given: all such
lines together, in batches. The judge can only veto: ``entailed`` raises the level,
any other verdict makes ``ok`` false; a line it could not judge stays ``supported``,
with a reason saying so. A malformed line gets an ``input:`` reason and the command
exits 1 after the rest; otherwise 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from shared.settings import CliSettings

if TYPE_CHECKING:  # imported where used: every other command starts without the checks and the model SDKs
    from shared.verification.judge import Judge

__all__ = ["add_check_command", "check_lines", "cmd_check", "parse_line"]

Result = dict[str, Any]


def parse_line(line: str) -> tuple[str, list[str]] | str:
    """(sentence, quotes) of one input line, or what is wrong with it."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return f"not JSON ({exc})"
    if not isinstance(data, dict):
        return "not a JSON object"
    sentence = data.get("sentence")
    if not isinstance(sentence, str) or not sentence.strip():
        return '"sentence" is missing, empty or not a string'
    quotes = data.get("quotes")
    if not isinstance(quotes, list) or not all(isinstance(q, str) for q in quotes):
        return '"quotes" is missing or not a list of strings'
    return sentence, quotes


def _deterministic(sentence: str, quotes: list[str]) -> Result:
    from shared.verification.grounding import check_grounding

    g = check_grounding(sentence, quotes)
    if not g.ok:
        return {"ok": False, "level": None, "reasons": [f"{g.category or 'grounding'}: {g.reason or 'not grounded'}"]}
    return {"ok": True, "level": g.level or "supported", "reasons": []}


async def _judge(judge: Judge, results: list[Result], pending: list[tuple[int, str, list[str]]]) -> None:
    """Apply the judge's verdicts to the ``pending`` lines' results."""
    from shared.verification.judge import JudgeItem

    outcome = await judge.judge([JudgeItem(sentence, quotes) for _, sentence, quotes in pending])
    for (i, _, _), judgement in zip(pending, outcome.judgements, strict=True):
        result = results[i]
        if judgement is None:
            why = "not judged: the verifier gave no usable verdict for it" if outcome.status == "ran" else outcome.status
            result["reasons"].append(f"judge: {why}")
        elif judgement.verdict == "entailed":
            result["level"] = "entailed"
        else:
            result.update(ok=False, level=None)
            result["reasons"].append(f"judge: {judgement.verdict}: {judgement.reason or 'no reason given'}")


def check_lines(lines: list[str], judge: Judge | None) -> tuple[list[Result], bool]:
    """The result of every non-empty line, and whether every line was well formed."""
    results: list[Result] = []
    pending: list[tuple[int, str, list[str]]] = []
    well_formed = True
    for line in lines:
        if not line.strip():
            continue
        parsed = parse_line(line)
        if isinstance(parsed, str):
            well_formed = False
            results.append({"ok": False, "level": None, "reasons": [f"input: {parsed}"]})
            continue
        sentence, quotes = parsed
        results.append(_deterministic(sentence, quotes))
        if results[-1]["ok"] and results[-1]["level"] != "quoted":
            pending.append((len(results) - 1, sentence, quotes))
    if judge is not None and pending:
        asyncio.run(_judge(judge, results, pending))
    return results, well_formed


def _make_judge(settings: CliSettings) -> tuple[Judge | None, str]:
    """The judge on the configured verifier, its budget RESEARCH_MAX_TOKENS_PER_JOB (no
    job, no ledger); or None and why there is none."""
    from shared.research.envelope import Usage
    from shared.verification.judge import Judge, make_verifier_engine
    from shared.llm.engine import make_engine

    engine = make_engine(settings)
    verifier = make_verifier_engine(settings, engine)
    if verifier is None:
        off = settings.research_verifier_model.strip().lower() == "off"
        return None, "RESEARCH_VERIFIER_MODEL=off" if off else "no model configured"
    return Judge(engine.bind("check", Usage()), verifier), ""


def cmd_check(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    judge = None
    if not args.offline:
        judge, why = _make_judge(CliSettings())
        if judge is None:
            print(f"deepresearch check: {why}: the entailment judge did not run (deterministic checks only)",
                  file=sys.stderr, flush=True)
    results, well_formed = check_lines(stdin.read().splitlines(), judge)
    for result in results:
        stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    stdout.flush()
    return 0 if well_formed else 1


def add_check_command(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser(
        "check", help="check sentences against their quotes (JSON Lines on stdin): would each be kept, and why not",
        description='Reads {"sentence": ..., "quotes": [...]} lines on stdin and writes one '
                    '{"ok": ..., "level": ..., "reasons": [...]} line per input line. Exit 1 when a line was malformed.')
    check.add_argument("--offline", action="store_true",
                       help="deterministic checks only: never ask the entailment judge (no model call)")
    check.set_defaults(func=cmd_check)
