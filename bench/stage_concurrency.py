"""jobs/min with one command at a time per stage process against the default
``RESEARCH_STAGE_CONCURRENCY``, with IO-bound loopback fakes (the model answers every
call after 1 s, the web search after 0.3 s) and one process per stage.

Run through ``python bench/pipeline.py --stage-concurrency --jobs 24``: it starts two
systems of its own in turn, runs the jobs on each and prints each run's report,
jobs/min of each and their ratio.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Iterator

from bench.jobs import SAMPLE_CORPUS, SAMPLE_CORPUS_NAME, job_runs, report, run_bench, sample_system_folder, table

__all__ = ["io_bound_fakes", "jobs_per_minute", "stage_concurrency_comparison"]

MODEL_DELAY_S = 1.0  # every model call of the loopback Anthropic fake
SEARCH_DELAY_S = 0.3  # every call of the loopback Tavily fake
COMPARE_MAX_CONCURRENCY = "12"  # jobs the gateway admits at once, unless RESEARCH_MAX_CONCURRENCY is set


@contextlib.contextmanager
def io_bound_fakes() -> Iterator[dict[str, str]]:
    """The loopback Anthropic fake answering every call after MODEL_DELAY_S and the
    Tavily fake answering after SEARCH_DELAY_S (the sample corpus as its web); yields
    the environment that points the services at them. Stage work is then mostly
    waiting, as it is with real models and searches."""
    from tests.fakes.anthropic import AnthropicFake
    from tests.fakes.llm import Delay, schema_responder
    from tests.fakes.tavily import FakeTavily, Page

    pages = [Page(slug=f.stem, title=f.stem.replace("-", " "), text=f.read_text(errors="replace"))
             for f in sorted(SAMPLE_CORPUS.iterdir()) if f.is_file()]
    llm = AnthropicFake(responder=lambda rec: Delay(MODEL_DELAY_S, schema_responder(rec))).start()
    web = FakeTavily(pages, latency_s=SEARCH_DELAY_S).start()
    try:
        yield {**llm.env(), "TAVILY_API_KEY": web.api_key, "TAVILY_BASE_URL": web.base_url}
    finally:
        web.stop()
        llm.stop()


def jobs_per_minute(stage_concurrency: int, jobs: int, timeout_s: float, env: dict[str, str]) -> tuple[float, int]:
    """Start a system of its own (one process per stage) with RESEARCH_STAGE_CONCURRENCY
    = ``stage_concurrency``, run ``jobs`` jobs, print the usual report; return
    (completed jobs per minute of wall time, completed jobs)."""
    from services.cli.supervisor import running_system

    # COMPARE_MAX_CONCURRENCY only where neither the caller's environment nor ``env`` sets it.
    system_env = {"RESEARCH_MAX_CONCURRENCY": os.environ.get("RESEARCH_MAX_CONCURRENCY", COMPARE_MAX_CONCURRENCY),
                  **env, "RESEARCH_STAGE_CONCURRENCY": str(stage_concurrency)}
    runs = job_runs(jobs)
    with sample_system_folder(f"deepresearch-bench-sc{stage_concurrency}-", system_env) as data_dir:
        print(f"RESEARCH_STAGE_CONCURRENCY={stage_concurrency}: starting a system, {jobs} jobs...", file=sys.stderr, flush=True)
        with running_system(data_dir=data_dir, nats_url=None, database_url=None, quiet=True) as system:
            url = system.url
            wall, max_conc = asyncio.run(run_bench(url, runs, [SAMPLE_CORPUS_NAME], timeout_s))
        print(report(url, runs, wall, max_conc, f"RESEARCH_STAGE_CONCURRENCY={stage_concurrency}", started_own=True))
        print()
    completed = sum(r.status == "COMPLETED" for r in runs)
    return (completed / wall * 60 if wall > 0 else 0.0), completed


def stage_concurrency_comparison(jobs: int, timeout_s: float) -> int:
    """jobs/min with one command at a time per stage process against the default
    RESEARCH_STAGE_CONCURRENCY, IO-bound fakes, one process per stage; 0 when every
    job of both runs completed."""
    from shared.settings import CommonSettings

    default = int(CommonSettings.model_fields["research_stage_concurrency"].default)
    results: dict[int, tuple[float, int]] = {}
    with io_bound_fakes() as env:
        for concurrency in dict.fromkeys((1, default)):
            results[concurrency] = jobs_per_minute(concurrency, jobs, timeout_s, env)
    rows = [[str(c), str(jobs), str(done), f"{rate:.1f}"] for c, (rate, done) in results.items()]
    limits = ", ".join(f"{name}={os.environ.get(name, default)}" for name, default in (
        ("RESEARCH_MAX_CONCURRENCY", COMPARE_MAX_CONCURRENCY), ("LLM_MAX_CONCURRENCY", "default"),
        ("DIGEST_MAX_CONCURRENT", "default")))
    print(f"stage concurrency (model {MODEL_DELAY_S:g} s a call, search {SEARCH_DELAY_S:g} s; one process per stage; {limits})")
    print("\n".join(table(["RESEARCH_STAGE_CONCURRENCY", "jobs", "completed", "jobs/min"], rows)))
    one, best = results[1][0], results[default][0]
    print(f"ratio {default} / 1: {best / one:.2f}x (target: at least 2x)" if one > 0 else "ratio: - (no job completed one at a time)")
    return 0 if all(done == jobs for _, done in results.values()) else 1
