"""The E-utilities rate limit holds across OS processes: two processes, each with its own
NATS connection, send requests to a fake that answers 429 beyond 3 requests in any
one-second window. With the shared limiter none is refused; without it, the same load
is refused (so the fake's limit is real and the first result means something).

Each worker opens its HTTP connection before it starts pacing, as the long-lived
client in the PubMed provider does: the first request's TCP set-up is not part of the
schedule, and on a loaded host it could otherwise arrive late enough to crowd the next
window."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from nats.js import JetStreamContext

from services.retrieval.ratelimit import SAFETY_MARGIN, KvRateLimiter, ncbi_rate
from tests.fakes.eutils import Article, FakeEutils

REQUESTS_PER_PROCESS = 6

# Each worker process: its own NATS connection and limiter, then N esearch requests.
WORKER = """
import asyncio, json, sys, time
import httpx, nats
from services.retrieval.ratelimit import KvRateLimiter

async def main(nats_url, base_url, name, n, paced):
    nc = await nats.connect(nats_url)
    limiter = KvRateLimiter(nc.jetstream(), name=name, rate_per_s=3)
    sent = []
    async with httpx.AsyncClient() as http:
        await http.get(base_url + "/")  # opens the connection; the fake does not count it
        for _ in range(n):
            if paced == "1":
                await limiter.acquire()
            sent.append(time.time())
            await http.get(base_url + "/esearch.fcgi", params={"db": "pubmed", "term": "bees", "retmode": "json", "tool": "t", "email": "t@example.org"})
    await nc.close()
    print(json.dumps(sent))

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]))
"""


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils([Article(pmid="1", title="Bees", abstract=[(None, "Bees.")])]) as fake:
        yield fake


def run_two_processes(server_url: str, base_url: str, *, paced: bool) -> list[float]:
    """Both workers' send times, sorted."""
    name = f"test-{uuid.uuid4().hex}"
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, server_url, base_url, name, str(REQUESTS_PER_PROCESS), "1" if paced else "0"],
                         stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    sent: list[float] = []
    for p in procs:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0
        sent += json.loads(out.strip().splitlines()[-1])
    return sorted(sent)


def max_in_window(times: list[float], window: float = 1.0) -> int:
    best, j = 0, 0
    for i, t in enumerate(times):
        while times[j] <= t - window:
            j += 1
        best = max(best, i - j + 1)
    return best


async def test_two_processes_stay_under_the_limit(nats_url: str, js: JetStreamContext, eutils: FakeEutils) -> None:
    started = time.time()
    sent = await asyncio.to_thread(run_two_processes, nats_url, eutils.base_url, paced=True)
    # The schedule as sent: any 3 + 1 sends span more than a second plus the half of
    # the margin kept for the trip to the server (less a few ms of clock reading).
    assert max_in_window(sent, window=1.0 + (SAFETY_MARGIN - 1.0) / 2 - 0.005) <= 3
    arrivals = eutils.arrivals()
    assert len(arrivals) == 2 * REQUESTS_PER_PROCESS
    assert eutils.rejected == 0
    assert max_in_window(arrivals) <= 3
    # ... and the processes really shared one schedule: 12 requests at 3/s take ~4 s.
    assert arrivals[-1] - min(arrivals) >= (len(arrivals) - 1) / 3 - 0.2
    assert arrivals[0] >= started


async def test_the_same_load_without_the_limiter_is_refused(nats_url: str, eutils: FakeEutils) -> None:
    await asyncio.to_thread(run_two_processes, nats_url, eutils.base_url, paced=False)
    assert eutils.rejected > 0


async def test_a_late_wake_up_gives_its_slot_up(js: JetStreamContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that wakes long after its slot (a stalled event loop, a busy host)
    reserves a new slot instead of sending late into the next requests' window."""
    limiter = KvRateLimiter(js, name=f"test-{uuid.uuid4().hex}", rate_per_s=50)
    reserve = limiter.reserve
    slots: list[float] = []

    async def first_one_stale() -> float:
        slot = await reserve()
        slots.append(slot - 1.0 if not slots else slot)  # as if the sleep had overrun by a second
        return slots[-1]

    monkeypatch.setattr(limiter, "reserve", first_one_stale)
    await limiter.acquire()
    assert limiter.forfeits == 1 and len(slots) == 2 and slots[1] > slots[0] + 1.0


async def test_slots_are_spaced_by_the_interval(js: JetStreamContext) -> None:
    limiter = KvRateLimiter(js, name=f"test-{uuid.uuid4().hex}", rate_per_s=50)
    slots = [await limiter.reserve() for _ in range(5)]
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert all(g >= SAFETY_MARGIN / 50 - 1e-6 for g in gaps)


async def test_concurrent_reservations_never_share_a_slot(js: JetStreamContext) -> None:
    name = f"test-{uuid.uuid4().hex}"
    limiters = [KvRateLimiter(js, name=name, rate_per_s=100) for _ in range(4)]
    slots = sorted(await asyncio.gather(*(lim.reserve() for lim in limiters for _ in range(5))))
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert len(slots) == 20 and min(gaps) >= SAFETY_MARGIN / 100 - 1e-6


def test_ncbi_rate() -> None:
    assert ncbi_rate(has_key=False, configured=None) == 3
    assert ncbi_rate(has_key=True, configured=None) == 10
    assert ncbi_rate(has_key=True, configured=2.5) == 2.5
