"""``deepresearch follow-up ID "question"``: ask a follow-up question of a completed job.

The new job starts from that job's research (``POST /api/research/jobs/{id}/follow-up``)
and is followed as ``ask`` follows one: the same live display, Ctrl-C cancels it, the
report is printed (or written with ``-o``, or the result object with ``--json``), and
the exit codes are ``ask``'s (a job that is not COMPLETED answers 5, an unknown one 4).
With no gateway answering it starts the system for the job, as ``ask`` does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

import httpx

from services.cli.jobs import EXIT_INTERRUPTED, Gateway, ended, follow, gateway_url, live_wanted, write_report
from shared.settings import CliSettings

__all__ = ["cmd_follow_up", "follow_up_via"]


def _answers(url: str) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    return False


def follow_up_via(url: str, args: argparse.Namespace, api_key: str | None) -> int:
    """Submit the follow-up to the gateway at ``url`` and follow it to its end."""
    gw = Gateway(url, api_key)
    try:
        accepted = gw.call("POST", f"/api/research/jobs/{args.job_id}/follow-up", json={"question": args.question},
                           what=f"follow-up of job {args.job_id}").json()
        job_id = accepted["job_id"]
        print(f"job {job_id} submitted to {url}, following up job {args.job_id}", file=sys.stderr, flush=True)
        try:
            job = follow(gw, job_id, live=live_wanted(args), max_iterations=gw.job(job_id).get("max_iterations"))
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
            print(json.dumps(result["output"] | {"job_id": job_id, "parent_job_id": args.job_id,
                                                 "confidence": result["confidence"], "tokenUsage": result["tokenUsage"]},
                             indent=2))
        elif not args.output:
            write_report(gw, job_id, None, "md")
        return 0
    finally:
        gw.close()


def cmd_follow_up(args: argparse.Namespace, settings: CliSettings) -> int:
    from services.cli.supervisor import running_system

    key = settings.research_api_key.get_secret_value() if settings.research_api_key else None
    url = gateway_url(settings)
    if _answers(url):
        return follow_up_via(url, args, key)
    print("starting the system for this job (servers and services; logs in the data folder)", file=sys.stderr, flush=True)
    with running_system(data_dir=settings.data_dir, nats_url=settings.nats_url, database_url=settings.database_url,
                        quiet=True) as system:
        return follow_up_via(system.url, args, key)
