"""A loopback fake of Tavily's API (``POST /search``, ``POST /extract``) in its real format.

- Bearer auth: a missing or wrong ``Authorization: Bearer <key>`` gets 401.
- Errors as Tavily sends them, ``{"detail": {"error": "<message>"}}`` with 400, 401,
  403, 429 (rate limit), 432 (plan usage limit), 433 (pay-as-you-go limit) and 500;
  tavily-python maps 401 → InvalidAPIKeyError, 429 → UsageLimitExceededError,
  403/432/433 → ForbiddenError, 400 → BadRequestError, others → httpx.HTTPStatusError.
- ``/search`` answers ``{"query", "follow_up_questions", "answer", "images", "results":
  [{"url", "title", "content", "score", "raw_content"}], "response_time", "request_id"}``
  with at most ``max_results`` results; ``raw_content`` only when ``include_raw_content``
  was asked and the page is one Tavily has raw content for.
- ``/extract`` answers ``{"results": [{"url", "raw_content", "images"}],
  "failed_results": [{"url", "error"}], "response_time", "request_id"}``.
- ``GET /pages/<slug>`` serves a page as HTML, for results whose full text the client
  has to fetch itself.

Deliberately simple: a page matches when any content word of the query is in its title
or text; ``score`` grows with the share of query words matched. Scriptable per test:
``latency_s``, ``fail_next(status, n)``, ``quota_after(n)`` (the plan's usage limit is
reached after ``n`` answered searches: every later call, search or extract, answers
432); ``requests`` records every call.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from html import escape
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tests.fakes.server import RecordingFake, search_terms

ERROR_MESSAGES = {
    400: "Invalid request: query is required.",
    401: "Unauthorized: missing or invalid API key.",
    403: "Forbidden: the requested URL is not supported.",
    429: "Your request has been blocked due to excessive requests. Please reduce the rate of requests.",
    432: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com",
    433: "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard.",
    500: "Internal server error",
}


@dataclass
class Page:
    """A web page the fake knows. ``url`` may be any URL, or ``None`` to be served by
    the fake itself at ``/pages/<slug>``."""

    slug: str
    title: str
    text: str
    url: str | None = None
    published_date: str | None = None
    raw_in_search: bool = True  # search returns raw_content for it
    extractable: bool = True  # /extract can get its text


class FakeTavily(RecordingFake):
    def __init__(
        self,
        pages: list[Page],
        *,
        api_key: str = "tvly-test-key",
        latency_s: float = 0.0,
    ) -> None:
        super().__init__()  # requests: {"path", "body", "t", "status"}; failures: statuses
        self.pages = pages
        self.api_key = api_key
        self.latency_s = latency_s
        self.quota_searches: int | None = None  # answered searches before every call gets 432
        self.answered_searches = 0
        self.app = Starlette(
            routes=[
                Route("/search", self._search, methods=["POST"]),
                Route("/extract", self._extract, methods=["POST"]),
                Route("/pages/{slug}", self._page, methods=["GET"]),
            ]
        )

    # -- scripting -------------------------------------------------------------------

    def fail_next(self, status: int, n: int = 1) -> None:
        """The next ``n`` API calls (search or extract) answer ``status``."""
        self._script_failures(status, n)

    def quota_after(self, n: int | None) -> None:
        """After ``n`` more answered searches the plan's limit is spent: every call
        answers 432 (None: no limit)."""
        with self._lock:
            self.quota_searches = None if n is None else self.answered_searches + n

    def url_of(self, page: Page) -> str:
        return page.url or f"{self.base_url}/pages/{page.slug}"

    # -- serving -----------------------------------------------------------------------

    async def _admit(
        self, path: str, request: Request
    ) -> tuple[dict[str, Any], Response | None]:
        try:
            body = await request.json()
        except ValueError:
            body = None
        with self._lock:
            status = self._failures.pop(0) if self._failures else 200
            if request.headers.get("authorization") != f"Bearer {self.api_key}":
                status = 401
            if status == 200 and not isinstance(body, dict):
                status = 400
            if status == 200 and self.quota_searches is not None and self.answered_searches >= self.quota_searches:
                status = 432
            if status == 200 and path == "search":
                self.answered_searches += 1
            self.requests.append(
                {"path": path, "body": body, "t": time.time(), "status": status}
            )
        await asyncio.sleep(self.latency_s)
        if status != 200:
            return {}, JSONResponse(
                {"detail": {"error": ERROR_MESSAGES.get(status, "error")}},
                status_code=status,
            )
        return body, None  # type: ignore[return-value]

    async def _search(self, request: Request) -> Response:
        body, refused = await self._admit("search", request)
        if refused is not None:
            return refused
        query = str(body.get("query") or "")
        if not query.strip():
            return JSONResponse(
                {"detail": {"error": ERROR_MESSAGES[400]}}, status_code=400
            )
        terms = search_terms(query)
        raw = body.get("include_raw_content") not in (None, False)
        scored = []
        for page in self.pages:
            text = (page.title + " " + page.text).lower()
            hits = sum(1 for t in terms if t in text)
            if hits:
                scored.append((round(0.3 + 0.65 * hits / max(len(terms), 1), 4), page))
        scored.sort(key=lambda sp: (-sp[0], sp[1].slug))
        results = []
        for score, page in scored[: int(body.get("max_results") or 5)]:
            result: dict[str, Any] = {
                "url": self.url_of(page),
                "title": page.title,
                "content": page.text[:300],
                "score": score,
                "raw_content": page.text if raw and page.raw_in_search else None,
            }
            if page.published_date:
                result["published_date"] = page.published_date
            results.append(result)
        return JSONResponse(
            {
                "query": query,
                "follow_up_questions": None,
                "answer": None,
                "images": [],
                "results": results,
                "response_time": f"{self.latency_s:.2f}",
                "request_id": str(uuid.uuid4()),
            }
        )

    async def _extract(self, request: Request) -> Response:
        body, refused = await self._admit("extract", request)
        if refused is not None:
            return refused
        urls = body.get("urls") or []
        urls = [urls] if isinstance(urls, str) else urls
        by_url = {self.url_of(p): p for p in self.pages}
        results, failed = [], []
        for url in urls:
            page = by_url.get(url)
            if page is not None and page.extractable:
                results.append({"url": url, "raw_content": page.text, "images": []})
            else:
                failed.append({"url": url, "error": "Failed to fetch url"})
        return JSONResponse(
            {
                "results": results,
                "failed_results": failed,
                "response_time": f"{self.latency_s:.2f}",
                "request_id": str(uuid.uuid4()),
            }
        )

    async def _page(self, request: Request) -> Response:
        slug = request.path_params["slug"]
        with self._lock:
            self.requests.append(
                {"path": "page", "body": slug, "t": time.time(), "status": 200}
            )
        for page in self.pages:
            if page.slug == slug:
                paragraphs = "".join(
                    f"<p>{escape(p)}</p>" for p in page.text.split("\n\n")
                )
                return HTMLResponse(
                    f"<html><head><title>{escape(page.title)}</title></head>"
                    f"<body><article><h1>{escape(page.title)}</h1>{paragraphs}</article></body></html>"
                )
        return HTMLResponse("<html><body>not found</body></html>", status_code=404)
