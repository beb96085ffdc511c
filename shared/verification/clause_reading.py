"""What a clause says, read word by word, for the meaning checks (``shared.verification.meaning``).

Each reader looks at one clause (``shared.verification.clauses.Clause``) and returns what it
states: its negations, directional words (with
their axis and sign, and whether they compare or merely describe), its
verb and the subject and object phrases around it. The checks compare what two clauses
say; these functions only read. A clause's quantifiers and frequency are read by
:mod:`shared.verification.quantity_reading`, its conditions by
:mod:`shared.verification.condition_reading`, how sure it is by
:mod:`shared.verification.certainty_reading`.
"""

from __future__ import annotations

import re

from shared.verification.clauses import AUX, Clause, Token, adjective, is_content, token
from shared.verification.figure_words import EXCEED, bounds_figure, figure_word
from shared.verification.lexicon import DIRECTIONS, MONTHS, NEGATIVE_PREFIXES, NEGATORS, SHARE_WORDS

__all__ = [
    "ARTICLES",
    "BINDING_STOPS",
    "DATES",
    "MONTHS",
    "PHRASE_STOPS",
    "WEAK",
    "bound_sign",
    "clause_parts",
    "denies_exceeding",
    "direction_flipped",
    "direction_of",
    "directions",
    "echoed",
    "hits",
    "negations",
    "not_only",
    "on_axis",
    "only_a_thing",
    "parts_sharing",
    "prefix_flips",
]


# The words that name a day or month: after "on"/"in" they date a statement, not narrow it
# ("on Thursday"); after "from" they are a time, not a party ("from 3 March").
DATES = MONTHS | frozenset("monday tuesday wednesday thursday friday saturday sunday".split())


# Verbs of advice after which "against" advises not to ("advised against driving").
_ADVISED = frozenset("advise advises advised advising recommend recommends recommended recommending warn warns "
                     "warned warning caution cautions cautioned cautioning counsel counsels counselled".split())


_NOT = frozenset(("not", "n't", "never", "cannot"))


def denies_exceeding(words: list[str], i: int) -> bool:
    """The word at ``i`` denies the "exceed" after it ("may not exceed", "cannot exceed"):
    a bound when a figure or a quote's cap follows, not a denial."""
    return words[i] in _NOT and i + 1 < len(words) and words[i + 1] in EXCEED


def negations(clause: Clause) -> int:
    words = clause.words()
    count = 0
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w == "against" and i and words[i - 1] in _ADVISED:
            count += 1  # "advised against driving": driving is not recommended
        if w in ("failure", "failures") and nxt == "to":
            count += 1  # "the council's failure to repair": it did not repair (a noun otherwise)
        if w in NEGATORS:
            if w in ("not", "n't") and nxt in ("only", "just", "merely"):
                continue  # "not only": an addition, not a negation
            if w in ("no", "not") and nxt in ("less", "more", "fewer", "later", "earlier", "greater") \
                    and i + 2 < len(words) and words[i + 2] == "than":
                continue  # "no less than 10": a bound ("at least 10"), not a negation
            if w in _NOT and nxt == "exceeding" or denies_exceeding(words, i) and any(
                    figure_word(u) for u in words[i + 2:i + 4]):
                continue  # "a term not exceeding two years", "may not exceed 10 cents": at most (a bound)
            if w in ("fails", "fail", "failed", "failing") and nxt != "to":
                continue
            if w == "nor" and "neither" in words:
                continue  # "neither ... nor" negates once
            count += 1
    return count


# Prefixes that negate adjectives only ("inaccurate", "illegal"): "imprisonment" is no
# negated "prisonment", "inflow" no negated "flow".
_ADJECTIVE_PREFIXES = ("in", "im", "il", "ir")


def prefix_flips(said: Clause, source: Clause) -> int:
    """Words negated by a prefix on one side whose stem stands bare on the other
    ("unsafe" / "safe"): each one flips polarity."""
    flips = 0
    for mine, theirs in ((said, source), (source, said)):
        their_forms = theirs.forms
        for t in mine.tokens:
            if t.forms & their_forms or t.low in NEGATORS:  # ("unable" is counted as a negation already)
                continue
            own = mine.forms  # (a stem its own side has bare too, "unemployment … employment", flips nothing)
            for prefix in NEGATIVE_PREFIXES:
                rest = t.low[len(prefix):]
                if t.low.startswith(prefix) and len(rest) >= 4 and token(rest, 0, 0).forms & their_forms \
                        and not token(rest, 0, 0).forms & own \
                        and (prefix not in _ADJECTIVE_PREFIXES or adjective(t.low, unknown=True)):
                    flips += 1
                    break
    return flips


