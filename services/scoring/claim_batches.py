"""The claim step's batches, packed to fit the model's context window.

A claims call reads some sources' digests and snippets (:mod:`services.scoring.model_claims`).
How many fit in one call is the window's to say (``LLM_CONTEXT_TOKENS``, or the
provider's): the sources are packed in order into batches whose prompt, with the
instructions, the schema and room for the answer, fits (:func:`shared.llm.context.pack`),
at most ``MAX_SOURCES_PER_CALL`` a batch. A source too big alone offers fewer of its
snippets (its last passages first), so that it fits; one that still does not is answered
by the offline engine like a batch whose answer is unusable. A batch the server still
refuses for length is split in two and asked again (:func:`shared.llm.context.split_on_overflow`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from services.scoring import prompts
from services.scoring.schemas import ClaimsAnswer
from shared.llm.budget import estimate_tokens
from shared.llm.context import fixed_texts, pack, split_on_overflow

__all__ = ["CLAIMS_MAX_TOKENS", "packed_run"]

log = logging.getLogger(__name__)

CLAIMS_MAX_TOKENS = 4096  # a claims answer's allowance (the engine gives less in a small window)
R = TypeVar("R")


async def packed_run(llm: Any, groups: Sequence[list[int]], snippets: dict[str, Any],
                     render: Callable[[Sequence[int]], str], run: Callable[[list[int]], Awaitable[R]], *,
                     most: int) -> tuple[list[list[int]], list[R]]:
    """(the batches asked, their results): the sources of ``groups`` re-packed to fit the
    window, each batch ``run`` (split in two when refused for length). ``snippets`` (by
    id, with ``source_index``) loses the snippets of a source too big for one call that
    could not be shown; ``render(batch)`` is the batch's claims prompt."""
    window = llm.engine.window
    room = await window.room(CLAIMS_MAX_TOKENS)
    fixed = fixed_texts(ClaimsAnswer, system=prompts.CLAIMS_SYSTEM, tool_name=prompts.CLAIMS_TOOL)
    indices = [i for group in groups for i in group]
    for index in indices:
        _fit_alone(index, snippets, fixed, render, room)
    packed = pack(indices, lambda batch: (*fixed, render(batch)), room=room, most=most)
    if len(packed) > len(groups):
        log.info("claims: %d sources in %d calls to fit the context window of %d tokens (%d calls at %d sources a call)",
                 len(indices), len(packed), await window.tokens(), len(groups), most)
    parts = await asyncio.gather(*(split_on_overflow(batch, run, what="claims batch") for batch in packed))
    asked = [(batch, result) for part in parts for batch, result in part]
    return [b for b, _ in asked], [r for _, r in asked]


def _fit_alone(index: int, snippets: dict[str, Any], fixed: Sequence[str], render: Callable[[Sequence[int]], str],
               room: int) -> None:
    """Drop source ``index``'s last snippets until its prompt alone fits ``room`` (one
    snippet is always kept: a source that still does not fit is refused by the engine)."""
    own = [sid for sid, s in snippets.items() if s.source_index == index]
    dropped = 0
    while len(own) > 1 and estimate_tokens(*fixed, render([index])) > room:
        del snippets[own.pop()]
        dropped += 1
    if dropped:
        log.info("claims: source s%d offers %d fewer snippet(s) to fit the context window", index + 1, dropped)
