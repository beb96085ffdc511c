"""Figures in text: numbers with their units and scale.

A figure is read with quantulum3 (a rule-based quantity parser whose unit tables ship
in its wheel): "3,500 MB/s" is 3500 megabyte per second, "1.2 million" and
"1,200,000" are both 1200000, "50 percent" is "50%", "twelve" is 12, and "one" used
as a word ("one of the threads") is no figure at all. Digits inside a name ("SHA-256",
"x86_64", "p99") are not figures either; they are read as part of the name.
Quantities the parser does not read ("a decade", "one in five", "4.30 pm") are read by
:mod:`shared.verification.worded_figures`, in place of what it made of their words.
"""

from __future__ import annotations

import logging
import math
import re
import warnings
from dataclasses import replace
from functools import lru_cache

from shared.verification.figure_base import COUNT_WORDS, SCALE_AFTER, SCALE_WORDS, Figure
from shared.verification.lexicon import MONTHS
from shared.verification.worded_figures import without_eras, worded

__all__ = ["PERIOD", "TIME_UNITS", "bound", "bound_side", "digit_words", "figures", "same_figure", "share_of"]

log = logging.getLogger(__name__)

# quantulum3's unit names that mean the same unit (its parser, without the optional
# classifier, reads "0.5 seconds" as seconds of arc), as words of a unit's name.
# ("L/min" it reads as standard litres per minute, a gas-flow unit)
# ("72 degrees C" it reads as degrees times coulombs, "98 degrees F" as degrees times farads)
_UNIT_ALIASES = {"second of arc": "second", "minute of arc": "minute", "united states dollar": "dollar",
                 "standard litre": "litre", "degree angle coulomb": "degree Celsius",
                 "degree angle farad": "degree fahrenheit"}
# Units the parser does not know, read after a figure it leaves without one.
_UNLISTED_UNIT = re.compile(r"\s+(nautical miles?|hectares?)\b", re.IGNORECASE)
_HAS_FIGURE = re.compile(
    r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"(?:thir|four|fif|six|seven|eigh|nine)teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    r"thousand|million|billion|trillion|half|thirds?|quarters?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?|"
    r"dozen|decades?|century|centuries|millennium|millennia|twice|thrice)\b",
    re.IGNORECASE,
)
# British "per cent", read as "percent " of the same length (one space before it: the parser
# reads a figure and a unit two spaces apart as one only sometimes)
_PER_CENT = re.compile(r"(\s)per cent\b", re.IGNORECASE)
# Rewritten for the parser at the same length, so its spans stay the text's: hyphens
# joining a figure to its unit ("a 410-million-cubic-metre reservoir", which it splits
# into two figures), and a comma after a number word before "a" ("to zero, a hallmark",
# which it reads as a year, "a" being per annum).
# "terawatt-hours": the parser reads a hyphenated "-hours" after a unit's prefix as
# no unit ("2,340 terawatt"), though it reads "kilowatt-hours"; with a space, all alike.
_WATT_HOURS = re.compile(r"(?<=watt)-(?=hours?\b)", re.IGNORECASE)
_FIGURE_COMPOUND = re.compile(r"\d[\d.,]*(?:-[a-z]{3,})+", re.IGNORECASE)
_WORD_COMMA_ARTICLE = re.compile(r"(\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                                 r"\w+teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|"
                                 r"million|billion)),(?=\s+an?\b)", re.IGNORECASE)
# "No two consumers...", "no one": a number word after "no" says none, not a figure.
_NO_NUMBER_WORD = re.compile(r"\bno\s+[a-z]+$", re.IGNORECASE)
_MINUS = re.compile(r"\bminus\s+$", re.IGNORECASE)
_RANGE = re.compile(r"(?:between\s+|from\s+)?(.+?)\s*(?:to|and|-|–)\s*(.+)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\d.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\d,]*\d)")
# A rate's period ("267 Gt a year"); "a year later" is a time, not a period.
# ("a quarter" is also a share; "each quarter", "per quarter" are periods; "of a year" is
# a share of one, "of each month" is still the period)
PERIOD = re.compile(r"(?:(?<!of )\b(?:a|an)\s+(second|minute|hour|day|week|month|year)"
                     r"|\b(?:per|each|every)\s+(second|minute|hour|day|week|month|quarter|year))\b(?!-)"
                     r"(?!\s+(?:later|earlier|before|after|ago|in\s+which|when|that|of)\b)", re.IGNORECASE)
