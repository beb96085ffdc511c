"""Follow-up questions on the web page, in a real Chromium (Debian's ``chromium``, driven
by Playwright): a completed job offers a follow-up form; asking opens the new job, which
says "Follow-up of" with a link to its parent and runs to a report; the parent lists it;
a running job offers no form, and an empty question is refused with the reason.
Screenshots go to the test's temporary directory (``web-follow-up-*.png``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.chromium import expect
from tests.integration.conftest import running_system
from tests.integration.harness import System


KEY = "key-web"
QUESTION = "How did automation change lighthouse keeping?"
FOLLOW_UP = "What did lighthouse keepers maintain before automation?"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    with running_system(tmp_root, postgres, env_overrides={"RESEARCH_API_KEYS": f"{KEY}:web"}) as s:
        yield s


def test_a_completed_job_is_followed_up_from_the_page(system: System, browser, tmp_root: Path) -> None:  # noqa: ANN001
    shots = tmp_root / "screenshots"
    shots.mkdir(exist_ok=True)
    parent = system.submit(QUESTION, key=KEY, max_iterations=1)
    assert system.wait_terminal(parent, key=KEY)["status"] == "COMPLETED"
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(f"sessionStorage.setItem('deepresearch.apiKey', {KEY!r});")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{system.url}/jobs/{parent}")
    expect(page.locator("#report h1")).to_be_visible()
    expect(page.locator("#job-parent")).to_be_hidden()
    form = page.locator("#follow-up-form")
    expect(form).to_be_visible()
    # Whitespace only: the gateway's 422 is shown, and nothing is submitted.
    page.fill("#follow-up-question", "   ")
    page.click("#follow-up-send")
    expect(page.locator("#follow-up-error")).to_contain_text("question")
    assert page.url.endswith(parent)

    page.fill("#follow-up-question", FOLLOW_UP)
    page.click("#follow-up-send")
    page.wait_for_url(lambda url: re.search(r"/jobs/[0-9a-f-]{36}$", url) is not None and parent not in url)
    expect(page.locator("#job-question")).to_have_text(FOLLOW_UP)
    link = page.locator("#job-parent a")
    expect(page.locator("#job-parent")).to_contain_text("Follow-up of")
    expect(link).to_have_text(QUESTION)
    expect(page.locator("#job-status")).to_have_text("COMPLETED", timeout=60_000)
    expect(page.locator("#report h1")).to_be_visible()
    expect(page.locator("#report")).to_contain_text(f"Follow-up of job {parent}")
    page.screenshot(path=shots / "web-follow-up-child.png", full_page=True)

    link.click()  # back to the parent, which lists its follow-up
    page.wait_for_url(f"**/jobs/{parent}")
    expect(page.locator("#job-follow-ups-list a")).to_have_text(FOLLOW_UP)
    expect(page.locator("#follow-up-question")).to_have_value("")
    page.screenshot(path=shots / "web-follow-up-parent.png", full_page=True)
    assert errors == [], errors


# The job's status and whether the follow-up form shows, read in one instant.
_STATUS_AND_FORM = """() => {
    const form = document.querySelector('#follow-up-form');
    return [document.querySelector('#job-status').textContent, form.checkVisibility()];
}"""


def test_a_running_job_offers_no_follow_up(system: System, browser) -> None:  # noqa: ANN001
    context = browser.new_context()
    context.add_init_script(f"sessionStorage.setItem('deepresearch.apiKey', {KEY!r});")
    page = context.new_page()
    job_id = system.submit("Why were lighthouses automated?", key=KEY, max_iterations=1)
    page.goto(f"{system.url}/jobs/{job_id}")
    expect(page.locator("#job-question")).to_have_text("Why were lighthouses automated?")
    # The status and the form are read in one instant, again and again while the job
    # runs: read apart, the job may complete between the two reads and show the form.
    for _ in range(600):
        status, shown = page.evaluate(_STATUS_AND_FORM)
        if status == "COMPLETED":
            break
        assert not shown, f"the follow-up form is shown while the job is {status}"
        page.wait_for_timeout(100)
    expect(page.locator("#job-status")).to_have_text("COMPLETED", timeout=60_000)
    expect(page.locator("#follow-up-form")).to_be_visible()

