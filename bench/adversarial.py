"""Adversarial benchmark: what the verification removes from whole research jobs
whose report is written by a hostile model, and what the entailment judge costs.

Starts a system of its own in a temporary folder (nats-server, PostgreSQL, the
gateway and the five stages, as ``bench/quality.py`` does) over ``samples/corpus``,
every stage calling a model through the real ``anthropic`` SDK pointed at a loopback
fake of the Messages API served from this process. The models are fakes: the
scoring tools are answered by ``tests.fakes.report_writer.ReportWriter`` (one claim
per snippet, its text the snippet's own), the report by one writer of
``tests.fakes.turning_writer`` and the judge by one fake judge. Token counts are the
fake's accounting (about 4 characters a token), not a real model's.

Writers: ``careful`` (ReportWriter: each claim's own text), the four
``MeaningTurner`` kinds (``negation``, ``quantifier``, ``comparative``, ``number``:
real claims turned, citing them, plus a faithful sentence and a faithful paraphrase
per part), ``merger`` (one claim's subject with another's predicate) and
``connector`` (uncited claims about the sources, links and HTML, repeats); each
report's sentences laid out in as many paragraphs as the ``write_report`` schema
allows (:func:`within_schema`), so that no writer's report is refused as invalid
and written offline instead. Judges:
``off`` (RESEARCH_VERIFIER_MODEL=off), ``approve_all`` and ``veto_all`` (the job's own
model, i.e. the fake, answering ``record_judgements``). By default every writer runs
without a judge, and ``careful`` and ``negation`` with each judge; ``--all`` runs every
pair. The judge setting is read at start-up, so there is one system per setting
(``off``, model); the writer and judge are switched between jobs on the same fake.

Each pair runs every question, one job at a time, with reuse of earlier research
off. Per pair it prints: jobs completed, sentences removed by reason and kept by
level (summed over the questions), the report judge's status and tokens per report
(the result's ``verification.judge_tokens``: synthesis only), the job's tokens per
report (all stages), the judge's share of them, and every ``record_judgements`` call
per report as the fake counted it (the scoring stage's judge of claims included).

Takes about a minute on 2 cores with the default plan and 2 questions (22 jobs). Exits 0
when every job completed, 1 when one did not, 2 when a system did not start.

    python bench/adversarial.py                      # default plan, 2 questions
    python bench/adversarial.py --all                # every writer with every judge
    python bench/adversarial.py --writers negation --judges off,veto_all
    python bench/adversarial.py --json               # the figures as JSON
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/adversarial.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.jobs import SAMPLE_CORPUS, SAMPLE_CORPUS_NAME, remove_unless_kept  # noqa: E402
from bench.jobs import headers  # noqa: E402
from bench.quality import FAKE_TOKEN_BUDGET, _offline, run_question  # noqa: E402
from bench.quality_report import _mean  # noqa: E402
from shared.verification.judge import JUDGE_TOOL  # noqa: E402
from tests.fakes.anthropic import AnthropicFake  # noqa: E402
from tests.fakes.llm import RecordedRequest, Step, ToolCall  # noqa: E402
from tests.fakes.report_writer import ReportWriter  # noqa: E402
from tests.fakes.turning_writer import (  # noqa: E402
    Connector, MeaningTurner, Merger, approve_all_judge, routed, veto_all_judge,
)

Responder = Callable[[RecordedRequest], Step]
QUESTIONS = ("What are the trade-offs between threads and processes?",
             "How do garbage collection pauses affect latency in concurrent servers?")
WRITERS: dict[str, Callable[[], Responder]] = {
    "careful": ReportWriter,
    **{kind: partial(MeaningTurner, kind, paraphrase=True)
       for kind in ("negation", "quantifier", "comparative", "number")},
    "merger": Merger,
    "connector": Connector,
}
JUDGES: dict[str, Callable[[], Responder] | None] = {"off": None, "approve_all": approve_all_judge,
                                                     "veto_all": veto_all_judge}
# RESEARCH_VERIFIER_MODEL per judge: "off", or empty (the job's own model: the fake).
VERIFIER = {"off": "off", "approve_all": "", "veto_all": ""}
DEFAULT_JUDGED = ("careful", "negation")  # the writers also run with each judge by default


@dataclass
class Run:
    """One (writer, judge) pair over the questions: what each job's result said."""

    writer: str
    judge: str
    statuses: list[str] = field(default_factory=list)
    removed: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    judge_status: Counter[str] = field(default_factory=Counter)
    judge_tokens: list[int] = field(default_factory=list)  # verification.judge_tokens, per completed job
    job_tokens: list[int] = field(default_factory=list)
    job_cost: list[float] = field(default_factory=list)  # USD at the default prices (the fake's model as Sonnet)
    all_judge_tokens: list[int] = field(default_factory=list)  # every record_judgements call, the fake's count

    @property
    def completed(self) -> int:
        return self.statuses.count("COMPLETED")

    def add(self, status: str, result: dict[str, Any], calls: list[RecordedRequest]) -> None:
        self.statuses.append(status)
        if status != "COMPLETED":
            return
        v = result.get("verification") or {}
        self.removed.update(v.get("sentences_removed") or {})
        self.kept.update(v.get("sentences") or {})
        self.judge_status[str(v.get("judge", "?"))] += 1
        self.judge_tokens.append(int(v.get("judge_tokens") or 0))
        by_stage = (result.get("usage") or {}).get("by_stage") or {}
        self.job_tokens.append(sum(u.get("input_tokens", 0) + u.get("output_tokens", 0) for u in by_stage.values()))
        self.job_cost.append(sum(float(u.get("cost_usd") or 0) for u in by_stage.values()))
        judged = [r for r in calls if r.forced_tool == JUDGE_TOOL]
        self.all_judge_tokens.append(sum(r.input_tokens + r.output_tokens for r in judged))

    def figures(self) -> dict[str, Any]:
        job = _mean([float(t) for t in self.job_tokens])
        judge = _mean([float(t) for t in self.judge_tokens])
        return {"writer": self.writer, "judge": self.judge, "jobs": len(self.statuses), "completed": self.completed,
                "sentences_removed": dict(self.removed.most_common()), "sentences_kept": dict(self.kept.most_common()),
                "judge_status": dict(self.judge_status), "judge_tokens_per_report": judge,
                "job_tokens_per_report": job, "judge_share": judge / job if job else 0.0,
                "cost_usd_per_report": _mean(self.job_cost),
                "all_judge_tokens_per_report": _mean([float(t) for t in self.all_judge_tokens])}


