"""Scope: a sentence keeps the conditions under which its quote holds.

A condition of the quote (an opening qualifier ending in a comma, a phrase opened by
within/when/if/unless/during/among, "by default", "in patients…") is not dropped, nor a
part of an opening qualifier that narrows it further ("with asthma", "living in rural
areas"), nor such a phrase of a condition ("in adults with hypertension") or of the
quote's subject ("employees with at least two years of service"), and the
sentence does not say "whatever", "regardless of" or "even across" where its quote
holds only in some conditions. Read by :mod:`shared.verification.meaning` after its
other checks.
"""

from __future__ import annotations

import re
from collections import Counter

from shared.research.text import STOPWORDS
from shared.verification.added_matter import superlative
from shared.verification.clause_parts import subject_tokens
from shared.verification.acronyms import abbreviated
from shared.verification.clauses import Clause, Token, covered, is_content, place_named, time_of, token
from shared.verification.clause_reading import direction_of, only_a_thing
from shared.verification.condition_reading import SETTINGS, SPANS, conditions, opening_qualifier
from shared.verification.derived import converted
from shared.verification.figures import TIME_UNITS, figures, same_figure

__all__ = ["scope"]


# Qualifiers that say a statement holds whatever the conditions ("regardless of the
# patient's renal function", "whatever the configuration", "even across partitions").
_BROADENERS = (("regardless", "of"), ("irrespective", "of"), ("whatever",), ("whichever",), ("even", "across"),
               ("in", "all", "cases"), ("under", "all"), ("no", "matter"), ("at", "any"), ("in", "any"),
               ("under", "any"), ("for", "any"), ("at", "every"), ("in", "every"))
# A place widened to a whole: "across the country" where the quote holds "in the northern
# region" (not where the quote speaks of the country, "the country's house prices").
_WHOLES = (("nationwide",), ("countrywide",), ("across", "the", "country"), ("throughout", "the", "country"),
           ("across", "the", "whole"), ("across", "the", "entire"))
_NATIONAL = frozenset("country country's countries nation nation's national nationally nationwide countrywide "
                      "whole entire".split())


# A part of a place ("in the eastern suburbs", "on the coastal routes").
_PARTS = frozenset("northern southern eastern western central north south east west inner outer coastal upper "
                   "lower rural urban downtown".split())
_ACROSS = frozenset("across throughout".split())


def _spread(words: list[str], quote_words: list[str]) -> str | None:
    """The clause says a thing holds "across the city" (or "throughout the region")
    where its quote holds it in a part of a place ("in the eastern suburbs") and
    spreads it nowhere: the clause's words, else None."""
    if not _PARTS & set(quote_words) or _ACROSS & set(quote_words):
        return None
    return next((" ".join(words[i:i + 3]) for i in range(len(words) - 2)
                 if words[i] in _ACROSS and words[i + 1] in ("the", "all") and words[i + 2] not in _PARTS), None)


def _broadens(words: list[str], openers: tuple[tuple[str, ...], ...] = _BROADENERS) -> str | None:
    for opener in openers:
        n = len(opener)
        if any(tuple(words[i:i + n]) == opener and not (opener == ("whichever",) and _ranked(words[i + 1:i + 7]))
               for i in range(len(words) - n + 1)):
            return " ".join(opener)
    return None


def _ranked(words: list[str]) -> bool:
    """A superlative follows: "whichever entry was least recently used" names the one
    entry that ranks so, as "the least recently used entry" does; it broadens nothing."""
    return any(w in ("least", "most", "longest", "oldest", "newest", "fewest", "lowest", "highest", "closest",
                     "nearest", "first", "last") for w in words)


_EVERY = frozenset("all every each any".split())
_EACH_ONE = _EVERY - {"any"}  # (a quote's "any X" may be one of them, not all)


def _all_of_the_same(said: Clause, broad: str, quote_words: list[str]) -> bool:
    """The sentence's "in every X" or "at any X" where its quote says "all", "every" or
    "each" of the same X ("across all prespecified subgroups" for "in every prespecified
    subgroup"): the quote holds over every X too."""
    opener = broad.split()
    if opener[-1] not in _EVERY:
        return False
    words = said.words()
    at = next((i + len(opener) for i in range(len(words)) if words[i:i + len(opener)] == opener), len(words))
    mine = {f for w in words[at:at + 3] if w not in STOPWORDS for f in token(w, 0, 0).forms}
    return any(quote_words[n] in _EACH_ONE and mine & token(w, 0, 0).forms
               for n in range(len(quote_words)) for w in quote_words[n + 1:n + 3] if w not in STOPWORDS)