ARTICLES = frozenset("the a an its their this these those".split())


_PART_OPENERS = frozenset("but which whereas while though although yet".split())


def clause_parts(clause: Clause) -> list[list[Token]]:
    """The clause's parts: its stretches between commas, or before "but", "which",
    "whereas"... ("Most cases resolve, but some recur": two parts)."""
    toks, out, start = clause.tokens, [], 0
    for i in range(1, len(toks) + 1):
        if i == len(toks) or clause.pause_before(i) or toks[i].low in _PART_OPENERS:
            out.append(toks[start:i])
            start = i
    return out


def parts_sharing(source: Clause, said: Clause) -> Clause:
    """The parts of ``source`` (:func:`clause_parts`) that share a content word with
    ``said``; all of it when none does."""
    out = [t for part in clause_parts(source) if any(is_content(t) and t.forms & said.forms for t in part)
           for t in part]
    return Clause.spanning(out, source.text) if out else source


def hits(clause: Clause) -> list[tuple[int, str, int, bool]]:
    """(position, axis, sign, weak) of each directional word of the clause. A weak one is a
    plain adjective ("high", "large", "fast"): it agrees or disagrees with another on its
    axis, but is not a comparison of its own. "no longer" is no direction."""
    out = []
    for i, t in enumerate(clause.tokens):
        hit = direction_of(t)
        prev = clause.tokens[i - 1].low if i else ""
        nxt = clause.tokens[i + 1].low if i + 1 < len(clause.tokens) else ""
        if t.low in ("twice", "thrice") and nxt == "as":
            hit = ("magnitude", 1)  # "twice as much linalool": "double the linalool"
        if hit is None and t.lemma == "recover" and _TO_FIGURE.match(clause.text, t.end):
            hit = ("magnitude", 1)  # "ridership recovered to 85%": a rise back
        if hit is None and t.lemma == "lose" and _AMOUNT_AFTER.match(clause.text, t.end):
            hit = ("magnitude", -1)  # "lost roughly half its activity": a fall by that much
        if t.lemma == "keep" and any(a.low == "at" and b.low == "bay" for a, b in
                                     zip(clause.tokens[i + 1:i + 7], clause.tokens[i + 2:i + 8])):
            hit = ("presence", -1)  # "to keep measles outbreaks at bay": to prevent them
        if hit is None:
            continue
        if t.low == "longer" and prev in ("no", "any"):
            continue
        if t.low in ("longer", "shorter") and (clause.tokens[i - 1].lemma == "take" if i else False):
            hit = ("speed", -hit[1])  # "took longer to write": slower to write
        if t.low in ("fasting", "fasted", "double-blind"):
            continue  # going without food, not speed; a trial's design, not a doubling
        if t.lemma == "grow" and (nxt.endswith("er") or nxt in ("more", "less")):
            continue  # "has grown warmer": has become, not an increase of its own
        if t.low in ("speed", "speeds") and nxt != "up":
            continue  # "top speed": a noun, not speeding up
        if t.lemma == "raise" and _MONEY_AFTER.match(clause.text, t.end):
            continue  # "raised $45 million": money collected, not a rise
        if t.lemma == "raise" and _COUNT_AFTER.match(clause.text, t.end):
            continue  # "raised markedly fewer queens", "raised 40 calves": reared, not a rise
        if t.lemma == "raise" and _RAISED_THING.match(clause.text, t.end):
            continue  # "raising an error", "raised concerns": one made or voiced, not a rise
        if hit[0] != "magnitude" and "magnitude" in {_ALSO_ON.get(x) for x in t.lemmas} and _TO_FIGURE.match(
                clause.text, t.end):
            hit = ("magnitude", hit[1])  # "dropped to 4.1 percent": a fall, not something dropped
        after = clause.tokens[i + 2].low if i + 2 < len(clause.tokens) else ""
        if prev == "as" and nxt == "as" and figure_word(after):
            continue  # "for as long as eight years": a bound on the figure, read with the figure
        if t.low in ("up", "down") and (i and clause.tokens[i - 1].lemma in _MOVES or nxt == "from"
                                        or figure_word(nxt) and (clause.pause_before(i) or figure_word(prev))):
            # ("visitor numbers went up", "58 percent, up from 49", "$8.4 billion, up 11%": a rise;
            # not a verb's particle, "made up 24%", "shut down 2G")
            hit = ("magnitude", hit[1])
        if t.low in ("after", "before") and nxt == "which":
            hit = (hit[0], -hit[1])  # "X, after which Y": X comes before Y
        if t.lemma == "fall" and nxt in ("under", "within", "into", "outside", "on") and not figure_word(after) \
                and not after.startswith(("$", "€", "£")):
            continue  # "companies fall under the regulation": come under it, not a decrease
        if "fall" in t.lemmas and nxt == "to" and _PARTY_AFTER.match(clause.text, clause.tokens[i + 1].end):
            continue  # "the fort fell to the Dutch": was taken by them, not a decrease
        if t.lemma == "keep" and _keeps_from(clause, i):
            hit = ("presence", -1)  # "to keep dyes from fading": to prevent it
        head = t.low.split("-", 1)[0]
        # ("40% below the average", "1.45°C above the baseline": a comparison by a figure, its
        # unit between them, not a plain adjective)
        weak = (t.low in WEAK or head in WEAK) and not (t.low in ("below", "above") and any(
            (figure_word(clause.tokens[j].low) or clause.tokens[j].low in SHARE_WORDS)
            and all(u.low in _BY_UNITS for u in clause.tokens[j + 1:i])
            and not any(clause.pause_before(k) for k in range(j + 1, i + 1)) for j in range(max(0, i - 3), i)))
        out.append((i, hit[0], hit[1], weak))
    return out