_PREPOSITION_IN = re.compile(r"\s+(?:\d|the\b|a\b|an\b|[A-Z])")
_PERIOD_END = re.compile(r"\s+(?:a|an)\s+(second|minute|hour|day|week|month|year)$", re.IGNORECASE)
_ON_YEAR = re.compile(r"[\s-]+on[\s-]+year\b", re.IGNORECASE)
_TIME_AFTER = re.compile(r"\s+(?:later|earlier|before|after|ago)\b", re.IGNORECASE)
# Words before a figure that bound it, on its upper or lower side, inclusive or not
# (read by bound).
_AT_LEAST = re.compile(r"\b(?:at least|(?:no|not) fewer than|(?:no|not) less than|(?:a|the) minimum(?: \w+)? of)\s*$",
                       re.I)
_ABOVE = re.compile(r"\b(?:(?:over|above) the age of|more than|over|above|exceed(?:s|ed|ing)?|(?:greater|larger|bigger|higher|longer|older|"
                    r"heavier) than|in excess of|upwards of)\s*$", re.I)
# ("up to 9,000" states a limit)
_AT_MOST = re.compile(r"(?:\b(?:no more than|not more than|at most|(?:a|the) maximum(?: \w+)? of)|"
                      r"(?:\bnot|\bnever|\bcannot|n't)\s+(?:exceed|surpass)(?:s|ed|ing)?)\s*$", re.I)
_BELOW = re.compile(r"\b(?:(?:under|below) the age of|(?:less|fewer|smaller|lower|shorter|younger|lighter) than|under|below)\s*$", re.I)
_UP_TO = re.compile(r"\bup to\s*$", re.IGNORECASE)  # "up to 9,000": a bound, on no side the checks read
_ARTICLE = re.compile(r"an?\s", re.IGNORECASE)
_THE_BEFORE = re.compile(r"\bthe\s+$", re.IGNORECASE)
_PREDICATE_AFTER = re.compile(r"\s+(?:can|could|are|were|have|had|will|would|may|might|must|also|both|share|differ)\b",
                              re.IGNORECASE)
_ONE = re.compile(r"one\b(?!\s+(?:hundred|thousand|million|billion|trillion|dozen)\b)", re.IGNORECASE)
# "one gram": a measure's unit spelled out (not "one TCP", "one-metre", "at any one time", "one at a time")
_ONE_UNIT = re.compile(r"one\s+[a-z][a-z ]*")
_MEASURES = frozenset({"mass", "length", "volume", "area", "power", "energy", "temperature", "speed"})
_NEXT_WORD = re.compile(r"\s+([A-Za-z][\w-]*)")
# Two ends of a change or range with one scale word after the second: it scales both.
_SHARED_SCALE = re.compile(r"\b(?:from|between)\s+(\d[\d,]*(?:\.\d+)?)\s+(?:to|and)\s+(\d[\d,]*(?:\.\d+)?)\s+"
                           r"(thousand|million|billion|trillion)\b", re.IGNORECASE)
# (not from inside a figure's groups: "41,000-capacity" holds no name "000-capacity")
_DIGIT_WORD = re.compile(r"(?<![^\W_])(?<!\d[,.])[^\W_]*\d[^\W_]*(?:[-_/.][^\W_]+)*")


@lru_cache(maxsize=1)
def _parser():  # noqa: ANN202 - quantulum3's module; imported on first use (it takes a second to load)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "classifier dependencies not installed": the rules are what we use
        from quantulum3 import parser
    return parser


