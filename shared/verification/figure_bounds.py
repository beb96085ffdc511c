"""Bounds on figures as a clause states them: "at least 50", "under €1 billion", "50 or
more", read before or after the figure, so :mod:`shared.verification.direction` can tell a
bound restated ("at least 50" for "50 or more") from one flipped ("more than €1 billion"
for "under €1 billion").
"""

from __future__ import annotations

import re

from shared.verification.clauses import Clause
from shared.verification.figure_words import bounds_figure
from shared.verification.figure_base import Figure
from shared.verification.figures import bound_side, figures, same_figure

__all__ = ["both_bound", "bound_flipped"]


def bound_flipped(said: Clause, quote: Clause) -> bool:
    """A figure the clause bounds ("at most 60%") is one the quote bounds on the other
    side ("at least 60%")."""
    theirs = [(q, side) for q in figures(quote.text) if quote.start <= q.start < quote.end
              and (side := _side(quote.text, q)) is not None]
    return any(same_figure(f, q) and side != theirs_side
               for f in figures(said.text) if said.start <= f.start < said.end
               and (side := _side(said.text, f)) is not None for q, theirs_side in theirs)


# "20 or more staff", "aged 65 or over": a bound written after its figure
_OR_ABOVE = re.compile(r"\s+(?:\w+\s+)?or\s+(?:more|over|above|greater|higher|older|longer)\b", re.I)
_OR_BELOW = re.compile(r"\s+(?:\w+\s+)?or\s+(?:fewer|less|under|below|lower|younger|shorter)\b", re.I)


def _side(text: str, f: Figure) -> int | None:
    """The side the words round figure ``f`` of ``text`` bound it on: before it ("at
    least 20") or after it ("20 or more", "20 staff or fewer"); None for no bound."""
    before = bound_side(text[:f.start])
    if before is not None:
        return before
    return 1 if _OR_ABOVE.match(text, f.end) else -1 if _OR_BELOW.match(text, f.end) else None


def both_bound(said: Clause, i: int, quote: Clause) -> bool:
    """The word at ``i`` bounds the figure after it ("less than €1 billion", "no fewer
    than 30 days", "at least 50") and the quote bounds that same figure, before or after
    it ("50 or more"); on which side is :func:`bound_flipped`'s to read."""
    if not bounds_figure(said, i):
        return False
    mine = next((f for f in figures(said.text) if f.start >= said.tokens[i].end and said.start <= f.start < said.end),
                None)
    if mine is None or bound_side(said.text[:mine.start]) is None:
        return False
    text = quote.text
    return any(quote.start <= q.start < quote.end and same_figure(mine, q) and _side(text, q) is not None
               for q in figures(text))
