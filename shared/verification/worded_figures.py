"""Figures the quantity parser does not read: quantities said in words or notations.

"$45m" and "€3.1bn" (a money figure with its scale abbreviated), "a decade" and "two
centuries" (years), "the twelfth century" and "the 1100s" (a century of the era),
"08:15" and "4.30 pm" (a time of day), "seven to two" (a tally), "one in five" (a
share), "half a minute" and "nine-tenths" (fractions), "the fourth consecutive year"
(a count of periods), "a year earlier" (a time ago) and "twice a week" (how often).
Each reading replaces what the parser made of the same words, if anything.
"""

from __future__ import annotations

import re

from shared.verification.figure_base import COUNT_WORDS, NUMBERS, ORDINALS, Figure, outside

__all__ = ["AGO", "PERIOD_OF", "share_parts", "without_eras", "worded"]


# A money figure with its scale abbreviated ("$45m", "€3.1bn", "£2.5 bn"), which the
# parser reads as a currency times metres or barns.
_MONEY_SCALE = re.compile(r"(?<![\w.])(US\$|[$€£¥])\s?(\d+(?:,\d{3})*(?:\.\d+)?)\s?(k|m|mn|bn|b|tn|trn)\b",
                          re.IGNORECASE)
_MONEY_SCALES = {"k": 1e3, "m": 1e6, "mn": 1e6, "b": 1e9, "bn": 1e9, "tn": 1e12, "trn": 1e12}
_CURRENCIES = {"$": "dollar", "us$": "dollar", "€": "euro", "£": "pound sterling", "¥": "chinese yuan"}
# How often, said in one word: "twice a week", "thrice yearly" (not "once", which is also
# "when"; nor "twice as fast", "twice that", a multiple the comparison checks read).
_TIMES_WORD = re.compile(r"\b(twice|thrice)(?=\s+(?:(?:a|an|per|each|every)\s+\w+|daily|weekly|monthly|yearly|annually)\b)",
                         re.IGNORECASE)
_TIMES_WORDS = {"twice": 2.0, "thrice": 3.0}
_SPAN_WORD = re.compile(r"\b(?:(a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+|the\s+(?:next|past|"
                        r"last|previous|following)\s+)?(decades?|century|centuries|millennium|millennia)\b",
                        re.IGNORECASE)
# "one in five", "3 out of 10": a share (small counts only: "56 in 2022" is a year).
_ONE_IN = re.compile(r"(?<![\d,.])\b(one|two|three|four|five|six|seven|eight|nine|[1-9]\d?)\s+(?:in|out\s+of)\s+"
                     r"(two|three|four|five|six|seven|eight|nine|ten|[1-9]\d{0,2})\b(?![\d,.]*\d)"
                     r"(?!\s+(?:thousand|million|billion)\b)"  # ("one in two million": a rate of its own)
                     r"(?!\s*(?:%|percent|per\s+cent))", re.IGNORECASE)
# A time of day: "08:15", "16:30", "8.15 am", "4.30 p.m." (a decimal without "am"/"pm" is no time).
# A time in hours, minutes and seconds ("won in 2:19:47", "1:05:12.4"): a duration.
_LAP = re.compile(r"(?<![\d.:,])(\d{1,2}):([0-5]\d):([0-5]\d(?:\.\d+)?)(?![\d:])")
# Minutes and seconds that no clock shows ("a record of 30:41", "3:45.2"): a duration too.
_SHORT_LAP = re.compile(r"(?<![\d.:,])(\d{1,2}):([0-5]\d(\.\d+)?)(?![\d:])")
_SPELLED_LAP = re.compile(r"\b(\d{1,3})\s+hours?,?\s+(\d{1,2})\s+minutes?,?\s+(?:and\s+)?(\d{1,2}(?:\.\d+)?)\s+seconds?\b",
                          re.IGNORECASE)
# A score or a vote in digits ("cleared parliament 312–201", "won 3-1"): two counts, the
# larger first, where a range rises ("10–20"). Not a span of years cut short ("1914–18").
_SCORE = re.compile(r"(?<![\w.,:/–-])(\d{1,4})\s?[–-]\s?(\d{1,4})(?![\w:/%–-]|[.,]\d)")
_CLOCK = re.compile(r"(?<![\d.:,])(\d{1,2})[:.](\d{2})(?![\d:])(?:\s*([ap]\.?m\.?)(?![a-z]))?", re.IGNORECASE)
# A tally in words, "by a vote of seven to two", "won eleven to nine": its two counts
# (the parser reads neither); not a range of something counted ("from one to two years").
_TALLY = re.compile(r"\b(" + "|".join(list(NUMBERS)[1:21]) + r")\s+to\s+(" + "|".join(list(NUMBERS)[:21])
                    + r")\b(?=\s*(?:[,.;:)]|$)|\s+(?:on|in|at|with|and|after|before|against|for)\b)", re.IGNORECASE)
