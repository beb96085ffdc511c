"""The server drill of `bench/chaos.py --servers`, small: `deepresearch up` runs 4 jobs
while its PostgreSQL and then its nats-server are SIGKILLed. Each is ready again
within 15 s of its return; every job answered 202 completes exactly once; none is
stored without a 202; a submission while PostgreSQL is down is answered 503 with
Retry-After (and retried with its Idempotency-Key); nothing answers anything else."""

from __future__ import annotations

from pathlib import Path

from bench.chaos_servers import READY_TARGET_S, RECORDS, parse_args, report, run


def test_jobs_complete_exactly_once_while_up_loses_postgres_and_nats(tmp_root: Path) -> None:
    args = parse_args(["--jobs", "4", "--kills", "postgres,nats"])
    found = run(args, tmp_root / "srv-drill")
    text = report(found, args)
    print(text)  # noqa: T201 - the figures the drill measured

    assert [o.server for o in found.outages] == ["postgres", "nats"], text
    for o in found.outages:
        assert o.ready_after_return_s is not None and o.ready_after_return_s <= READY_TARGET_S, text
    assert len(found.accepted) == 4 and found.completed == 4, text
    for job_id in found.accepted:  # exactly once: one of each record, none missing
        assert all(found.per_job[job_id][k] == 1 for k in RECORDS), (job_id, found.per_job[job_id])
    assert not found.unanswered, text
    assert not found.bad_answers, text
    assert any(down == "postgres" and answer == "503 + Retry-After" for down, answer in found.answers), text
    assert not found.missed(), text
