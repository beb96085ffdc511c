"""The ``deep_research`` tool (and a corpora listing) for LLM agents over MCP.

One server, two transports: stdio (``deepresearch mcp``, for desktop agents) and
streamable HTTP mounted on the gateway at ``/mcp`` behind the API's bearer keys. Either
way the tool is a client of the gateway's HTTP API (``mcp_backend.py``): it submits the
job, turns the job's events into progress notifications, returns the tool's output
object as structured content, and cancels the job when the call is cancelled.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

import anyio
from fastapi import HTTPException
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from services.gateway.mcp_backend import CorporaListing, ResearchBackend
from services.gateway.mcp_plan import review_over_mcp
from shared.platform.errors import ResearchError
from shared.research.events import ChecklistCoverage, ResearchOutput
from shared.subjects import Stage

log = logging.getLogger(__name__)

SERVER_NAME = "deepresearch"
CANCEL_TIMEOUT_S = 10.0

TOOL_DESCRIPTION = """\
Conducts in-depth research on a question using web search, PubMed and the user's own \
document corpora, and returns a synthesized answer whose inline citations [n] point to \
the listed sources (each quoted passage is verified against the source's text, and each \
cited sentence is checked against those passages: shown in quotation marks when it is a \
source's words, with a dagger when only code checked it). Use this when:
- The question requires synthesizing information from multiple sources
- A simple search won't suffice
- The user needs a well-researched answer whose statements are checked against their sources

Research takes minutes (typically 1-5, longer with more iterations): before calling this \
tool, tell the user so and ask whether they would like to proceed. Progress is reported \
while it runs; cancelling the call cancels the research.

Do NOT use this for:
- Simple factual lookups
- Questions about the current conversation or document
- Questions that can be answered from context

