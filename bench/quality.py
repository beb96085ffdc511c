"""Quality benchmark: fact recall of research reports over a package's documentation.

Starts a system of its own in a temporary folder (nats-server, PostgreSQL, the
gateway and the five stage services, as ``deepresearch ask`` and
``bench/pipeline.py --start`` do), indexes a documentation set's HTML as a local
corpus, asks every question of its question file through the gateway's HTTP API, one
job at a time, and scores each report against the facts written down for its
question. Two sets (``--set``, :data:`bench.quality_facts.DOC_SETS`):

- ``python`` (the default): Python's HTML documentation from Debian's ``python3-doc``
  (corpus ``pydocs``), questions ``bench/quality_questions.toml``;
- ``git``: Git's manual pages, guides, how-tos and technical notes from Debian's
  ``git-doc`` (corpus ``gitdocs``), questions ``bench/quality_questions_git.toml``.

The question set is split: "tuning" questions may be looked at while improving the
engine (their missed facts are printed), "held-out" ones are for measuring only
(only their figures are printed). Figures:

- fact recall: facts found / facts expected, per split (a fact is found when all its
  patterns match the report's text, headings, the refined question and the gaps
  left out, so a checklist title cannot recall a fact by repeating the question);
- relevance share, per split: of the sentences of the reports' bodies (executive
  summary, checklist sections, other findings, Verified Findings; not the notes,
  gaps, methodology or sources), the share that answer the question or their
  checklist item by the project's coverage rule (at least min(2, n) of the n subject
  terms, half of them for a long item); pooled over the split's reports. Defined in
  :mod:`bench.quality_facts` (``relevance``); the target is 0.9 or more;
- claims kept per report, and claims rejected when the engine reports them;
- citations per 1,000 words of report;
- tokens per report, per split and by stage (all zero offline);
- sentences removed by verification, when the result carries that field.

The corpus is every HTML page of the set's documentation except the pages the set
skips: for ``python`` Sphinx's generated pages (general index, module index, search
page) and its ``_static``/``_sources`` folders, for ``git`` the index pages
(``index.html``, a link to ``git.html``; ``howto-index.html``;
``technical/api-index.html``). ``--sections tutorial,library,...`` indexes only those
top-level folders or pages (faster).

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
error, 3 when the documentation is not installed (with the apt-get line to run).

    python bench/quality.py                  # all questions, offline and fake model
    python bench/quality.py --set git        # the Git set (apt-get install -y git-doc)
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
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/quality.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.jobs import TERMINAL, headers  # noqa: E402 - after the path set-up above
from bench.quality_facts import (  # noqa: E402
    DOC_SETS, PYTHON, QUESTIONS_FILE, SPLITS, DocSet, Question, copy_corpus, doc_pages, find_docs, load_questions,
)
from bench.quality_report import Outcome, compare, json_records, report  # noqa: E402



# -- running one question --------------------------------------------------------------


async def run_question(client: httpx.AsyncClient, question: str, corpora: list[str], *,
                       timeout_s: float = 300.0) -> tuple[str, str | None, dict]:
    """Submit one question, follow its events to the end; (status, reason, result).

    The result is the ``completed`` event's (the whole ResearchResult: report, claims,
    usage, sentences removed...), else the stored result; {} when the job failed. It
    gains ``checklist`` (id, description, status of each item), from the last scoring
    pass's trace, when the result has none: the relevance share follows a finding's
    claim to its checklist items by id.
    """
    r = await client.post("/api/research/jobs", json={"question": question, "corpora": corpora})
    if r.status_code != 202:
        return "REFUSED", f"HTTP {r.status_code}: {r.text[:300]}", {}
    job_id = r.json()["job_id"]
    status, reason, result = "UNKNOWN", None, {}
    checklist: list[dict] = []

    async def follow() -> None:
        nonlocal status, reason, result, checklist
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
                elif event.get("type") == "stage" and isinstance((event.get("trace") or {}).get("checklist"), list):
                    checklist = event["trace"]["checklist"] or checklist
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
    if checklist and result:
        result.setdefault("checklist", checklist)
    return status, reason, result


async def run_all(url: str, questions: list[Question], corpora: list[str], timeout_s: float) -> list[Outcome]:
    """Questions one after another: each job has the machine to itself, so the
    figures do not depend on how jobs interleave."""
    outcomes: list[Outcome] = []
    async with httpx.AsyncClient(base_url=url, headers=headers(), timeout=30) as client:
        for q in questions:
            started = time.monotonic()
            status, reason, result = await run_question(client, q.question, corpora, timeout_s=timeout_s)
            outcome = Outcome(q, status, reason, time.monotonic() - started, result)
            outcome.score()
            outcomes.append(outcome)
            print(f"  {q.id:<22} {status:<9} facts {sum(outcome.found)}/{len(q.facts)} "
                  f"relevant {outcome.answering}/{outcome.sentences} ({outcome.seconds:.1f}s)",
                  file=sys.stderr, flush=True)
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


# -- entry -----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llm", choices=(*sorted(ENGINES), "both"), default="both",
                   help="the model behind the stages: none (offline), fake (a loopback fake model) or both (default)")
    p.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="which part of the question set to run")
    p.add_argument("--only", metavar="ID", action="append", help="run only this question id (repeatable)")
    p.add_argument("--set", dest="doc_set", choices=sorted(DOC_SETS), default=PYTHON.name,
                   help="the documentation and its questions: " + "; ".join(
                       f"{s.name}: {s.title} from Debian's {s.package}" for s in DOC_SETS.values())
                   + f" (default {PYTHON.name})")
    p.add_argument("--questions", type=Path, help="question set (TOML; default: the set's, "
                   f"e.g. {QUESTIONS_FILE.name})")
    p.add_argument("--docs", metavar="DIR", help="HTML of the set's documentation (default: its Debian package's)")
    p.add_argument("--corpus", metavar="DIR", type=Path,
                   help="index this folder (any supported files) instead of the set's documentation")
    p.add_argument("--sections", metavar="LIST", help="index only these top-level folders or pages, comma-separated "
                   "(python: e.g. tutorial,library,reference,faq,howto,glossary; git: e.g. howto,user-manual)")
    p.add_argument("--timeout", type=float, default=300.0, help="limit per question in seconds (default 300)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every question's result and scores")
    p.add_argument("--keep-data", action="store_true", help="keep the temporary folder (servers' data and logs)")
    return p.parse_args(argv)


def run_mode(engine: str, questions: list[Question], source: Path, pages: list[Path] | None, describe: str,
             args: argparse.Namespace, doc_set: DocSet = PYTHON) -> tuple[int, list[Outcome]]:
    """One engine on a system of its own: (exit code, outcomes). ``pages``: the HTML
    pages of ``source`` to copy, or None to copy the whole folder; indexed as the
    set's corpus."""
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
        stats = index_corpus(data_dir / "source", name=doc_set.corpus_name, corpora_dir=data_dir / "corpora")
        note = f"{stats.files_indexed} {describe} ({stats.chunks} chunks, indexed in {stats.seconds:.1f}s)"
        print(f"[{engine}] indexed {note}", file=sys.stderr)
        print(f"[{engine}] starting nats-server, PostgreSQL, the gateway and the five stages...",
              file=sys.stderr, flush=True)
        with running_system(data_dir=data_dir, nats_url=None, database_url=None, quiet=True) as system:
            print(f"[{engine}] system up at {system.url}; {len(questions)} questions", file=sys.stderr, flush=True)
            outcomes = asyncio.run(run_all(system.url, questions, [doc_set.corpus_name], args.timeout))
        print(report(outcomes, corpus_note=note, engine=ENGINE_NOTES.get(engine, engine),
                     doc_set=f"{doc_set.name} ({doc_set.title}, Debian's {doc_set.package})"))
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
    doc_set = DOC_SETS[args.doc_set]
    try:
        questions = load_questions(args.questions or doc_set.questions)
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
        docs = find_docs(args.docs, doc_set)
        if docs is None:
            print(f"quality: {doc_set.install_hint}", file=sys.stderr)
            return 3
        sections = [s.strip() for s in args.sections.split(",") if s.strip()] if args.sections else None
        pages = doc_pages(docs, sections, doc_set)
        if not pages:
            print(f"quality: no page of {docs} in sections {sections}", file=sys.stderr)
            return 2
        source = docs
        describe = f"pages of {docs}; " + (f"sections {','.join(sections)}" if sections else doc_set.skip_note)

    engines = ["none", "fake"] if args.llm == "both" else [args.llm]
    runs: list[tuple[str, list[Outcome]]] = []
    worst = 0
    for engine in engines:
        code, outcomes = run_mode(engine, questions, source, pages, describe, args, doc_set)
        worst = max(worst, code)
        if outcomes:
            runs.append((engine, outcomes))
    if len(runs) > 1:
        print(compare(runs))
    if args.json:
        args.json.write_text(json.dumps(json_records(runs, doc_set.name), indent=1), encoding="utf-8")
    return worst


if __name__ == "__main__":
    sys.exit(main())
