"""Quality benchmark: fact recall of research reports over Python's documentation.

Starts a system of its own in a temporary folder (nats-server, PostgreSQL, the
gateway and the five stage services, as ``deepresearch ask`` and
``bench/pipeline.py --start`` do), indexes Python's HTML documentation from Debian's
``python3-doc`` package as a local corpus, asks every question of
``bench/quality_questions.toml`` through the gateway's HTTP API, one job at a time,
and scores each report against the facts written down for its question.

The question set is split: "tuning" questions may be looked at while improving the
engine (their missed facts are printed), "held-out" ones are for measuring only
(only their figures are printed). Figures:

- fact recall: facts found / facts expected, per split (a fact is found when all its
  patterns match the report's text, headings, the refined question and the gaps
  left out, so a checklist title cannot recall a fact by repeating the question);
- claims kept per report, and claims rejected when the engine reports them;
- citations per 1,000 words of report;
- tokens per report by stage (all zero offline);
- sentences removed by verification, when the result carries that field.

The corpus is every HTML page of the documentation except Sphinx's generated pages
(general index, module index, search page) and its ``_static``/``_sources`` folders;
``--sections tutorial,library,...`` indexes only those top-level sections (faster).

Two engines ("modes"), each on a system of its own, both by default:

- ``none``: no model; every stage runs its offline engine (fact recall is this
  engine's figure);
- ``fake``: every stage calls a model through the real ``anthropic`` SDK, pointed by
  ANTHROPIC_BASE_URL at a loopback fake of the Messages API started by the bench
  (``tests/fakes/research_model.py``). The fake answers each tool from the request
  (the tool's schema, the prompt's data blocks), deterministically: claims quoting
  the snippets it was given verbatim, and invented ones (snippet ids never shown,
  paraphrases, numbers its quotes lack); a report that adds invented sentences and
  cites claim ids that do not exist. Its figures measure the verification, not the
  answers: claims kept and rejected, sentences removed, citations, and the tokens
  each stage spends (about 4 characters a token, as the fake bills them).

With both, a comparison of the two follows the two reports.

Exits 0 when every job completed, 1 when one did not, 2 on a usage or start-up
error, 3 when the documentation is not installed.

    python bench/quality.py                  # all questions, offline and fake model
    python bench/quality.py --llm none       # offline engine only
    python bench/quality.py --split tuning   # only the tuning part
    python bench/quality.py --json out.json  # also write every result
    python bench/quality.py --corpus samples/corpus --questions my.toml  # another corpus

Adding an engine (e.g. a fake model): give :data:`ENGINES` an entry that prepares
the environment the services inherit and returns a cleanup; :func:`run_question`
runs one question on whatever system is up and returns its result JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/quality.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.quality_facts import (  # noqa: E402 - after the path set-up above
    INSTALL_HINT, QUESTIONS_FILE, SPLITS, Question, answer_text, citations_per_1000_words, copy_corpus, doc_pages,
    find_docs, load_questions, recalled,
)

CORPUS_NAME = "pydocs"
STAGES = ("plan", "retrieve", "digest", "score", "synthesize")
TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "EXPIRED"})


@dataclass
class Outcome:
    """One question's run: its status, result JSON and scores."""

    question: Question
    status: str
    reason: str | None = None
    seconds: float = 0.0
    result: dict = field(default_factory=dict)
    found: list[bool] = field(default_factory=list)

    def score(self) -> None:
        text = answer_text(self.result.get("report") or "")
        self.found = [recalled(text, fact) for fact in self.question.facts]


# -- running one question --------------------------------------------------------------


