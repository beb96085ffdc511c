"""`deepresearch` commands that talk to a running gateway: jobs, status, watch,
result, cancel, trace, resume; and following a job's events (also for `ask`).

Exit codes (also in `deepresearch --help` and the README):
0 completed (or the command did what it was asked), 1 failed or an error (the job
FAILED, the gateway refused or is unreachable), 2 usage error, 3 cancelled,
4 expired or not found, 5 the job is not in a state for this (the result of a job
still running, cancelling a finished one, resuming a running one), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.live import Live

from services.cli.plan_review import review_plan
from services.cli.view import JobView, cost_text, plain_line
from shared.settings import CliSettings

__all__ = [
    "EXIT_CODES_HELP", "EXIT_CANCELLED", "EXIT_CONFLICT", "EXIT_FAILED", "EXIT_GONE", "EXIT_INTERRUPTED", "EXIT_OK",
    "EXIT_USAGE", "CliExit", "Gateway", "STATUS_EXIT", "cmd_cancel", "cmd_jobs", "cmd_result", "cmd_resume",
    "cmd_status", "cmd_trace", "cmd_watch", "follow", "gateway_url", "see_through", "write_report",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED, EXIT_GONE, EXIT_CONFLICT, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
STATUS_EXIT = {"COMPLETED": EXIT_OK, "FAILED": EXIT_FAILED, "CANCELLED": EXIT_CANCELLED, "EXPIRED": EXIT_GONE}
TERMINAL = frozenset(STATUS_EXIT)
EXIT_CODES_HELP = """exit codes:
  0    completed (or the command did what it was asked)
  1    the job failed, or an error (the gateway refused or is unreachable)
  2    usage error (bad arguments, a setting missing)
  3    the job was cancelled
  4    the job expired, or no such job (or it is another user's)
  5    the job is not in a state for this (result of a running job, cancel of a
       finished one, resume of a running or completed one, follow-up of one not
       completed)
  130  interrupted (Ctrl-C)"""
DEFAULT_GATEWAY_URL = "http://127.0.0.1:8080"
FORMATS = ("md", "html", "json", "pdf", "docx")


class CliExit(Exception):
    """Ends the command with a message on stderr and this exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def gateway_url(settings: CliSettings) -> str:
    return (settings.research_gateway_url or DEFAULT_GATEWAY_URL).rstrip("/")


def _message(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return r.text[:300]
    if isinstance(body, dict):
        return str(body.get("message") or body.get("detail") or body)[:300]
    return str(body)[:300]


class Gateway:
    """An HTTP client of the gateway whose answers become exit codes: 404 -> 4,
    409 -> 5, 401/403 -> 1 (with what to set), 422 -> 2, other errors -> 1."""

    def __init__(self, url: str, api_key: str | None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = url
        self.client = httpx.Client(base_url=url, headers=headers, timeout=30)

    @classmethod
    def of(cls, settings: CliSettings) -> Gateway:
        key = settings.research_api_key.get_secret_value() if settings.research_api_key else None
        return cls(gateway_url(settings), key)

    def close(self) -> None:
        self.client.close()

    def call(self, method: str, path: str, *, what: str = "", **kwargs: Any) -> httpx.Response:
        try:
            r = self.client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise CliExit(EXIT_FAILED, f"no gateway answers at {self.url} ({type(exc).__name__}): start one with "
                                       "`deepresearch up`, or set RESEARCH_GATEWAY_URL") from exc
        if r.is_success:
            return r
        why = _message(r)
        if r.status_code == 404:
            raise CliExit(EXIT_GONE, f"{what or path}: not found ({why})")
        if r.status_code == 409:
            raise CliExit(EXIT_CONFLICT, f"{what or path}: {why}")
        if r.status_code in (401, 403):
            raise CliExit(EXIT_FAILED, f"the gateway refused the API key ({r.status_code}: {why}); set RESEARCH_API_KEY")
        if r.status_code == 422:
            raise CliExit(EXIT_USAGE, f"{what or path}: {why}")
        raise CliExit(EXIT_FAILED, f"{what or path}: the gateway answered {r.status_code}: {why}")

    def job(self, job_id: str) -> dict[str, Any]:
        return self.call("GET", f"/api/research/jobs/{job_id}", what=f"job {job_id}").json()


@contextlib.contextmanager
def _gateway(settings: CliSettings) -> Iterator[Gateway]:
    gw = Gateway.of(settings)
    try:
        yield gw
    finally:
        gw.close()


# -- following a job -------------------------------------------------------------


OUTAGE_GIVE_UP_S = 3600.0  # `watch` waits this long for a gateway that answers 503 / ends streams with `error`


class _Unavailable(Exception):
    """The gateway cannot serve the stream now (a 503, or an `error` event ending it)."""

    def __init__(self, message: str, retry_s: float) -> None:
        super().__init__(message)
        self.retry_s = retry_s


def _retry_after(value: object, default: float = 5.0) -> float:
    try:
        return min(60.0, max(0.5, float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _stream(gw: Gateway, job_id: str, last: int | None) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """One connection to the job's SSE stream: (event id, event) pairs until it closes."""
    headers = {"Last-Event-ID": str(last)} if last is not None else {}
    with gw.client.stream("GET", f"/api/research/jobs/{job_id}/events", headers=headers,
                          timeout=httpx.Timeout(30, read=None)) as stream:
        if not stream.is_success:
            stream.read()
            if stream.status_code == 503:  # NATS or PostgreSQL down: the gateway says when to retry
                raise _Unavailable(_message(stream), _retry_after(stream.headers.get("Retry-After")))
            gw.job(job_id)  # an unknown job: exit code 4, as for every command
            raise CliExit(EXIT_FAILED, f"event stream of job {job_id} refused ({stream.status_code}): {_message(stream)}")
        seq: int | None = None
        for line in stream.iter_lines():
            if line.startswith("id: ") and line[4:].strip().isdigit():
                seq = int(line[4:])
            elif line.startswith("data: "):
                yield seq, json.loads(line[6:])
                seq = None


def _events(gw: Gateway, job_id: str) -> Iterator[dict[str, Any]]:
    """The job's events until it has ended. The gateway closes the stream after a
    terminal status; a job resumed since (its replay shows the earlier run's end) and a
    dropped connection are followed on from the last event id received, and an event
    seen before is not shown twice."""
    last: int | None = None
    drops = 0
    outage_since: float | None = None
    while True:
        fresh = 0
        try:
            for seq, event in _stream(gw, job_id, last):
                if event.get("type") == "error":  # NATS or PostgreSQL went away: the stream ends here
                    raise _Unavailable(str(event.get("message") or "the gateway ended the event stream"),
                                       _retry_after((event.get("retry") or 5000) / 1000))
                if seq is not None and last is not None and seq <= last:
                    continue
                last = seq if seq is not None else last
                fresh += 1
                outage_since = None
                yield event
                if event.get("type") == "status" and event.get("status") in TERMINAL and gw.job(job_id)["status"] in TERMINAL:
                    return
        except _Unavailable as exc:
            # Resumed from the last event id when the server is back: nothing missed, nothing twice.
            outage_since = outage_since or time.monotonic()
            if time.monotonic() - outage_since > OUTAGE_GIVE_UP_S:
                raise CliExit(EXIT_FAILED, f"the event stream of job {job_id} stayed unavailable for "
                                           f"{OUTAGE_GIVE_UP_S:.0f}s: {exc}") from exc
            print(f"event stream interrupted: {exc}; reconnecting in {exc.retry_s:g}s", file=sys.stderr, flush=True)
            time.sleep(exc.retry_s)
            continue
        except httpx.TransportError as exc:
            drops += 1
            print(f"event stream dropped ({type(exc).__name__}); reconnecting", file=sys.stderr, flush=True)
            if drops > 5:
                raise CliExit(EXIT_FAILED, f"the event stream of job {job_id} keeps dropping: {exc}") from exc
            time.sleep(min(2.0, 0.2 * 2**drops))
            continue
        if gw.job(job_id)["status"] in TERMINAL:
            return
        if not fresh:
            time.sleep(1.0)  # nothing new on that connection: do not spin


class _Display:
    """Plain lines, or a rich live panel on a terminal (stderr: stdout is for results)."""

    def __init__(self, view: JobView, live: bool, console: Console | None = None) -> None:
        self.view = view
        self.console = console or Console(stderr=True)
        self.live = Live(view, console=self.console, refresh_per_second=4, transient=False) if live else None

    def __enter__(self) -> _Display:
        if self.live:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.live.stop()

    def show(self, event: dict[str, Any]) -> None:
        self.view.apply(event)
        if self.live:
            self.live.update(self.view, refresh=True)
            return
        line = plain_line(event)
        if line:
            print(line, file=sys.stderr, flush=True)

    def say(self, text: str) -> None:
        if self.live:
            self.live.console.print(text)
        else:
            print(text, file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        if self.live:
            self.live.stop()
        try:
            yield
        finally:
            if self.live:
                self.live.start()


def answer_clarification(gw: Gateway, job_id: str, questions: list[str]) -> bool:
    """Ask the planner's questions at the terminal and send the answers; without an
    answer (end of input) the job is cancelled rather than left waiting until its TTL."""
    print("\nThe planner needs clarification before researching:", file=sys.stderr)
    answers = []
    for n, question in enumerate(questions, start=1):
        print(f"  {n}. {question}", file=sys.stderr, flush=True)
        print("     > ", end="", file=sys.stderr, flush=True)  # stdout is for the report
        try:
            reply = input().strip()
        except EOFError:
            reply = ""
        if reply:
            answers.append(f"{question} {reply}")
    if not answers:
        gw.call("POST", f"/api/research/jobs/{job_id}/cancel", what=f"cancel job {job_id}")
        print(f"no answer given; job {job_id} cancelled", file=sys.stderr)
        return False
    gw.call("POST", f"/api/research/jobs/{job_id}/clarification", json={"answer": "\n".join(answers)}, what="clarification")
    print("answer sent; research continues", file=sys.stderr, flush=True)
    return True


def _send_plan(gw: Gateway, job_id: str, body: dict[str, Any]) -> str | None:
    """None when the gateway took the plan; why it refused it (422) otherwise."""
    try:
        gw.call("POST", f"/api/research/jobs/{job_id}/plan", json=body, what="plan review")
    except CliExit as exc:
        if exc.code == EXIT_USAGE:
            return str(exc)
        raise
    return None


def _cancel(gw: Gateway, job_id: str) -> None:
    gw.call("POST", f"/api/research/jobs/{job_id}/cancel", what=f"cancel job {job_id}")


def follow(gw: Gateway, job_id: str, *, live: bool, max_iterations: int | None = None,
           console: Console | None = None) -> dict[str, Any]:
    """Show the job's progress until it ends; the job as it ended."""
    questions: list[str] = []
    with _Display(JobView(job_id, max_iterations), live, console) as display:
        for event in _events(gw, job_id):
            display.show(event)
            if event.get("type") == "clarification":
                questions = list(event.get("questions") or [])
            # Answer once the gateway has stored the wait (its status event follows
            # the planner's questions), or it would answer 409; a replayed wait that
            # was answered (or cancelled) long ago is not asked again.
            elif (event.get("type") == "status" and event.get("status") == "AWAITING_INPUT"
                  and (waiting := gw.job(job_id))["status"] == "AWAITING_INPUT"):
                with display.paused():
                    if waiting.get("plan") is not None:  # --review-plan: services/cli/plan_review.py
                        answered = review_plan(job_id, waiting["plan"], send=lambda body: _send_plan(gw, job_id, body),
                                               cancel=lambda: _cancel(gw, job_id))
                    else:
                        answered = answer_clarification(gw, job_id, questions)
                if not answered:
                    break
    return gw.job(job_id)


def live_wanted(args: argparse.Namespace) -> bool:
    return not getattr(args, "plain", False) and Console(stderr=True).is_terminal


def ended(job: dict[str, Any]) -> int:
    """The exit code of a job that ended, with its reason on stderr."""
    status = job.get("status", "")
    if status != "COMPLETED":
        print(f"job {job.get('job_id')} ended {status}" + (f": {job['error']}" if job.get("error") else ""), file=sys.stderr)
    return STATUS_EXIT.get(status, EXIT_FAILED)


def _watching(gw: Gateway, job_id: str, args: argparse.Namespace, max_iterations: int | None) -> int:
    try:
        job = follow(gw, job_id, live=live_wanted(args), max_iterations=max_iterations)
    except KeyboardInterrupt:
        print(f"\nstopped watching; job {job_id} goes on (`deepresearch cancel {job_id}` stops it)", file=sys.stderr)
        return EXIT_INTERRUPTED
    code = ended(job)
    if code == EXIT_OK and getattr(args, "output", None):
        write_report(gw, job_id, Path(args.output), getattr(args, "format", None))
    return code


# -- commands --------------------------------------------------------------------


def cmd_watch(args: argparse.Namespace, settings: CliSettings) -> int:
    with _gateway(settings) as gw:
        job = gw.job(args.job_id)
        return _watching(gw, args.job_id, args, job.get("max_iterations"))


def cmd_resume(args: argparse.Namespace, settings: CliSettings) -> int:
    with _gateway(settings) as gw:
        job = gw.call("POST", f"/api/research/jobs/{args.job_id}/resume", what=f"resume job {args.job_id}").json()
        print(f"job {args.job_id} resumed ({job.get('status', '?')})", file=sys.stderr, flush=True)
        return _watching(gw, args.job_id, args, job.get("max_iterations"))


def cmd_cancel(args: argparse.Namespace, settings: CliSettings) -> int:
    with _gateway(settings) as gw:
        job = gw.call("POST", f"/api/research/jobs/{args.job_id}/cancel", what=f"cancel job {args.job_id}").json()
    print(f"job {args.job_id}: {job.get('status')}")
    return EXIT_OK


def _ago(stamp: str | None) -> str:
    return (stamp or "")[:19].replace("T", " ")


def cmd_jobs(args: argparse.Namespace, settings: CliSettings) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    if args.status:
        params["status"] = args.status.upper()
    with _gateway(settings) as gw:
        listing = gw.call("GET", "/api/research/jobs", params=params, what="jobs").json()
    if args.json:
        print(json.dumps(listing, indent=2))
        return EXIT_OK
    items = listing.get("items", [])
    if not items:
        print("no jobs", file=sys.stderr)
        return EXIT_OK
    print(f"{'JOB':<36}  {'STATUS':<14}  {'PROGRESS':>8}  {'CREATED (UTC)':<19}  QUESTION")
    for job in items:
        question = " ".join(str(job.get("question", "")).split())
        print(f"{job['job_id']:<36}  {job['status']:<14}  {float(job.get('progress') or 0) * 100:7.0f}%  "
              f"{_ago(job.get('created_at')):<19}  {question[:60] + ('…' if len(question) > 60 else '')}")
    if listing.get("total", 0) > len(items):
        print(f"({len(items)} of {listing['total']}; --limit shows more)", file=sys.stderr)
    return EXIT_OK


def cmd_status(args: argparse.Namespace, settings: CliSettings) -> int:
    with _gateway(settings) as gw:
        job = gw.job(args.job_id)
    if args.json:
        print(json.dumps(job, indent=2))
        return EXIT_OK
    usage = job.get("token_usage") or {}
    rows = [
        ("job", job.get("job_id")), ("status", job.get("status")), ("question", job.get("question")),
        ("stage", f"{job.get('stage') or '-'} (iteration {int(job.get('iteration') or 0) + 1} of at most {job.get('max_iterations')})"),
        ("progress", f"{float(job.get('progress') or 0) * 100:.0f}%"),
        ("tokens", f"{int(usage.get('input_tokens', 0)) + int(usage.get('output_tokens', 0)):,} in {usage.get('llm_calls', 0)} model calls"),
        ("created", _ago(job.get("created_at"))), ("finished", _ago(job.get("finished_at")) or "-"),
    ]
    if "cost_usd" in usage:  # USD at the configured prices, when the gateway reports it
        rows.insert(-2, ("cost", cost_text(float(usage.get("cost_usd") or 0), usage.get("unpriced_models") or [])))
    if job.get("error"):
        rows.append(("error", job["error"]))
    if job.get("partial"):
        rows.append(("partial", "yes: the report was written from what the job had when it stopped"))
    for name, value in rows:
        print(f"{name:<9} {value}")
    return EXIT_OK


def _format(path: Path | None, given: str | None) -> str:
    if given:
        return given
    suffix = path.suffix.lower().lstrip(".") if path else ""
    return {"markdown": "md", "htm": "html"}.get(suffix, suffix) if suffix in (*FORMATS, "markdown", "htm") else "md"


def write_report(gw: Gateway, job_id: str, path: Path | None, fmt: str | None) -> None:
    """The completed job's report (or result object, for json) to ``path``, or stdout."""
    fmt = _format(path, fmt)
    if fmt == "json":
        body = gw.call("GET", f"/api/research/jobs/{job_id}/result", what=f"result of job {job_id}").json()
        content = (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode()
    else:
        content = gw.call("GET", f"/api/research/jobs/{job_id}/report", params={"format": fmt}, what=f"report of job {job_id}").content
    if path is None:
        if fmt in ("pdf", "docx") and sys.stdout.isatty():
            raise CliExit(EXIT_USAGE, f"a {fmt} report is binary: write it to a file with -o FILE")
        sys.stdout.buffer.write(content)
        sys.stdout.flush()
        return
    path.write_bytes(content)
    print(f"wrote {path} ({fmt}, {len(content):,} bytes)", file=sys.stderr)


def cmd_result(args: argparse.Namespace, settings: CliSettings) -> int:
    with _gateway(settings) as gw:
        job = gw.job(args.job_id)
        if job["status"] != "COMPLETED":
            if job["status"] in TERMINAL:
                return ended(job)
            raise CliExit(EXIT_CONFLICT, f"job {args.job_id} is {job['status']}: no result yet (`deepresearch watch {args.job_id}`)")
        write_report(gw, args.job_id, Path(args.output) if args.output else None, args.format)
    return EXIT_OK


def cmd_trace(args: argparse.Namespace, settings: CliSettings) -> int:
    from services.cli.trace import print_trace

    with _gateway(settings) as gw:
        gw.job(args.job_id)  # an unknown job is "not found" before the trace is asked for
        try:
            trace = gw.call("GET", f"/api/research/jobs/{args.job_id}/trace", what=f"trace of job {args.job_id}").json()
        except CliExit as exc:
            if exc.code == EXIT_GONE:
                raise CliExit(EXIT_GONE, f"job {args.job_id} has no trace (yet): {exc}") from exc
            raise
    if args.json:
        print(json.dumps(trace, indent=2, ensure_ascii=False))
    else:
        print_trace(trace)
    return EXIT_OK


Command = Callable[[argparse.Namespace, CliSettings], int]


def see_through(gw: Gateway, job_id: str, args: argparse.Namespace, *, max_iterations: int | None,
                shown: dict[str, Any] | None = None) -> int:
    """Follow a submitted job to its end as ``ask`` does (Ctrl-C cancels it), then write
    its report (``-o``), print the result object (``--json``, with ``shown`` added) or
    print the report; the exit code says how it ended."""
    try:
        job = follow(gw, job_id, live=live_wanted(args), max_iterations=max_iterations)
    except KeyboardInterrupt:
        gw.call("POST", f"/api/research/jobs/{job_id}/cancel", what=f"cancel job {job_id}")
        print(f"job {job_id} cancelled", file=sys.stderr)
        return EXIT_INTERRUPTED
    code = ended(job)
    if code:
        return code
    if args.output:
        write_report(gw, job_id, Path(args.output), args.format)
    if args.json:
        result = gw.call("GET", f"/api/research/jobs/{job_id}/result", what=f"result of job {job_id}").json()
        print(json.dumps(result["output"] | {"job_id": job_id, **(shown or {}), "confidence": result["confidence"],
                                             "tokenUsage": result["tokenUsage"]}, indent=2))
    elif not args.output:
        write_report(gw, job_id, None, "md")
    return 0

