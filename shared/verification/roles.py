"""Who does what to whom: a sentence that keeps its quote's words but swaps its parties.

Readings of the same departure, each against the clause of the quote the
sentence's clause restates: the subject and object around the verb (or the "than",
"before", "after") both clauses turn on (:func:`roles`); names and words of converse
pairs standing on the other side of that verb (:func:`sides_swapped`); and what a
preposition of movement or of a part ("onto", "into", "to", "from") governs
(:func:`objects_swapped`). A fourth reads names in the frames of a verb: a name of the
sentence where its quote puts another of its names ("written by X" for "written by Y",
:func:`names_exchanged`). A relation that holds both ways ("X is linked to Y") swaps
no one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from shared.verification.clause_reading import (
    ARTICLES, DATES, PHRASE_STOPS, direction_flipped, directions, only_a_thing,
)
from shared.verification.clause_parts import fronted_end, qualifier_end, subject, subject_tokens
from shared.verification.clause_roles import ORDER_WORDS, acted, phrase, pivots, role_parts, side
from shared.verification.verb_reading import APPROXIMATE, passive, undergoes, verbness
from shared.verification.clauses import Clause, clauses, is_content, salient_tokens, unknown_word
from shared.verification.figure_words import NUMBER_WORDS
from shared.verification.lexicon import CONVERSES, SYMMETRIC

__all__ = ["effect_swapped", "names_exchanged", "objects_swapped", "roles", "sides_swapped"]


def roles(said: Clause, source: Clause, whole: Clause | None = None) -> tuple[str, str] | None:
    if _symmetric(said, source):
        return None
    crossed = _subject_of_other_clause(said, source, whole)
    if crossed:
        return "role", f'it says of "{crossed[0]}" what its quote says of "{crossed[1]}"'
    parts = role_parts(said, source)
    if parts is None:
        return None
    ss, so, qs, qo, clean = parts
    if bool((ss & qo) - qs) and bool((so & qs) - qo) and _turns_on_verbs(said, source):
        if said.words().count("than") and directions(said) and direction_flipped(said, source):
            return None  # "Y is slower than X" restates "X is faster than Y"
        return "role", "it swaps who does what to whom in its quote"
    if _swapped_across(said, source):
        return "role", "it swaps who does what to whom in its quote"
    dropped = _preposition_dropped(said, source)
    if dropped:
        return "role", f'it makes what its quote does "{dropped}" someone into what is done to them'
    if not clean or _any_passive(said, source):
        return None  # (a passive's subject is read less surely: "X is supplied with Y by Z")
    quote_forms = (whole or source).forms
    for mine, theirs, other, what in ((ss, qs, qo, "subject"), (so, qo, qs, "object")):
        stray = {f for f in mine - theirs - other if f in quote_forms}
        if mine and theirs and not mine & theirs and stray:
            return "role", f"its {what} is another of its quote's than the one the quote gives this verb"
    return None


def _subject_of_other_clause(said: Clause, source: Clause, whole: Clause | None) -> tuple[str, str] | None:
    """The clause's subject is the subject of another clause of its quote, not of the one
    it restates: "the alga supplies water" against "the fungal partner supplies water
    …, while the alga provides sugars". (The subject it gives, the quote's), else None."""
    mine, theirs = subject(said), subject(source)
    if whole is None or not mine or not theirs or mine & source.forms:
        return None
    for other in clauses(whole.text):
        if other.end <= source.start or other.start >= source.end:  # (another clause than the one restated)
            if mine <= subject(other) and not theirs & said.forms:
                return " ".join(t.text for t in subject_tokens(said)), " ".join(t.text for t in subject_tokens(source))
    return None


def _swapped_across(said: Clause, source: Clause) -> bool:
    """Two clauses of the same words around the same active verb, where the words before
    the verb in one (after any opening qualifier) stand after it in the other, both ways:
    "the standby nodes replicate their logs to the primary node" against "the primary
    node replicates its log to the standby nodes", "the closure of the mine caused
    falling demand for coal" against the converse. (A comparison, "as many as", "than",
    orders its sides by other words.)"""
    found = pivots(said, source)
    if found is None or said.words()[found[0]] in ORDER_WORDS or {"as", "than"} & {*said.words(), *source.words()}:
        return False
    p, q = found
    if min(verbness(said, p), verbness(source, q)) < 2 or passive(said, p) or passive(source, q) \
            or len(side(said, -1, 1) ^ side(source, -1, 1)) > 2:
        return False  # (a passive's sides are read less surely; a rewording may move words across its verb)
    if _particle(said, p) != _particle(source, q):
        return False  # "X never blocks on Y" is "Y never blocks X": the preposition turns the verb
    a, b = fronted_end(said), fronted_end(source)
    for clause, start, verb in ((said, a, p), (source, b, q)):
        if any(clause.pause_before(n) for n in range(start + 1, verb + 1)) or any(
                t.low in _NOT_ONE_PHRASE for t in clause.tokens[start:]):
            return False  # (the words before the verb are not one phrase, or an agent names another side)
    so, qo = side(said, p, 1), side(source, q, 1)
    ss = {min(t.forms) for t in said.tokens[a:p] if is_content(t)} - so
    qs = {min(t.forms) for t in source.tokens[b:q] if is_content(t)} - qo
    mine, theirs = ss - qs, qs - ss
    return bool(mine) and bool(theirs) and mine <= qo and theirs <= so


