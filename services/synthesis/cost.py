"""The report's cost line: what the job's model calls cost at the configured prices.

The methodology carries it (:func:`cost_line`); synthesis's own calls are made after
the report is written, so :func:`with_cost` rewrites the line in the finished result.
"""

from __future__ import annotations

from services.synthesis.wording import FIXED_LINE_START, escape, plain, plural
from shared.research.envelope import Usage
from shared.research.events import ResearchResult

__all__ = ["COST_LINE_START", "cost_line", "with_cost"]

COST_LINE_START = "Cost: $"


def cost_line(usage: Usage) -> str | None:
    """The methodology's cost line (None when no model was called): the job's model
    calls at the configured prices, and the models no price is configured for, whose
    calls it does not count (their cost is unknown, not 0)."""
    if not usage.calls:
        return None
    line = f"{COST_LINE_START}{usage.cost_usd:.4f} (model prices as configured"
    unpriced = usage.unpriced_models
    if unpriced:
        line += ("; not counted: the calls of " + ", ".join(f"`{escape(plain(m))}`" for m in unpriced)
                 + ", which no price is configured for (LLM_PRICES)")
    return line + f"), {plural(usage.calls, 'model call')}, {usage.total_tokens:,} tokens."


def with_cost(result: ResearchResult) -> ResearchResult:
    """``result`` whose methodology's cost line counts ``result.usage`` (the synthesis
    stage's own calls are made after the report's envelope was taken)."""
    line = cost_line(result.usage)
    if line is None:
        return result

    def fixed(text: str) -> str:
        lines = text.split("\n")
        for n, old in enumerate(lines):
            if old.startswith("- " + COST_LINE_START):
                lines[n] = "- " + line
                return "\n".join(lines)
        for n, old in enumerate(lines):
            if old.startswith("- " + FIXED_LINE_START):
                lines.insert(n, "- " + line)
                return "\n".join(lines)
        return text

    return result.model_copy(update={"report": fixed(result.report),
                                     "output": result.output.model_copy(update={"answer": fixed(result.output.answer)})})
