"""The web page in a real Chromium (Debian's ``chromium``, driven by Playwright for
Python; nothing is downloaded): a person enters an API key, asks a question, watches it
run, opens a citation and sees the quoted passage highlighted in the source's text,
finds their jobs in the list, and cancels one. Screenshots go to the test's temporary
directory (``web-*.png``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.chromium import expect, playwright_api
from tests.fakes.anthropic import AnthropicFake
from tests.integration.conftest import running_system
from tests.integration.harness import System


KEY, OTHER_KEY = "key-web", "key-other"
QUESTION = "How do lighthouses use Fresnel lenses?"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    """Two users; retrieval slowed by a second a pass, so a job runs long enough to be
    watched and cancelled."""
    env = {
        "RESEARCH_API_KEYS": f"{KEY}:web,{OTHER_KEY}:other",
        "RESEARCH_CHAOS": "retrieve:delay=1",
        "RESEARCH_RATE_LIMIT_MAX": "1000",
    }
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


@pytest.fixture
def shots(tmp_root: Path, request: pytest.FixtureRequest) -> Path:
    d = tmp_root / "screenshots" / request.node.name
    d.mkdir(parents=True, exist_ok=True)
    return d


def _page(browser: playwright_api.Browser, key: str | None = KEY) -> playwright_api.Page:
    """A fresh tab; with ``key``, the page starts with that key in its session storage.
    Script errors fail the test."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    if key:
        context.add_init_script(f"sessionStorage.setItem('deepresearch.apiKey', {key!r});")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


def _no_script_errors(page: playwright_api.Page) -> None:
    assert page.errors == [], page.errors  # type: ignore[attr-defined]


def test_the_page_asks_for_an_api_key_and_keeps_it_for_the_tab(system: System, browser, shots: Path) -> None:  # noqa: ANN001
    page = _page(browser, key=None)
    page.goto(system.url + "/")
    expect(page.locator("#key-view")).to_be_visible()
    expect(page.locator("#key-message")).to_contain_text("requires an API key")
    expect(page.locator("#home-view")).to_be_hidden()
    page.screenshot(path=shots / "web-key-prompt.png")

    page.fill("#key-input", "not-a-key")
    page.click("#key-save")
    expect(page.locator("#key-message")).to_contain_text("refused this key")
    expect(page.locator("#home-view")).to_be_hidden()

    page.fill("#key-input", KEY)
    page.click("#key-save")
    expect(page.locator("#home-view")).to_be_visible()
    # The corpora come from GET /api/research/corpora, with their document counts.
    corpus = page.locator("label.corpus", has_text=system.corpus_name)
    expect(corpus).to_contain_text("3 documents")
    assert page.evaluate("sessionStorage.getItem('deepresearch.apiKey')") == KEY
    page.reload()
    expect(page.locator("#home-view")).to_be_visible()
    expect(page.locator("#key-view")).to_be_hidden()
    _no_script_errors(page)


