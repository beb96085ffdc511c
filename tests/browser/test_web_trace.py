"""The research trace on the web page, in a real Chromium (Debian's ``chromium``, driven
by Playwright): a completed job's page has a closed *Research trace* box below the
report; opened, it shows what ``GET /api/research/jobs/{id}/trace`` says, pass by pass
(the searches per provider, the checklist after the pass, each stage's row), the
research memory and the plan review. Queries, checklist items and plan changes with
markup in them stay text. Screenshots go to the test's temporary directory
(``web-trace-*.png``)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.browser.chromium import expect
from tests.integration.conftest import running_system
from tests.integration.harness import System


KEY = "key-web"
QUESTION = "How did automation change lighthouse keeping?"
HOSTILE_QUERY = '<img src=x onerror="window.__pwned=1"> lighthouse'
HOSTILE_ITEM = "<script>window.__pwned=2</script> keeper <b>duties</b>"
HOSTILE_CHANGE = '<a href="javascript:window.__pwned=3">click</a>'
INSERT = (
    "INSERT INTO research_trace_stages (job_id, stage, iteration, duration_s, input_tokens, output_tokens, data, recorded_at) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, now())"
)


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    with running_system(tmp_root, postgres, env_overrides={"RESEARCH_API_KEYS": f"{KEY}:web"}) as s:
        yield s


def _insert(system: System, *args: Any) -> None:
    """A trace row, written from another thread: Playwright's loop runs in this one."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(system.sql, INSERT, *args).result()


def _trace(system: System, job_id: str) -> dict[str, Any]:
    with system.client(KEY) as c:
        r = c.get(f"/api/research/jobs/{job_id}/trace")
    assert r.status_code == 200, r.text
    return r.json()


def _finished_trace(system: System, job_id: str) -> dict[str, Any]:
    """Once synthesis's row is in (it may be stored just after the result)."""
    deadline = time.monotonic() + 15
    while True:
        trace = _trace(system, job_id)
        if any(st["stage"] == "synthesize" for it in trace["iterations"] for st in it["stages"]) or time.monotonic() > deadline:
            return trace
        time.sleep(0.1)