To ask a follow-up of an earlier answer, pass its trace_id: the research starts from \
what that one found and cites its sources beside new ones."""

LOOP_STAGES = (Stage.PLAN, Stage.RETRIEVE, Stage.DIGEST, Stage.SCORE)
LOOP_SHARE = 0.9  # of the progress bar; synthesis takes the rest


def overall_progress(event: dict[str, Any], max_iterations: int) -> tuple[float, str] | None:
    """How far the job is (0..1) and what it is doing, from one job event; None for an
    event that says nothing about progress. Each iteration runs plan, retrieve, digest
    and score; synthesis runs once, at the end. A job usually stops before
    ``max_iterations``, so the bar jumps forward then: it never moves back."""
    kind = event.get("type")
    if kind not in ("progress", "stage"):
        return None
    try:
        stage = Stage(event["stage"])
    except (KeyError, ValueError):
        log.warning("an event with an unknown stage, not shown as progress: %s", event)
        return None
    within = float(event.get("progress", 0.0)) if kind == "progress" else (1.0 if event.get("state") == "done" else 0.0)
    iteration = int(event.get("iteration", 0))
    if stage == Stage.SYNTHESIZE:
        fraction = LOOP_SHARE + (1 - LOOP_SHARE) * within
    else:
        in_pass = (LOOP_STAGES.index(stage) + within) / len(LOOP_STAGES)
        fraction = LOOP_SHARE * min(1.0, (iteration + in_pass) / max(1, max_iterations))
    detail = event.get("message") if kind == "progress" else event.get("state")
    return min(fraction, 1.0), f"iteration {iteration + 1}/{max_iterations} · {stage.value}: {detail}"


def _ended_without_result(job: dict[str, Any]) -> ResearchOutput:
    reason = f": {job['error']}" if job.get("error") else ""
    return ResearchOutput(
        trace_id=job["job_id"], answer=f"The research job ended {job['status']}{reason}; there is no answer.",
        sources=[], checklist_coverage=ChecklistCoverage(satisfied=[], gaps=[]),
        iterations_used=int(job.get("iteration", 0)), status="error",
    )


async def research(backend: ResearchBackend, ctx: Context, body: dict[str, Any], *,
                   follow_up_of: str | None = None) -> ResearchOutput:
    """Run one job to its end, reporting progress; a call that ends any other way
    (cancelled by the client, or an error) cancels the job. With ``follow_up_of`` the
    job is a follow-up of that one, and has its request (iterations, report depth)."""
    if follow_up_of is None:
        job_id = await backend.submit(body)
    else:
        job_id = await backend.follow_up(follow_up_of, body["question"])
        body = await backend.job(job_id)
    # A detailed report may take one more pass than asked while checklist items are open.
    max_iterations = int(body["max_iterations"]) + (1 if body.get("report_depth") == "detailed" else 0)
    await ctx.report_progress(0.0, 1.0, f"research job {job_id} submitted")
    shown = 0.0
    plan_waits = False  # a plan_review event came: the job's next AWAITING_INPUT is for it (mcp_plan.py)

    async def on_event(event: dict[str, Any]) -> None:
        nonlocal shown, plan_waits
        plan_waits = plan_waits or event.get("type") == "plan_review"
        if plan_waits and event.get("type") == "status" and event.get("status") == "AWAITING_INPUT":
            plan_waits = False
            job = await backend.job(job_id)  # the wait is stored (its status event came): the plan can be approved
            if job["status"] == "AWAITING_INPUT" and job.get("plan") is not None:
                note = await review_over_mcp(backend, ctx, job_id, job["plan"])
                if note is None:
                    await _cancel(backend, job_id)
                    note = "research cancelled at the plan review"
                await ctx.report_progress(shown, 1.0, note)
        step = overall_progress(event, max_iterations)
        if step is not None and step[0] >= shown:
            shown = step[0]
            await ctx.report_progress(shown, 1.0, step[1])

    finished = False
    try:
        await backend.follow(job_id, on_event)
        finished = True
    finally:
        if not finished:
            await _cancel(backend, job_id)
    job = await backend.job(job_id)
    if job["status"] != "COMPLETED":
        return _ended_without_result(job)
    output = ResearchOutput.model_validate((await backend.result(job_id))["output"])
    await ctx.report_progress(1.0, 1.0, f"research job {job_id} completed")
    return output


async def _cancel(backend: ResearchBackend, job_id: str) -> None:
    # Shielded: this runs while the call is being cancelled, and must still reach the gateway.
    with anyio.move_on_after(CANCEL_TIMEOUT_S, shield=True) as scope:
        try:
            if await backend.cancel(job_id):
                log.info("job %s cancelled: its tool call ended before it did", job_id)
        except ResearchError as exc:
            log.error("job %s: the tool call ended but cancelling the job failed: %s", job_id, exc)
    if scope.cancelled_caught:
        log.error("job %s: the tool call ended but the gateway did not answer the cancel within %ss", job_id, CANCEL_TIMEOUT_S)


BackendFor = Callable[[Context], ResearchBackend]


def build_server(backend_for: BackendFor) -> MCPServer:
    """The MCP server; ``backend_for`` gives the gateway client to use for one call."""
    server = MCPServer(
        SERVER_NAME, version="0.1.0",
        instructions="Deep research with verified citations: call deep_research for hard questions; "
        "list_corpora names the user's document collections it can search.",
    )

    @server.tool(
        name="deep_research", title="Deep research", description=TOOL_DESCRIPTION,
        annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=True, idempotentHint=False),
    )
    async def deep_research(
        question: Annotated[str, Field(description="The research question to investigate", min_length=1)],
        context: Annotated[str, Field(description="Optional context about the user's needs, domain, or constraints")] = "",
        max_iterations: Annotated[int, Field(description="Maximum research iterations (default 10)", ge=1, le=50)] = 10,
        report_depth: Annotated[Literal["brief", "standard", "detailed"], Field(
            description="How much the report says: brief (a one-screen answer), standard (default) or detailed "
            "(every finding, more Verified Findings, one more iteration while checklist items are open)")] = "standard",
        trace_id: Annotated[str, Field(
            description="Optional: the trace_id of an earlier, completed deep_research answer, to ask `question` as a "
            "follow-up of it (it then keeps that research's context, iterations and report depth)")] = "",
        review_plan: Annotated[bool, Field(
            description="Let the user review (and edit) the research plan before research goes on, where the client "
            "can ask them (elicitation); otherwise the plan is approved as it is")] = False,
        *, ctx: Context,
    ) -> ResearchOutput:
        body: dict[str, Any] = {"question": question, "max_iterations": max_iterations, "report_depth": report_depth}
        if review_plan:
            body["review_plan"] = True
        if context.strip():
            if trace_id.strip():
                raise ToolError("a follow-up (trace_id) keeps the earlier research's context: leave context empty")
            body["context"] = context
        try:
            return await research(backend_for(ctx), ctx, body, follow_up_of=trace_id.strip() or None)
        except ResearchError as exc:
            log.warning("deep_research failed: %s", exc)
            raise ToolError(str(exc)) from exc

    @server.tool(
        name="list_corpora", title="List corpora",
        description="The user's indexed document corpora that deep_research searches (all of them, by default).",
        annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False),
    )
    async def list_corpora(*, ctx: Context) -> CorporaListing:
        try:
            return await backend_for(ctx).corpora()
        except ResearchError as exc:
            log.warning("list_corpora failed: %s", exc)
            raise ToolError(str(exc)) from exc

    return server


# -- stdio ------------------------------------------------------------------------


def run_stdio(gateway_url: str, api_key: str | None) -> None:
    """Serve on stdin/stdout for one desktop agent, against a running gateway."""
    backend = ResearchBackend(gateway_url, authorization=f"Bearer {api_key}" if api_key else None)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request would bury the agent's log
    anyio.run(build_server(lambda _ctx: backend).run_stdio_async)


# -- streamable HTTP on the gateway -------------------------------------------------


def loopback_url(host: str, port: int) -> str:
    """Where this gateway process answers itself: its own address, or the loopback one
    when it listens on every interface."""
    if host in ("0.0.0.0", "", "::"):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class MountedMcp:
    """The ASGI endpoint at /mcp: the API's bearer check, then the SDK's session manager.

    The tool calls the gateway's own HTTP API on the loopback address with the caller's
    key, rather than the in-process functions: it is then the same client as over stdio,
    and a job it submits passes the same validation, rate limit, ownership and event
    stream as any other (calling the route functions directly would mean re-creating
    their dependencies and the SSE subscription by hand).
    """

    def __init__(self, own_url: str, host: str, authorize: Callable[[Request], str]) -> None:
        self.authorize = authorize

        def backend_for(ctx: Context) -> ResearchBackend:
            headers = ctx.headers or {}
            return ResearchBackend(own_url, authorization=headers.get("authorization"))

        # Bound to loopback (no keys), the SDK's DNS-rebinding check keeps web pages from
        # reaching the open endpoint; with keys, the bearer check guards it on any address.
        loopback = host in ("127.0.0.1", "localhost", "::1")
        security = None if loopback else TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.server = build_server(backend_for)
        self.server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host=host)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group; run in the gateway app's lifespan."""
        async with self.server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self.authorize(Request(scope))
        except HTTPException as exc:
            response = JSONResponse({"message": exc.detail, "detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
            await response(scope, receive, send)
            return
        await self.server.session_manager.handle_request(scope, receive, send)


class McpRoute:
    """The /mcp route: hands each request to the endpoint the app's lifespan started
    (a session manager runs once, so each start of the app makes its own)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        mounted: MountedMcp | None = getattr(scope["app"].state, "mcp", None)
        if mounted is None:
            await JSONResponse({"message": "the MCP endpoint is not started", "detail": None}, status_code=503)(scope, receive, send)
            return
        await mounted(scope, receive, send)


__all__ = ["TOOL_DESCRIPTION", "McpRoute", "MountedMcp", "build_server", "loopback_url", "overall_progress", "research", "run_stdio"]