def _beyond_any(said: Clause, broad: str, source: Clause) -> bool:
    """The sentence's "than in any X" restates its quote's superlative ("higher than in any
    year since 1991" for "the highest annual rate since 1991"): the one that ranks above
    all others, not a statement said of every X."""
    opener, words = broad.split(), said.words()
    return opener[-1] == "any" and any(words[i - 1] == "than" and words[i:i + len(opener)] == opener
                                       for i in range(1, len(words))) \
        and any(superlative(t) or t.low in ("most", "least") for t in source.tokens)


# Words that open a part of a condition narrowing it further ("in patients under 60 /
# with a BMI below 30", "among women aged 25 to 34 / living in urban areas").
_NARROWERS = frozenset("with and living who whose that aged without excluding except".split())


# (inside a condition, only a phrase that plainly narrows it: "who walked fewer steps"
# after "than those" is the other side of a comparison)
_NARROWING_PHRASES = frozenset("with without living aged excluding except".split())


# A figure's upward bound after it ("65 and older", "18 or over", "at least"): one bound
# in any of its wordings.
_UPWARD = frozenset("older over above more up upwards beyond least".split())


def _lost_part(qualifier: list[Token], mine: set[str]) -> str | None:
    """A part of ``qualifier`` (split where it narrows further: "with", "and", "living",
    "aged"…) of whose content words the sentence keeps fewer than half, else None."""
    parts: list[list[Token]] = [[]]
    for t in qualifier:
        if t.low in _NARROWERS and parts[-1]:
            parts.append([])
        parts[-1].append(t)
    # (and a place or group after the head it narrows, "workers in manufacturing", "households
    # in the lowest income quintile"; not a time, "in 56 hours")
    placed = [part[n:] for part in parts for n in range(1, len(part)) if part[n].low == "in"
              and not any(u.low[:1].isdigit() or u.lemma in SPANS for u in part[n:])]
    for part, place in [(p, False) for p in parts] + [(p, True) for p in placed]:
        # (a rank counts among a place's words: "the lowest income quintile")
        words = [t for t in part if (is_content(t) or place and direction_of(t)) and not t.low[:1].isdigit()]
        # ("aged 65" said as "65 or over": the age is its figure, kept)
        words = [t for n, t in enumerate(part) if t in words and not (
            t.low == "aged" and n + 1 < len(part) and part[n + 1].low[:1].isdigit() and part[n + 1].forms & mine)]
        if words and all(t.low in _UPWARD for t in words) and _UPWARD & mine:
            continue  # ("and older" said as "or over": the figure's bound, said another way)
        if words and 2 * len([t for t in words if covered(t, mine)]) < len(words) \
                and {t.lemma for t in words} - SETTINGS:
            return " ".join(t.text for t in part)
        # a compound that narrows the noun after it, dropped where the noun is kept
        # ("first-year students" said as "students", "first-time buyers" as "buyers")
        narrowing = next((a for a, b in zip(words, words[1:]) if "-" in a.low and not covered(a, mine)
                          and not any(covered(token(p, 0, 0), mine) for p in a.low.split("-") if p)
                          and covered(b, mine)), None)
        if narrowing is not None and not any(u.verb and u.low != u.lemma for u in part[1:]):  # (a clause of its own)
            return narrowing.text
    return None