# Prepositions that put the one after them beside the verb's subject, not under its act:
# "trained under Paul Ferrand" is not "trained Paul Ferrand", "fought with" not "fought".
_BESIDE = frozenset("under for with alongside against".split())


def _preposition_dropped(said: Clause, source: Clause) -> str | None:
    """The quote's verb reaches a party through a preposition ("trained under Paul
    Ferrand") that the sentence makes the verb's object ("trained Paul Ferrand"): that
    preposition, else None."""
    words, theirs = said.tokens, source.tokens
    for j, v in enumerate(theirs[:-2]):
        if theirs[j + 1].low not in _BESIDE or verbness(source, j) < 2:
            continue
        k = j + 2 + (theirs[j + 2].low in ARTICLES)
        if k >= len(theirs) or not is_content(theirs[k]):
            continue
        for i, u in enumerate(words[:-1]):
            if not u.forms & v.forms or verbness(said, i) < 2:
                continue
            n = i + 1 + (words[i + 1].low in ARTICLES)
            if n < len(words) and words[n].forms & theirs[k].forms:
                return theirs[j + 1].low
    return None


def _particle(clause: Clause, verb: int) -> str:
    """The preposition right after the verb ("blocks on"), or ""."""
    after = clause.words()[verb + 1:verb + 2]
    return after[0] if after and after[0] in PHRASE_STOPS else ""


_NOT_ONE_PHRASE = frozenset("by when which who whom whose where that".split())


def _turns_on_verbs(said: Clause, source: Clause) -> bool:
    """The word both clauses turn on may be a verb in each, or orders two things ("than",
    "before"): sides of a noun ("peak demand on the grid" for "grid demand peaked") are
    its modifiers, not who does what to whom."""
    p, q = pivots(said, source) or (None, None)
    if p is None:
        return False
    if said.words()[p] in ORDER_WORDS:
        return True
    if acted(said.tokens[p], source) >= 2 <= verbness(source, q):
        return True  # ("beat" for "defeated": the quote's verb names the same act)
    return min(verbness(said, p), verbness(source, q)) >= 1 and not (_outranked(said, p) or _outranked(source, q))


def _outranked(clause: Clause, i: int) -> bool:
    """Token ``i`` may be a verb, but another of the clause surely is one ("grid demand
    peaked"): the clause turns on that one."""
    toks = clause.tokens
    if i and toks[i - 1].low == "to":
        return False  # ("tended to precede": the verb of its frame)
    others = [verbness(clause, k) for k in range(len(toks)) if k != i]
    if verbness(clause, i) == 1:
        return any(v >= 2 for v in others)
    # A plural after an article, before a preposition ("the surveyed farms in"), where a
    # verb after an auxiliary stands ("had adopted"): a noun.
    return verbness(clause, i) == 2 and i + 1 < len(toks) and toks[i + 1].low in PHRASE_STOPS \
        and any(u.low in ARTICLES for u in toks[max(0, i - 4):i]) and any(v >= 3 for v in others)


def _any_passive(said: Clause, source: Clause) -> bool:
    """The verb the two clauses share is passive in one of them."""
    found = pivots(said, source)
    return found is not None and (passive(said, found[0]) or passive(source, found[1]))


def _symmetric(said: Clause, source: Clause) -> bool:
    """Both clauses state a relation that holds both ways ("X is linked to Y" restates
    "Y is linked to X"): exchanging its sides swaps no roles."""
    return bool({t.lemma for t in said.tokens if t.verb} & {t.lemma for t in source.tokens if t.verb} & SYMMETRIC)


