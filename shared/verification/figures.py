"""Figures in text: numbers with their units and scale.

A figure is read with quantulum3 (a rule-based quantity parser whose unit tables ship
in its wheel): "3,500 MB/s" is 3500 megabyte per second, "1.2 million" and
"1,200,000" are both 1200000, "50 percent" is "50%", "twelve" is 12, and "one" used
as a word ("one of the threads") is no figure at all. Digits inside a name ("SHA-256",
"x86_64", "p99") are not figures either; they are read as part of the name.
"""

from __future__ import annotations

import logging
import math
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Figure", "digit_words", "figures", "same_figure"]

log = logging.getLogger(__name__)

# quantulum3's unit names that mean the same unit (its parser, without the optional
# classifier, reads "0.5 seconds" as seconds of arc).
_UNIT_ALIASES = {"second of arc": "second", "minute of arc": "minute", "percent": "percentage"}
_HAS_FIGURE = re.compile(
    r"\d|\b(?:zero|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred|thousand|million|billion|trillion|half|third|quarter|dozen)\b",
    re.IGNORECASE,
)
_PER_CENT = re.compile(r"(\s)per cent\b", re.IGNORECASE)  # British "per cent", as "percent" of the same length
_DIGIT_WORD = re.compile(r"[^\W_]*\d[^\W_]*(?:[-_/.][^\W_]+)*")


@dataclass(frozen=True)
class Figure:
    value: float
    unit: str  # "" for a bare number
    surface: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _parser():  # noqa: ANN202 - quantulum3's module; imported on first use (it takes a second to load)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "classifier dependencies not installed": the rules are what we use
        from quantulum3 import parser
    return parser


@lru_cache(maxsize=4096)
def figures(text: str) -> tuple[Figure, ...]:
    """Every figure in ``text``, in order."""
    if not _HAS_FIGURE.search(text):
        return ()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = _parser().parse(_PER_CENT.sub(r"\1 percent", text))
    except Exception as exc:  # noqa: BLE001 - a parser failure leaves the digit check below to decide
        log.warning("quantity parser failed on %.80r (%s: %s); its figures are read as plain digits",
                    text, type(exc).__name__, exc)
        return tuple(Figure(float(m.group().replace(",", "")), "", m.group(), m.start(), m.end())
                     for m in re.finditer(r"\d+(?:,\d{3})*(?:\.\d+)?", text))
    out = []
    for q in found:
        start, end = q.span
        if _inside_name(text, start, end):
            continue
        unit = "" if q.unit.name == "dimensionless" else _UNIT_ALIASES.get(q.unit.name, q.unit.name)
        out.append(Figure(float(q.value), unit, q.surface, start, end))
    return tuple(out)


def _inside_name(text: str, start: int, end: int) -> bool:
    """The figure is glued to letters ("SHA-256", "HTTP/2", "p99"): part of a name."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    glued_before = before.isalpha() or (before in "-/_" and start > 1 and text[start - 2].isalnum())
    return glued_before or after.isalpha() and not text[start:end].strip()[-1:].isalpha()


def digit_words(text: str) -> set[str]:
    """Words that hold digits and letters together ("SHA-256", "x86_64", "p99", "IPv6"),
    lower-cased: names, checked as names."""
    return {m.group().lower() for m in _DIGIT_WORD.finditer(text) if any(c.isalpha() for c in m.group())}


def same_figure(said: Figure, source: Figure) -> bool:
    """``said`` restates ``source``: the same value, and the same unit unless one of
    them gives none (a bare "3,500" restates "3,500 MB/s"; "3,500 GB/s" does not)."""
    close = math.isclose(said.value, source.value, rel_tol=1e-9, abs_tol=1e-12)
    return close and (said.unit == source.unit or not said.unit or not source.unit)
