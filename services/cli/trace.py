"""`deepresearch trace ID`: a job's trace (per iteration: the queries sent to each
provider, what they returned, the checklist, claims kept and rejected, and each
stage's time and tokens) printed for a person. Missing keys are skipped, so older or
partial traces print too."""

from __future__ import annotations

from typing import Any

__all__ = ["print_trace", "trace_lines"]


def _tokens(value: Any) -> int:
    if isinstance(value, dict):
        return sum(int(v) for k, v in value.items() if k in ("input", "output", "input_tokens", "output_tokens") and isinstance(v, int | float))
    return int(value) if isinstance(value, int | float) else 0


def _iteration_lines(it: dict[str, Any]) -> list[str]:
    lines = [f"iteration {int(it.get('iteration', 0)) + 1}"]
    queries = it.get("queries") or []
    if queries:
        lines.append(f"  queries ({len(queries)}):")
        lines += [f"    [{q.get('provider', '?')}] {q.get('text', '')}" for q in queries if isinstance(q, dict)]
    results = it.get("results") or {}
    if isinstance(results, dict) and results:
        parts = []
        for provider, r in results.items():
            if isinstance(r, dict):
                parts.append(f"{provider} {r.get('count', '?')} results, {r.get('new_sources', '?')} new sources")
            else:
                parts.append(f"{provider} {r}")
        lines.append("  results: " + "; ".join(parts))
    checklist = it.get("checklist") or []
    if checklist:
        lines.append("  checklist:")
        lines += [f"    {c.get('status', '?'):<10} {c.get('id', '')}  {c.get('description', '')}" for c in checklist if isinstance(c, dict)]
    if it.get("claims_kept") is not None or it.get("claims_rejected") is not None:
        lines.append(f"  claims: {it.get('claims_kept', '?')} kept, {it.get('claims_rejected', '?')} rejected")
    stages = it.get("stages") or []
    if stages:
        cells = [f"{s.get('stage', '?')} {float(s.get('duration_s') or 0):.1f}s/{_tokens(s.get('tokens')):,} tok" for s in stages if isinstance(s, dict)]
        lines.append("  stages: " + ", ".join(cells))
        for s in stages:
            judge = s.get("judge") if isinstance(s, dict) else None
            if isinstance(judge, dict):
                lines.append(f"  entailment judge ({s.get('stage', '?')}): {judge.get('statements', 0)} asked, "
                             f"{judge.get('entailed', 0)} entailed, {judge.get('vetoed', 0)} vetoed, "
                             f"{judge.get('tokens', 0):,} tok; {judge.get('status', '')}")
    return lines


def _review_lines(review: dict[str, Any]) -> list[str]:
    changes = [c for c in review.get("changes") or [] if isinstance(c, dict)]
    head = f"plan review: waited {float(review.get('waited_s') or 0):.1f}s; "
    lines = [head + ("approved as it was" if not changes else f"{len(changes)} change(s) by the user")]
    for c in changes:
        what = f"{c.get('part', '?')} {c.get('id') or ''}".strip()
        before, after = c.get("before"), c.get("after")
        detail = f"{before!s} -> {after!s}" if before and after else (after or before or "")
        lines.append(f"  {c.get('action', '?'):<8} {what}: {detail}")
    return lines


def trace_lines(trace: dict[str, Any]) -> list[str]:
    lines = [f"trace of job {trace.get('job_id', '?')}"]
    extra = {k: v for k, v in trace.items() if k not in ("job_id", "iterations") and isinstance(v, str | int | float | bool)}
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    for review in trace.get("plan_review") or []:  # a job with review_plan: what the user changed
        if isinstance(review, dict):
            lines += _review_lines(review)
    iterations = trace.get("iterations") or []
    if not iterations:
        lines.append("  no iteration recorded yet")
    for it in iterations:
        if isinstance(it, dict):
            lines += _iteration_lines(it)
    memory = trace.get("memory")
    if isinstance(memory, dict):
        held = [f"{len(v)} {k.replace('_', ' ')}" for k, v in memory.items() if isinstance(v, list) and v]
        if held:
            lines.append("research memory: " + ", ".join(held))
    return lines


def print_trace(trace: dict[str, Any]) -> None:
    print("\n".join(trace_lines(trace)))
