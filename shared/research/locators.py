"""Evidence locators: ``char:{start}-{end}`` and, for PDFs,
``page:{n}:char:{start}-{end}``.

Offsets are 0-based, end-exclusive positions in the whole canonical text; the page
(1-based) is the one the quote starts on, so ``canonical_text[start:end] == quote``
verifies every locator, PDF or not. Shared by the digest stage (which emits them),
scoring (which cites excerpts of undigested sources) and the gateway (which verifies).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

_LOCATOR = re.compile(r"(?:page:([0-9]+):)?char:([0-9]+)-([0-9]+)")


def format_locator(start: int, end: int, page: int | None = None) -> str:
    """``char:{start}-{end}``, or ``page:{n}:char:{start}-{end}`` with a 1-based page."""
    if start < 0 or end < start:
        raise ValueError(f"invalid span {start}-{end}")
    if page is not None and page < 1:
        raise ValueError(f"page numbers start at 1, got {page}")
    span = f"char:{start}-{end}"
    return span if page is None else f"page:{page}:{span}"


def parse_locator(loc: str) -> tuple[int | None, int, int]:
    """(page or None, start, end) of a locator; ValueError when it is not one."""
    m = _LOCATOR.fullmatch(loc) if isinstance(loc, str) else None
    if m is None:
        raise ValueError(f"not a locator: {loc!r}")
    page = int(m.group(1)) if m.group(1) is not None else None
    start, end = int(m.group(2)), int(m.group(3))
    if end < start:
        raise ValueError(f"locator ends before it starts: {loc!r}")
    if page is not None and page < 1:
        raise ValueError(f"page numbers start at 1: {loc!r}")
    return page, start, end


def page_of(page_starts: Sequence[int], offset: int) -> int:
    """The 1-based page holding ``offset``, given each page's start offset."""
    return max(1, bisect_right(page_starts, offset))


def locate(start: int, end: int, page_starts: Sequence[int] | None = None) -> str:
    """The locator of ``[start, end)``, on its page when the text has a page map."""
    return format_locator(start, end, page_of(page_starts, start) if page_starts else None)
