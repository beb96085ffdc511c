"""What the MCP tool needs from the gateway, over its HTTP API: submit a job, follow its
events (resuming with Last-Event-ID when the stream drops), read the outcome, cancel,
list corpora. HTTP errors are translated here into the project's errors."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
from pydantic import BaseModel, ConfigDict

from shared.platform.errors import PermanentError, TransientError

log = logging.getLogger(__name__)

TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "EXPIRED"})
STREAM_RECONNECTS = 5  # in a row without an event; a restarting gateway is back well within them
RECONNECT_DELAY_S = 0.5

OnEvent = Callable[[dict[str, Any]], Awaitable[None]]


class CorpusInfo(BaseModel):
    """One searchable corpus; the gateway may say more about it than its name."""

    model_config = ConfigDict(extra="allow")

    name: str


class CorporaListing(BaseModel):
    corpora: list[CorpusInfo]


def _message(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return r.text[:500]
    return str(body.get("message") or body.get("detail") or body) if isinstance(body, dict) else str(body)[:500]


def _refused(what: str, r: httpx.Response) -> PermanentError | TransientError:
    message = f"{what}: the gateway answered {r.status_code}: {_message(r)}"
    if r.status_code in (429, 502, 503, 504):
        retry = r.headers.get("Retry-After", "")
        return TransientError(message, retry_after_s=float(retry) if retry.isdigit() else None)
    return PermanentError(message)


def _corpora_of(body: Any) -> list[CorpusInfo]:
    """A list of names or of objects, bare or under "corpora" / "items"."""
    items = body.get("corpora", body.get("items", [])) if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise PermanentError(f"the corpora listing is not a list: {str(body)[:200]}")
    return [CorpusInfo(name=item) if isinstance(item, str) else CorpusInfo.model_validate(item) for item in items]


class ResearchBackend:
    """The gateway's research API, as one user (the bearer ``authorization`` given)."""

    def __init__(self, base_url: str, *, authorization: str | None = None, timeout_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = {"Authorization": authorization} if authorization else {}
        self.timeout_s = timeout_s

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=self.timeout_s)

    async def _call(self, what: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            async with self._client() as client:
                return await client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise TransientError(f"{what}: the gateway at {self.base_url} did not answer ({type(exc).__name__}: {exc})") from exc

    async def submit(self, body: dict[str, Any]) -> str:
        r = await self._call("submitting the job", "POST", "/api/research/jobs", json=body)
        if r.status_code != 202:
            raise _refused("the job was not accepted", r)
        return str(r.json()["job_id"])

    async def follow_up(self, job_id: str, question: str) -> str:
        """Submit ``question`` as a follow-up of the completed job ``job_id``; the new job's id."""
        r = await self._call("submitting the follow-up", "POST", f"/api/research/jobs/{job_id}/follow-up",
                             json={"question": question})
        if r.status_code != 202:
            raise _refused(f"the follow-up of job {job_id} was not accepted", r)
        return str(r.json()["job_id"])

    async def job(self, job_id: str) -> dict[str, Any]:
        r = await self._call("reading the job", "GET", f"/api/research/jobs/{job_id}")
        if r.status_code != 200:
            raise _refused(f"reading job {job_id}", r)
        return r.json()

    async def result(self, job_id: str) -> dict[str, Any]:
        r = await self._call("reading the result", "GET", f"/api/research/jobs/{job_id}/result")
        if r.status_code != 200:
            raise _refused(f"reading the result of job {job_id}", r)
        return r.json()

    async def cancel(self, job_id: str) -> bool:
        """True when this call cancelled the job; False when it had already ended."""
        r = await self._call("cancelling the job", "POST", f"/api/research/jobs/{job_id}/cancel")
        if r.status_code == 409:
            log.info("job %s not cancelled: %s", job_id, _message(r))
            return False
        if r.status_code != 200:
            raise _refused(f"cancelling job {job_id}", r)
        return True

    async def review_plan(self, job_id: str, plan: dict[str, Any]) -> str | None:
        """Approve the plan of a job waiting on it (as ``plan`` has it); None when the
        gateway took it, its reason when it refused the plan (422: the job still waits)."""
        r = await self._call("sending the plan", "POST", f"/api/research/jobs/{job_id}/plan", json=plan)
        if r.status_code == 422:
            return _message(r)
        if r.status_code != 200:
            raise _refused(f"approving the plan of job {job_id}", r)
        return None

    async def corpora(self) -> CorporaListing:
        r = await self._call("listing corpora", "GET", "/api/research/corpora")
        if r.status_code == 404:
            # A gateway without the listing: no corpus can be named, searching all still works.
            log.warning("the gateway at %s has no corpora listing (404): answering an empty list", self.base_url)
            return CorporaListing(corpora=[])
        if r.status_code != 200:
            raise _refused("listing corpora", r)
        return CorporaListing(corpora=_corpora_of(r.json()))

    async def follow(self, job_id: str, on_event: OnEvent) -> None:
        """Hand every event of the job to ``on_event`` until its terminal status event.
        A dropped stream is reopened with the last event's id, so nothing is seen twice
        and nothing is missed."""
        last_id: str | None = None
        failures = 0
        while True:
            wait_s = 0.0
            try:
                problem = "the event stream ended before the job did"
                async with contextlib.aclosing(self._stream(job_id, last_id)) as stream:
                    async for event_id, event in stream:
                        if event.get("type") == "error":  # NATS or PostgreSQL went away: the stream's last event
                            problem = f"the gateway ended the event stream: {event.get('message')}"
                            wait_s = min(60.0, float(event.get("retry") or 0) / 1000)
                            break
                        failures = 0
                        last_id = event_id or last_id
                        await on_event(event)
                        if event.get("type") == "status" and event.get("status") in TERMINAL:
                            return
            except (httpx.HTTPError, json.JSONDecodeError, TransientError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            failures += 1
            if failures > STREAM_RECONNECTS:
                raise TransientError(f"lost the event stream of job {job_id} {failures} times in a row ({problem})")
            log.warning("job %s: %s; reconnecting after event %s", job_id, problem, last_id)
            await anyio.sleep(max(wait_s, RECONNECT_DELAY_S * failures))

    async def _stream(self, job_id: str, last_id: str | None):  # noqa: ANN202 - an async generator of (id, event)
        headers = {"Last-Event-ID": last_id} if last_id else {}
        async with self._client() as client, client.stream(
            "GET", f"/api/research/jobs/{job_id}/events", headers=headers, timeout=httpx.Timeout(self.timeout_s, read=None),
        ) as r:
            if r.status_code != 200:
                await r.aread()
                raise _refused(f"following job {job_id}", r)
            event_id, data = None, None
            async for line in r.aiter_lines():
                if line.startswith("id:"):
                    event_id = line[3:].strip()
                elif line.startswith("data:"):
                    data = line[5:].strip()
                elif not line and data is not None:
                    yield event_id, json.loads(data)
                    event_id, data = None, None


__all__ = ["CorporaListing", "CorpusInfo", "ResearchBackend", "TERMINAL"]
