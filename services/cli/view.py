"""What `deepresearch ask`, `watch` and `resume` show while a job runs.

On a terminal: a live panel (rich) with the stage, iteration, a progress bar, sources
found, claims kept, tokens and their cost and elapsed time, redrawn in place. Anywhere else (a pipe,
a log file, CI): one plain line per event, as grep-able text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from shared.subjects import overall_progress

__all__ = ["JobView", "cost_text", "plain_line", "render_to_text"]



def _tokens(usage: dict[str, Any] | None) -> int | None:
    if not isinstance(usage, dict):
        return None
    stages = usage.get("by_stage") or {}
    return sum(int(u.get("input_tokens", 0)) + int(u.get("output_tokens", 0)) for u in stages.values() if isinstance(u, dict))


def _cost(usage: dict[str, Any] | None) -> tuple[float, list[str]] | None:
    """The job's cost so far (USD at the configured prices) and its unpriced models."""
    if not isinstance(usage, dict):
        return None
    stages = [u for u in (usage.get("by_stage") or {}).values() if isinstance(u, dict)]
    cost = sum(float(u.get("cost_usd") or 0) for u in stages)
    unpriced = list(dict.fromkeys(str(m) for u in stages for m in (u.get("unpriced_models") or [])))
    return cost, unpriced


def cost_text(cost: float, unpriced: list[str] | tuple[str, ...] = ()) -> str:
    """``$0.0123``, naming the unpriced models whose calls it does not count
    (their cost is not known: not 0)."""
    text = f"${cost:.4f}"
    return text + (f" + unpriced: {', '.join(unpriced)}" if unpriced else "")


@dataclass
class JobView:
    """A job's state as its events tell it; renders itself for rich's live display."""

    job_id: str
    max_iterations: int | None = None
    status: str = "QUEUED"
    stage: str | None = None
    iteration: int = 0
    progress: float = 0.0  # overall, 0..1 across the current iteration's stages
    message: str = ""
    sources: int = 0  # found so far (the retrieval stage's running total)
    claims: int = 0  # kept by the last scoring pass
    tokens: int = 0
    cost_usd: float = 0.0  # at the configured prices (LLM_PRICES)
    unpriced: list[str] = field(default_factory=list)  # models no price is configured for
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    problem: str | None = None

    def apply(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in ("progress", "stage"):
            self.stage = str(event.get("stage") or self.stage)
            self.iteration = max(self.iteration, int(event.get("iteration") or 0))
        if kind == "progress":
            self.progress = overall_progress(self.stage or "", float(event.get("progress") or 0.0))
            self.message = str(event.get("message") or "")
            counts = event.get("counts") or {}
            if self.stage == "retrieve" and "sources" in counts:
                self.sources = int(counts["sources"])
            if self.stage == "score" and "claims" in counts:
                self.claims = int(counts["claims"])
        elif kind == "stage":
            state = event.get("state")
            if state == "started":
                self.progress = overall_progress(self.stage or "", 0.0)
                self.message = f"{self.stage} started"
            elif state in ("failed", "retrying") or event.get("error"):
                self.message = f"{self.stage} {state}" + (f": {event['error']}" if event.get("error") else "")
            tokens = _tokens(event.get("usage"))
            if tokens is not None:
                self.tokens = max(self.tokens, tokens)
            cost = _cost(event.get("usage"))
            if cost is not None:
                self.cost_usd = max(self.cost_usd, cost[0])
                self.unpriced = list(dict.fromkeys([*self.unpriced, *cost[1]]))
        elif kind == "status":
            self.status = str(event.get("status") or self.status)
            if self.status in ("COMPLETED", "FAILED", "CANCELLED", "EXPIRED"):
                self.ended = time.monotonic()
                self.progress = 1.0 if self.status == "COMPLETED" else self.progress
                self.problem = event.get("reason") or self.problem
            else:  # running (again, after a resume)
                self.ended = self.problem = None
        elif kind == "failed":
            self.problem = str(event.get("reason") or "")

    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def __rich__(self) -> RenderableType:
        return self.renderable()

    def renderable(self) -> RenderableType:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        iteration = f"{self.iteration + 1}" + (f" of at most {self.max_iterations}" if self.max_iterations else "")
        grid.add_row("job", f"{self.job_id}  [{self.status}]")
        grid.add_row("stage", f"{self.stage or 'waiting'}  (iteration {iteration})")
        bar = Table.grid(padding=(0, 1))
        bar.add_row(ProgressBar(total=1.0, completed=self.progress, width=40), Text(f"{self.progress * 100:3.0f}%"))
        grid.add_row("progress", bar)
        grid.add_row("found", f"{self.sources} sources, {self.claims} claims kept")
        grid.add_row("tokens", f"{self.tokens:,}")
        if self.cost_usd or self.unpriced:
            grid.add_row("cost", cost_text(self.cost_usd, self.unpriced))
        grid.add_row("elapsed", f"{self.elapsed():.0f}s")
        parts: list[RenderableType] = [grid]
        if self.message:
            parts.append(Text(self.message, style="dim", overflow="ellipsis", no_wrap=True))
        if self.problem:
            parts.append(Text(self.problem, style="red"))
        return Group(*parts)


def render_to_text(view: JobView, width: int = 100) -> str:
    """The live panel as a terminal would show it (for tests and `status`)."""
    console = Console(width=width, record=True, force_terminal=True, file=_Null())
    console.print(view.renderable())
    return console.export_text()


class _Null:
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        return None


def _stage_line(event: dict[str, Any]) -> str:
    stage, state = event.get("stage"), event.get("state")
    if state == "started":
        return f"[iteration {int(event.get('iteration') or 0) + 1}] {stage} started" if stage == "plan" else f"  {stage!s:<10} started"
    if state == "done":
        line = f"  {stage!s:<10} done in {event.get('duration_s') or 0:.2f}s"
        cost = _cost(event.get("usage"))
        if cost is not None and (cost[0] or cost[1]):  # the job's so far, when it called a model
            line += f"  ({_tokens(event.get('usage')) or 0:,} tokens, {cost_text(*cost)} so far)"
        return line
    return f"  {stage!s:<10} {state}" + (f": {event['error']}" if event.get("error") else "")


def plain_line(event: dict[str, Any]) -> str | None:
    """One line for an event, or None for one not shown (clarifying questions are asked
    separately)."""
    kind = event.get("type")
    if kind == "progress":
        counts = " ".join(f"{k}={v}" for k, v in (event.get("counts") or {}).items())
        return f"  {event.get('stage')!s:<10} {float(event.get('progress') or 0) * 100:3.0f}%  {event.get('message', '')}" + (
            f"  ({counts})" if counts else "")
    if kind == "stage":
        return _stage_line(event)
    if kind == "status":
        return f"status: {event.get('status')}" + (f" ({event['reason']})" if event.get("reason") else "")
    if kind == "failed":
        return f"FAILED in {event.get('stage')}: {event.get('reason')}"
    if kind == "completed":
        return "completed"
    return None