def sides_swapped(said: Clause, source: Clause) -> tuple[str, str] | None:
    """Two names (or two words of a converse pair: parent/child, left/right) stand on
    the two sides of the verb both clauses share, each on the other side in the quote:
    "Simvastatin inhibits CYP3A4 ... clarithromycin" against "Clarithromycin inhibits
    CYP3A4 ... simvastatin"."""
    found = _shared_verb(said, source)
    if found is None or _voice(said, found[0]) != _voice(source, found[1]) or _symmetric(said, source):
        return None
    (p, q), named = found, (_role_words(said) | _things(said)) & (_role_words(source) | _things(source))
    # (a qualifier that opens a clause, "At week 16, …", is on neither side)
    a, b = fronted_end(said), fronted_end(source)
    mine = {f: i < p for i, t in enumerate(said.tokens) for f in [min(t.forms)] if f in named and i != p and i >= a}
    theirs = {f: j < q for j, t in enumerate(source.tokens) for f in [min(t.forms)] if f in named and j != q
              and j >= b}
    moved = {f for f in mine.keys() & theirs.keys() if mine[f] != theirs[f]}
    if any(mine[f] for f in moved) and any(not mine[f] for f in moved):
        return "role", "it puts on each side of its verb what its quote puts on the other"
    return None


def _voice(clause: Clause, i: int) -> bool:
    """Passive at ``i``: after a form of "be", or a participle with its agent ("executed by")."""
    nxt = clause.tokens[i + 1].low if i + 1 < len(clause.tokens) else ""
    return undergoes(clause, i) or nxt == "by"


def _shared_verb(said: Clause, source: Clause) -> tuple[int, int] | None:
    """The surest verb of ``said`` that ``source`` has too (not "than"), in each."""
    a, b = max(1, qualifier_end(said)), max(1, qualifier_end(source))  # (not a verb of an opening qualifier)
    for _, i in sorted((-verbness(said, i), i) for i in range(a, len(said.tokens)) if verbness(said, i) >= 2):
        found = [j for j, u in enumerate(source.tokens) if j >= b and u.forms & said.tokens[i].forms
                 and verbness(source, j) >= 2]
        if found:
            return i, found[0]
    return None


# Prepositions whose object is a role ("multiplexes goroutines onto threads", "moves
# data from disk to memory"); "than" is the comparisons' (see direction).
_ROLE_PREPOSITIONS = frozenset("onto into to from".split())


# Words that make a preposition part of another ("according to", "thanks to", "apart
# from"): what follows it is no party to the verb.
_FIXED_BEFORE = frozenset("according thanks due owing prior addition compared relative similar close next apart "
                          "aside away contrary".split())


def objects_swapped(said: Clause, source: Clause, whole: Clause | None = None) -> tuple[str, str] | None:
    """The same preposition governs other words of the quote's, and the words it governs
    in the quote stand elsewhere in the sentence: "threads onto goroutines" against
    "goroutines onto a small number of threads"."""
    def governed(clause: Clause) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for i, t in enumerate(clause.tokens[:-1]):
            if t.low in _ROLE_PREPOSITIONS and not (t.low == "to" and clause.tokens[i + 1].verb) \
                    and not (i and clause.tokens[i - 1].low in _FIXED_BEFORE):  # not "to balance", "according to"
                # (figures and dates are no parties: "from 2010 to 2020", "up to eight years",
                # "from 3 March" are read as figures and times)
                if (nxt := clause.tokens[i + 1].low)[:1].isdigit() or nxt in DATES:
                    continue
                after = clause.tokens[i + 2].low if i + 2 < len(clause.tokens) else ""
                if nxt in APPROXIMATE and after[:1].isdigit():
                    continue  # ("from roughly 900 pairs": a figure too)
                if nxt.endswith("ing") and clause.tokens[i + 1].verb and t.low == "from":
                    continue  # ("prohibited from selling", "protects birds from shedding": an act, no party)
                out.setdefault(t.low, set()).update(w for w in _listed(clause, i)
                                                    if not w[:1].isdigit() and w not in NUMBER_WORDS)
        return out

    mine, theirs = governed(said), governed(source)
    if _symmetric(said, source):
        return None
    for prep in sorted(mine.keys() & theirs.keys()):
        moved_in, moved_out = mine[prep] - theirs[prep], theirs[prep] - mine[prep]
        if moved_in & (whole or source).forms and moved_out & said.forms and not mine[prep] & theirs[prep]:
            return "role", f'it puts after "{prep}" what its quote puts elsewhere'
    return None


