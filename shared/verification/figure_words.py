"""Words that open or bound a figure in a clause, for the meaning checks.

A figure opens with digits or a number word ("3.5", "twelve", "a dozen"); "more than
1,000", "under 5 ms", "at least 60 days", "a maximum of two years", "larger than 200
square metres" and "7,000 or more" bound the figure they stand by (checked with the
figure, not as a comparison); and a "than" before a figure bounds it rather than
ordering two things.
"""

from __future__ import annotations

from shared.verification.clauses import Clause

__all__ = ["EXCEED", "NUMBER_WORDS", "bounds_figure", "figure_word", "order_word_at"]


# Verbs of going over a figure: negated before one ("may not exceed 10 cents") they set a limit.
EXCEED = frozenset("exceed exceeds exceeded surpass surpasses surpassed".split())


# (these bound a figure only with "than": "larger than 200 square metres")
_BOUND_THAN = frozenset("larger bigger higher longer older heavier smaller lower shorter younger lighter "
                         "warmer hotter cooler colder".split())
_BOUND_WORDS = frozenset("more less fewer greater over under above below exceed exceeds exceeded exceeding".split()) \
    | _BOUND_THAN


def bounds_figure(clause: Clause, i: int) -> bool:
    """"more than 1,000", "under 5 ms": a bound on a figure (checked with the figure), not a comparison."""
    toks = clause.tokens
    if toks[i].low in ("least", "most") and i and toks[i - 1].low == "at":  # "at least 60 days"
        return i + 1 < len(toks) and figure_word(toks[i + 1].low)
    if toks[i].low in ("maximum", "minimum"):  # "a maximum of two years", "a maximum term of six months"
        of = next((n for n in range(i + 1, min(len(toks), i + 4)) if toks[n].low == "of"), None)
        return of is not None and of + 1 < len(toks) and figure_word(toks[of + 1].low)
    if toks[i].low not in _BOUND_WORDS:
        return False
    if i >= 2 and toks[i - 1].low == "or" and (figure_word(toks[i - 2].low) or i >= 3 and figure_word(toks[i - 3].low)):
        return True  # "7,000 or more steps": "at least 7,000"; "three hours or longer"
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    than = nxt == "than"
    if not than and toks[i].low in _BOUND_THAN:
        return False
    n = i + 1 + than
    return n < len(toks) and (figure_word(toks[n].low) or than and toks[n].low == "one")


NUMBER_WORDS = frozenset("""two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
    sixty seventy eighty ninety hundred dozen half a""".split())


_FRACTION_COUNTS = NUMBER_WORDS - {"a"}  # ("nine-tenths"; not "a-list")


def figure_word(word: str) -> bool:
    """A word that opens a figure: digits, or a number word ("3.5", "twelve", "a dozen",
    "nine-tenths")."""
    return word[:1].isdigit() or word in NUMBER_WORDS or word.split("-")[0] in _FRACTION_COUNTS


def order_word_at(words: list[str], word: str) -> int | None:
    """Where ``word`` ("than", "before", "after") orders two things in the clause; not a
    "than" that bounds a figure ("fewer than six hours", "older than 65", "more than a
    dozen"; "than a control group" compares)."""
    return next((n for n, w in enumerate(words) if w == word and not (
        word == "than" and n + 1 < len(words) and figure_word(words[n + 1])
        and (words[n + 1] != "a" or n + 2 < len(words) and figure_word(words[n + 2])))), None)
