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
import sys

import httpx

from services.cli.jobs import Gateway, gateway_url, see_through
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
        return see_through(gw, job_id, args, max_iterations=gw.job(job_id).get("max_iterations"),
                           shown={"parent_job_id": args.job_id})
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