def _listed(clause: Clause, at: int) -> set[str]:
    """The words a preposition at ``at`` governs, every member of a list it opens
    included: "into glucose and galactose" governs both (in either order), where
    :func:`phrase` stops at the "and"."""
    words, toks = set(), clause.tokens
    while True:
        found = phrase(clause, at, 1)[0]
        words |= found
        end = next((k for k in range(at + 1, len(toks)) if toks[k].low in ("and", "or")), None)
        if not found or end is None or end + 1 >= len(toks) or verbness(clause, end + 1) >= 1 \
                or any(clause.pause_before(k) for k in range(at + 2, end + 1)):
            return words
        at = end  # (the next member, read as the phrase after the "and")


def _things(clause: Clause) -> set[str]:
    """Words that can only name things ("sponsor", "board"), each said once in the clause."""
    seen = Counter(min(t.forms) for t in clause.content)
    return {min(t.forms) for t in clause.content if seen[min(t.forms)] == 1 and only_a_thing(t.low)}


def _role_words(clause: Clause) -> set[str]:
    """Names (capitalised inside the text, or words no dictionary knows: "simvastatin")
    and the words of converse pairs."""
    names = {w.lower() for w in salient_tokens(clause.text[clause.start:clause.end])}
    return {min(t.forms) for t in clause.tokens
            if t.low in names or t.low in CONVERSES or (t.low.isalpha() and len(t.low) > 3 and unknown_word(t.low))}


# Words that make a name's place one of a list or an order rather than a role.
_LISTING = frozenset("and or nor as between both either than vs versus like including".split())


_POSSESSIVE = re.compile(r"['’]s$")


def _bare(word: str) -> str:
    """A word without its possessive mark ("Sun's": "sun")."""
    return _POSSESSIVE.sub("", word.lower())


def _names(text: str) -> set[str]:
    return {_bare(w) for w in salient_tokens(text)}


def _name_frames(clause: Clause) -> dict[tuple[str, ...], frozenset[str]]:
    """Each name of ``clause`` (consecutive capitalised tokens, "Bob Dylan", "Mexico's
    Balsas River"), as the set of its words, by the frames it stands in: the two words
    before it ("written by"), and the word before with the word after ("with …
    contributing"), articles aside. A frame is one of a verb's parties: it holds a
    sure verb, crosses no pause and holds no listing word ("and", "between", "as")."""
    names = _names(clause.text[clause.start:clause.end])
    toks, out = clause.tokens, {}
    i = 0
    while i < len(toks):
        if _bare(toks[i].low) not in names:
            i += 1
            continue
        j = i
        while j + 1 < len(toks) and _bare(toks[j + 1].low) in names and not clause.pause_before(j + 1):
            j += 1
        name = frozenset(_bare(t.low) for t in toks[i:j + 1])
        before = [k for k in range(i - 1, -1, -1) if toks[k].low not in ARTICLES][:3]
        if len(before) == 3 and toks[before[1]].low == "by" and toks[before[0]].low.isalpha() \
                and only_a_thing(toks[before[0]].low):
            before = before[1:]  # ("by director Ang Lee": a title between "by" and its name)
        before = before[:2]
        near = [k for k in before if all(not clause.pause_before(n) for n in range(k + 1, i + 1))]
        after = j + 1 if j + 1 < len(toks) and not clause.pause_before(j + 1) else None
        frames = []
        if len(near) == 2:
            frames.append(("<", near[1], near[0]))
        if near and after is not None:
            frames.append((near[0], ">", after))
        for frame in frames:
            at = [k for k in frame if isinstance(k, int)]
            # (or the maker "by" names: "a screenplay by David Magee")
            authored = frame[0] == "<" and toks[frame[2]].low == "by"
            if (authored or any(_acting(clause, k) for k in at)) and not {toks[k].low for k in at} & _LISTING:
                out[tuple(toks[k].low if isinstance(k, int) else k for k in frame)] = name
        i = j + 1
    return out


def _acting(clause: Clause, k: int) -> bool:
    """Token ``k`` is surely a verb, or a verb's participle ("with the Moon contributing")."""
    t = clause.tokens[k]
    return verbness(clause, k) >= 2 or t.verb and t.low != t.lemma and t.low.endswith(("ing", "ed", "en"))


def _shown(name: frozenset[str], clause: Clause) -> str:
    """A name's words as the clause writes them ("Jimi Hendrix")."""
    return " ".join(_POSSESSIVE.sub("", t.text) for t in clause.tokens if _bare(t.low) in name)


