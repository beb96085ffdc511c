"""`deepresearch ask --review-plan`: the research plan shown at the terminal, accepted with
Enter or edited in ``$VISUAL`` / ``$EDITOR`` as JSON (the body of
``POST /api/research/jobs/{id}/plan``: change, add or remove checklist items and steps,
change the refined question; an item without an id is new).

A plan the gateway refuses (422: an empty checklist, a cycle among the steps...) is
shown with the reason and opened again, as the user left it. Off a terminal there is
nobody to ask: the plan is accepted as it is, and said so.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

__all__ = ["plan_lines", "review_plan"]

Send = Callable[[dict[str, Any]], str | None]  # the plan -> None when accepted, else why it was refused


def plan_lines(plan: dict[str, Any]) -> list[str]:
    """The plan as the user reads it."""
    lines = [f"Refined question: {plan.get('refined_question', '')}"]
    scope = plan.get("scope") or {}
    if scope.get("in_scope"):
        lines.append("In scope: " + "; ".join(scope["in_scope"]))
    if scope.get("out_of_scope"):
        lines.append("Out of scope: " + "; ".join(scope["out_of_scope"]))
    lines.append("Checklist:")
    lines += [f"  {item.get('id')}. {item.get('description')}" for item in plan.get("checklist") or []]
    lines.append("Steps:")
    for step in plan.get("steps") or []:
        after = f" (after {', '.join(step['depends_on'])})" if step.get("depends_on") else ""
        lines.append(f"  {step.get('id')}. {step.get('text')} [{step.get('kind', 'independent')}]{after}")
    return lines


def _editor() -> list[str]:
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


def _edit(text: str) -> str:
    """``text`` as the user left it in their editor."""
    with tempfile.TemporaryDirectory(prefix="deepresearch-plan-") as folder:
        path = Path(folder) / "plan.json"
        path.write_text(text, encoding="utf-8")
        command = [*_editor(), str(path)]
        try:
            done = subprocess.run(command, check=False)  # noqa: S603 - the user's own editor, on their own file
        except OSError as exc:
            raise RuntimeError(f"the editor {command[0]!r} could not be started ({exc}); set EDITOR") from exc
        if done.returncode != 0:
            raise RuntimeError(f"the editor {command[0]!r} exited with {done.returncode}; the plan was not changed")
        return path.read_text(encoding="utf-8")


def _ask(prompt: str, err: TextIO) -> str:
    print(prompt, end="", file=err, flush=True)  # stdout is for the report
    try:
        return input().strip().lower()
    except EOFError:
        return ""


def review_plan(job_id: str, plan: dict[str, Any], *, send: Send, cancel: Callable[[], None],
                stdin: TextIO | None = None, err: TextIO | None = None) -> bool:
    """Show the plan and have it approved (as it is, or edited); False when the user
    cancelled the job instead."""
    stdin = stdin or sys.stdin
    err = err or sys.stderr
    print("\nThe research plan, for your review:", file=err)
    for line in plan_lines(plan):
        print(f"  {line}", file=err)
    if not stdin.isatty():
        if (why := send(plan)) is not None:
            raise RuntimeError(f"the plan was refused as it is: {why}")
        print("plan accepted as it is (not a terminal to edit it on); research continues", file=err, flush=True)
        return True
    text = json.dumps(plan, indent=2, ensure_ascii=False) + "\n"
    body: dict[str, Any] | None = plan
    while True:
        reply = _ask("Enter: accept · e: edit it in your editor · c: cancel the job > ", err)
        if reply in ("c", "cancel"):
            cancel()
            print(f"job {job_id} cancelled", file=err)
            return False
        if reply in ("e", "edit"):
            try:
                text = _edit(text)
            except RuntimeError as exc:
                print(str(exc), file=err)
                continue
            try:
                body = json.loads(text)
            except ValueError as exc:
                print(f"the plan is not JSON ({exc}); edit it again", file=err)
                continue
            if not isinstance(body, dict):
                print("the plan must be a JSON object; edit it again", file=err)
                continue
            for line in plan_lines(body):
                print(f"  {line}", file=err)
        elif reply:
            print("press Enter, e or c", file=err)
            continue
        assert body is not None
        why = send(body)
        if why is None:
            print("plan " + ("accepted" if body == plan else "sent with your changes") + "; research continues",
                  file=err, flush=True)
            return True
        # Your edit stays in the editor's file; Enter now takes the planner's plan as it was.
        print(f"the plan was refused: {why}", file=err)
        print("e: edit it again · Enter: accept the planner's plan as it was · c: cancel the job", file=err)
        body = plan