def test_a_question_runs_live_to_a_report_whose_citation_shows_the_quoted_passage(
    system: System, browser, shots: Path, tmp_root: Path,  # noqa: ANN001
) -> None:
    page = _page(browser)
    page.goto(system.url + "/")
    page.fill("#question", QUESTION)
    page.fill("#context", "For a museum guide")
    page.check(f"input[name=corpus][value={system.corpus_name}]")
    page.check("input[name=provider][value=rag]")
    page.fill("#max-iterations", "2")
    page.click("#submit")
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}$"))
    job_id = page.url.rsplit("/", 1)[1]

    # Live: the stream moves the status, the stage and the bar before the job ends.
    expect(page.locator("#job-status")).to_have_text("PROCESSING", timeout=30_000)
    expect(page.locator("#stat-stage")).to_have_text(re.compile("plan|retrieve|digest|score|synthesize"))
    page.screenshot(path=shots / "web-running.png")
    finished = system.wait_terminal(job_id, key=KEY, timeout=90)
    assert finished["status"] == "COMPLETED", finished["error"]
    expect(page.locator("#job-status")).to_have_text("COMPLETED", timeout=15_000)
    expect(page.locator("#progress")).to_have_attribute("aria-valuenow", "100")
    expect(page.locator("#stat-elapsed")).to_have_text(re.compile(r"^\d+:\d\d$"))
    expect(page.locator("#stat-tokens")).to_contain_text("calls")

    # The request reached the gateway as the form said.
    with system.client(KEY) as c:
        job = c.get(f"/api/research/jobs/{job_id}").json()
        sources = c.get(f"/api/research/jobs/{job_id}/sources").json()["sources"]
    assert (job["context"], job["corpora"], job["providers"], job["max_iterations"]) == (
        "For a museum guide", [system.corpus_name], ["rag"], 2)
    expect(page.locator("#stat-sources")).to_have_text(re.compile(r"^[1-9]\d*$"))
    expect(page.locator("#stat-claims")).to_have_text(re.compile(r"^[1-9]\d*$"))

    # The report, rendered; its citation [1] opens source 1 with its quoted passages marked.
    report = page.locator("#report")
    expect(report.locator("h1")).to_have_text(QUESTION)
    expect(report.locator("h2", has_text="Verified Findings")).to_be_visible()
    report.locator("button.cite[data-n='1']").first.click()
    panel = page.locator("#source-panel")
    expect(panel).to_be_visible()
    marks = page.locator("#source-text mark.cited")
    expect(marks.first).to_be_visible()
    quoted = marks.all_inner_texts()
    first = next(s for s in sources if s["url"] == page.locator("#source-url").inner_text())
    with system.client(KEY) as c:
        claims = c.get(f"/api/research/jobs/{job_id}/claims").json()["claims"]
    cited = {x["quote"] for cl in claims for x in cl["citations"] if x["source_id"] == first["source_id"]}
    assert quoted and set(quoted) <= cited, (quoted, cited)
    assert all(q in report.inner_text() for q in quoted)
    expect(panel.locator("[data-score=composite_score] dd")).to_have_text(f"{round(first['composite_score'] * 100)}%")
    expect(panel.locator("[data-score=credibility_tier] dd")).to_have_text(first["credibility_tier"])
    expect(page.locator("#source-summary")).to_contain_text("verified against the archived text")

    # The report downloads (fetched with the key, saved from a blob).
    with page.expect_download() as download:
        page.click("#exports button[data-format=md]")
    assert download.value.suggested_filename == f"report-{job_id}.md"
    assert Path(download.value.path()).read_text(encoding="utf-8").startswith(f"# {QUESTION}")

    # What the checks did: sentences by level, removals, claims by level, the judge, as the
    # result's verification summary says (the offline engine: every sentence a quote).
    with system.client(KEY) as c:
        verification = c.get(f"/api/research/jobs/{job_id}/result").json()["verification"]
    assert verification["sentences"].get("quoted", 0) > 0 and verification["judge"].startswith("not run")
    box = page.locator("#verification")
    expect(box).to_be_visible()
    expect(box.locator(".levels-legend")).to_contain_text("source's own words")
    for level, count in verification["sentences"].items():
        expect(box.locator(f"#verification-sentences [data-level={level}] dd")).to_have_text(str(count))
    for level, count in verification["claims"].items():
        expect(box.locator(f"#verification-claims [data-level={level}] dd")).to_have_text(str(count))
    removed = sum(verification["sentences_removed"].values())
    expect(box.locator("#verification-removed")).to_have_text(re.compile(rf"^{removed} sentence" if removed else "^none$"))
    expect(box.locator("#verification-judge")).to_have_text(verification["judge"])

    # Verified Findings and every claim's status, each with its check level.
    expect(page.locator("#findings li").first).to_be_visible()
    expect(page.locator("#findings li .level").first).to_have_text("quoted")
    expect(page.locator("#claims-table tbody tr[data-status=verified]").first).to_be_visible()
    expect(page.locator("#claims-table tbody tr[data-status=verified] .level").first).to_have_text("quoted")
    page.screenshot(path=shots / "web-report.png", full_page=True)
    _no_script_errors(page)


