"""Plan review on the web page, in a real Chromium (Debian's ``chromium``, driven by
Playwright): a person ticks "Let me review the plan first", gets the plan as an editable
list, has an empty checklist refused with the field named while the job keeps waiting,
then removes and adds items, rewords the question and approves; the report follows
their plan. Screenshots go to the test's temporary directory (``web-plan-*.png``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.chromium import expect
from tests.integration.conftest import running_system
from tests.integration.harness import System


KEY = "key-web"
QUESTION = "How do lighthouses use Fresnel lenses?"
ADDED = "Which lighthouses still turn a Fresnel lens today"
REFINED = "How did Fresnel lenses make lighthouse beams reach further?"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    with running_system(tmp_root, postgres, env_overrides={"RESEARCH_API_KEYS": f"{KEY}:web"}) as s:
        yield s


def test_the_plan_is_reviewed_and_edited_on_the_page(system: System, browser, tmp_root: Path) -> None:  # noqa: ANN001
    shots = tmp_root / "screenshots"
    shots.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(f"sessionStorage.setItem('deepresearch.apiKey', {KEY!r});")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(system.url + "/")
    page.fill("#question", QUESTION)
    page.fill("#max-iterations", "1")
    page.check("#review-plan")
    page.click("#submit")
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}$"))
    job_id = page.url.rsplit("/", 1)[1]

    view = page.locator("#plan-view")
    expect(view).to_be_visible(timeout=30_000)
    expect(page.locator("#job-status")).to_have_text("AWAITING_INPUT")
    with system.client(KEY) as c:
        plan = c.get(f"/api/research/jobs/{job_id}").json()["plan"]
    items = page.locator("#plan-checklist li")
    expect(items).to_have_count(len(plan["checklist"]))
    expect(page.locator("#plan-steps li")).to_have_count(len(plan["steps"]))
    expect(page.locator("#plan-question")).to_have_value(plan["refined_question"])
    page.screenshot(path=shots / "web-plan-review.png")

    # Every item removed: refused, the field named, the job still waiting.
    while items.count():
        items.first.get_by_role("button", name="Remove").click()
    page.click("#plan-send")
    expect(page.locator("#plan-error")).to_contain_text("checklist")
    expect(view).to_be_visible()
    with system.client(KEY) as c:
        assert c.get(f"/api/research/jobs/{job_id}").json()["status"] == "AWAITING_INPUT"

    # A new item, a reworded question: approved.
    page.click("#plan-add-item")
    items.last.locator(".plan-description").fill(ADDED)
    page.fill("#plan-question", REFINED)
    page.click("#plan-send")
    expect(view).to_be_hidden(timeout=15_000)
    finished = system.wait_terminal(job_id, key=KEY, timeout=90)
    assert finished["status"] == "COMPLETED", finished["error"]
    expect(page.locator("#job-status")).to_have_text("COMPLETED", timeout=15_000)
    assert {(c["part"], c["action"]) for c in finished["plan_changes"]} >= {
        ("checklist", "removed"), ("checklist", "added"), ("refined_question", "changed")}
    with system.client(KEY) as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()
    coverage = result["output"]["checklist_coverage"]
    assert [*coverage["satisfied"], *coverage["gaps"]] and ADDED in " | ".join([*coverage["satisfied"], *coverage["gaps"]])
    assert all(item["description"] not in " | ".join(coverage["gaps"] + coverage["satisfied"]) for item in plan["checklist"])
    expect(page.locator("#report")).to_contain_text(REFINED)
    page.screenshot(path=shots / "web-plan-done.png")
    assert errors == [], errors