def _headers() -> dict[str, str]:
    key = os.environ.get("RESEARCH_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


async def run_question(client: httpx.AsyncClient, question: str, corpora: list[str], *,
                       timeout_s: float = 300.0) -> tuple[str, str | None, dict]:
    """Submit one question, follow its events to the end; (status, reason, result).

    The result is the ``completed`` event's (the whole ResearchResult: report, claims,
    usage, sentences removed...), else the stored result; {} when the job failed.
    """
    r = await client.post("/api/research/jobs", json={"question": question, "corpora": corpora})
    if r.status_code != 202:
        return "REFUSED", f"HTTP {r.status_code}: {r.text[:300]}", {}
    job_id = r.json()["job_id"]
    status, reason, result = "UNKNOWN", None, {}

    async def follow() -> None:
        nonlocal status, reason, result
        path = f"/api/research/jobs/{job_id}/events"
        async with client.stream("GET", path, timeout=httpx.Timeout(30, read=None)) as response:
            if response.status_code != 200:
                reason = f"events stream answered HTTP {response.status_code}"
                return
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if event.get("type") == "completed" and isinstance(event.get("result"), dict):
                    result = event["result"]
                elif event.get("type") == "failed" and reason is None:
                    reason = event.get("reason")
                elif event.get("type") == "status" and event.get("status") in TERMINAL:
                    status = event["status"]
                    reason = event.get("reason") or reason
                    return

    try:
        await asyncio.wait_for(follow(), timeout_s)
    except TimeoutError:
        return "TIMEOUT", f"no terminal status within {timeout_s:g}s", {}
    if status == "COMPLETED" and not result:
        stored = await client.get(f"/api/research/jobs/{job_id}/result")
        if stored.status_code == 200:
            result = stored.json()
    result.setdefault("job_id", job_id)
    return status, reason, result


async def run_all(url: str, questions: list[Question], corpora: list[str], timeout_s: float) -> list[Outcome]:
    """Questions one after another: each job has the machine to itself, so the
    figures do not depend on how jobs interleave."""
    outcomes: list[Outcome] = []
    async with httpx.AsyncClient(base_url=url, headers=_headers(), timeout=30) as client:
        for q in questions:
            started = time.monotonic()
            status, reason, result = await run_question(client, q.question, corpora, timeout_s=timeout_s)
            outcome = Outcome(q, status, reason, time.monotonic() - started, result)
            outcome.score()
            outcomes.append(outcome)
            print(f"  {q.id:<22} {status:<9} facts {sum(outcome.found)}/{len(q.facts)} "
                  f"({outcome.seconds:.1f}s)", file=sys.stderr, flush=True)
    return outcomes


# -- engines -----------------------------------------------------------------------------


def _offline(_data_dir: Path) -> Callable[[], None]:
    """No model, no network: every stage runs its offline engine over the local
    corpus. Keys in the caller's environment would switch a stage to a model or a
    search provider to the internet, so they are removed."""
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TAVILY_API_KEY",
                "NCBI_EMAIL", "NCBI_API_KEY", "RESEARCH_COUNCIL_MODELS", "RESEARCH_VERIFIER_MODEL"):
        os.environ.pop(key, None)
    os.environ["LLM_PROVIDER"] = "offline"
    return lambda: None


# A model that answers at once and costs nothing still bills every prompt; the
# budget a real deployment would give long documents, so that the figures show the
# model's answers rather than the offline fallback of a spent budget.
FAKE_TOKEN_BUDGET = 2_000_000
FAKE_SEED = 7


def _fake(_data_dir: Path) -> Callable[[], None]:
    """The stages call a model: a loopback fake of Anthropic's Messages API, served
    from this process, that answers every tool plausibly and adversarially."""
    from tests.fakes.research_model import ResearchModel

    saved = {k: os.environ.get(k) for k in ("LLM_PROVIDER", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY",
                                            "RESEARCH_MAX_TOKENS_PER_JOB")}
    _offline(_data_dir)
    fake = ResearchModel(seed=FAKE_SEED).serve()
    os.environ.update(fake.env())
    os.environ["RESEARCH_MAX_TOKENS_PER_JOB"] = str(FAKE_TOKEN_BUDGET)

    def cleanup() -> None:
        fake.stop()
        if fake.errors:  # a responder bug answered as HTTP 500: the figures are suspect
            print(f"quality: the fake model failed {len(fake.errors)} requests, first: {fake.errors[0]!r}",
                  file=sys.stderr)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    return cleanup