def scope(said: Clause, source: Clause, sentence: set[str] | None = None) -> tuple[str, str] | None:
    broad = _broadens(said.words())
    quote_words = [w.strip(".,;:()\"'").lower() for w in source.text.split()]
    if broad and not _broadens(quote_words) and not _all_of_the_same(said, broad, quote_words) \
            and not _beyond_any(said, broad, source):
        return "scope", f'it says "{broad}" where its quote holds only in some conditions'
    whole = _broadens(said.words(), _WHOLES) or _spread(said.words(), quote_words)
    if whole and not _NATIONAL & set(quote_words):
        return "scope", f'it says "{whole}" where its quote holds only in a part'
    widened = _period_widened(said, source)
    if widened:
        return "scope", f'it says "{widened}" where its quote bounds the period at both ends'
    mine = said.forms | (sentence or set())
    # "supernova-based" keeps "supernovae" (not a compound the quote has too: its "age-related
    # memory decline" does not keep "in aged mice")
    mine |= {f for t in said.tokens if "-" in t.low and not t.forms & source.forms for part in t.low.split("-")
             if part for f in token(part, 0, 0).forms}
    mine |= {f for t in said.tokens if (head := time_of(t.low))
             for f in token(head, 0, 0).forms}  # "daytime solar power" keeps "during the day"
    mine |= {f for t in said.tokens if (place := place_named(t.text, source.text))
             for f in token(place.lower(), 0, 0).forms}  # "Bangladeshi field trials" keeps "in Bangladesh"
    groups = [t.low for t in said.tokens if _AGE_GROUP.search(t.low)]
    if groups:  # "children aged two" said "two-year-olds": the group's words and its parts
        ages = _AGE_WORDS | {p.removesuffix("s") for g in groups for p in g.split("-") if p}
        mine |= {f for w in ages for f in token(w, 0, 0).forms}
    qualifier = opening_qualifier(source)
    lost = _lost_part(qualifier, mine - _said_elsewhere(said, source, qualifier))
    if lost:
        return "scope", f'it drops part of its quote\'s condition ("{lost}")'
    bound = _bound_dropped(said, source, mine)
    if bound:
        return "scope", f'it drops its quote\'s condition ("{bound}")'
    narrowed = _subject_narrowed(said, source, mine)
    if narrowed:
        return "scope", f'it drops what narrows its quote\'s subject ("{narrowed}")'
    asserted = _asserted_condition(said, source, mine)
    if asserted:
        return "scope", f'it states its quote\'s condition ("{asserted}") as a fact'
    for condition in conditions(source):
        if any(t.low == "default" for t in condition) and _OVERRIDDEN & set(re.findall(r"[a-z]+", said.text.lower())):
            continue  # "unless the variable says otherwise" restates "by default"
        restated_at = _restated_figures(condition, source, said)
        kept = [t for t in condition if t.forms & mine or any(a <= t.start < b for a, b in restated_at)
                or "-" in t.low and all(token(p, 0, 0).forms & mine for p in t.low.split("-") if p)
                or t.text[:1].isupper() and any(abbreviated(w.text, source.text, said.text) for w in condition)]
        if 2 * len(kept) < len(condition):  # most of it gone ("lowest income quintile" of "households in...")
            words = " ".join(t.text for t in condition)
            return "scope", f'it drops its quote\'s condition ("{words}")'
        lost = _lost_part([t for t in source.tokens if condition[0].start <= t.start < condition[-1].end], mine) \
            if condition and not restated_at else None
        if lost and lost.split()[0].lower() in _NARROWING_PHRASES:
            return "scope", f'it drops part of its quote\'s condition ("{lost}")'  # "in adults with hypertension"
    return None


# A group of people by their age said in one word ("two-year-olds", "under-fives",
# "over-65s"): the words that name such a group in a condition are in it.
_AGE_GROUP = re.compile(r"year-olds?$|^(?:under|over)-\w+s$")
_AGE_WORDS = frozenset("children child young people adults aged age ages persons individuals".split())
_OVERRIDDEN = frozenset("unless otherwise override overrides overridden".split())
_PERIOD = re.compile(r"\b(?:between|from)\s+(\d{4})\s*(?:and|to|until|till|-|–)\s*(\d{4})\b", re.I)
_SINCE = re.compile(r"\bsince\s+(\d{4})\b", re.I)


def _period_widened(said: Clause, source: Clause) -> str | None:
    """The clause says "since 2010" where its quote says "between 2010 and 2015": a
    period its quote ends, run on to the present. The clause's words, else None."""
    since = _SINCE.search(said.text)
    if since is None:
        return None
    for period in _PERIOD.finditer(source.text):
        if period.group(1) == since.group(1) and period.group(2) not in said.text:
            return since.group(0)
    return None


def _said_elsewhere(said: Clause, source: Clause, part: list[Token]) -> set[str]:
    """Forms of ``part`` of the quote that the sentence says no more often than the rest
    of the quote does: they are the rest's ("track" in "independent track tests" keeps
    nothing of "On wet tracks, …")."""
    inside = {id(t) for t in part}
    rest = Counter(min(t.forms) for t in source.tokens if id(t) not in inside and t.forms)
    said_count = Counter(min(t.forms) for t in said.tokens if t.forms)
    return {f for t in part if t.forms and (key := min(t.forms)) in rest and said_count[key] <= rest[key]
            for f in t.forms}


# Words that bound what a noun counts by a figure after it ("children over 12", "orders
# over £50", "adults aged 65").
_BOUNDING = frozenset("over under above below aged".split())
_GOVERNING = frozenset("on for in to among".split())
_COUNTED = frozenset("orders people purchases items transactions incomes earnings".split())