def test_the_trace_of_a_completed_job_is_shown(system: System, browser, tmp_root: Path) -> None:  # noqa: ANN001
    shots = tmp_root / "screenshots"
    shots.mkdir(exist_ok=True)
    job_id = system.submit(QUESTION, key=KEY, max_iterations=1)
    job = system.wait_terminal(job_id, key=KEY)
    assert job["status"] == "COMPLETED", (job["error"], system.logs())
    real = _finished_trace(system, job_id)
    assert real["iterations"] and real["iterations"][0]["queries"] and real["iterations"][0]["checklist"]

    # Rows as the stages and the plan review would write them, with markup in their
    # texts: a quick context search (iteration -1) with a cost, a later pass's scoring
    # with its checklist and entailment judge, and a plan the user changed.
    context_search = {"queries": [{"provider": "web", "text": HOSTILE_QUERY}],
                      "results": {"web": {"count": 4, "new_sources": 3}},
                      "tokens": {"cost_usd": 0.0042, "unpriced_models": []}}
    scoring = {"checklist": [{"id": "c9", "description": HOSTILE_ITEM, "status": "partial"}],
               "claims_kept": 2, "claims_rejected": 1,
               "judge": {"statements": 3, "entailed": 2, "vetoed": 1, "status": "ran", "model": "judge-model", "tokens": 40}}
    review = {"approved_as_is": False,
              "changes": [{"part": "checklist", "action": "added", "id": "c9", "after": HOSTILE_CHANGE}]}
    _insert(system, job_id, "retrieve", -1, 1.5, 120, 30, json.dumps(context_search))
    _insert(system, job_id, "score", 1, 2.25, 300, 50, json.dumps(scoring))
    _insert(system, job_id, "plan_review", 0, 12.0, 0, 0, json.dumps(review))
    trace = _trace(system, job_id)
    iterations = trace["iterations"]
    assert [it["iteration"] for it in iterations] == [-1, 0, 1]
    assert trace["iterations"][1] == real["iterations"][0]

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(f"sessionStorage.setItem('deepresearch.apiKey', {KEY!r});")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{system.url}/jobs/{job_id}")
    expect(page.locator("#report h1")).to_be_visible()

    view = page.locator("#trace-view")
    expect(view).to_be_visible()
    assert view.evaluate("d => d.open") is False  # closed by default
    expect(page.locator("#trace-body .trace-iteration")).to_have_count(3)  # filled when the job ended
    expect(page.locator("#trace-body .trace-iteration").first).to_be_hidden()
    view.locator("summary").click()
    assert view.evaluate("d => d.open") is True
    sections = page.locator("#trace-body .trace-iteration")
    expect(sections).to_have_count(len(iterations))
    expect(sections.nth(0).locator("h3")).to_have_text("Quick context search (before the plan)")
    expect(sections.nth(1).locator("h3")).to_have_text("Iteration 1")
    expect(sections.nth(2).locator("h3")).to_have_text("Iteration 2")

    for n, it in enumerate(iterations):
        section = sections.nth(n)
        # The searches, grouped by provider, with each query's text.
        queries = section.locator(".trace-queries li")
        expect(queries).to_have_count(len(it["queries"]))
        shown = sorted(queries.all_text_contents())
        assert shown == sorted(q["text"] for q in it["queries"])
        providers = {q["provider"] for q in it["queries"]} | set(it["results"])
        expect(section.locator("table.trace-searches tbody tr")).to_have_count(len(providers))
        # The checklist after the pass.
        descriptions = [c["description"] for c in it["checklist"]]
        for description in descriptions:
            expect(section.locator("table.trace-checklist td", has_text=description).first).to_have_text(description)
        # One row per stage, in the trace's order.
        stage_rows = section.locator("table.trace-stages tbody tr")
        expect(stage_rows).to_have_count(len(it["stages"]))
        assert [stage_rows.nth(i).locator("td").first.text_content() for i in range(len(it["stages"]))] == \
            [st["stage"] for st in it["stages"]]

    first = iterations[1]
    assert first["queries"][0]["text"] in sections.nth(1).inner_text()
    if first["claims_kept"] is not None:
        expect(sections.nth(1).locator(".trace-claims")).to_have_text(
            f"Claims: {first['claims_kept']} kept, {first['claims_rejected']} rejected")
    # Cost when above zero, the judge's counts when it ran.
    expect(sections.nth(0).locator("table.trace-stages tbody tr", has_text="retrieve")).to_contain_text("$0.0042")
    expect(sections.nth(0).locator("table.trace-stages tbody tr", has_text="retrieve")).to_contain_text("120")
    expect(sections.nth(2).locator("table.trace-stages tbody tr", has_text="score")).to_contain_text("3 asked, 2 entailed, 1 vetoed")
    expect(sections.nth(2).locator(".trace-claims")).to_have_text("Claims: 2 kept, 1 rejected")

    # The research memory and the plan review.
    memory = page.locator("#trace-body .trace-memory")
    expect(memory.locator("dt", has_text="Insights").locator("xpath=following-sibling::dd")).to_have_text(
        str(len(trace["memory"]["insights"])))
    for gap in trace["memory"]["gaps"]:
        expect(memory.locator(".trace-gaps li", has_text=gap["description"]).first).to_be_visible()
    expect(page.locator("#trace-body .trace-review")).to_contain_text("1 change(s) by the user")
    expect(page.locator("#trace-body .trace-changes li")).to_have_text(f"added checklist c9: {HOSTILE_CHANGE}")

    # Markup in the trace is text: no element came of it, no script ran.
    expect(sections.nth(0).locator(".trace-queries li")).to_have_text(HOSTILE_QUERY)
    expect(sections.nth(2).locator("td", has_text="keeper")).to_have_text(HOSTILE_ITEM)
    assert view.locator("img, script, b, a").count() == 0
    assert page.evaluate("window.__pwned") is None
    page.screenshot(path=shots / "web-trace.png", full_page=True)
    view.screenshot(path=shots / "web-trace-box.png")

    # Opening it again reads the trace again: a new row shows up.
    view.locator("summary").click()
    _insert(system, job_id, "digest", 2, 0.5, 0, 0, "{}")
    view.locator("summary").click()
    expect(sections).to_have_count(4)
    expect(sections.nth(3).locator("h3")).to_have_text("Iteration 3")
    assert errors == [], errors