# A rate's period in a figure's surface ("per year", "a day", "/h") and in its unit's name.
# (not per second or minute: "MB/s" and "rpm" are units of their own)
_PER_PERIOD = re.compile(r"\s*(?:\bper\s+|\ban?\s+|/\s*)(year|month|week|day|hour|yr|h)\b", re.IGNORECASE)
_RATE_UNIT = re.compile(r" per (year|month|week|day|hour)$")
_PERIOD_ABBREVIATIONS = {"yr": "year", "h": "hour"}
_POINTS = re.compile(r"\s*points?\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def figures(text: str) -> tuple[Figure, ...]:
    """Every figure in ``text``, in order."""
    if not _HAS_FIGURE.search(text):  # ("each year" alone: a rate's period, read as below)
        return _periods(text, [])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = _for_parser(text)
            found = _parser().parse(parsed)
    except Exception as exc:  # noqa: BLE001 - a parser failure leaves the digit check below to decide
        log.warning("quantity parser failed on %.80r (%s: %s); its figures are read as plain digits",
                    text, type(exc).__name__, exc)
        return tuple(Figure(float(m.group().replace(",", "")), "", m.group(), m.start(), m.end())
                     for m in re.finditer(r"\d+(?:,\d{3})*(?:\.\d+)?", text))
    out = []
    for q in found:
        start, end = q.span
        if text[max(0, end - 7):end + 1].lower() == "per cent":
            end += 1  # ("per cent" was read as "percent " of the same length: its span ends a letter short)
        if _inside_name(text, start, end) or _NO_NUMBER_WORD.search(text[:end]) and not any(
                c.isdigit() for c in text[start:end]):
            continue
        surface = text[start:end].strip()
        unit = "" if q.unit.name == "dimensionless" else q.unit.name
        if not surface or _ARTICLE.match(surface) and q.value == 1 or _ONE.match(surface) and not (
                q.unit.entity.name in _MEASURES and _ONE_UNIT.fullmatch(surface)):
            continue  # "a year", "a drop", "one TCP connection": an article, not a figure ("one gram" is)
        if _THE_BEFORE.search(text[:start]) and surface.isalpha() and _PREDICATE_AFTER.match(text, end):
            continue  # "the two can also be used together": the two of them, not a figure
        if unit == "percent":
            unit = "percentage"
        if unit == "percentage" and _POINTS.match(parsed, q.span[1]):
            unit = "percentage point"  # "rose 4.2 percentage points" is not "rose 4.2%"
        if unit == "inch" and re.search(r"\bin$", surface) and _PREPOSITION_IN.match(text, end):
            continue  # "1,840 in 2023": "in" is a preposition (its digits are read below)
        if unit.endswith(" ampere-turn") and re.search(r"\sat$", surface):
            # "343 metres at the top": "at" is a preposition, not ampere-turns
            surface, end, unit = surface[:-3].rstrip(), end - 3, unit.removesuffix(" ampere-turn").removesuffix(" per")
        for alias, name in _UNIT_ALIASES.items():
            unit = unit.replace(alias, name)
        unlisted = None if unit else _UNLISTED_UNIT.match(text, end)
        if unlisted:  # "9 nautical miles": a unit the parser does not know, not 9 of something
            unit, surface, end = unlisted.group(1).lower().removesuffix("s"), text[start:unlisted.end()], unlisted.end()
        if unit.endswith(" year") and _ON_YEAR.match(text, end):  # "6 percent year on year": a change, not a rate
            surface, end, unit = surface[:-4].rstrip(), end - 4, unit.removesuffix(" year")
        period = _PERIOD_END.search(surface)
        if period and _TIME_AFTER.match(text, end):  # "$350,000 a year earlier": a time, not a rate
            surface, end = surface[:period.start()], start + period.start()
            unit = unit.removesuffix(f" per {period.group(1).lower()}")
        rate = _RATE_UNIT.search(unit)
        per = _PER_PERIOD.search(surface) if rate else None
        if rate and per and _PERIOD_ABBREVIATIONS.get(per.group(1).lower(), per.group(1).lower()) == rate.group(1):
            # "4 percent per year", "15 m/day": the figure and its period apart, as "4
            # percent a year" is read
            unit = unit[:rate.start()]
            lead = len(per.group()) - len(per.group().lstrip())
            out.append(Figure(1.0, rate.group(1), per.group().strip(), start + per.start() + lead, end))
            surface, end = surface[:per.start()].rstrip(), start + per.start()
        ends = _RANGE.fullmatch(surface) if q.uncertainty else None
        if ends:  # "3.5% to 4.9%", "between 2005 and 2020": its two ends, not their mean
            low, high = float(q.value) - float(q.uncertainty), float(q.value) + float(q.uncertainty)
            first, second = ends.group(1), ends.group(2)
            if _leading_number(first) > _leading_number(second):
                first, second = second, first
            out += [Figure(low, unit, first, start, end), Figure(high, unit, second, start, end)]
            continue
        scale = SCALE_AFTER.match(text, end)  # "some 10.6 million": the parser may leave its scale word
        value = float(q.value) * SCALE_WORDS[scale.group(1).lower()] if scale else float(q.value)
        out.append(Figure(value, unit, text[start:scale.end()] if scale else surface, start,
                          scale.end() if scale else end))
    out = worded(text, out)
    out += _periods(text, out)
    # Digits the parser passed over ("from 500 Mt in 2005 to 400 Mt": it keeps neither
    # 2005 nor 400): bare figures, so no figure of the text goes unread.
    spans = [(f.start, f.end) for f in out]
    units = {_unit_text(f): f.unit for f in out if f.unit and _unit_text(f)}
    for m in _DIGITS.finditer(text):
        if not any(a <= m.start() < b for a, b in spans) and not _inside_name(text, m.start(), m.end()):
            after = text[m.end():].lstrip()  # "400 Mt" after a parsed "500 Mt": the same unit
            unit = next((u for sym, u in units.items() if re.match(rf"{re.escape(sym)}(?!\w)", after)), "")
            value, end = float(m.group().replace(",", "")), m.end()
            scale = SCALE_AFTER.match(text, m.end())  # "and $250 billion": its scale and currency too
            if scale:
                value, end = value * SCALE_WORDS[scale.group(1).lower()], scale.end()
            if text[max(0, m.start() - 1):m.start()] == "$":
                unit = "dollar"
            out.append(Figure(value, unit, text[m.start():end], m.start(), end))
    # "minus 25 degrees Celsius" is -25 °C (the parser reads the word as no sign)
    out = [replace(f, value=-f.value, surface=text[m.start():f.end], start=m.start())
           if f.value > 0 and (m := _MINUS.search(text, 0, f.start)) else f for f in out]
    for m in _SHARED_SCALE.finditer(text):  # "from 41 to 48 million": 41 million
        low, high = float(m.group(1).replace(",", "")), float(m.group(2).replace(",", ""))
        if low <= high:
            scale = SCALE_WORDS[m.group(3).lower()]
            out = [replace(f, value=f.value * scale) if f.start in (m.start(), m.start(1)) and f.value == low else f
                   for f in out]
    out = [replace(f, bounded=True) if _bounded(text[:f.start]) else f for f in out]
    out = [replace(f, counts=m.group(1).lower()) if not f.unit and (m := _NEXT_WORD.match(text, f.end)) else f
           for f in out]
    return _compounds(text, sorted(out, key=lambda f: f.start))


# The units of a period of time, as the parser names them.
TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year"})
# A time said in two parts: "an hour and a half", "four hours and twenty minutes",
# "2 hours 40 minutes".
_AND_A_HALF = re.compile(r"\s+and\s+a\s+half\b", re.IGNORECASE)
_AND = re.compile(r"\s+(?:and\s+)?", re.IGNORECASE)
_SMALLER = {("hour", "minute"): 60.0, ("minute", "second"): 60.0, ("day", "hour"): 24.0, ("week", "day"): 7.0,
            ("year", "month"): 12.0}


def _compounds(text: str, found: list[Figure]) -> tuple[Figure, ...]:
    """Two figures that say one time ("an hour and a half" is 1.5 hours; "four hours and
    twenty minutes" and "4 hours 20 minutes" are 260 minutes) read as one."""
    out: list[Figure] = []
    for f in found:
        last = out[-1] if out else None
        if last is None or last.unit not in TIME_UNITS or f.bounded and not last.bounded:
            out.append(f)
            continue
        half = _AND_A_HALF.match(text, last.end)
        if half and f.value == 0.5 and not f.unit and f.start < half.end() <= f.end:
            out[-1] = replace(last, value=last.value + 0.5, surface=text[last.start:f.end], end=f.end)
            continue
        # (not the end of a list, "19 hours, 42 minutes and 8 seconds", read part by part as a clock's "19:42:08")
        joined = _AND.match(text, last.end) if not re.search(r",\s*$", text[:last.start]) else None
        factor = _SMALLER.get((last.unit, f.unit))
        if joined and joined.end() == f.start and factor and not _TIME_AFTER.match(text, f.end):
            out[-1] = replace(last, value=last.value * factor + f.value, unit=f.unit, surface=text[last.start:f.end],
                              end=f.end)
            continue
        out.append(f)
    return tuple(out)


def _for_parser(text: str) -> str:
    """``text`` as the parser reads it best, at the same length (see _FIGURE_COMPOUND)."""
    text = _FIGURE_COMPOUND.sub(lambda m: m.group().replace("-", " "), _PER_CENT.sub(r"\1percent ", text))
    text = _WATT_HOURS.sub(" ", text)
    return _WORD_COMMA_ARTICLE.sub(r"\1;", text)


def bound(before: str) -> tuple[int, bool] | None:
    """The bound the words ``before`` a figure set on it: the side (1 above, -1
    below) and whether the figure itself is inside ("at least" 1, inclusive; "under"
    -1, not), or None for no bound. The longer phrase wins: "no fewer than" is at
    least, "no more than" at most, though each ends with a phrase of the other side."""
    if _AT_LEAST.search(before):
        return 1, True
    if _AT_MOST.search(before):
        return -1, True
    if _BELOW.search(before):
        return -1, False
    return (1, False) if _ABOVE.search(before) else None


def bound_side(before: str) -> int | None:
    """The side of its figure the words ``before`` it bound: 1 above ("more than",
    "at least"), -1 below ("under", "at most"), None for no bound."""
    found = bound(before)
    return found[0] if found else None


def _bounded(before: str) -> bool:
    """The words ``before`` a figure bound it ("more than", "at most", "up to")."""
    return bound_side(before) is not None or _UP_TO.search(before) is not None


def _periods(text: str, found: list[Figure]) -> tuple[Figure, ...]:
    """A rate's period ("a year", "per year", "each month") outside the figures ``found``:
    one of that unit, on both sides alike, so "267 Gt a year" restates "267 Gt per year"
    and "a month" does not."""
    out = []
    for m in PERIOD.finditer(text):
        unit = (m.group(1) or m.group(2)).lower()  # (after "a"/"an", or after "per"/"each"/"every")
        if not any(g.start <= m.start() < g.end for g in found) \
                and not (unit == "second" and _ORDINAL_AFTER.match(text, m.end())):
            out.append(Figure(1.0, unit, m.group(), m.start(), m.end()))
    return tuple(out)


# "a second run", "a second opinion": the ordinal before its noun, not a period ("1,000
# requests a second and 50 a minute", "a second apart" are).
_ORDINAL_AFTER = re.compile(r"\s+(?!(?:and|or|but|to|in|on|at|for|per|of|with|from|than|as|by|across|apart|"
                            r"faster|slower|longer|shorter|sooner)\b)[a-z]{2,}\b")


def _leading_number(surface: str) -> float:
    m = re.search(r"\d+(?:,\d{3})*(?:\.\d+)?", surface)
    return float(m.group().replace(",", "")) if m else 0.0


def _unit_text(f: Figure) -> str:
    """What follows the number in a figure's surface ("Mt" in "500 Mt")."""
    m = re.match(r"[\d.,\s]+(.+)$", f.surface)
    return m.group(1).strip() if m else ""


_RANGE_TO = re.compile(r"(?<![\w-])\d+-to-$")


def _inside_name(text: str, start: int, end: int) -> bool:
    """The figure is glued to letters ("SHA-256", "HTTP/2", "p99"): part of a name."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    glued_before = before.isalpha() or (before in "-/_" and start > 1 and text[start - 2].isalnum()
                                        and not _RANGE_TO.search(text, 0, start))  # (not "16-to-24-year-olds")
    return glued_before or after.isalpha() and not text[start:end].strip()[-1:].isalpha()


_PART_OF = re.compile(r"\b(\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:out\s+)?of\s+"
                      r"(?:the\s+|its\s+|their\s+)?(\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                      r"twenty)\b", re.IGNORECASE)
_TENS = {"eleven": 11.0, "twelve": 12.0, "twenty": 20.0}


def share_of(text: str) -> float | None:
    """The smallest share of a whole the text gives: a percentage ("40 percent"), a
    fraction ("about a third", "half"), or a count of a count ("two of the eleven member
    states"); None when it gives none."""
    shares = [f.value / 100 for f in figures(text) if f.unit == "percentage" and 0 <= f.value <= 100]
    shares += [f.value for f in figures(text)
               if not f.unit and 0 < f.value < 1 and not any(c.isdigit() for c in f.surface)]
    for m in _PART_OF.finditer(text):
        part, whole = (COUNT_WORDS.get(g.lower()) or _TENS.get(g.lower()) or float(g) for g in m.groups())
        if 0 < part < whole:
            shares.append(part / whole)
    return min(shares, default=None)


def digit_words(text: str) -> set[str]:
    """Words that hold digits and letters together ("SHA-256", "x86_64", "p99", "IPv6"),
    lower-cased: names, checked as names (not a century, "the 1100s", "the 12th century",
    read as a figure)."""
    text = without_eras(text)
    return {m.group().lower() for m in _DIGIT_WORD.finditer(text) if any(c.isalpha() for c in m.group())}


def same_figure(said: Figure, source: Figure) -> bool:
    """``said`` restates ``source``: the same value, and the same unit unless one of
    them gives none (a bare "3,500" restates "3,500 MB/s"; "3,500 GB/s" does not), but
    a percentage is not a bare count."""
    close = math.isclose(said.value, source.value, rel_tol=1e-9, abs_tol=1e-12)
    if said.value == 1 and source.unit.endswith(f" per {said.unit}") and not any(c.isdigit() for c in said.surface):
        return True  # "a week" said apart from its figure restates "100 million a week"
    if not close and {said.unit, source.unit} == {"", "percentage"}:  # "a quarter" restates "25 percent"
        fraction, percent = (said, source) if not said.unit else (source, said)
        return 0 < fraction.value < 1 and not any(c.isdigit() for c in fraction.surface) \
            and math.isclose(fraction.value * 100, percent.value, rel_tol=1e-9)
    if said.unit == "percentage" and not source.unit and any(c.isdigit() for c in source.surface):
        return False  # ("30% of the students" is no count of "30 failed")
    if bool(said.unit) != bool(source.unit) and (source if said.unit else said).counts in MONTHS:
        return False  # ("three days later" is not the day of "3 April")
    return close and (said.unit == source.unit or not said.unit or not source.unit
                      or _per_what(said.unit, source.unit) or _per_what(source.unit, said.unit))


def _per_what(unit: str, fuller: str) -> bool:
    """``fuller`` is ``unit`` per something other than time ("tonne per hectare" for
    "tonne"; the parser reads "t/ha" whole and "tonnes per hectare" as tonnes alone).
    Per second or minute makes a unit of its own: "MB" is not "MB/s"."""
    return fuller.startswith(f"{unit} per ") and fuller.removeprefix(f"{unit} per ") not in ("second", "minute")