# name -> prepare(data_dir) -> cleanup; the services inherit os.environ.
ENGINES: dict[str, Callable[[Path], Callable[[], None]]] = {"none": _offline, "fake": _fake}
ENGINE_NOTES = {"none": "none (offline engines, no model)",
                "fake": f"fake (loopback Anthropic Messages API, adversarial, seed {FAKE_SEED}, "
                        f"token budget {FAKE_TOKEN_BUDGET:,} per job)"}


# -- the report ------------------------------------------------------------------------------


def _recall(outcomes: list[Outcome]) -> tuple[int, int]:
    return sum(sum(o.found) for o in outcomes), sum(len(o.question.facts) for o in outcomes)


_REJECTED_IN_REPORT = re.compile(r"(\d+) rejected by the claim check")


def rejected_count(result: dict) -> int | None:
    """Claims the check refused in one job: the result's list, or, when that list is
    empty, the count the report's methodology states (the list is bounded, and a
    result may not carry it); None when neither says."""
    listed = result.get("rejected_claims")
    count = len(listed) if isinstance(listed, list) else listed if isinstance(listed, int) else None
    if not count:
        m = _REJECTED_IN_REPORT.search(result.get("report") or "")
        if m is not None:
            return int(m.group(1))
    return count


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def report(outcomes: list[Outcome], *, corpus_note: str, engine: str) -> str:
    lines = ["deepresearch quality benchmark", "",
             f"engine   {engine}", f"corpus   {corpus_note}", f"questions {len(outcomes)}", ""]
    lines.append(f"{'question':<22} {'split':<9} {'status':<9} {'facts':>6} {'claims':>6} {'cit/1kw':>8}")
    for o in outcomes:
        claims = o.result.get("claims") or []
        lines.append(f"{o.question.id:<22} {o.question.split:<9} {o.status:<9} "
                     f"{sum(o.found):>3}/{len(o.found):<2} {len(claims):>6} "
                     f"{citations_per_1000_words(o.result.get('report') or ''):>8.1f}")
    lines.append("")
    for split in SPLITS:
        part = [o for o in outcomes if o.question.split == split]
        if part:
            got, total = _recall(part)
            lines.append(f"fact recall, {split:<9} {got}/{total} = {got / total:.2f}")
    got, total = _recall(outcomes)
    lines.append(f"fact recall, all       {got}/{total} = {got / total:.2f}")

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
        fmt = "{:>12.2f}" if name == "fact recall" else "{:>12.0f}" if name.startswith("tokens") else "{:>12.1f}"
        lines.append(f"  {name:<27}" + "".join(fmt.format(values[name]) for _, values in table))
    return "\n".join(lines)


# -- entry -----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llm", choices=(*sorted(ENGINES), "both"), default="both",
                   help="the model behind the stages: none (offline), fake (a loopback fake model) or both (default)")
    p.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="which part of the question set to run")
    p.add_argument("--only", metavar="ID", action="append", help="run only this question id (repeatable)")
    p.add_argument("--questions", type=Path, default=QUESTIONS_FILE, help="question set (TOML)")
    p.add_argument("--docs", metavar="DIR", help="HTML of Python's documentation (default: python3-doc's)")
    p.add_argument("--corpus", metavar="DIR", type=Path,
                   help="index this folder (any supported files) instead of Python's documentation")
    p.add_argument("--sections", metavar="LIST", help="index only these top-level sections, comma-separated "
                   "(e.g. tutorial,library,reference,faq,howto,glossary)")
    p.add_argument("--timeout", type=float, default=300.0, help="limit per question in seconds (default 300)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every question's result and scores")
    p.add_argument("--keep-data", action="store_true", help="keep the temporary folder (servers' data and logs)")
    return p.parse_args(argv)