def _paragraphs(paragraphs: list[dict[str, Any]], size: int, most: int) -> list[dict[str, Any]]:
    sentences = [s for p in paragraphs for s in p["sentences"]]
    return [{"sentences": sentences[k:k + size]} for k in range(0, len(sentences), size)][:most]


def within_schema(writer: Responder) -> Responder:
    """``writer`` with its report's sentences laid out in paragraphs the tool's schema
    allows: the turning writers put every claim in one summary paragraph, over the
    sample corpus more sentences than a paragraph may hold, and the stage would write
    the report offline after a second invalid answer (a model that keeps to the
    schema, but not to the quotes)."""
    def respond(request: RecordedRequest) -> Step:
        step = writer(request)
        schema = request.tool_schema or {}
        if request.forced_tool != "write_report" or not isinstance(step, ToolCall) or "$defs" not in schema:
            return step
        size = schema["$defs"]["DraftParagraph"]["properties"]["sentences"]["maxItems"]
        draft = step.input
        draft["executive_summary"] = _paragraphs(draft["executive_summary"], size,
                                                 schema["properties"]["executive_summary"]["maxItems"])
        for section in draft["sections"]:
            section["paragraphs"] = _paragraphs(section["paragraphs"], size,
                                                schema["$defs"]["DraftSection"]["properties"]["paragraphs"]["maxItems"])
        return step
    return respond


def plan(writers: list[str], judges: list[str], every: bool) -> list[tuple[str, str]]:
    """The (writer, judge) pairs to run: every writer without a judge, the
    ``DEFAULT_JUDGED`` ones with each judge too (or every pair with ``every``)."""
    return [(w, j) for j in judges for w in writers if every or j == "off" or w in DEFAULT_JUDGED]


# -- running --------------------------------------------------------------------------------


async def run_pairs(url: str, fake: AnthropicFake, runs: list[Run], questions: list[str], timeout_s: float) -> None:
    """Every pair's questions on the system at ``url``, one job at a time, each with a
    fresh writer and judge behind the fake."""
    async with httpx.AsyncClient(base_url=url, headers=headers(), timeout=30) as client:
        for run in runs:
            for question in questions:
                writer, judge = within_schema(WRITERS[run.writer]()), JUDGES[run.judge]
                fake.responder = routed(writer, judge() if judge else None, ReportWriter())
                before = len(fake.delivered)
                status, reason, result = await run_question(client, question, [SAMPLE_CORPUS_NAME],
                                                            timeout_s=timeout_s)
                run.add(status, result, fake.delivered[before:])
                print(f"  {run.writer:<11} {run.judge:<11} {status:<9} removed "
                      f"{sum((result.get('verification') or {}).get('sentences_removed', {}).values())}"
                      f"{'' if reason is None else ' ' + reason}", file=sys.stderr, flush=True)


def run_system(verifier: str, runs: list[Run], questions: list[str], fake: AnthropicFake,
               args: argparse.Namespace) -> int:
    """One system with RESEARCH_VERIFIER_MODEL=``verifier`` for ``runs``: 0 when every
    job completed, 1 when one did not, 2 when the system did not start."""
    from services.retrieval.index import index_corpus
    from services.cli.supervisor import running_system
    from shared.platform.errors import ResearchError

    label = verifier or "model"
    data_dir = Path(tempfile.mkdtemp(prefix=f"deepresearch-adversarial-{label}-"))
    os.environ.update({"RESEARCH_DATA_DIR": str(data_dir), "RESEARCH_VERIFIER_MODEL": verifier})
    ok = False
    try:
        stats = index_corpus(SAMPLE_CORPUS, name=SAMPLE_CORPUS_NAME, corpora_dir=data_dir / "corpora")
        print(f"[judge {label}] indexed {stats.files_indexed} sample documents ({stats.chunks} chunks); "
              "starting the system...", file=sys.stderr, flush=True)
        with running_system(data_dir=data_dir, nats_url=None, database_url=None, quiet=True) as system:
            asyncio.run(run_pairs(system.url, fake, runs, questions, args.timeout))
        ok = all(r.completed == len(r.statuses) for r in runs)
        return 0 if ok else 1
    except (RuntimeError, ResearchError, OSError) as exc:  # a server or service did not start
        print(f"adversarial: [judge {label}] {exc}", file=sys.stderr)
        return 2
    finally:
        remove_unless_kept(data_dir, ok=ok, keep=args.keep_data)