def test_the_job_list_shows_only_the_users_jobs_and_opens_one(system: System, browser, shots: Path) -> None:  # noqa: ANN001
    mine = system.submit("How were fog signals sounded?", key=KEY, max_iterations=1)
    theirs = system.submit("What did lighthouse keepers record?", key=OTHER_KEY, max_iterations=1)
    system.wait_terminal(mine, key=KEY)
    page = _page(browser)
    page.goto(system.url + "/")
    row = page.locator(f"#jobs-table tr[data-job-id='{mine}']")
    expect(row).to_contain_text("How were fog signals sounded?")
    expect(row.locator(".status")).to_have_text("COMPLETED")
    expect(page.locator(f"#jobs-table tr[data-job-id='{theirs}']")).to_have_count(0)
    page.screenshot(path=shots / "web-jobs.png")

    row.locator("a").click()
    page.wait_for_url(f"**/jobs/{mine}")
    expect(page.locator("#job-question")).to_have_text("How were fog signals sounded?")
    expect(page.locator("#job-status")).to_have_text("COMPLETED")
    expect(page.locator("#report h1")).to_be_visible()
    # Back to the list, then straight to another user's job: answered like a missing one.
    page.go_back()
    expect(page.locator("#home-view")).to_be_visible()
    page.goto(f"{system.url}/jobs/{theirs}")
    expect(page.locator("#job-error")).to_contain_text("not found")
    _no_script_errors(page)


def test_a_running_job_is_cancelled_from_the_page(system: System, browser, shots: Path) -> None:  # noqa: ANN001
    page = _page(browser)
    page.goto(system.url + "/")
    page.fill("#question", "Why were lighthouses automated?")
    page.fill("#max-iterations", "5")
    page.click("#submit")
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}$"))
    job_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("#stat-stage")).to_have_text(re.compile("retrieve"), timeout=30_000)
    page.click("#cancel-button")
    expect(page.locator("#job-status")).to_have_text("CANCELLED", timeout=15_000)
    expect(page.locator("#cancel-button")).to_be_hidden()
    expect(page.locator("#result-view")).to_be_hidden()
    assert system.wait_terminal(job_id, key=KEY)["status"] == "CANCELLED"
    page.screenshot(path=shots / "web-cancelled.png")
    _no_script_errors(page)


def test_page_routes_and_static_files(system: System) -> None:
    with httpx.Client(base_url=system.url, timeout=10) as c:
        home = c.get("/")
        assert home.status_code == 200 and "text/html" in home.headers["content-type"]
        assert "script-src 'self'" in home.headers["content-security-policy"]
        assert c.get("/jobs/0b9c6c2e-1111-4c5e-9a59-6f0f5e0b7d11").status_code == 200
        assert c.get("/jobs/not-a-job").status_code == 404
        assert c.get("/static/app.js").headers["content-type"].startswith("text/javascript")
        for bad in ("/static/..%2Fpages.py", "/static/pages.py", "/static/.hidden.js", "/static/missing.js"):
            assert c.get(bad).status_code == 404, bad
        # The API behind the page needs the key like every other /api route.
        assert c.get("/api/research/corpora").status_code == 401
        listing = c.get("/api/research/corpora", headers={"Authorization": f"Bearer {KEY}"}).json()
    assert listing["corpora"][0]["name"] == system.corpus_name and listing["corpora"][0]["documents"] == 3


def test_the_report_renderer_never_turns_text_into_markup(system: System, browser) -> None:  # noqa: ANN001
    page = _page(browser)
    page.goto(system.url + "/")
    expect(page.locator("#home-view")).to_be_visible()
    out = page.evaluate("""async () => {
        const { renderMarkdown } = await import("/static/markdown.js");
        const md = '# Title <img src=x onerror="window.__x=1">\\n\\n' +
            '[a](javascript:window.__x=2) [b](https://example.org/p) **bold** *em* `<b>code</b>` [2, 3]\\n\\n' +
            '| col | <script>window.__x=3</script> |\\n| --- | --- |\\n| x | y |\\n\\n' +
            '1. one [1]\\n   > "a quote" [1]\\n2. two\\n';
        const box = document.createElement("div");
        box.append(renderMarkdown(md, (n) => { window.__cited = n; }));
        document.body.append(box);
        box.querySelector('button.cite[data-n="3"]').click();
        return {
            markup: box.querySelectorAll("img, script, b").length,
            hrefs: [...box.querySelectorAll("a")].map((a) => a.getAttribute("href")),
            h1: box.querySelector("h1").textContent,
            cites: [...box.querySelectorAll("button.cite")].map((b) => b.dataset.n),
            quoteInItem: box.querySelector("ol > li blockquote") !== null,
            items: box.querySelectorAll("ol > li").length,
            table: [...box.querySelectorAll("th")].map((c) => c.textContent),
            strong: box.querySelector("strong").textContent,
            code: box.querySelector("code").textContent,
            x: window.__x ?? null,
            cited: window.__cited,
        };
    }""")
    assert out["markup"] == 0 and out["x"] is None
    assert out["hrefs"] == ["https://example.org/p"]  # the javascript: link stays plain text
    assert out["h1"] == 'Title <img src=x onerror="window.__x=1">'
    assert out["cites"] == ["2", "3", "1", "1"] and out["cited"] == 3
    assert out["quoteInItem"] and out["items"] == 2
    assert out["table"] == ["col", "<script>window.__x=3</script>"]
    assert (out["strong"], out["code"]) == ("bold", "<b>code</b>")
    _no_script_errors(page)