_PERIODS = r"(years?|quarters?|months?|weeks?|days?|seasons?|decades?)"
_RUNS = (re.compile(r"\b(\w+|\d+)(?:st|nd|rd|th)?\s+(?:consecutive|straight|successive)\s+" + _PERIODS + r"\b",
                   re.IGNORECASE),
         re.compile(r"\b(\w+|\d+)\s+" + _PERIODS + r"\s+(?:in\s+a\s+row|running)\b", re.IGNORECASE),
         re.compile(r"\b(\w+|\d+)(?:st|nd|rd|th)?\s+(?:consecutive|straight|successive)\s+"
                    r"(annual|yearly|quarterly|monthly|weekly|daily)\b", re.IGNORECASE))
PERIOD_OF = {"annual": "year", "yearly": "year", "quarterly": "quarter", "monthly": "month", "weekly": "week",
              "daily": "day"}
AGO = re.compile(r"\b(a|an|one)\s+" + _PERIODS + r"\s+(?:earlier|before|ago|later|previously)\b", re.IGNORECASE)
# A century of the era: "the twelfth century", "the 12th century", "the 1100s".
_CENTURY = re.compile(r"\b((?:twenty-)?[a-z]+th|(?:twenty-)?(?:first|second|third)|\d{1,2}(?:st|nd|rd|th))\s+century\b",
                      re.IGNORECASE)
_HUNDREDS = re.compile(r"\b(\d{1,2})00s\b")
# A fraction of a unit ("half a minute", "a quarter of a percentage point"), which the
# parser reads as a rate or leaves without its unit.
_FRACTION_OF = re.compile(r"\b(half|a\s+quarter|a\s+third)\s+(?:of\s+)?an?\s+(second|minute|hour|day|week|month|year|"
                          r"percentage\s+point)\b", re.IGNORECASE)
_FRACTIONS = {"half": 0.5, "quarter": 0.25, "third": 1 / 3}
# A fraction written with a hyphen ("nine-tenths", "two-thirds").
_HYPHENED = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine)-(halves|thirds?|quarters?|fifths?|"
                       r"sixths?|sevenths?|eighths?|ninths?|tenths?)\b", re.IGNORECASE)
# ("one third of their volume", "two thirds of the members": a fraction without its hyphen)
_SPACED = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine)\s+(thirds?|quarters?|fifths?|sixths?|"
                     r"sevenths?|eighths?|ninths?|tenths?)(?=\s+of\b)", re.IGNORECASE)
_PARTS = {"hal": 2, "thi": 3, "qua": 4, "fif": 5, "six": 6, "sev": 7, "eig": 8, "nin": 9, "ten": 10}