def names_exchanged(said: Clause, source: Clause, whole: Clause | None = None) -> tuple[str, str] | None:
    """A name of the sentence stands where its quote puts another name it also has,
    and that other name stands elsewhere in the sentence: "Written by Jimi Hendrix,
    the song … Bob Dylan's version" against "written by Bob Dylan and made famous by
    Jimi Hendrix's recording"; "with the Moon contributing" against "with the Sun
    contributing" when the sentence gives the Sun the quote's main part."""
    quote = whole or source
    mine, theirs = _name_frames(said), _name_frames(quote)
    # (the other name may stand in another clause of the sentence: "…, with the Moon …")
    sentence, quoted = _names(said.text), _names(quote.text)
    for frame, name in mine.items():
        other = theirs.get(frame)
        if other is None or name & other:
            continue
        if name <= quoted and other <= sentence:
            return "role", f"it puts {_shown(name, said)} where its quote puts {_shown(other, quote)}"
    return None


# Words that mark their clause as the effect of the clause before it.
_CONSEQUENCE = re.compile(r"\b(?:as\s+a\s+(?:result|consequence)|consequently|therefore|thus|hence)\b", re.IGNORECASE)
# A verb that makes what stands before it the cause of what stands after it ("higher rates
# drove the fall", "led to", "prompted", "preceded"), or, with "by" after it or as "a result of", the
# effect ("was driven by", "were a result of", "due to").
_CAUSING = re.compile(r"\b(?:dr(?:ove|ives?|iven|iving)|l(?:ed|eads?|eading)\s+to|caus(?:ed|es?|ing)|"
                      r"result(?:ed|s|ing)?\s+in|trigger(?:ed|s|ing)?|prompt(?:ed|s|ing)?|preced(?:ed|es?|ing))\b"
                      r"(\s+(?:\w+ly\s+)?by\b)?",
                      re.IGNORECASE)
_CAUSED_BY = re.compile(r"\b(?:(?:a|the)\s+(?:result|consequence)\s+of|due\s+to|because\s+of|owing\s+to)\b",
                        re.IGNORECASE)


def effect_swapped(sentence: str, quotes: Sequence[str]) -> str | None:
    """Cause and effect traded: the sentence gives as the effect ("…, and wolves were
    reintroduced as a result", "subsidence has driven higher extraction") what a quote
    gives as the cause, and the quote's effect as the cause ("Wolves were reintroduced,
    and the elk population declined as a result", "higher extraction led to greater
    subsidence"). The words that mark it, else None."""
    mine = _cause_and_effect(sentence)
    if mine is None:
        return None
    cause, effect, marker = mine
    for quote in quotes:
        theirs = _cause_and_effect(quote)
        if theirs is None:
            continue
        q_cause, q_effect, _ = theirs
        if len(cause & q_effect) > len(cause & q_cause) and len(effect & q_cause) > len(effect & q_effect):
            return marker
    return None


def _cause_and_effect(text: str) -> tuple[set[str], set[str], str] | None:
    """The content words of what ``text`` gives as a cause and as its effect, and the
    words that say so; None when it gives none (or leaves a side empty)."""
    m = _CONSEQUENCE.search(text)
    if m is not None:
        parts = clauses(text)
        at = next((n for n, c in enumerate(parts) if c.start <= m.start() < c.end + 1), None)
        if not at:
            return None
        cause = {min(t.forms) for c in parts[:at] for t in c.content}
        effect = {min(t.forms) for c in parts[at:at + 1] for t in c.content}
        return (cause, effect, m.group(0)) if cause and effect else None
    m = _CAUSING.search(text)
    inverse = m is not None and m.group(1) is not None
    if m is None:
        m, inverse = _CAUSED_BY.search(text), True
    if m is None:
        return None
    # (the phrases next to the verb: "Officials said that [the layoffs] were a result of
    # [the plant's declining orders], …")
    before = _near(_BREAK.split(text[:m.start()])[-1], last=True)
    after = _near(_BREAK.split(text[m.end():])[0], last=False)
    cause, effect = (after, before) if inverse else (before, after)
    return (cause, effect, m.group(0)) if cause and effect else None


_BREAK = re.compile(r"[,;:]|\b(?:that|which|who|while|whereas|and)\b", re.IGNORECASE)
# Content words of the phrase next to a causing verb that are read as its side.
_SIDE_WORDS = 3


def _near(text: str, *, last: bool) -> set[str]:
    """The content words of ``text`` nearest a causing verb: its last (or first) few."""
    words = [min(t.forms) for c in clauses(text) for t in c.content] if text.strip() else []
    return set(words[-_SIDE_WORDS:] if last else words[:_SIDE_WORDS])
