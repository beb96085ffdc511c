"""Figures a careful writer derives from its quotes' figures.

A sentence's figure restates a quote's when it is the same value in the same unit
(:func:`shared.verification.figures.same_figure`). A writer also says, faithfully:

* the same quantity in another unit of its dimension: "0.5 s" for "500 ms", "1 TB" for
  "1,024 GB" (data sizes in decimal or binary multiples), "half" for "50%";
* a rounded or bounded form, when the sentence says so: "about 1,200" for "1,214",
  "more than 1,000" for "1,214", "under 5 ms" for "3.2 ms";
* a figure computed from two figures of the same quotes: a sum, a difference ("1.4
  percentage points" from "3.5% to 4.9%"), a ratio ("four times" from "48 GB" and
  "12 GB"), a change in percent ("fell by 20%" from "500 Mt to 400 Mt"), or a count
  times a quantity ("1 TB" from "16 nodes, each with 64 GB"), when words around it say
  it was computed ("by", "in total", "a reduction of", ", or 20%", "15% below");
* a share of a whole, a percent or fraction followed by "of" ("a third of the patients"
  from "402 of the 1,214 patients").

Each is exact up to the rounding of the sentence's figure (1% of it), or 10% after
"about", "roughly", "nearly" and the like; a fraction word ("a third") is read to two
hundredths. Only a figure with a unit, a percent, a ratio ("four times") or one of 100
or more may be computed: small bare numbers would match some sum or difference by
chance. Years are never computed with, nor bounded, except that a span of years may be
two years' difference ("took 182 years" from "began in 1248 and was completed in 1430").
Only the figures of the quotes the sentence's clause rests on are used, so a figure
still cannot be assembled from quotes the clause does not rest on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from itertools import combinations

from shared.verification.figure_base import Figure
from shared.verification.figures import bound, bound_side, same_figure
from shared.verification.worded_figures import share_parts

__all__ = ["converted", "is_year", "restated"]

# Units by dimension, as multiples of the dimension's base unit (quantulum3's names).
_SCALES: dict[str, tuple[str, float]] = {
    "nanosecond": ("time", 1e-9), "microsecond": ("time", 1e-6), "millisecond": ("time", 1e-3),
    "second": ("time", 1.0), "minute": ("time", 60.0), "hour": ("time", 3600.0), "day": ("time", 86400.0),
    "week": ("time", 604800.0), "month": ("time", 2629746.0), "quarter": ("time", 7889238.0),
    "year": ("time", 31556952.0),
    "decade": ("time", 315569520.0), "century": ("time", 3155695200.0),
    "basis point": ("points", 1e-4), "percentage point": ("points", 1e-2),
    "bit": ("data", 0.125), "kilobit": ("data", 125.0), "megabit": ("data", 1.25e5), "gigabit": ("data", 1.25e8),
    "byte": ("data", 1.0), "kilobyte": ("data", 1e3), "megabyte": ("data", 1e6), "gigabyte": ("data", 1e9),
    "terabyte": ("data", 1e12), "petabyte": ("data", 1e15), "kibibyte": ("data", 2.0 ** 10),
    "mebibyte": ("data", 2.0 ** 20), "gibibyte": ("data", 2.0 ** 30), "tebibyte": ("data", 2.0 ** 40),
    "microgram": ("mass", 1e-6), "milligram": ("mass", 1e-3), "gram": ("mass", 1.0), "kilogram": ("mass", 1e3),
    "tonne": ("mass", 1e6), "megaton": ("mass", 1e12), "gigaton": ("mass", 1e15),
    "nanometre": ("length", 1e-9), "micrometre": ("length", 1e-6), "millimetre": ("length", 1e-3),
    "centimetre": ("length", 1e-2), "metre": ("length", 1.0), "kilometre": ("length", 1e3),
    "millilitre": ("volume", 1e-3), "litre": ("volume", 1.0), "cubic centimetre": ("volume", 1e-3),
    "cubic metre": ("volume", 1e3), "cubic kilometre": ("volume", 1e12),
    "square metre": ("area", 1.0), "square kilometre": ("area", 1e6), "hectare": ("area", 1e4),
    "watt": ("power", 1.0), "kilowatt": ("power", 1e3), "megawatt": ("power", 1e6), "gigawatt": ("power", 1e9),
    "hertz": ("frequency", 1.0), "kilohertz": ("frequency", 1e3), "megahertz": ("frequency", 1e6),
    "gigahertz": ("frequency", 1e9),
    "percentage": ("fraction", 0.01),
    # money in its main unit and its hundredth ("45 euro cents" is "0.45 euros")
    "euro": ("euro", 1.0), "euro cent": ("euro", 0.01), "dollar": ("dollar", 1.0), "cent": ("dollar", 0.01),
    "pound sterling": ("pound sterling", 1.0), "penny": ("pound sterling", 0.01),
}
_BINARY = {"kilobyte": 2.0 ** 10, "megabyte": 2.0 ** 20, "gigabyte": 2.0 ** 30, "terabyte": 2.0 ** 40,
           "petabyte": 2.0 ** 50}
_UNIT_WORDS = {"second": "second", "minute": "minute", "hour": "hour", "day": "day", "week": "week",
               "percent": "percentage", "millisecond": "millisecond",
               # "a quarter of a kilo", "half of a litre": a measure
               "kilo": "kilogram", "kilogram": "kilogram", "gram": "gram", "tonne": "tonne", "litre": "litre",
               "liter": "litre", "metre": "metre", "meter": "metre", "kilometre": "kilometre",
               "kilometer": "kilometre"}

_APPROX = re.compile(r"(?:\babout|\baround|\broughly|\bapproximately|\bnearly|\balmost|\bsome|\bcirca|"
                     r"\bclose to|\ban estimated|\bjust (?:under|over|below|above)|\bmore or less|~)\s*$", re.I)
_POINTS = re.compile(r"(?:\s*percentage)?\s+points?\b", re.I)
# Words that say a figure was computed: "by 20%", "in total", "four times", "3.6 months longer".
# "a reduction of 20%", "grew by $1.4 billion, or 20%", "15% below its 2019 level", "lost 36
# million cubic metres, a 30% decline".
_COMPUTING = re.compile(r"(?:\b(?:by|total|totals|combined|together|altogether|in all|sum|difference|gap|lost|gained|"
                        r"shed|(?:reduction|"
                        r"increase|decrease|rise|fall|drop|decline|growth|gain|cut)\s+of)\b|,\s*or\b)\W*(?:\S+\W*)?#"
                        r"|#\W*(?:\S+\s+){0,2}(?:times|fold|more|less|fewer|longer|shorter|higher|lower|larger|"
                        r"smaller|greater|bigger|below|above|points?|in total|combined|together|altogether|in all|"
                        r"declines?|drops?|falls?|rises?|increases?|decreases?|reductions?|cuts?|gains?)\b"
                        r"|-fold", re.I)
_UP = re.compile(r"\b(?:r[io]se|risen|grew|grow[sn]?|growth|increase[sd]?|gain(?:ed|s)?|up|higher|more|above|"
                 r"jump(?:ed|s)?|climb(?:ed|s)?|raised?|expand(?:ed|s)?|larger)\b", re.I)
_DOWN = re.compile(r"\b(?:f[ae]ll|fallen|falls|drop(?:ped|s)?|declin(?:e|ed|es)|decrease[sd]?|reduc(?:e|ed|es|tion)|"
                   r"cut|lower|less|fewer|below|down|shr[au]nk|shrinks?|lost|smaller|trim(?:med|s)?|"
                   r"slash(?:ed|es)?|shaved?)\b", re.I)
# A share of a whole: "15% of the specimens", "about a third of whom".
_SHARE_OF = re.compile(r"\s+of\b", re.I)
# "over 10 years" is a span of time ("during"), not "more than 10 years".
_DURING = re.compile(r"\s*(?:years?|months?|weeks?|days?|decades?|hours?|centuries|century)\b", re.I)
_OF_A_UNIT = re.compile(r"\s+of\s+an?\s+(\w+?)s?\b", re.I)
_OF_A_POINT = re.compile(r"\s+of\s+an?\s+(percentage|basis)\s+point\b", re.I)

Reading = tuple[str, float]  # (dimension, value in the dimension's base unit); "" a bare number


_THAN = re.compile(r"\bthan\s*$")
# "just under 4 TB", "slightly more than 200": a bound that is also near its figure
# (within a quarter of it: not said of "4 GB", which is under 4 TB but far from it)
_NEAR_BOUND = re.compile(r"\b(?:just|slightly|a little|marginally|narrowly)\s+(?:under|over|below|above|"
                         r"(?:more|less|fewer|greater|higher|lower) than)\s*$", re.I)


def restated(said: Figure, sources: Sequence[Figure], sentence: str = "") -> bool:
    """``said`` (a figure of ``sentence``) restates one of ``sources``, or a figure a
    careful writer derives from them (see the module doc)."""
    before = sentence[:said.start] if sentence else ""
    # "more than 1,000" is not said of a plain 1,000 ("over" and "under" may be places and spans)
    found = bound(before)  # (side, inclusive) of a bound just before the figure, or None
    strict = _THAN.search(before) is not None and found in ((1, False), (-1, False))
    if any((same_figure(said, s) and not (strict and not s.bounded)) or converted(said, s) for s in sources):
        return True  # ("1,500 metres" for "1.5 kilometres", "30 seconds" for "half a minute")
    parts = share_parts(said)
    if parts and all(any(s.value == n and s.unit != "percentage" for s in sources) for n in parts):
        return True  # "27 out of 38 games" for "won 27 of its 38 games"
    mine = _readings(said, sentence[said.end:] if sentence else "")
    if is_year(said):
        return False
    if said.unit == "year" and _years_apart(said, sources, loose=bool(_APPROX.search(before))):
        return True  # "took 182 years to build" from "began in 1248" and "completed in 1430"
    theirs = [r for s in sources if not is_year(s) for r in _readings(s)]
    if bound_side(before) is not None and not _DURING.match(sentence[said.end:]):
        # A bound holds of a figure its quote states plainly ("1,214 patients"), not of
        # one the quote bounds itself ("more than 1,200"): that bound is its figure.
        # (a bare number bounds one that counts the same thing: "exceeds 10 requests" is
        # not said of "an HTTP 429 response")
        plain = [s for s in sources if not is_year(s) and not s.bounded
                 and (said.unit or s.unit or not said.counts or not s.counts or _same_thing(said.counts, s.counts))]
        near = [r for s in plain for r in _readings(s)]
        if _NEAR_BOUND.search(before):
            near = [(e, w) for e, w in near if any(d == e and math.isclose(v, w, rel_tol=0.25) for d, v in mine)]
        return _bounded(found, mine, near)
    loose = bool(_APPROX.search(before))
    counted = [s for s in sources if not is_year(s)]
    derived = theirs + (list(_computed(counted, _change(said, sentence))) if _computable(said, sentence) else [])
    if any(d == "fraction" for d, _ in mine) and _SHARE_OF.match(sentence, said.end):
        derived += _shares(counted)
    return any(_close(v, w, said, loose=loose) for d, v in mine for e, w in derived if d == e)


def _same_thing(a: str, b: str) -> bool:
    """Two counted words name the same thing ("requests", "request")."""
    return a == b or a.rstrip("s") == b.rstrip("s")


def converted(said: Figure, source: Figure) -> bool:
    """The same quantity in other units of its dimension."""
    return bool(said.unit and source.unit and said.unit != source.unit) and any(
        d == e and d and math.isclose(v, w, rel_tol=1e-9) for d, v in _readings(said) for e, w in _readings(source))


def _bounded(found: tuple[int, bool] | None, mine: list[Reading], theirs: list[Reading]) -> bool:
    """"more than 1,000" is said of a quote's 1,214: some quote figure of the same
    dimension lies on the side the bound (``found``, as ``bound`` reads it) says."""
    if found is None:
        return False
    side, inclusive = found
    return any(d == e and ((w - v) * side > 0 or inclusive and math.isclose(w, v, rel_tol=1e-9))
               for d, v in mine for e, w in theirs)


def _readings(fig: Figure, after: str = "") -> list[Reading]:
    """The figure in its dimension's base unit, in every reading of its unit (a data
    size in decimal and binary multiples; a fraction word as a fraction)."""
    unit = fig.unit
    if not unit and not any(c.isdigit() for c in fig.surface):
        point = _OF_A_POINT.match(after)  # "a quarter of a percentage point": 25 basis points
        if point:
            return [("points", fig.value * (0.01 if point.group(1).lower() == "percentage" else 1e-4))]
        m = _OF_A_UNIT.match(after)  # "a quarter of a second"
        if m and m.group(1).lower() in _UNIT_WORDS:
            unit = _UNIT_WORDS[m.group(1).lower()]
        elif 0 < fig.value < 1:
            return [("fraction", fig.value)]
    if not unit or unit == "count":
        return [("", fig.value)]
    if unit == "percentage point" or unit == "percentage" and _POINTS.match(after):  # a difference of percents
        return [("points", fig.value * 0.01)]
    numerator, _, denominator = unit.partition(" per ")
    out = []
    for dim, scale in _scales(numerator):
        if denominator:
            out += [(f"{dim}/{d}", fig.value * scale / s) for d, s in _scales(denominator)]
        else:
            out.append((dim, fig.value * scale))
    return out


def _scales(name: str) -> list[tuple[str, float]]:
    dim, scale = _SCALES.get(name, (name, 1.0))
    return [(dim, scale)] + ([(dim, _BINARY[name])] if name in _BINARY else [])


def _computed(sources: Sequence[Figure], change: str | None = None) -> Iterator[Reading]:
    """Sums, differences, ratios, changes in percent and count-times-quantity products
    of two of the quotes' figures (at most eight figures are combined). A change in
    percent starts from the smaller figure when the sentence says it went ``"up"``, from
    the larger when ``"down"`` ("fell by 20%" from 500 and 400), else from the first."""
    for a, b in combinations(sources[:8], 2):
        for (d, x) in _readings(a):
            for (e, y) in _readings(b):
                if d == e == "fraction":
                    yield "points", abs(x - y)  # 9.5% to 12.0% is 2.5 points, not 2.5%
                elif d == e and d != "":
                    yield d, x + y
                    yield d, abs(x - y)
                if d == e and x > 0 and y > 0:
                    yield "", max(x, y) / min(x, y)
                    if x != y:  # a change in percent, of the figure it starts from
                        yield "fraction", abs(x - y) / {"up": min(x, y), "down": max(x, y)}.get(change, x)
                if d == "" and e != "" and _count(a):
                    yield e, x * y
                if e == "" and d != "" and _count(b):
                    yield d, x * y


def _change(said: Figure, sentence: str) -> str | None:
    """Whether the words next to a figure say it is a rise ("up") or a fall ("down")."""
    near = sentence[max(0, said.start - 40):said.start] + " " + sentence[said.end:said.end + 24]
    ups, downs = len(_UP.findall(near)), len(_DOWN.findall(near))
    return "up" if ups > downs else "down" if downs > ups else None


def _years_apart(said: Figure, sources: Sequence[Figure], *, loose: bool) -> bool:
    """A span of years the sentence gives is the difference of two years of its quotes."""
    years = sorted({s.value for s in sources if not s.unit and re.fullmatch(r"1\d{3}|20\d\d", s.surface.strip())})
    return any(_close(said.value, b - a, said, loose=loose) for a, b in combinations(years, 2))


def _shares(sources: Sequence[Figure]) -> list[Reading]:
    """The share one count or quantity of the quotes is of a larger one of the same kind
    ("402 of the 1,214 patients": about a third)."""
    return [("fraction", min(x, y) / max(x, y)) for a, b in combinations(sources[:8], 2)
            for d, x in _readings(a) for e, y in _readings(b) if d == e and x > 0 and y > 0 and x != y]


def _computable(said: Figure, sentence: str) -> bool:
    """A figure that may be a computed one: with a unit or a percent, or a ratio said as
    one ("four times", "3-fold"). A bare small number ("3 trials") is never computed:
    two of a quote's figures give too many small sums and differences by chance."""
    before = sentence[max(0, said.start - 24):said.start].lower() if sentence else ""
    after = sentence[said.end:said.end + 24].lower() if sentence else ""
    if said.unit != "count" and not _COMPUTING.search(before + " # " + after):
        return False  # a figure with no word that says it was computed
    if said.unit and said.unit != "count":
        return True
    return said.unit == "count" or after.lstrip(" -").startswith(("times", "fold", "x ")) or said.value >= 100