def worded(text: str, found: list[Figure]) -> list[Figure]:
    """The figures ``found`` by the parser in ``text``, with the quantities it does not
    read said in words or notations in place of what it made of their words."""
    out = list(found)
    for m in _MONEY_SCALE.finditer(text):
        value = float(m.group(2).replace(",", "")) * _MONEY_SCALES[m.group(3).lower()]
        out = outside(out, m)
        out.append(Figure(value, _CURRENCIES[m.group(1).lower()], m.group(), m.start(), m.end()))
    # "a decade", "two centuries": years, in place of what the parser made of them ("two"
    # alone, or "2 century")
    for m in _SPAN_WORD.finditer(text):
        count = COUNT_WORDS.get((m.group(1) or "a").lower(), 1)
        years = {"dec": 10.0, "cen": 100.0, "mil": 1000.0}[m.group(2).lower()[:3]]
        out = outside(out, m)
        out.append(Figure(count * years, "year", m.group().strip(), m.start(), m.end()))
    for m in [*_CENTURY.finditer(text), *_HUNDREDS.finditer(text)]:
        # "the twelfth century", "the 12th century" and "the 1100s": one century of the era
        if m.re is _CENTURY:
            word = m.group(1).lower()
            number = ORDINALS.get(word.split("-")[-1], 0) + (20 if word.startswith("twenty-") else 0) \
                if word[:1].isalpha() else int(re.sub(r"\D", "", word))
        else:
            number = int(m.group(1)) + 1
        if number:
            out = outside(out, m)
            out.append(Figure(float(number), "century of the era", m.group(), m.start(), m.end()))
    for m in [*_LAP.finditer(text), *_SPELLED_LAP.finditer(text)]:  # "2:19:47": "2 hours, 19 minutes and 47 seconds"
        out = outside(out, m)
        seconds = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        out.append(Figure(seconds, "second", m.group(), m.start(), m.end()))
    for m in _SHORT_LAP.finditer(text):
        if int(m.group(1)) >= 24 or m.group(3):
            out = outside(out, m)
            out.append(Figure(int(m.group(1)) * 60 + float(m.group(2)), "second", m.group(), m.start(), m.end()))
    for m in _CLOCK.finditer(text):  # "08:15", "8.15 am", "4.30 pm": one time of day, in minutes
        if any(f.unit == "second" and f.start <= m.start() < f.end for f in out):
            continue  # ("3:45.2": a race time, read above)
        hour, minute, half = int(m.group(1)), int(m.group(2)), (m.group(3) or "").lower().replace(".", "")
        if (":" in m.group() or half) and hour < (13 if half else 24) and minute < 60:
            hour = hour % 12 + (12 if half == "pm" else 0) if half else hour
            out = outside(out, m)
            out.append(Figure(float(hour * 60 + minute), "time of day", m.group(), m.start(), m.end()))
    for m in _SCORE.finditer(text):
        won, lost = int(m.group(1)), int(m.group(2))
        if won > lost and not (won >= 1000 and len(m.group(2)) < len(m.group(1))):
            out = outside(out, m)
            out += [Figure(float(n), "", m.group(g), m.start(g), m.end(g)) for g, n in ((1, won), (2, lost))]
    for m in _TALLY.finditer(text):
        ranged = re.search(r"\b(?:from|between)\s+$", text[:m.start()], re.IGNORECASE)  # ("from one to two")
        if len(outside(out, m)) == len(out) and not ranged:
            out += [Figure(NUMBERS[m.group(n).lower()], "", m.group(n), m.start(n), m.end(n)) for n in (1, 2)]
    for m in _ONE_IN.finditer(text):
        part, whole = (COUNT_WORDS.get(g.lower()) or float(g) for g in (m.group(1), m.group(2)))
        if part >= whole:
            continue
        out = [f for f in out if not m.start() <= f.start < m.end()]
        out.append(Figure(round(100.0 * part / whole, 2), "percentage", m.group(), m.start(), m.end()))
    for m in [*_FRACTION_OF.finditer(text), *_HYPHENED.finditer(text), *_SPACED.finditer(text)]:
        if m.re is _FRACTION_OF:
            value, unit = _FRACTIONS[m.group(1).split()[-1].lower()], " ".join(m.group(2).lower().split())
        else:
            value, unit = COUNT_WORDS[m.group(1).lower()] / _PARTS[m.group(2).lower()[:3]], ""
        out = outside(out, m)
        out.append(Figure(value, unit, m.group(), m.start(), m.end()))
    for m in [*(m for run in _RUNS for m in run.finditer(text)), *AGO.finditer(text)]:
        # "the fourth consecutive year", "eighteen quarters in a row": a count of periods;
        # "a year earlier": a time ago (not the parser's "fourth" as a quarter)
        count = ORDINALS.get(m.group(1).lower()) or NUMBERS.get(m.group(1).lower())
        if count is None:
            digits = re.match(r"\d+", m.group(1))
            count = float(digits.group()) if digits else None
        if count is None:
            continue
        out = outside(out, m)
        period = m.group(2).lower()
        out.append(Figure(count, PERIOD_OF.get(period, period.rstrip("s")), m.group().strip(), m.start(), m.end()))
    for m in _TIMES_WORD.finditer(text):  # "twice a week" is "two times a week"
        if not any(f.start <= m.start() < f.end for f in out):
            out.append(Figure(_TIMES_WORDS[m.group(1).lower()], "", m.group(), m.start(), m.end(), counts="times"))
    return out


def share_parts(fig: Figure) -> tuple[float, float] | None:
    """The part and the whole of a share said as "27 out of 38" or "one in five", else None."""
    m = _ONE_IN.fullmatch(fig.surface) if fig.unit == "percentage" else None
    return None if m is None else tuple(COUNT_WORDS.get(g.lower()) or float(g) for g in (m.group(1), m.group(2)))


def without_eras(text: str) -> str:
    """``text`` with its centuries of the era ("the 12th century", "the 1100s") blanked."""
    return _HUNDREDS.sub(" ", _CENTURY.sub(" ", text))