# Units of a figure that compares by how much ("1.45°C above", "3 percentage points below"),
# not where a thing is ("10 km below the surface").
_BY_UNITS = frozenset("c f k degree degrees celsius fahrenheit kelvin percent per cent percentage point points".split())

# An amount after a verb of loss: "lost roughly half", "lost 30% of", "lost a third of".
_AMOUNT_AFTER = re.compile(r"\s+(?:(?:about|around|roughly|nearly|almost|some|over|more\s+than)\s+)?"
                           r"(?:half|a\s+(?:third|quarter|fifth|tenth)|\d[\d.,]*\s*(?:%|percent\b|per\s+cent\b))",
                           re.IGNORECASE)
# Verbs whose "up" or "down" is a rise or a fall ("edged down", "ticked up").
_MOVES = frozenset("go edge tick inch creep trend move drift".split())
_TO_FIGURE = re.compile(r"\s+(?:(?:to|by)\s+)?(?:about\s+|some\s+|nearly\s+|almost\s+)?[$€£¥]?\d")
# A count of things after "raise": "fewer queens", "more calves", "40 calves" (not "3 percent").
_COUNT_AFTER = re.compile(r"\s+(?:\w+ly\s+)?(?:fewer|more|\d[\d,]*(?!\s*(?:%|percent|per\s+cent|points?\b|basis)))\s+[a-z]",
                          re.IGNORECASE)
# What is raised without a rise: an error or exception thrown, an alarm or a concern voiced
# ("raises a ValueError", "raised serious concerns").
_RAISED_THING = re.compile(r"\s+(?:(?:an?|the|no|any)\s+)?(?:[a-z]+\s+)?(?:errors?|exceptions?|alarms?|concerns?|"
                           r"questions?|objections?|flags?)\b|\s+(?:an?\s+)?[A-Z]\w*(?:Error|Exception)\b")
# A party after "fell to": "the Dutch", "Napoleon's army" (a capital, not a figure or "the lowest").
_PARTY_AFTER = re.compile(r"\s+(?:the\s+)?[A-Z][a-z]")
_MONEY_AFTER = re.compile(r"\s+(?:(?:US)?\$|€|£|¥)\s?\d|\s+\d[\d,.]*\s*(?:million|billion)?\s*"
                          r"(?:dollars|euros|pounds)\b")


# Words read on one axis that may speak of another: "dropped support" removes it,
# "dropped 12 metres" is a fall.
_ALSO_ON = {"drop": "magnitude"}


