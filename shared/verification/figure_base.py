"""A figure, and the number words its readers share.

A figure is one quantity read from text: its value, its unit ("" for a bare number),
where it stands, whether the words before it bound it ("more than 1,200"), and for a
bare number the word it counts ("requests" in "100 requests").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["COUNT_WORDS", "NUMBERS", "ORDINALS", "SCALE_AFTER", "SCALE_WORDS", "Figure", "outside"]


@dataclass(frozen=True)
class Figure:
    value: float
    unit: str  # "" for a bare number
    surface: str
    start: int
    end: int
    bounded: bool = False  # the text bounds it ("more than 1,200", "under 5 ms"): a limit, not a count
    counts: str = ""  # for a bare number, the word after it, lower-cased ("requests" in "100 requests")


# Number words by value: scale words, counts ("several" counts none), cardinals to
# twenty and ordinals to twentieth.
SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
COUNT_WORDS = {"a": 1.0, "an": 1.0, "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0,
               "seven": 7.0, "eight": 8.0, "nine": 9.0, "ten": 10.0, "several": 0.0}
NUMBERS = {w: float(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"a": 1.0, "an": 1.0}
ORDINALS = {w: float(n) for n, w in enumerate(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()) if n}
# A scale word after a figure's digits ("10.6 million"), which the parser may leave.
SCALE_AFTER = re.compile(r"\s+(thousand|million|billion|trillion)\b", re.IGNORECASE)


def outside(found: list[Figure], m: re.Match[str]) -> list[Figure]:
    """The figures of ``found`` that do not overlap the match ``m``, which a reading
    of its own replaces."""
    return [f for f in found if not (m.start() <= f.start < m.end() or f.start <= m.start() < f.end)]
