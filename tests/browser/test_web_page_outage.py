"""The web page through a NATS outage, in a real Chromium: the job's event stream ends
with the gateway's `error` event, the page shows its message, reconnects with
Last-Event-ID when NATS is back and goes on with the events after the last one seen.
A gateway alone (no stages): the job stays PROCESSING until it is cancelled."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.chromium import expect, launched
from tests.integration.gateways import Gateways
from tests.integration.test_sse_outage import _progress, _ready, _running


@pytest.fixture(scope="module")
def gw(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    g = Gateways(tmp_root / ("web-outage-" + uuid.uuid4().hex[:6]), postgres).start(1)
    try:
        yield g
    finally:
        g.stop()


def test_the_page_shows_a_nats_outage_and_resumes_the_events_after_it(gw: Gateways, tmp_root: Path) -> None:
    assert gw.nats is not None
    job_id = _running(gw)
    # Launched after the job runs: the helpers run their own event loops, Playwright's sync API one in this thread.
    with launched() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{gw.urls[0]}/jobs/{job_id}")
        expect(page.locator("#job-status")).to_have_text("PROCESSING", timeout=30_000)
        gw.nats.stop()
        try:
            expect(page.locator("#job-error")).to_be_visible(timeout=20_000)
            expect(page.locator("#job-error")).to_contain_text("NATS is unreachable")
            page.screenshot(path=str(tmp_root / f"web-outage-{job_id[:8]}.png"))
        finally:
            gw.nats.start()
        _ready(gw)
        expect(page.locator("#job-error")).to_be_hidden(timeout=30_000)  # reconnected
        # Playwright's sync API runs an event loop in this thread: publish from another.
        with ThreadPoolExecutor(1) as pool:
            pool.submit(_progress, gw, job_id, "after the outage").result()
        expect(page.locator("#job-message")).to_have_text("plan: after the outage", timeout=20_000)
        page.locator("#cancel-button").click()
        expect(page.locator("#job-status")).to_have_text("CANCELLED", timeout=20_000)
        assert errors == [], errors
