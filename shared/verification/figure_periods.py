"""A figure's period and its multiples, said in words.

A rate holds the period it is given for ("a monthly rate" is not "an annual" one); a
period said alone ("a day") is the text's when the text speaks of that unit in any words
("daily fluctuations"); and a change said with a verb of a multiple ("halved",
"doubled") is given by the multiple as a word ("by half"), by its percentage ("cut by 50
percent") or by two figures in that ratio ("from 40 to 80").
"""

from __future__ import annotations

import math
import re

from shared.verification.figure_base import SCALE_AFTER, Figure
from shared.verification.figures import PERIOD, TIME_UNITS, figures
from shared.verification.worded_figures import AGO, PERIOD_OF

__all__ = ["multiple_given", "multiple_named", "multiple_verbs", "period_named", "rate_periods"]


# A period said as an adverb or adjective ("daily fluctuations", "paid annually"): a word,
# not a figure ("weekly mileage"), but it names the period a figure's "a day" says.
_PERIOD_WORDS = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "yearly": "year",
                 "annually": "year", "annual": "year"}

_RATE_WORD = re.compile(r"\b(hourly|daily|weekly|monthly|quarterly|yearly|annual|annually)\b", re.IGNORECASE)


def rate_periods(text: str) -> set[str]:
    """The periods ``text`` gives a rate or a recurrence: "monthly", "annual", "a day",
    "per quarter", "every week" (not "a year later")."""
    words = {PERIOD_OF.get(w, _PERIOD_WORDS.get(w, "")) for w in map(str.lower, _RATE_WORD.findall(text))}
    return words | {(m.group(1) or m.group(2)).lower() for m in PERIOD.finditer(text)}


def period_named(fig: Figure, text: str) -> bool:
    """``fig`` is a period said alone ("a day", "annual") and ``text`` speaks of that unit
    in any words ("daily fluctuations", "for the third consecutive year", "year on
    year"): the period is the text's, though it gives it no figure."""
    if fig.value != 1 or fig.unit not in TIME_UNITS or any(c.isdigit() for c in fig.surface):
        return False
    if AGO.fullmatch(fig.surface) and any(f.unit == fig.unit and f.value != 1 for f in figures(text)):
        return False  # "a year earlier" is a time ago: "two years earlier" is not it
    adverbs = [w for w, unit in _PERIOD_WORDS.items() if unit == fig.unit]
    return re.search(rf"\b(?:{fig.unit}s?|{'|'.join(adverbs) or fig.unit})\b", text, re.IGNORECASE) is not None


def multiple_named(fig: Figure, text: str) -> bool:
    """``fig`` is a half or a multiple written as a word ("fallen by half", "two times") or
    as the percentage of such a change ("cut by 50 percent", "up 100%"), and ``text`` says
    it with a verb ("halved", "doubled", "tripled"); or ``fig`` is "two" or "three" and
    ``text`` says "twice" or "thrice"."""
    if fig.unit == "percentage":  # "cut by 50 percent" for "halved", "up 100%" for "doubled"
        verb = _PERCENT_VERBS.get(fig.value)
    elif fig.unit or any(c.isdigit() for c in fig.surface):
        return False
    else:
        verb = _MULTIPLE_VERBS.get(fig.value)
        times = _TIMES_WORDS.get(fig.value)
        if times is not None and re.search(rf"\b{times}\b", text, re.IGNORECASE):
            return True  # "two goals" for "scored twice", "on two occasions" for "extended twice"
    return verb is not None and _verb_said(verb, text)


_TIMES_WORDS = {2.0: "twice", 3.0: "thrice"}


def _verb_said(stem: str, text: str) -> bool:
    """``text`` says the verb of a multiple whose stem is ``stem`` ("halv": "halved")."""
    return re.search(rf"\b{stem}(?:e|es|ed|ing)\b", text, re.IGNORECASE) is not None


_MULTIPLE_VERBS = {0.5: "halv", 2.0: "doubl", 3.0: "tripl", 4.0: "quadrupl"}
_MULTIPLE_OF = {verb: multiple for multiple, verb in _MULTIPLE_VERBS.items()}
_MULTIPLE_VERB = re.compile(rf"\b({'|'.join(_MULTIPLE_VERBS.values())})(?:es|ed|ing)\b", re.IGNORECASE)


def multiple_verbs(text: str) -> list[tuple[float, str]]:
    """The changes ``text`` states by a verb of a multiple ("halved its bills", "doubled"):
    (the multiple, the word)."""
    return [(_MULTIPLE_OF[m.group(1).lower()], m.group()) for m in _MULTIPLE_VERB.finditer(text)]


def multiple_given(value: float, text: str) -> bool:
    """``text`` gives the change of a verb of a multiple (:func:`multiple_verbs`): the verb,
    the multiple as a figure ("by half", "twice"), its percentage ("cut by 50 percent"),
    or two figures of one unit that stand in that ratio ("from 40 to 80")."""
    if _verb_said(_MULTIPLE_VERBS[value], text) or re.search(rf"\b(?:{_MULTIPLE_WORDS[value]})\b", text, re.IGNORECASE):
        return True
    found = [f for f in figures(text) if not _year_like(f)]
    if any(f.unit == "percentage" and f.value == 100.0 * abs(value - 1) for f in found):
        return True
    # (whatever unit the quantity parser gave each: "350 at the start" is read as ampere-turns)
    return any(a.value > 0 and b.value > 0 and (a.unit == "percentage") == (b.unit == "percentage")
               and any(math.isclose(x, value, rel_tol=0.02) for x in (a.value / b.value, b.value / a.value))
               for n, a in enumerate(found) for b in found[n + 1:])


def _year_like(f: Figure) -> bool:
    """A bare figure written as a year ("1950", not "2,000" or "2 thousand")."""
    return not f.unit and f.value.is_integer() and 1000 <= f.value <= 2100 and "," not in f.surface \
        and not SCALE_AFTER.search(" " + f.surface)


_MULTIPLE_WORDS = {0.5: r"half", 2.0: r"twice|two-?fold|2-fold|two\s+times|double|factor\s+of\s+(?:two|2)",
                   3.0: r"thrice|three-?fold|3-fold|three\s+times|triple|factor\s+of\s+(?:three|3)",
                   4.0: r"four-?fold|4-fold|four\s+times|quadruple|factor\s+of\s+(?:four|4)"}
# the same changes as percentages: halving is a 50% fall, doubling a 100% rise
_PERCENT_VERBS = {100.0 * abs(multiple - 1): verb for multiple, verb in _MULTIPLE_VERBS.items()}
