"""How much and how often a clause says, for the meaning checks (``shared.verification.meaning``).

Read word by word: its quantifiers ("some", "most", "every"), its frequency ("often",
"always"), "rarely" and "few", "only", and the units it quantifies ("on some days",
"every year"). "each year" and "every day" are per one, not all of them, and "27% of
all retail spending" a share of a whole. The checks compare what two clauses say; these
functions only read. The rest of what a clause states is read by
:mod:`shared.verification.clause_reading`.
"""

from __future__ import annotations

from shared.verification.clause_reading import ARTICLES
from shared.verification.clauses import Clause, token
from shared.verification.figure_words import figure_word
from shared.verification.lexicon import EXCLUSIVE, QUANTIFIERS, RARE, SHARE_WORDS

__all__ = [
    "FREQUENCY",
    "frequencies",
    "a_few",
    "every_unit",
    "parts",
    "quantified_units",
    "quantity",
    "universals",
]


FREQUENCY = frozenset("sometimes occasionally often frequently commonly regularly usually "
                       "typically generally normally always invariably never".split())


_WHEN = frozenset("after once when if until".split())
# What "each" measures by: "each year" is per year.
_UNITS = frozenset("""year month week day hour minute second night season quarter decade kilogram kg gram tonne ton
    pound litre liter metre meter kilometre kilometer mile hectare acre unit dose person head""".split())


def quantity(clause: Clause, *, subject_only: bool = False,
             about: frozenset[str] | set[str] = frozenset()) -> tuple[int | None, int | None, bool, bool]:
    """(strongest quantifier of a noun, strongest frequency adverb, says "rarely"/"few",
    says "only"). With ``subject_only``, only quantifiers among the clause's first three
    words count (what "some" says of an object, "trading some throughput", limits nothing),
    or after a preposition, of a word in ``about`` (the forms of a clause read against
    this one: "in some mice" limits what it says of mice).
    The parts of a compound count as words ("at-most-once")."""
    words = parts(clause)
    strength: int | None = None
    frequency: int | None = None
    rare = exclusive = False
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in RARE and not (w == "few" and prev == "a") or _little(prev, w, nxt):
            rare = True
        elif w == "few":  # "a few"
            strength = max(strength or 0, 1)
        if w in EXCLUSIVE and prev not in ("not", "n't") and not (w == "alone" and prev != "alone") \
                and not (w == "only" and figure_word(nxt)) \
                and not (w == "only" and nxt in _WHEN) and not (w == "only" and _bound_follows(words, i)):
            # ("grew by only 4%", "in only half", "only up to 0.006 tesla": merely; "only after a
            # replica confirms": not before it)
            exclusive = exclusive or w != "alone"
        level = _level(words, i)
        if level is None:
            continue
        if w in FREQUENCY:
            frequency = max(frequency or 0, level)
        elif not subject_only or i <= 2 or prev in _PLACING and bool(token(nxt, 0, 0).forms & about):
            strength = max(strength or 0, level)  # ("in some mice", "to certain imports": limiting too)
    return strength, frequency, rare, exclusive


# Prepositions after which a quantifier limits what the clause says ("in some mice").
_PLACING = frozenset("in for on among to at from with across within".split())


def _little(prev: str, w: str, nxt: str) -> bool:
    """"little evidence", "very little change": hardly any (not "a little", "the little
    town", "little more than", "little-known", nor "as little as 0.02 nm", a bound)."""
    return w == "little" and prev not in ARTICLES and nxt not in ("more", "less", "known", "by", "", "as")


_BOUNDS = frozenset("up to at below above under over about around roughly approximately some".split())


def _bound_follows(words: list[str], i: int) -> bool:
    """The word after ``i`` bounds a figure that follows within four words ("only up to
    roughly 0.006 tesla", "only about 40 of them")."""
    after = words[i + 1:i + 5]
    return bool(after) and after[0] in _BOUNDS and any(figure_word(w) for w in after[1:])