def run_mode(engine: str, questions: list[Question], source: Path, pages: list[Path] | None, describe: str,
             args: argparse.Namespace) -> tuple[int, list[Outcome]]:
    """One engine on a system of its own: (exit code, outcomes). ``pages``: the HTML
    pages of ``source`` to copy, or None to copy the whole folder."""
    from services.retrieval.index import index_corpus
    from services.cli.supervisor import running_system
    from shared.platform.errors import ResearchError

    data_dir = Path(tempfile.mkdtemp(prefix=f"deepresearch-quality-{engine}-"))
    os.environ["RESEARCH_DATA_DIR"] = str(data_dir)
    os.environ["RESEARCH_RATE_LIMIT_MAX"] = "100000"
    ok = False
    outcomes: list[Outcome] = []
    cleanup = ENGINES[engine](data_dir)
    try:
        if pages is None:
            shutil.copytree(source, data_dir / "source")
        else:
            copy_corpus(source, pages, data_dir / "source")
        stats = index_corpus(data_dir / "source", name=CORPUS_NAME, corpora_dir=data_dir / "corpora")
        note = f"{stats.files_indexed} {describe} ({stats.chunks} chunks, indexed in {stats.seconds:.1f}s)"
        print(f"[{engine}] indexed {note}", file=sys.stderr)
        print(f"[{engine}] starting nats-server, PostgreSQL, the gateway and the five stages...",
              file=sys.stderr, flush=True)
        with running_system(data_dir=data_dir, nats_url=None, database_url=None, quiet=True) as system:
            print(f"[{engine}] system up at {system.url}; {len(questions)} questions", file=sys.stderr, flush=True)
            outcomes = asyncio.run(run_all(system.url, questions, [CORPUS_NAME], args.timeout))
        print(report(outcomes, corpus_note=note, engine=ENGINE_NOTES.get(engine, engine)))
        print(flush=True)
        ok = all(o.status == "COMPLETED" for o in outcomes)
        return (0 if ok else 1), outcomes
    except (RuntimeError, ResearchError, OSError) as exc:  # a server or service did not start
        print(f"quality: [{engine}] {exc}", file=sys.stderr)
        return 2, outcomes
    finally:
        cleanup()
        if ok and not args.keep_data:
            shutil.rmtree(data_dir, ignore_errors=True)
        else:
            print(f"[{engine}] data and logs kept in {data_dir}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        questions = load_questions(args.questions)
    except (OSError, ValueError, KeyError, re.error) as exc:
        print(f"quality: bad question set: {exc}", file=sys.stderr)
        return 2
    if args.split != "all":
        questions = [q for q in questions if q.split == args.split]
    if args.only:
        questions = [q for q in questions if q.id in set(args.only)]
    if not questions:
        print("quality: no question selected", file=sys.stderr)
        return 2
    pages: list[Path] | None = None
    if args.corpus is not None:
        if not args.corpus.is_dir():
            print(f"quality: --corpus {args.corpus} is not a folder", file=sys.stderr)
            return 2
        source, describe = args.corpus, f"files of {args.corpus}"
    else:
        docs = find_docs(args.docs)
        if docs is None:
            print(f"quality: {INSTALL_HINT}", file=sys.stderr)
            return 3
        sections = [s.strip() for s in args.sections.split(",") if s.strip()] if args.sections else None
        pages = doc_pages(docs, sections)
        if not pages:
            print(f"quality: no page of {docs} in sections {sections}", file=sys.stderr)
            return 2
        source = docs
        describe = (f"pages of {docs}; " + (f"sections {','.join(sections)}" if sections
                                             else "all but Sphinx's generated index pages"))

    engines = ["none", "fake"] if args.llm == "both" else [args.llm]
    runs: list[tuple[str, list[Outcome]]] = []
    worst = 0
    for engine in engines:
        code, outcomes = run_mode(engine, questions, source, pages, describe, args)
        worst = max(worst, code)
        if outcomes:
            runs.append((engine, outcomes))
    if len(runs) > 1:
        print(compare(runs))
    if args.json:
        args.json.write_text(json.dumps([
            {"engine": engine, "id": o.question.id, "split": o.question.split, "status": o.status,
             "reason": o.reason, "found": o.found, "result": o.result}
            for engine, outcomes in runs for o in outcomes], indent=1), encoding="utf-8")
    return worst


if __name__ == "__main__":
    sys.exit(main())