def on_axis(clause: Clause, hit: tuple[int, str, int, bool], axis: str) -> bool:
    """The directional word of ``hit`` (from :func:`hits`) may speak of ``axis``."""
    return hit[1] == axis or any(_ALSO_ON.get(x) == axis for x in clause.tokens[hit[0]].lemmas)


def _keeps_from(clause: Clause, i: int) -> bool:
    """"keep X from Y", "keep out X", "keep X away": "from" follows within the phrase
    after "keep", or a particle of keeping something away ("fenced to keep out deer")."""
    for n in range(i + 1, min(len(clause.tokens), i + 6)):
        if clause.pause_before(n):
            return False
        if clause.tokens[n].low == "from" or clause.tokens[n].low in ("out", "away", "off") and n <= i + 3:
            return True
    return False


def directions(clause: Clause) -> list[tuple[str, int]]:
    return [(axis, sign) for _, axis, sign, _ in hits(clause)]


def direction_of(t: Token) -> tuple[str, int] | None:
    """(axis, sign) of a directional word, by its form, any of its lemmas ("fell": "fall")
    or a part of a compound ("lower-priority", "cost-cutting")."""
    hit = DIRECTIONS.get(t.low)
    if hit is None:
        hit = next((DIRECTIONS[x] for x in t.lemmas if x in DIRECTIONS), None)
    if hit is None and "-" in t.low:
        parts = t.low.split("-")
        # (not a change it ends with, as a noun: "chair-rise times")
        # (a part by its lemma too: "sixth-highest")
        hit = next((DIRECTIONS[x] for n, part in enumerate(parts) for x in (part, *_lemmas(part)) if x in DIRECTIONS
                    and (n < len(parts) - 1 or x not in _CHANGE_NOUNS) and (x == part or DIRECTIONS[x][0] != "particle")),
                   None)  # ("flare-ups" holds no particle "up")
    return hit


def _lemmas(word: str) -> tuple[str, ...]:
    return token(word, 0, 0).lemmas if word else ()


# Changes named by a noun that may end a compound ("chair-rise times", "price-cut"):
# the compound names a thing, not a change.
_CHANGE_NOUNS = frozenset("rise fall drop cut increase decrease decline growth gain reduction".split())


def direction_flipped(said: Clause, source: Clause) -> bool:
    """A directional word of ``said`` whose opposite ``source`` has (bounds on figures,
    "above 32", aside)."""
    mine, theirs = ([(a, s) for i, a, s, _ in hits(c) if not bounds_figure(c, i)] for c in (said, source))
    return any((a, -s) in theirs for a, s in mine)


def not_only(clause: Clause) -> int:
    """How often the clause says "not only", "not just", "not merely" (or "rather than
    only", "instead of just"): an addition, not a negation, but not the same as "only"
    either."""
    words = clause.words()
    return sum(1 for i, (w, nxt) in enumerate(zip(words, words[1:], strict=False))
               if nxt in ("only", "just", "merely") and (w in ("not", "n't") or i and (words[i - 1], w) in (
                   ("rather", "than"), ("instead", "of"))))


# Plain adjectives of direction: they agree or disagree on their axis, but compare nothing.
WEAK = frozenset("high low large small big long short fast slow quick cheap expensive costly pricey wide narrow "
                  "tall above below upward downward help helps helped helping".split())


def bound_sign(said: Clause, i: int, axis: str, whole: Clause, *, weak: bool = True) -> int | None:
    """The sign, on ``axis``, of the quote's directional word bound to the same thing as
    the sentence's word at ``i`` (the content word right after it, found in the quote
    with a directional word just before or right after it, within its phrase); None
    when there is none to bind. A comparison (``weak`` False) binds to comparisons only."""
    target, between = None, set[str]()
    for n in range(i + 1, min(i + 4, len(said.tokens))):
        if said.pause_before(n) or said.tokens[n].low in ("and", "or", "but"):
            break
        if is_content(said.tokens[n]) and not _owner(said, said.tokens[n]):
            target = said.tokens[n]  # (not an owner: "lowered athletes' core temperature")
            break
        between.add(said.tokens[n].low)
    # (a quote's "more than 12 metres" bounds its figure: it binds only a bound)
    bounds = bounds_figure(said, i)
    # (for a compared adjective, a directional word the sentence and its quote both
    # have in one phrase is that phrase's: "the growing season" binds nothing to "higher")
    compared = said.tokens[i].low.endswith("er") and adjective(said.tokens[i].low)
    own = {word for word, _ in echoed(said, i, whole)} if compared else set()
    # (a directional word between it and its word is read on its own: "raise the minimum age")
    found = None if target is None else _bound_to(target, axis, whole, weak=weak, bounds=bounds, skip=between)
    if found is None:  # what it says of the word before it ("rainfall has fallen")
        found = next((sign for t in _subject_before(said, i)
                      if (sign := _bound_to(t, axis, whole, weak=weak, bounds=bounds, skip=own)) is not None), None)
    return found