def frequencies(clause: Clause) -> list[int]:
    """The strength of each frequency adverb of the clause ("occasionally" 1, "usually" 3)."""
    words = parts(clause)
    return [level for i, w in enumerate(words) if w in FREQUENCY and (level := _level(words, i)) is not None]


def a_few(clause: Clause) -> bool:
    """The clause says "a few" (a small number, where "few" alone is rare), or "a
    handful"."""
    words = clause.words()
    return any(a == "a" and b in ("few", "handful") for a, b in zip(words, words[1:], strict=False))


def universals(clause: Clause) -> list[str]:
    """The words of the clause that say all or always ("every", "each", "always"; "at
    all" too, and "each year" not)."""
    words = parts(clause)
    return [_ANY_DENIED.get(w, w) for i, w in enumerate(words)
            if (QUANTIFIERS.get(w) == 4 or w in _ANY_DENIED and _level(words, i) == 4) and not _per(words, i)]


# "without removing anything" says "everything" is left; "not anyone", "no one".
_ANY_DENIED = {"anything": "everything", "anyone": "everyone", "anybody": "everybody"}


def _per(words: list[str], i: int) -> bool:
    """"each year", "each kilogram", "on each platter", "every year": per one, not all of
    them; "27% of all retail spending", "three-quarters of everything": a share of a
    whole, not all of it."""
    prev, nxt = words[i - 1] if i else "", words[i + 1] if i + 1 < len(words) else ""
    if words[i] in ("all", "everything") and prev == "of" and i >= 2 and _a_share(words[i - 2]):
        return True
    return words[i] == "each" and (nxt in ("other", "time") or nxt in _UNITS or prev in ("on", "per", "within")) \
        or words[i] == "every" and nxt.rstrip("s") in _UNITS - {"person", "head", "unit", "dose"}


def every_unit(clause: Clause) -> set[str]:
    """The units of time or measure the clause says "every" of ("every day": daily)."""
    words = parts(clause)
    return {words[i + 1].rstrip("s") for i, w in enumerate(words[:-1]) if w == "every" and _per(words, i)}


def quantified_units(clause: Clause) -> set[str]:
    """The units the clause gives a quantifier short of all ("on some days", "most years")."""
    words = parts(clause)
    return {words[i + 1].rstrip("s") for i, w in enumerate(words[:-1])
            if (QUANTIFIERS.get(w) or 4) < 4 and words[i + 1].rstrip("s") in _UNITS}


def _a_share(word: str) -> bool:
    """A word that ends a share ("27%", "three-quarters", "half", "a fifth")."""
    return word[:1].isdigit() or word in SHARE_WORDS or word.split("-")[-1] in SHARE_WORDS


def _level(words: list[str], i: int) -> int | None:
    """The strength of ``words[i]`` as a quantifier or frequency (``QUANTIFIERS``), or None."""
    w, prev = words[i], words[i - 1] if i else ""
    level = QUANTIFIERS.get(w, 1 if w == "subset" and words[i + 1:i + 2] == ["of"] else None)  # "a subset of mice"
    if w in _ANY_DENIED and any(v in _DENYING for v in words[max(0, i - 3):i]):
        return 4  # "without removing anything": nothing removed, everything left
    if level is None or (w == "all" and prev == "at") or (w == "most" and prev in ("the", "at")):
        return None
    if _per(words, i):
        return None
    if w in FREQUENCY and prev in ("most", "more", "less", "least"):
        return None  # "the most commonly used": a superlative, not how often
    if level == 4 and prev in _SHORT_OF:
        return 3  # "nearly all glaciers": not every one
    return level


_SHORT_OF = frozenset("nearly almost virtually practically".split())
_DENYING = frozenset("not n't never without no cannot".split())


def parts(clause: Clause) -> list[str]:
    """The clause's words, a compound's parts as words, "in general" read as "generally"."""
    words = [part for w in clause.words() for part in (w.split("-") if "-" in w else (w,))]
    return [_PHRASED.get((words[n - 1] if n else "", w), w) for n, w in enumerate(words)]


# Quantifiers said as phrases, by their last two words.
_PHRASED = {("in", "general"): "generally"}
