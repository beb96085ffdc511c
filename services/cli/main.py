"""``deepresearch``: run the system, one service, index documents, ask a question,
and follow, fetch, cancel and resume jobs on a running gateway (services/cli/jobs.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import httpx

from services.cli.check import add_check_command
from services.cli.config import cmd_config
from services.cli.follow_up import cmd_follow_up
from services.cli.jobs import (
    EXIT_CODES_HELP, EXIT_INTERRUPTED, EXIT_USAGE, FORMATS, CliExit, Command, Gateway, cmd_cancel, cmd_jobs, cmd_result,
    cmd_resume, cmd_status, cmd_trace, cmd_watch, see_through,
)
from shared.platform.errors import ConfigurationError, ResearchError
from shared.settings import CliSettings

DEFAULT_GATEWAY_URL = "http://127.0.0.1:8080"


def _settings() -> CliSettings:
    return CliSettings()


# -- service ---------------------------------------------------------------------


def cmd_service(args: argparse.Namespace) -> int:
    from services.cli.supervisor import SERVICES
    from shared.platform.lifeline import SUPERVISOR_PID_ENV, watch_parent

    settings = _settings()
    if args.name not in SERVICES:
        raise ConfigurationError(f"unknown service {args.name!r}; choose one of: {', '.join(SERVICES)}")
    if not settings.nats_url:
        raise ConfigurationError("NATS_URL is not set: a lone service joins a running system (or use `deepresearch up`)")
    supervisor = os.environ.get(SUPERVISOR_PID_ENV, "")
    if supervisor.isdigit():
        watch_parent(int(supervisor))  # stop with `deepresearch up`, however it ends
    if args.name == "gateway":
        if not settings.database_url:
            raise ConfigurationError("DATABASE_URL is not set: the gateway needs PostgreSQL (or use `deepresearch up`)")
        from services.gateway.service import main

        main()
        return 0
    import importlib

    module = importlib.import_module(f"services.{args.name}.service")
    asyncio.run(module.app.run())
    return 0


# -- up --------------------------------------------------------------------------


def cmd_up(args: argparse.Namespace) -> int:
    from services.cli.supervisor import running_system

    settings = _settings()
    stop = {"now": False}

    def _stop(signum: int, _frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    with running_system(
        data_dir=settings.data_dir, nats_url=settings.nats_url, database_url=settings.database_url,
        host=settings.gateway_host, port=settings.gateway_port,
        backoff_s=settings.research_restart_backoff_s, backoff_max_s=settings.research_restart_backoff_max_s,
    ) as system:
        url = system.url
        print(f"deepresearch is up: gateway {url} (API docs {url}/docs); Ctrl-C stops it", file=sys.stderr, flush=True)
        for name, reason in (system.ready.get("failing_services") or {}).items():
            print(f"  warning: {name} is {reason}; it is retried, see {url}/readyz", file=sys.stderr, flush=True)
        while not stop["now"]:
            system.poll()  # restarts a service that died, after its back-off delay
            time.sleep(0.5)
    print("deepresearch stopped", file=sys.stderr)
    return 0


# -- env -------------------------------------------------------------------------


def cmd_env(args: argparse.Namespace) -> int:
    """Print the running system's URLs (with credentials) as shell assignments, so
    `eval "$(deepresearch env)"` lets another shell join it, e.g. with a further
    `deepresearch service retrieval`."""
    import shlex

    from shared.platform.supervision import connection_path, read_connection

    settings = _settings()
    values = read_connection(settings.data_dir)
    if values is None:
        raise ConfigurationError(
            f"no `deepresearch up` is running on {settings.data_dir} (no live {connection_path(settings.data_dir).name}); "
            "start it, or set RESEARCH_DATA_DIR to its folder"
        )
    for key, value in values.items():
        print(f"export {key}={shlex.quote(value)}")
    return 0


# -- index -----------------------------------------------------------------------


def _index(directory: Path, name: str | None) -> str:
    from services.retrieval.index import index_corpus, validate_corpus_name

    settings = _settings()
    if not directory.is_dir():
        raise ConfigurationError(f"{directory} is not a folder")
    corpus = validate_corpus_name(name or directory.resolve().name)
    stats = index_corpus(directory, name=corpus, corpora_dir=settings.corpora_dir)
    print(
        f"indexed corpus '{corpus}': {stats.files_indexed} files, {stats.chunks} chunks in {stats.seconds:.2f}s"
        + (f"; skipped {len(stats.skipped)}" if stats.skipped else "")
        + f" (added {stats.added}, changed {stats.changed}, unchanged {stats.unchanged}, removed {stats.removed})",
        file=sys.stderr,
    )
    # Every skipped file with its reason (a broken PDF, an unsupported type), so the
    # user can fix it; they never stop the run.
    for relpath, reason in stats.skipped[:50]:
        print(f"  skipped {relpath}: {reason}", file=sys.stderr)
    if len(stats.skipped) > 50:
        print(f"  ... and {len(stats.skipped) - 50} more skipped", file=sys.stderr)
    return corpus


def cmd_index(args: argparse.Namespace) -> int:
    _index(Path(args.dir), args.name)
    return 0


# -- ask -------------------------------------------------------------------------


def _gateway_answers(url: str) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    return False


def _request(args: argparse.Namespace, corpora: list[str] | None) -> dict:
    body: dict = {"question": args.question, "max_iterations": args.max_iterations}
    if args.context:
        body["context"] = args.context
    if corpora:
        body["corpora"] = corpora
    if args.provider:
        body["providers"] = list(dict.fromkeys("rag" if p == "local" else p for p in args.provider))
    if args.clarify:
        body["clarify"] = True
    if getattr(args, "depth", None):
        body["report_depth"] = args.depth
    if getattr(args, "review_plan", False):
        body["review_plan"] = True
    return body


def _ask_via(url: str, args: argparse.Namespace, corpora: list[str] | None) -> int:
    key = _settings().research_api_key
    gw = Gateway(url, key.get_secret_value() if key else None)
    try:
        job_id = gw.call("POST", "/api/research/jobs", json=_request(args, corpora), what="submission").json()["job_id"]
        print(f"job {job_id} submitted to {url}", file=sys.stderr, flush=True)
        return see_through(gw, job_id, args, max_iterations=args.max_iterations)
    finally:
        gw.close()


def cmd_ask(args: argparse.Namespace) -> int:
    from services.cli.supervisor import running_system

    settings = _settings()
    corpora = [_index(Path(args.corpus), None)] if args.corpus else None
    url = settings.research_gateway_url or DEFAULT_GATEWAY_URL
    if _gateway_answers(url):
        return _ask_via(url, args, corpora)
    if settings.research_gateway_url:
        print(f"no gateway answers at RESEARCH_GATEWAY_URL={url}; starting the system for this job", file=sys.stderr)
    print("starting the system for this job (servers and services; logs in the data folder)", file=sys.stderr, flush=True)
    with running_system(data_dir=settings.data_dir, nats_url=settings.nats_url, database_url=settings.database_url, quiet=True) as system:
        return _ask_via(system.url, args, corpora)


# -- mcp -------------------------------------------------------------------------


def cmd_mcp(args: argparse.Namespace) -> int:
    """The deep_research tool for a desktop agent, over stdio, against a running gateway."""
    from services.gateway.mcp import run_stdio

    settings = _settings()
    url = args.url or settings.research_gateway_url or DEFAULT_GATEWAY_URL
    if not _gateway_answers(url):  # stdout is the protocol's: warnings go to stderr
        print(f"deepresearch mcp: no gateway answers at {url} yet; tool calls fail until one does (`deepresearch up`)", file=sys.stderr, flush=True)
    run_stdio(url, settings.research_api_key.get_secret_value() if settings.research_api_key else None)
    return 0


# -- entry -----------------------------------------------------------------------


def _remote(command: Command) -> object:
    """A gateway command as the parser calls it (with the settings read once)."""
    return lambda args: command(args, _settings())


def _add_system_commands(sub: argparse._SubParsersAction) -> None:
    up = sub.add_parser("up", help="run the gateway and the five stage services (and servers when needed)")
    up.set_defaults(func=cmd_up)

    env = sub.add_parser("env", help="print the URLs (with credentials) of the system `up` runs on this data folder, as shell exports")
    env.set_defaults(func=cmd_env)

    svc = sub.add_parser("service", help="run one service alone (needs NATS_URL; the gateway also DATABASE_URL)")
    svc.add_argument("name", help="gateway, decomposition, retrieval, digest, scoring or synthesis")
    svc.set_defaults(func=cmd_service)

    idx = sub.add_parser("index", help="index a folder of markdown, text, HTML and PDF documents into a named corpus (re-indexing processes only changed files)")
    idx.add_argument("dir")
    idx.add_argument("--name", help="corpus name (default: the folder's name)")
    idx.set_defaults(func=cmd_index)

    cfg = sub.add_parser("config", help="print the settings in effect (environment, then .env, then defaults; secrets masked) and the configured providers")
    cfg.add_argument("--json", action="store_true", help="as one JSON object")
    cfg.set_defaults(func=cmd_config)


def _add_output_options(cmd: argparse.ArgumentParser, what: str) -> None:
    cmd.add_argument("-o", "--output", metavar="FILE", help=f"write {what} to FILE (its format from the extension unless --format)")
    cmd.add_argument("--format", choices=FORMATS, help="md, html, json (the result object), pdf or docx")


def _add_ask(sub: argparse._SubParsersAction) -> None:
    ask = sub.add_parser("ask", help="research a question and print the report", epilog=EXIT_CODES_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    ask.add_argument("question")
    ask.add_argument("--context", help="the user's needs, domain or constraints")
    ask.add_argument("--max-iterations", type=int, default=10)
    ask.add_argument("--corpus", help="index this folder first and search it")
    ask.add_argument(
        "--provider", action="append", choices=["local", "rag", "web", "pubmed"],
        help="search only this provider (repeatable; local = rag = the indexed corpora; default: every configured one)",
    )
    ask.add_argument("--json", action="store_true", help="print the result object instead of the report")
    ask.add_argument("--clarify", action="store_true", help="let the planner ask clarifying questions here first")
    ask.add_argument(
        "--depth", choices=["brief", "standard", "detailed"], default=None,
        help="how much the report says: brief (one screen), standard (the default) or detailed",
    )
    ask.add_argument("--review-plan", action="store_true",
                     help="review the research plan first: Enter accepts it, e opens it in $EDITOR (as JSON); "
                          "off a terminal it is accepted as it is")
    ask.add_argument("--plain", action="store_true", help="plain progress lines even on a terminal")
    _add_output_options(ask, "the report (then it is not printed)")
    ask.set_defaults(func=cmd_ask)


def _add_job_commands(sub: argparse._SubParsersAction) -> None:
    """Commands on jobs of a running gateway (RESEARCH_GATEWAY_URL, RESEARCH_API_KEY)."""
    def job_command(name: str, command: Command, help_text: str) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help_text, epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
        if name != "jobs":
            cmd.add_argument("job_id", metavar="ID")
        cmd.set_defaults(func=_remote(command))
        return cmd

    jobs = job_command("jobs", cmd_jobs, "list your jobs with their status, newest first")
    jobs.add_argument("--status", help="only jobs with this status (QUEUED, PROCESSING, COMPLETED, FAILED, ...)")
    jobs.add_argument("--limit", type=int, default=20, help="at most this many (1-100)")
    jobs.add_argument("--json", action="store_true", help="the listing as JSON")
    job_command("status", cmd_status, "show one job's status, stage, progress and tokens").add_argument(
        "--json", action="store_true", help="the job as JSON")
    watch = job_command("watch", cmd_watch, "show a job's progress live until it ends (Ctrl-C stops watching, not the job)")
    watch.add_argument("--plain", action="store_true", help="plain progress lines even on a terminal")
    result = job_command("result", cmd_result, "print or save a completed job's report (md, html, json, pdf, docx)")
    _add_output_options(result, "it")
    job_command("cancel", cmd_cancel, "cancel a job that has not ended")
    job_command("trace", cmd_trace, "print a job's trace: queries, results, checklist, claims and stage times per iteration").add_argument(
        "--json", action="store_true", help="the trace as JSON")
    follow_up = job_command("follow-up", cmd_follow_up, "ask a follow-up question of a completed job: a new job that starts "
                            "from its research, followed live like `ask`")
    follow_up.add_argument("question")
    follow_up.add_argument("--json", action="store_true", help="print the result object instead of the report")
    follow_up.add_argument("--plain", action="store_true", help="plain progress lines even on a terminal")
    _add_output_options(follow_up, "the report (then it is not printed)")
    resume = job_command("resume", cmd_resume, "resume a failed, cancelled or expired job from its last checkpoint, then watch it")
    resume.add_argument("--plain", action="store_true", help="plain progress lines even on a terminal")
    _add_output_options(resume, "the report once it completes")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="deepresearch", description="A deep research engine over NATS JetStream.",
                                epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    _add_system_commands(sub)
    _add_ask(sub)
    _add_job_commands(sub)
    add_check_command(sub)

    mcp = sub.add_parser("mcp", help="serve the deep_research MCP tool over stdio (for desktop agents) against a running gateway")
    mcp.add_argument("--url", help="the gateway (default: RESEARCH_GATEWAY_URL, else http://127.0.0.1:8080); RESEARCH_API_KEY is its key")
    mcp.set_defaults(func=cmd_mcp)
    return p


def main(argv: list[str] | None = None) -> int:
    """Runs a command; its exit code is listed by EXIT_CODES_HELP (argparse's own usage errors exit 2)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliExit as exc:
        print(f"deepresearch: {exc}", file=sys.stderr)
        return exc.code
    except ResearchError as exc:
        print(f"deepresearch: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("deepresearch: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