def echoed(said: Clause, i: int, whole: Clause) -> set[tuple[str, str]]:
    """(word, axis) of each directional word of ``said`` other than the one at ``i`` that
    stands with the word after it in the quote too ("the growing season"): a name the
    sentence repeats, no change of its own, so the quote's word backs no other."""
    toks = said.tokens
    return {(toks[m].low, axis) for m, axis, *_ in hits(said) if m != i and m + 1 < len(toks)
            and toks[m].low != toks[i].low
            and any(u.low == toks[m].low and whole.tokens[n + 1].forms & toks[m + 1].forms
                    for n, u in enumerate(whole.tokens[:-1]))}


def _owner(clause: Clause, t: Token) -> bool:
    """``t`` is a possessive ("athletes'", "the city's")."""
    return t.low.endswith("'s") or clause.text[t.end:t.end + 1] in ("'", "\u2019")


def _subject_before(said: Clause, i: int) -> list[Token]:
    """What a directional verb at ``i`` tells of when it comes after it ("rainfall in
    the basin has fallen", "costs rose"): the head of the phrase before it (its last
    content word ahead of any preposition), then the content word just before it."""
    start = i
    while start > 0 and not said.pause_before(start) and said.tokens[start - 1].low not in BINDING_STOPS:
        start -= 1
    before = said.tokens[start:i]
    cut = next((n for n, t in enumerate(before) if t.low in PHRASE_STOPS), len(before))
    head = [t for t in before[:cut] if is_content(t) and t.low not in AUX][-1:]
    near = [t for t in before if is_content(t) and t.low not in AUX][-1:]
    return head + [t for t in near if t not in head]


def _bound_to(target: Token, axis: str, whole: Clause, *, weak: bool, bounds: bool,
              skip: set[str] | frozenset[str] = frozenset()) -> int | None:
    """The sign of the quote's directional word on ``axis`` next to ``target`` (a bound
    on a figure only when ``bounds``; none of the words ``skip``, as written)."""
    toks = whole.tokens
    signs = {m: (a, s_) for m, a, s_, w in hits(whole) if on_axis(whole, (m, a, s_, w), axis) and (weak or not w)
             and (bounds or not bounds_figure(whole, m)) and toks[m].low not in skip}
    for n, u in enumerate(toks):
        if not u.forms & target.forms:
            continue
        for m in range(n - 1, max(-1, n - 5), -1):  # before it ("reduces latency"), within its phrase
            if toks[m].low in BINDING_STOPS or whole.pause_before(m + 1):
                break
            if m in signs:
                return signs[m][1]
        for m in range(n + 1, min(len(toks), n + 3)):  # or right after it ("interest rates rise")
            if toks[m].low in BINDING_STOPS or whole.pause_before(m):
                break
            if m in signs:
                return signs[m][1]
    return None


# Words between a directional word and what it governs that end the binding.
BINDING_STOPS = frozenset("when if while because since as that which who than and or but whereas unless".split())


# Where a subject or object phrase ends: a preposition (other than "of"), or a word that
# opens a clause of its own.
PHRASE_STOPS = frozenset("""in on at to from into onto by with for over under through during via across toward
    towards against between among within without about after before than when if while because since unless
    which that who whom whose as where once until""".split())


def only_a_thing(word: str) -> bool:
    """The word can only be a noun (lemminflect's tables): new matter, where a new verb,
    adjective or adverb ("climbed", "halts", "single") is more often a rewording."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use (clauses loads them first)

    readings = set(lemminflect.getAllLemmas(word))
    return not readings or readings <= {"NOUN", "PROPN"}