# -- the report ------------------------------------------------------------------------------


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in counts.items()) or "none"


def report(figures: list[dict[str, Any]], questions: list[str]) -> str:
    lines = ["deepresearch adversarial benchmark (fake models; tokens are the fake's count)", "",
             f"corpus    {SAMPLE_CORPUS.relative_to(ROOT)}", f"questions {len(questions)}",
             *(f"  - {q}" for q in questions), "",
             f"{'writer':<11} {'judge':<11} {'jobs':>5} {'removed':>8} {'kept':>5} "
             f"{'judge tok':>10} {'job tok':>9} {'judge %':>8} {'all judge tok':>14} {'cost':>8}"]
    for f in figures:
        lines.append(f"{f['writer']:<11} {f['judge']:<11} {f['completed']:>2}/{f['jobs']:<2} "
                     f"{sum(f['sentences_removed'].values()):>8} {sum(f['sentences_kept'].values()):>5} "
                     f"{f['judge_tokens_per_report']:>10,.0f} {f['job_tokens_per_report']:>9,.0f} "
                     f"{100 * f['judge_share']:>7.1f}% {f['all_judge_tokens_per_report']:>14,.0f} "
                     f"${f['cost_usd_per_report']:>7.3f}")
    lines += ["", "tokens are means per completed report; judge tok: the report judge's "
              "(verification.judge_tokens); all judge tok: every record_judgements call, scoring's included;",
              "cost: USD per report at the default prices (the fake's model priced as Sonnet, $3/$15 a million)", "",
              "removed by reason / kept by level (summed over the questions), judge status"]
    for f in figures:
        lines += [f"  {f['writer']} × {f['judge']}",
                  f"    removed  {_counts(f['sentences_removed'])}",
                  f"    kept     {_counts(f['sentences_kept'])}",
                  f"    judge    {_counts(f['judge_status'])}"]
    return "\n".join(lines)


# -- entry -------------------------------------------------------------------------------------


def _names(text: str, known: dict[str, Any], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--writers", type=lambda s: _names(s, WRITERS, "writer"), default=list(WRITERS),
                   help=f"comma-separated writers (default all: {','.join(WRITERS)})")
    p.add_argument("--judges", type=lambda s: _names(s, JUDGES, "judge"), default=list(JUDGES),
                   help=f"comma-separated judges (default all: {','.join(JUDGES)})")
    p.add_argument("--all", action="store_true", help="every writer with every judge, not only "
                   f"{' and '.join(DEFAULT_JUDGED)} with a judge")
    p.add_argument("--question", action="append", metavar="TEXT", help="ask this question (repeatable; "
                   "default: two questions about the sample corpus)")
    p.add_argument("--timeout", type=float, default=300.0, help="limit per job in seconds (default 300)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead of tables")
    p.add_argument("--keep-data", action="store_true", help="keep the temporary folders (servers' data and logs)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    questions = args.question or list(QUESTIONS)
    runs = [Run(w, j) for w, j in plan(args.writers, args.judges, args.all)]
    if not runs:
        print("adversarial: no (writer, judge) pair selected", file=sys.stderr)
        return 2
    _offline(ROOT)  # no real keys reach the services; the fake's environment follows
    worst = 0
    with AnthropicFake(responder=ReportWriter()) as fake:
        os.environ.update({**fake.env(), "RESEARCH_MAX_TOKENS_PER_JOB": str(FAKE_TOKEN_BUDGET),
                           "RESEARCH_RATE_LIMIT_MAX": "100000", "RESEARCH_REUSE_MAX_AGE_S": "0",
                           "LLM_MAX_RETRIES": "1", "DIGEST_POLICY": "off"})
        for verifier in dict.fromkeys(VERIFIER[r.judge] for r in runs):
            mine = [r for r in runs if VERIFIER[r.judge] == verifier]
            worst = max(worst, run_system(verifier, mine, questions, fake, args))
        if fake.errors:  # a responder bug answered as HTTP 500: the figures are suspect
            print(f"adversarial: the fake model failed {len(fake.errors)} requests, first: {fake.errors[0]!r}",
                  file=sys.stderr)
    figures = [r.figures() for r in runs if r.statuses]
    print(json.dumps({"questions": questions, "runs": figures}, indent=2) if args.json else report(figures, questions))
    return worst


if __name__ == "__main__":
    sys.exit(main())
