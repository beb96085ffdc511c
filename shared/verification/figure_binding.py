"""Figures and names bound to a clause's quotes, for the anchoring (``shared.verification.meaning_anchor``).

A clause's figures must come from the quotes it rests on: the same value, or one a
careful writer derives from theirs (``shared.verification.derived``), a period a quote
names ("in a day" for "daily"), or the year after one it states ("the following year").
A figure only another quote has is a sign of a merge, unless that quote gives it of
the same thing or of the clause's own subject. Its names must come from those quotes
too, as written or abbreviated. A clause that fails is reported as a :class:`Failure`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shared.research.text import STOPWORDS, terms
from shared.verification.derived import is_year, restated
from shared.verification.figure_periods import (
    multiple_given, multiple_named, multiple_verbs, period_named, rate_periods,
)
from shared.verification.figure_base import Figure
from shared.verification.figures import figures, same_figure
from shared.verification.verb_reading import verbness
from shared.verification.quote_subjects import aligned_clause, keeps_subject
from shared.verification.acronyms import abbreviated
from shared.verification.clauses import (Clause, clauses, covered, is_content, names, place_named, token,
                                         unknown_word)

__all__ = ["Failure", "fail", "figures_bound", "names_bound"]


@dataclass(frozen=True)
class Failure:
    category: str  # "empty", "terms", "number", "name", "merge"
    reason: str
    support: float = 0.0
    missing: tuple[str, ...] = ()


def fail(category: str, reason: str, support: float = 0.0, missing: Sequence[str] = ()) -> Failure:
    return Failure(category, reason, support, tuple(missing))


def figures_bound(sentence: str, clause: Clause, quotes: Sequence[str], quote_clauses: Sequence[list[Clause]],
                  helpers: set[int], sentence_figures: Sequence[Figure], support: float) -> Failure | None:
    for fig in sentence_figures:
        if not clause.start <= fig.start < clause.end + 1:
            continue
        theirs = _counted_otherwise(fig, sentence, sentence_figures, [quotes[i] for i in sorted(helpers)])
        if theirs and any(restated(fig, figures(quote), sentence) for quote in quotes):  # (else it is in none)
            return fail("number", f'the figure {fig.surface} stands where its quote says "{theirs}"', support,
                        [fig.surface])
        if restated(fig, [q for i in sorted(helpers) for q in figures(quotes[i])], sentence):
            other = next((w for i in sorted(helpers) if (w := said_of_another(fig, sentence, quotes[i])
                                                         or count_traded(fig, sentence, quotes[i]))), None)
            if other:
                return fail("number", f'the figure {fig.surface} is said of "{other}", of which its quote gives '
                                      "another figure", support, [fig.surface])
            continue
        if any(period_named(fig, quotes[i]) or multiple_named(fig, quotes[i]) for i in helpers):
            continue  # "in a day" for "daily fluctuations", "fell by half" for "halved"
        if _next_year(fig, quotes):
            continue  # "in 1998 and 1999" from "won in 1998" and "retained the title the following year"
        found = [(i, q) for i, quote in enumerate(quotes) if i not in helpers for q in figures(quote)
                 if same_figure(fig, q)]
        if any(_same_figure_of(sentence, fig, quotes[i], q) for i, q in found):
            continue  # "India, which supplies about 40% of global rice exports": what that quote says 40% of
        if any(keeps_subject(clause, quote_clauses[i], whole=True) for i, _ in found) and not any(
                _subject_figure_lost(clause, quote_clauses[i]) for i in helpers):
            continue  # "The 22.5-gigawatt Three Gorges Dam generated…": a figure of the same subject
        why = "comes from another quote than the rest of its clause" if found else "is not in its quotes"
        return fail("number", f"the figure {fig.surface} {why}", support, [fig.surface])
    text, given = sentence[clause.start:clause.end + 1], " ".join(quotes[i] for i in helpers)
    if any(clause.start <= f.start < clause.end + 1 for f in sentence_figures):
        mine, theirs = rate_periods(text), rate_periods(given)
        if mine - theirs and theirs - mine:  # "a monthly rate of 5.9 percent" against "an annual rate of 5.9 percent"
            return fail("number", f"the period {min(mine - theirs)} is not its quote's ({min(theirs - mine)})", support)
    for value, word in multiple_verbs(text):
        if not multiple_given(value, given):  # "… and halved its energy bills": a change no quote gives
            return fail("number", f'the change "{word}" is not in its quotes', support, [word])
    # Digits the quantity parser did not read as a figure ("C++17", "version 3 of"):
    # each must stand in the clause's own quotes as written.
    spans = [(f.start, f.end) for f in sentence_figures]
    own = {t.low for i in helpers for c in quote_clauses[i] for t in c.tokens}
    for t in clause.tokens:
        if t.low.isdigit() and not any(a <= t.start < b for a, b in spans) and t.low not in own:
            return fail("number", f"the figure {t.text} is not in its quotes", support, [t.text])
    return None


_COUNTED = re.compile(r"[ -]+([A-Za-z][A-Za-z-]*)(?:\s+([A-Za-z][A-Za-z-]*))?")


def _counted(text: str, end: int) -> tuple[str, int] | None:
    """The word a figure ending at ``end`` counts or dates: the second after it unless a
    stop word ("62 new moons": moons; "6 hours of unpaid overtime": unpaid), else the
    first ("the 2021 cohort had": cohort), as (its stem, where it ends), or None."""
    m = _COUNTED.match(text, end)
    if m is None:
        return None
    n = 2 if m.group(2) and m.group(2).lower() not in STOPWORDS else 1
    word = m.group(n).lower()
    return None if word in STOPWORDS else (min(token(word, 0, len(word)).forms), m.end(n))


def _counted_otherwise(fig: Figure, sentence: str, sentence_figures: Sequence[Figure],
                       helpers: Sequence[str]) -> str | None:
    """The noun ``fig`` counts or dates in the sentence ("62 new moons of Jupiter", "the
    2021 cohort") when a quote the clause rests on gives that noun another figure of the
    same kind ("12 new moons", "the 2019 cohort"), and neither gives ``fig`` (or a figure
    it derives from) nor the sentence that other figure: the figure is moved onto another
    quote's thing. The quote's words ("12 new moons"), else None."""
    noun = _counted(sentence, fig.end)
    if noun is None:
        return None
    for quote in helpers:
        theirs = figures(quote)
        if restated(fig, theirs, sentence):
            continue  # (the quote's figure, or one derived from its figures: "more than 1,200" for 1,214)
        for q in theirs:
            counted = _counted(quote, q.end)
            if q.unit == fig.unit and is_year(q) == is_year(fig) and counted and counted[0] == noun[0] \
                    and not any(same_figure(f, q) for f in sentence_figures):
                return quote[q.start:counted[1]]
    return None


# Where a quote that lists figures passes from one to the next: "7 minutes in urban areas
# and 14 minutes in rural areas", "91 percent against severe disease and 67 percent
# against any symptomatic infection".
_LIST_BREAK = re.compile(r"\s*(?:[,;]\s*(?:and\s+|while\s+|whereas\s+|with\s+|of\s+which\s+)?|\s+(?:and|while|whereas)\s+)",
                         re.IGNORECASE)


def _parts(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` between the breaks of a list (:data:`_LIST_BREAK`)."""
    cuts = [0, *(x for m in _LIST_BREAK.finditer(text) for x in (m.start(), m.end())), len(text)]
    return [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if b > a]


def _words(text: str, unit: str | None = None) -> set[str]:
    """The content words of ``text``; given a ``unit``, its figures of other units too, as
    words of their own ("100 metres" in a list of times)."""
    figs = set() if unit is None else {f"{f.value:g} {f.unit}" for f in figures(text) if f.unit != unit}
    return {w for w in terms(text) if not any(c.isdigit() for c in w)} | figs


def count_traded(fig: Figure, sentence: str, quote: str) -> str | None:
    """The thing a bare count counts in the sentence, when two counts trade their things
    between sentence and quote: "23 goals in 17 appearances" against "17 goals in 23
    appearances". The sentence's words ("23 goals"), else None."""
    mine = _counted(sentence, fig.end)
    if fig.unit or is_year(fig) or mine is None:
        return None
    counts = [(q, _counted(quote, q.end)) for q in figures(quote) if not q.unit and not is_year(q)]
    own = [counted[0] for q, counted in counts if counted and same_figure(fig, q)]  # what the quote counts with it
    if not own or mine[0] in own:
        return None
    for q, counted in counts:
        if counted and counted[0] == mine[0] and not same_figure(fig, q):  # the quote counts this thing otherwise
            back = [f for f in figures(sentence) if same_figure(f, q)]
            if any((c := _counted(sentence, f.end)) and c[0] in own for f in back):
                return sentence[fig.start:mine[1]]
    return None


def said_of_another(fig: Figure, sentence: str, quote: str) -> str | None:
    """A word the sentence says with ``fig`` that its quote says only with another figure
    of the same unit, in a list of such figures, one to a part, where the sentence keeps
    fewer than half of the words its quote says only with ``fig`` and gives none of the
    other figures, or gives another of them too and the two trade places ("20 percent
    from hydropower, and 70 percent from gas" against "70 percent … from hydropower, and
    20 percent from gas"): "Median response time in urban areas was 14 minutes" against "7
    minutes in urban areas and 14 minutes in rural areas". The words before the first
    figure are the subject of them all unless a later part names its own ("…, and the
    default read timeout is 60 seconds"); figures of other units count as words ("the
    200 metres in 9.81 seconds" against "the 100 metres in 9.81 seconds and the 200
    metres in 19.92 seconds"). The word, else None. (Figures of no unit, counts and
    years, are read by the other checks.)"""
    if not fig.unit or is_year(fig):
        return None
    parts = _parts(quote)
    alike = [q for q in figures(quote) if q.unit == fig.unit]
    at = [next(n for n, (a, b) in enumerate(parts) if a <= q.start < b or n == len(parts) - 1) for q in alike]
    if len(alike) < 2 or len(set(at)) != len(at):
        return None  # (not a list of like figures, one to a part)
    own = [n for n, q in zip(at, alike, strict=True) if same_figure(fig, q)]
    if len(own) != 1:
        return None
    unit = fig.unit
    shared = _words(quote[:min(q.start for q in alike)])  # (the subject of them all)
    if any(_words(quote[parts[n][0]:q.start]) - shared for n, q in zip(at[1:], alike[1:], strict=True)):
        # A later part names its own subject ("…, and the default read timeout is 60
        # seconds"): only the words every part says are shared.
        shared &= set.intersection(*(_words(quote[a:b]) for a, b in parts[1:]))
    words = [_words(quote[a:b], unit) - shared for a, b in parts]

    def alone(n: int) -> set[str]:
        return words[n] - set().union(*(w for k, w in enumerate(words) if k != n))

    said = _words(sentence, unit)
    mine = next((_words(sentence[a:b], unit) for a, b in _parts(sentence) if a <= fig.start < b), set())
    others = [f for f in figures(sentence) for q in alike if not same_figure(fig, q) and same_figure(f, q)]
    if others:
        # It gives the others too: wrong only when two trade places, each said with what
        # its quote says the other of.
        for n, q in zip(at, alike, strict=True):
            theirs = next((_words(sentence[a:b], unit) for a, b in _parts(sentence) if not a <= fig.start < b
                           for f in others if same_figure(f, q) and a <= f.start < b), set())
            if n not in own and mine & alone(n) and not mine & alone(own[0]) and theirs & alone(own[0]):
                return max(sorted(mine & alone(n)), key=len)
        return None
    if 2 * len(alone(own[0]) & said) >= len(alone(own[0])):
        return None  # it keeps what its quote says this figure of
    for n in sorted(set(at) - set(own)):
        if mine & alone(n):
            return min(mine & alone(n))
    return None


_FOLLOWING_YEAR = re.compile(r"\b(?:the\s+(?:following|next|subsequent)\s+year|a\s+year\s+later|the\s+year\s+after)\b",
                             re.I)
_YEAR_BEFORE = re.compile(r"\b(?:the\s+(?:previous|preceding|prior)\s+year|(?:a|the)\s+year\s+(?:earlier|before))\b",
                          re.I)


def _next_year(fig: Figure, quotes: Sequence[str]) -> bool:
    """A year the quotes give as "the following year" (or "a year earlier") of a year
    one of them states."""
    if not is_year(fig):
        return False
    years = {q.value for quote in quotes for q in figures(quote) if is_year(q)}
    text = " ".join(quotes)
    return bool(_FOLLOWING_YEAR.search(text) and fig.value - 1 in years
                or _YEAR_BEFORE.search(text) and fig.value + 1 in years)


def _subject_figure_lost(clause: Clause, quote: Sequence[Clause]) -> bool:
    """A figure in the subject of the quote's clause the clause restates ("PostgreSQL 15
    introduced…") that the clause does not have: another figure stands in for it."""
    words = {t.low for t in clause.tokens}
    aligned = aligned_clause(clause, quote)
    verb = next((n for n in range(1, len(aligned.tokens)) if verbness(aligned, n) >= 2), len(aligned.tokens))
    return any(t.low[:1].isdigit() and t.low not in words for t in aligned.tokens[:verb])


def _figure_of(text: str, end: int) -> set[str]:
    """The first three content words after a figure ending at ``end``: what it is a figure of."""
    rest = text[end:]
    if not rest.strip() or not re.match(r"\s+of\b", rest):
        return set()
    return {min(t.forms) for t in [t for t in clauses(rest)[0].tokens if is_content(t)][:3]}


def _same_figure_of(sentence: str, fig: Figure, quote: str, theirs: Figure) -> bool:
    """The sentence and the quote give the figure "of" the same thing, two content words
    or more ("about 40% of global rice exports", "about 40% of world rice exports")."""
    return len(_figure_of(sentence, fig.end) & _figure_of(quote, theirs.end)) >= 2


def names_bound(sentence: str, clause: Clause, quotes: Sequence[str], quote_forms: Sequence[set[str]],
                helpers: set[int], support: float) -> Failure | None:
    inside = sentence[clause.start:clause.end]
    units = " ".join(f.surface for f in figures(sentence))  # "TB" in "1 TB": a unit, checked with its figure
    for name in [*names(sentence), *_opening_possessive(sentence)]:
        if name not in inside or re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", units):
            continue
        word = token(name.lower(), 0, 0)
        # (as a word of its own, "CE" is not in "4th century BCE"; a longer one maybe with an
        # ending, "German" in "Germany's")
        ending = r"\w{0,3}" if len(name) > 3 else ""
        written = re.compile(rf"(?<!\w){re.escape(name.lower())}{ending}(?!\w)")
        own = any(covered(word, quote_forms[i]) or written.search(quotes[i].lower())
                  or abbreviated(name, sentence, quotes[i]) or place_named(name, quotes[i])
                  or _adjective_of(name, quotes[i]) for i in helpers)
        if own:
            continue
        elsewhere = any(covered(word, f) or abbreviated(name, sentence, q) for f, q in zip(quote_forms, quotes,
                                                                                             strict=True))
        why = "comes from another quote than the rest of its clause" if elsewhere else "is not in its quotes"
        return fail("merge" if elsewhere else "name", f"the name {name} {why}", support, [name])
    return None


def _adjective_of(name: str, quote: str) -> bool:
    """The quote names the place ``name`` is by its adjective ("Kenyan runner" for
    "Kenya's Faith Chepkoech")."""
    place = re.sub(r"['’]s$", "", name)
    return any(place_named(word, place) == place for word in re.findall(r"\b[A-Z][a-z]+\b", quote))


_OPENING_POSSESSIVE = re.compile(r"\s*([A-Z][a-z]+)['’]s\b")


def _opening_possessive(sentence: str) -> list[str]:
    """A name that opens the sentence in the possessive ("Bolivia's Rosa Quispe…"),
    which its capital, there for its place, would not tell: one the lexicon does not
    know as a word ("Today's" is none)."""
    m = _OPENING_POSSESSIVE.match(sentence)
    return [m.group().strip()] if m and unknown_word(m.group(1).lower()) else []