def test_the_report_renderer_marks_a_sentence_checked_by_code_only(system: System, browser) -> None:  # noqa: ANN001
    page = _page(browser)
    page.goto(system.url + "/")
    expect(page.locator("#home-view")).to_be_visible()
    out = page.evaluate("""async () => {
        const { renderMarkdown } = await import("/static/markdown.js");
        const box = document.createElement("div");
        box.append(renderMarkdown("\u201cA quote.\u201d [1] Plain [2] Checked by code [3]\u2020 [4] \u2020 alone", null));
        const mark = box.querySelector(".level-mark");
        return {
            cites: [...box.querySelectorAll("button.cite")].map((b) => b.dataset.n),
            marks: box.querySelectorAll(".level-mark").length,
            after: mark.previousSibling.dataset.n,
            title: mark.title,
            text: box.textContent,
        };
    }""")
    assert out["cites"] == ["1", "2", "3", "4"]
    assert out["marks"] == 1 and out["after"] == "3" and "code only" in out["title"]
    assert out["text"] == "\u201cA quote.\u201d [1] Plain [2] Checked by code [3]\u2020 [4] \u2020 alone"
    _no_script_errors(page)


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


@pytest.fixture(scope="module")
def claude_system(tmp_root: Path, postgres, claude: AnthropicFake) -> Iterator[System]:  # noqa: ANN001
    """No API keys (one local user, no key prompt); the planner is the Anthropic fake."""
    with running_system(tmp_root, postgres, env_overrides={**claude.env(), "LLM_MAX_RETRIES": "1"}) as s:
        yield s


def test_clarifying_questions_are_answered_on_the_page(claude_system: System, claude: AnthropicFake, browser, shots: Path) -> None:  # noqa: ANN001
    claude.tool({"needs_clarification": True, "questions": ["Which country?", "Which period?"]})
    page = _page(browser, key=None)
    page.goto(claude_system.url + "/")
    expect(page.locator("#home-view")).to_be_visible()
    page.fill("#question", "Is automation good?")
    page.fill("#max-iterations", "1")
    page.check("#clarify")
    page.click("#submit")
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}$"))
    job_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("#job-status")).to_have_text("AWAITING_INPUT", timeout=30_000)
    expect(page.locator("#clarify-questions li")).to_have_text(["Which country?", "Which period?"])
    page.screenshot(path=shots / "web-clarify.png")

    page.fill("#clarify-answer", "Lighthouses in Scotland, 1900-1990")
    page.click("#clarify-send")
    expect(page.locator("#clarify-view")).to_be_hidden()
    finished = claude_system.wait_terminal(job_id, timeout=90)
    assert finished["status"] == "COMPLETED", finished["error"]
    expect(page.locator("#job-status")).to_have_text("COMPLETED", timeout=15_000)
    job = claude_system.job(job_id)
    assert job["clarification"] == "Lighthouses in Scotland, 1900-1990"
    usage = job["token_usage"]
    assert usage["input_tokens"] > 0
    cost = usage["cost_usd"]  # the fake's model is priced as its family: its cost is shown too
    money = f"${cost:.4f}" if cost < 0.01 else f"${cost:.2f}"
    assert cost > 0
    expect(page.locator("#stat-tokens")).to_have_text(
        f"{usage['input_tokens']} in / {usage['output_tokens']} out · {usage['llm_calls']} calls · {money}")
    _no_script_errors(page)