def _close(v: float, w: float, said: Figure, *, loose: bool) -> bool:
    if loose:  # ("about 1,400" for 1,340; not "some 1,430", more precise than it is near)
        return math.isclose(v, w, rel_tol=0.1) and abs(v - w) <= max(_last_digit(said) * abs(v), 0.02 * abs(w))
    if not any(c.isdigit() for c in said.surface):  # "a third": a word is read to two hundredths
        # (of a whole: "half a percentage point", a quantity of its own, to 2% of it)
        return abs(v - w) <= 0.02 * max(1.0, abs(w)) if abs(w) <= 1 and not said.unit \
            else math.isclose(v, w, rel_tol=0.02)
    # (and no further than half its last digit: "1123" is no rounding of 1132, though within 1%)
    return math.isclose(v, w, rel_tol=min(_precision(said), 0.5 * _last_digit(said) + 1e-9), abs_tol=1e-12)


def _last_digit(said: Figure) -> float:
    """One in the last significant digit of the sentence's figure as written, relative to
    the figure ("1,430": 10 of 1,430; "1,400": 100 of 1,400; "12.5": 0.1 of 12.5); 1 (any)
    when it is written in words."""
    if said.unit == "second" and said.value and len(re.findall(r"\d+", said.surface)) >= 3:
        return 1.0 / said.value  # ("1:02:41", "1 hour 2 minutes 41 seconds": to the second)
    m = re.search(r"\d+(?:,\d{3})*(?:\.\d+)?", said.surface)
    number = float(m.group().replace(",", "")) if m else 0.0
    if not number:
        return 1.0
    digits = m.group().replace(",", "")
    if "." in digits:
        return 10.0 ** -len(digits.split(".")[1]) / number
    return 10.0 ** (len(digits) - len(digits.rstrip("0"))) / number


def _precision(said: Figure) -> float:
    """The relative rounding of the sentence's figure: 1%, or less when it gives decimals
    ("3.11" is no rounding of "3.10": half its last digit, 0.005, is its rounding)."""
    m = re.search(r"(\d+(?:,\d{3})*)\.(\d+)", said.surface)
    if not m:
        return 0.01
    number = float(f"{m.group(1).replace(',', '')}.{m.group(2)}")
    return min(0.01, 0.5 * 10 ** -len(m.group(2)) / number) if number else 0.01


def _count(fig: Figure) -> bool:
    return not fig.unit and fig.value == int(fig.value) and 2 <= fig.value <= 100_000 and not is_year(fig)


def is_year(fig: Figure) -> bool:
    return not fig.unit and re.fullmatch(r"1[5-9]\d\d|20\d\d", fig.surface.strip()) is not None
