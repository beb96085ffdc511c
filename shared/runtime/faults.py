"""Fault injection for drills and tests: ``RESEARCH_CHAOS`` slows or breaks stages.

``"retrieve:delay=3,score:fail"`` makes every retrieval wait 3 s before its work and
every scoring attempt fail with a transient error, so that takeover, retries,
cancellation and deadlines can be watched on a real system.
"""

from __future__ import annotations

import asyncio

from shared.platform.errors import ConfigurationError, TransientError
from shared.subjects import Stage

__all__ = ["inject", "parse_chaos"]


def parse_chaos(spec: str) -> dict[str, dict[str, float]]:
    """``"retrieve:delay=3,score:fail"`` -> {"retrieve": {"delay": 3.0}, "score": {"fail": 1.0}}.
    Keys are stage names; a typo is an error, not a drill that silently does nothing."""
    out: dict[str, dict[str, float]] = {}
    stages = {s.value for s in Stage}
    for item in filter(None, (p.strip() for p in spec.split(","))):
        stage, _, action = item.partition(":")
        name, _, value = action.partition("=")
        stage, name = stage.strip(), name.strip()
        if stage not in stages or name not in ("delay", "fail"):
            raise ConfigurationError(
                f"RESEARCH_CHAOS item {item!r}: expected STAGE:fail or STAGE:delay=SECONDS with STAGE one of {', '.join(sorted(stages))}"
            )
        out.setdefault(stage, {})[name] = float(value) if value else 1.0
    return out


async def inject(faults: dict[str, float], stage: Stage) -> None:
    """What a stage's faults do before its work: wait, then fail."""
    if delay := faults.get("delay"):
        await asyncio.sleep(delay)
    if faults.get("fail"):
        raise TransientError(f"injected failure in {stage} (RESEARCH_CHAOS)")