def _bound_dropped(said: Clause, source: Clause, mine: set[str]) -> str | None:
    """The quote narrows a noun by a figure after it ("children over 12", "on orders over
    £50"); the sentence keeps the noun (or drops the whole phrase after its preposition)
    and says none of the quote's figures of that phrase: the phrase, else None."""
    toks = source.tokens
    for n in range(1, len(toks) - 1):
        if toks[n].low not in _BOUNDING or source.pause_before(n):
            continue
        noun = toks[n - 1]
        if not (only_a_thing(noun.low) or noun.low in _COUNTED):
            continue
        # (the noun kept, or the whole phrase after its preposition dropped: "on orders over £50")
        if not covered(noun, mine) and not (n >= 2 and toks[n - 2].low in _GOVERNING):
            continue
        at = toks[n].end
        found = [f for f in figures(source.text[at:toks[min(source.pause_after(n), n + 3) - 1].end])
                 if f.start <= 3 and f.unit not in TIME_UNITS]  # (a span, "over ten days", bounds no noun)
        if not found:
            continue
        theirs = figures(said.text[said.start:said.end])
        if any(same_figure(m, f) or converted(m, f) for m in theirs for f in found):
            continue
        number = found[0].surface.lower().split()[0]  # (the parser may read "two in" as inches)
        said_as = (f"{toks[n].low}-{number}", f"{number}-year-old")
        if any(t.low.startswith(said_as) for t in said.tokens):
            continue  # "under-fives" for "children under five", "two-year-olds" for "children aged two"
        return source.text[noun.start:at + found[0].end]
    return None


def _subject_narrowed(said: Clause, source: Clause, mine: set[str]) -> str | None:
    """The quote's subject is narrowed by a "with" or "for" phrase ("Employees with at
    least two years of service are entitled…", "households with children", "the rate
    limit for free-tier accounts") of whose words the sentence, keeping the noun it
    narrows, says none: the phrase, else None. (A "for" of a time, "for the same
    period", is not one.)"""
    toks = subject_tokens(source)
    if not toks:
        return None
    words = [t.low for t in source.tokens]
    start = next((n for n, t in enumerate(source.tokens) if t is toks[0]), None)
    end = next((n for n, t in enumerate(source.tokens) if t is toks[-1]), None)
    if start is None or end is None:
        return None
    for n in range(start + 1, end + 1):
        if words[n] not in ("with", "for") or not is_content(source.tokens[n - 1]) \
                or not covered(source.tokens[n - 1], mine):
            continue
        phrase = source.tokens[n:end + 1]
        if words[n] == "for" and any(t.lemma in SPANS or t.low == "same" for t in phrase):
            continue  # ("net profit for the same period": a time, said by the sentence's own)
        content = [t for t in phrase if is_content(t) or t.low.isdigit()]
        if content and not any(covered(t, mine) for t in content):
            return " ".join(t.text for t in phrase)
    return None


# Words that open a condition: the quote's "If the cache is cold, reads are slow" says
# neither that the cache is cold nor that reads are.
_IF = frozenset("if when whenever once".split())
# Words by which a sentence keeps a condition (as a condition, a time or a cause).
_CONDITIONAL = frozenset("""if when whenever once unless provided providing where whether after until while
    during time times case assuming given long upon lead leads led leading cause causes caused causing
    result results resulted trigger triggers triggered means who whose""".split())


def _asserted_condition(said: Clause, source: Clause, mine: set[str]) -> str | None:
    """The quote opens with a condition ("When a service rejects requests under load, …")
    that the sentence restates with no word that keeps it one (nor as the act that
    causes the rest, "Disabling retrieval cut accuracy…"): the condition, else None."""
    toks = source.tokens
    if not toks or toks[0].low not in _IF or set(said.words()) & _CONDITIONAL:
        return None
    if said.tokens and said.tokens[0].low.endswith("ing") and said.tokens[0].verb:
        return None  # "Switching off the retrieval component dropped…": the condition as a cause
    end = next((n for n in range(1, len(toks)) if source.pause_before(n)), None)
    if end is None:
        return None
    words = [t for t in toks[1:end] if is_content(t)]
    if words and 2 * len([t for t in words if covered(t, mine)]) > len(words):
        return " ".join(t.text for t in toks[:end])
    return None


def _restated_figures(condition: list[Token], source: Clause, said: Clause) -> list[tuple[int, int]]:
    """Where, in the quote, the condition's figures stand that the sentence restates in
    other words or units ("within a decade" for "within the next ten years", "within 30
    seconds" for "within the 30-second timeout", "within three days" for "within 72 hours")."""
    if not condition:
        return []
    start, end = condition[0].start, condition[-1].end
    mine = figures(said.text[said.start:said.end])
    return [(start + f.start, start + f.end) for f in figures(source.text[start:end])
            if any(same_figure(m, f) or converted(m, f) for m in mine)]
