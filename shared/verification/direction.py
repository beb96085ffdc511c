"""Direction: a sentence's directional words agree with its quote's.

Each directional word (increases/reduces, faster/slower, better/worse, before/after,
adds/removes), bound to the word it governs, agrees with the quote's on its axis; a
comparison is not stated where the quote states none, nor its base dropped; a
comparison turned round around "than" restates with the opposite word and reverses
with the same one; a bound on a figure keeps the quote's side; and a converse term
(lends/borrows, client/server) is not swapped for its counterpart. Read by
:mod:`shared.verification.meaning` ("comparative").
"""

from __future__ import annotations

import re

from shared.verification.added_matter import superlative
from shared.verification.clause_reading import PHRASE_STOPS, bound_sign, direction_of, echoed, hits, on_axis
from shared.verification.clause_roles import phrase, swapped
from shared.verification.verb_reading import verbness
from shared.verification.clauses import Clause, Token, adjective, clauses, covered, is_content, token
from shared.verification.figure_words import bounds_figure, figure_word, order_word_at
from shared.verification.figure_bounds import both_bound, bound_flipped
from shared.verification.figures import figures, same_figure
from shared.verification.lexicon import CONVERSES

__all__ = ["converse", "direction"]


_COMPARATIVE_AXES = frozenset({"magnitude", "speed", "quality", "cost"})
_COMPARISON_WORDS = frozenset({"more", "less", "most", "least"})
_PLACES = frozenset("above below over under beneath beyond behind ahead up down".split())


def _comparative_of(said: Clause, i: int, theirs: list[tuple[int, str, int, bool, str]]) -> bool:
    """"more"/"less" at ``i`` makes a comparative of the directional word after it, and the
    quote states a change on that word's axis and sign with another word ("slowed" for
    "more slowly"; ``theirs``: the quote's changes, with their words)."""
    if i + 1 >= len(said.tokens):
        return False
    word, nxt = said.tokens[i + 1], direction_of(said.tokens[i + 1])
    return nxt is not None and any(h[1] == nxt[0] and h[2] == nxt[1] and not h[3] and h[4] != word.low
                                   for h in theirs)


def direction(said: Clause, source: Clause, whole: Clause | None = None) -> tuple[str, str] | None:
    """Each directional word of ``said`` agrees with the quote's word bound to the same
    thing, else with the aligned clause's words on its axis (on an axis that clause does
    not speak of, the whole quote's, ``whole``); a comparison is not stated where the quote
    states none, nor more of them than it states, nor without the quote's "than"."""
    if bound_flipped(said, whole or source):  # "more than €1 billion" for "under €1 billion"
        return "comparative", "it bounds a figure on the other side than its quote does"
    degrees = _degrees(whole or source)  # the quote's compared adjectives, read once
    # ("B is less stiff than A" restates "A is stiffer than B": no word of it is flipped)
    if not (swapped(said, whole or source) or _than_mirrored(said, whole or source)):
        flipped = _degree_flipped(said, degrees) or _prefix_flipped(said, whole or source)
        if flipped:  # "stiffer" for "less stiff"; "underperformed" for "outperformed"
            return "comparative", f'it says "{flipped[0]}" where its quote says "{flipped[1]}"'
    theirs, everywhere = hits(source), hits(whole) if whole is not None else hits(source)
    mine, absorbed = hits(said), set()
    if _than_mirrored(said, source) and any(
            a[1] == b[1] and a[2] == b[2] and a[1] in _COMPARATIVE_AXES and not a[3] and not b[3]
            for a in _before_than(said, mine) for b in _before_than(source, theirs)):
        # "Y led to fewer X than Z" for "Z led to fewer X than Y": the same word, its sides exchanged
        return "comparative", f"it reverses the direction ({next(h[1] for h in mine)}) its quote states"
    for i, axis, sign, weak in mine:
        turned = _second_object_turned(said, i, sign, axis, whole or source)
        if turned:  # "reduces both pause times and memory use" for "… but increases memory use"
            return "comparative", f'it gives "{turned}" a direction its quote reverses'
        if i >= 1 and said.tokens[i - 1].low == "or" and bounds_figure(said, i):
            continue  # "7,000 or more steps": a bound on the figure, read with the figure
        if _same_order(said, i, whole or source):
            continue  # "raises an error after waiting 30 seconds" for "waits 30 seconds before raising one"
        if said.tokens[i].low in ("more", "less") and i + 1 < len(said.tokens) \
                and said.tokens[i + 1].low == said.tokens[i + 1].lemma and degrees.get(
                said.tokens[i + 1].lemma, (0,))[0] == (1 if said.tokens[i].low == "more" else -1):
            absorbed.add(i)
            continue  # "more stiff" for "stiffer"
        if _same_phrase(said, i, whole or source):
            continue  # "the risk of falls": the quote's own words, a thing named, not a change
        if i and said.tokens[i - 1].low in ("the", "this", "that") and verbness(said, i) < 2 \
                and any(h[1] == axis and h[2] == sign and not h[3] for h in everywhere):
            continue  # "… caused the reduction": the change the quote states, named again
        if said.tokens[i].low in _COMPARISON_WORDS and _comparative_of(
                said, i, [(*h, source.tokens[h[0]].low) for h in theirs
                          if verbness(source, h[0]) >= 2 or source.tokens[h[0]].low.endswith("er")]):
            absorbed.add(i)
            continue  # "more slowly" for "slowed" or "more quickly" for "faster": one comparison
        if _figures_show(said, i, sign, whole or source) or both_bound(said, i, whole or source):
            continue  # "38%, down from 61%" where its quote gives both figures; "less than €1 billion" for "under"
        bound = bound_sign(said, i, axis, whole or source, weak=weak)
        if bound == sign:
            continue
        lemmas = _lemmas_in(said.tokens[i])
        # (a quote's "more than 30 metres" bounds its figure: no direction, unless the
        # sentence's word bounds one too)
        bounding = bounds_figure(said, i)
        # (a quote's word the sentence says too, elsewhere, is that word's: "the growing
        # season" in both does not back "higher" against the quote's "lower")
        taken = echoed(said, i, whole or source)
        pool = [h for h in theirs if on_axis(source, h, axis) and (weak or not h[3])
                and (bounding or not bounds_figure(source, h[0])) and (source.tokens[h[0]].low, h[1]) not in taken] \
            or [h for h in everywhere if h[1] == axis and (weak or not h[3])
                and (bounding or not bounds_figure(whole or source, h[0]))
                and ((whole or source).tokens[h[0]].low, h[1]) not in taken
                and (h[2] != sign or lemmas & _lemmas_in((whole or source).tokens[h[0]]))]
        if bound is None and sign in {h[2] for h in pool}:
            continue
        if bound is None and not pool and said.tokens[i].low not in _COMPARISON_WORDS and any(
                h[1] == axis and h[2] == sign and h[3] and source.tokens[h[0]].low not in _PLACES for h in theirs):
            # ("ten times slower" for "slow folding by a factor of ten": a weaker reading of
            # a word that may be a verb, the same change; not a place, "above the vent")
            continue
        if bound is not None or pool:
            if (swapped(said, source) or _than_mirrored(said, source)) and "than" in said.words():
                continue  # "Y is slower than X" restates "X is faster than Y"
            return "comparative", f"it reverses the direction ({axis}) its quote states"
        # (a change of the same sign on another axis, "fell" for "dropped", "raised" for
        # "improved", restates it)
        change = verbness(said, i) >= 1 and said.tokens[i].low not in _COMPARISON_WORDS
        same_sign = change and any(h[2] == sign and not h[3] and verbness(source, h[0]) >= 1
                                   for h in theirs)  # changes, not an added "more"
        if axis in _COMPARATIVE_AXES and not weak and not bounds_figure(said, i) and not same_sign \
                and not _reached(said, i, whole or source) and not _worded_alike(said.tokens[i], whole or source, everywhere) \
                and not _ranked_alike(said.tokens[i], sign, whole or source):
            return "comparative", f"it states a direction ({axis}) its quote does not"
    stated = [h for h in mine if h[1] in _COMPARATIVE_AXES and not h[3] and not bounds_figure(said, h[0])
              and h[0] not in absorbed]
    quoted = max(len([h for h in found if h[1] in _COMPARATIVE_AXES and not h[3]]) for found in (theirs, everywhere))
    # (the same change said twice, "had fallen …, its third straight decline", is one comparison)
    # ("more", "less" each count: "the biggest … significantly more X" adds one)
    if quoted and len({(h[1], h[2], h[0] if said.tokens[h[0]].low in _COMPARISON_WORDS else -1)
                       for h in stated}) > quoted:
        return "comparative", "it states more comparisons than its quote does"
    if _compares(source) and not _compares(said) and stated and not _keeps_base(said, source):
        return "comparative", "it drops or changes what its quote compares it with"
    return None


def _second_object_turned(said: Clause, i: int, sign: int, axis: str, quote: Clause) -> str | None:
    """A change verb at ``i`` with two objects joined by "and" ("reduces both pause times
    and memory use"), where the quote puts the second object after a change verb of the
    other sign on the same axis, and after none of this sign ("… but increases memory
    use"): the second object's words as the sentence writes them, else None."""
    toks = said.tokens
    if axis not in _COMPARATIVE_AXES or verbness(said, i) < 2:
        return None
    end = said.pause_after(i)
    joint = next((k for k in range(i + 2, end) if toks[k].low == "and"), None)
    if joint is None or any(t.low in PHRASE_STOPS for t in toks[i + 1:joint]):
        return None
    second = []
    for t in toks[joint + 1:end]:
        if t.low in PHRASE_STOPS or direction_of(t) is not None:
            break
        if is_content(t):
            second.append(t)
    if not second:
        return None
    head = second[-1]
    found = [m for m, u in enumerate(quote.tokens) if u.forms & head.forms]
    changes = [h for h in hits(quote) if h[1] == axis and verbness(quote, h[0]) >= 2]
    for m in found:
        before = [h for h in changes if h[0] < m and not any(quote.pause_before(n) and quote.tokens[n].low
                                                              in ("and", "but", "while", "whereas")
                                                              for n in range(h[0] + 1, m))]
        if before and before[-1][2] != sign:
            return " ".join(t.text for t in second)
    return None


def _before_than(clause: Clause, found: list[tuple[int, str, int, bool]]) -> list[tuple[int, str, int, bool]]:
    """The directional words of ``found`` that stand before the clause's "than" (its
    comparison's own, not "a stack that grows" after it)."""
    than = order_word_at(clause.words(), "than")
    than = len(clause.tokens) if than is None else than
    return [h for h in found if h[0] < than]


def _figures_show(said: Clause, i: int, sign: int, quote: Clause) -> bool:
    """The direction at ``i`` is "up from" or "down from" a figure, and the clause's
    figure before it lies on that side of it, both figures being its quote's: the
    change the quote's two figures show ("at 38% of capacity, down from 61% a year
    earlier" for "38 percent …, compared with 61 percent a year earlier")."""
    toks = said.tokens
    if toks[i].low not in ("up", "down") or i + 1 >= len(toks) or toks[i + 1].low != "from":
        return False
    text = said.text
    mine = [f for f in figures(text) if said.start <= f.start < said.end]
    after = [f for f in mine if f.start >= toks[i + 1].end]
    before = [f for f in mine if f.end <= toks[i].start]
    theirs = figures(quote.text[quote.start:quote.end])
    # (not a whole a figure is a part of: "at just four of 23 sites, down from eleven")
    before = [b for n, b in enumerate(before) if not (n and _OF_THE.fullmatch(text[before[n - 1].end:b.start]))]
    if not after or not before or not all(any(same_figure(f, q) for q in theirs) for f in (after[0], before[-1])):
        return False
    return (before[-1].value - after[0].value) * sign > 0 and before[-1].unit == after[0].unit


_OF_THE = re.compile(r"\s+of\s+(?:the\s+)?", re.IGNORECASE)


def _lemmas_in(t: Token) -> set[str]:
    """The lemmas of a word and of each part of a compound ("best-performing": best, perform)."""
    parts = t.low.split("-") if "-" in t.low else []
    return set(t.lemmas).union(*(token(p, 0, 0).lemmas for p in parts if p))


def _compares(clause: Clause) -> bool:
    """The clause says "than" of something other than a figure ("more than 30%" bounds a
    figure), or a figure "above" or "below" something ("6% above its 2019 ridership")."""
    words = clause.words()
    return order_word_at(words, "than") is not None \
        or any(w in ("above", "below") and i and figure_word(words[i - 1]) for i, w in enumerate(words))


def _than_mirrored(said: Clause, source: Clause) -> bool:
    """What each clause names first after its (last) "than" the other names before its own
    and not after it ("X led to more reoperations than Y did" for "Y resulted in fewer
    reoperations than X")."""
    def around(c: Clause) -> tuple[set[str], set[str], set[str]]:
        at = max((n for n, t in enumerate(c.tokens) if t.low == "than"), default=None)  # ("older than 65, …")
        if at is None:
            return set(), set(), set()
        after = [t for t in c.tokens[at + 1:] if is_content(t)]
        # (what it names first, past a participle: "than among those using flood irrigation")
        named = _named_things(after)
        return ({f for t in c.tokens[:at] if is_content(t) for f in t.forms},
                {f for t in after for f in t.forms}, set(named[0].forms) if named else set())
    (mine_before, mine_after, my_first), (theirs_before, theirs_after, their_first) = around(said), around(source)
    return bool(my_first & theirs_before - theirs_after) and bool(their_first & mine_before - mine_after)


def _named_things(tokens: list[Token]) -> list[Token]:
    """The tokens that name things, past a participle ("those receiving placebo" names
    "placebo"); all of them when every one ends like a participle."""
    return [t for t in tokens if not t.low.endswith(("ing", "ed"))] or tokens


def _reached(said: Clause, i: int, quote: Clause) -> bool:
    """A rise "to" a figure ("the column rose to 14 kilometres") where the quote says the
    thing reached that figure ("reached an altitude of 14 kilometres", "stands 245 metres
    high"): the level it came to, not a change the quote leaves unsaid."""
    toks = said.tokens
    if i + 2 >= len(toks) or toks[i + 1].low != "to" or not figure_word(toks[i + 2].low):
        return False
    return any(t.lemma in _LEVEL_VERBS for t in quote.tokens) or any(
        t.low in ("high", "tall") and n and quote.tokens[n - 1].low.endswith(("metres", "meters", "feet", "m"))
        for n, t in enumerate(quote.tokens))


def _degrees(clause: Clause) -> dict[str, tuple[int, str]]:
    """The adjectives the clause compares, by lemma: +1 more ("stiffer", "more stiff"),
    -1 less ("less stiff"), with the words that say so."""
    out: dict[str, tuple[int, str]] = {}
    toks = clause.tokens
    for n, t in enumerate(toks):
        if n and toks[n - 1].low in ("more", "less") and t.lemma == t.low and is_content(t) and adjective(t.low):
            out[t.lemma] = (1 if toks[n - 1].low == "more" else -1, f"{toks[n - 1].text} {t.text}")
        elif t.low.endswith(("er", "ier")) and t.lemma != t.low and t.low.startswith(t.lemma[:3]) \
                and not t.verb and t.lemma not in out:
            out[t.lemma] = (1, t.text)
    return out


def _degree_flipped(said: Clause, theirs: dict[str, tuple[int, str]]) -> tuple[str, str] | None:
    """An adjective the sentence compares one way and its quote (whose ``_degrees`` are
    ``theirs``) the other ("stiffer" or "more stiff" for "less stiff"): the two
    wordings, else None. The caller has ruled out a mirrored comparison."""
    for lemma, (sign, words) in _degrees(said).items():
        if lemma in theirs and theirs[lemma][0] != sign:
            return words, theirs[lemma][1]
    return None


# Prefixes that say more or less of the same stem: "outperformed" and "underperformed",
# "overestimate" and "underestimate".
_ABOVE_PREFIXES = ("over", "out")
_BELOW_PREFIXES = ("under",)


def _prefix_flipped(said: Clause, quote: Clause) -> tuple[str, str] | None:
    """A word of the sentence whose stem its quote has with a prefix of the other side
    ("underperformed" for "outperformed"), said of the same thing (the content word
    before each, adverbs aside): the two words, else None. The caller has ruled out a
    mirrored comparison."""

    def stems(clause: Clause) -> dict[tuple[int, str], tuple[str, frozenset[str]]]:
        out = {}
        for n, t in enumerate(clause.tokens):
            for side, prefixes in ((1, _ABOVE_PREFIXES), (-1, _BELOW_PREFIXES)):
                prefix = next((p for p in prefixes if t.low.startswith(p) and len(t.low) - len(p) >= 4), None)
                if prefix:  # (the stem's lemma: "performed" in "underperformed" is "perform")
                    of = next((u.forms for u in reversed(clause.tokens[:n])
                               if is_content(u) and not u.low.endswith("ly")), frozenset())
                    out[(side, token(t.low[len(prefix):], 0, 0).lemma)] = (t.text, frozenset(of))
        return out

    theirs = stems(quote)
    for (side, stem), (word, of) in stems(said).items():
        other = theirs.get((-side, stem))
        if other and (side, stem) not in theirs and of & other[1]:
            return word, other[0]  # ("the benchmark outperformed the fund" for "the fund underperformed it")
    return None


def _same_phrase(said: Clause, i: int, quote: Clause) -> bool:
    """The directional word at ``i`` stands in the quote after the same word as in the
    sentence ("risk of falls", "a fall in"): the same reading of the same words."""
    if i == 0:
        return False
    pair = (said.tokens[i - 1].low, said.tokens[i].low)
    # (or a noun the word is the head of, "tumour growth": a thing the quote names too)
    named = pair[0] in _NAMING or is_content(said.tokens[i - 1]) and direction_of(said.tokens[i - 1]) is None \
        and verbness(said, i) < 2 and not adjective(said.tokens[i].low) and said.tokens[i].low not in _NOT_NOUNS
    return named and any((a.low, b.low) == pair for a, b in zip(quote.tokens, quote.tokens[1:], strict=False))


_NAMING = frozenset("of the a an in".split())  # words before a noun
# Directional words that are never the head noun of a phrase ("ten minutes before which")
_NOT_NOUNS = frozenset("before after above below over under up down earlier later prior previously subsequently "
                       "afterwards upward downward more less fewer".split())


_ORDER_WORDS = frozenset(("before", "after"))


def _events(clause: Clause, i: int) -> tuple[list[Token], list[Token]] | None:
    """(earlier, later): the content words of the two things "before" or "after" at ``i``
    orders ("A before B", "A after B", "After B, A", "A, after which B"); None when ``i``
    is no such word."""
    toks = clause.tokens
    if toks[i].low not in _ORDER_WORDS:
        return None
    end = clause.pause_after(i)
    phrase_words, rest = toks[i + 1:end], toks[:i] + toks[end:]
    if i + 1 < len(toks) and toks[i + 1].low == "which":
        phrase_words, rest = toks[:i], toks[i + 2:]  # "A, after which B": A comes first, read as "B after A"
    words = [[t for t in part if is_content(t)] for part in (phrase_words, rest)]
    # "A after B" and "After B, A": B first; "A before B", "Before B, A": A first
    return (words[0], words[1]) if toks[i].low == "after" else (words[1], words[0])


def _same_order(said: Clause, i: int, quote: Clause) -> bool:
    """The sentence's "before" or "after" orders two things as a "before" or "after" of
    the quote does, whichever word each uses: its earlier thing shares words with the
    quote's earlier one, no fewer than with its later one, and its later thing likewise,
    one of them more (the subject both share, "the client waits … before raising an
    error", counts on one side only)."""
    mine = _events(said, i)
    if mine is None:
        return False
    for j in range(len(quote.tokens)):
        theirs = _events(quote, j)
        if theirs is None:
            continue
        shared = [[sum(covered(t, {f for u in q for f in u.forms}) for t in s) for q in theirs] for s in mine]
        (early, early_late), (late_early, late) = shared
        if early >= early_late and late >= late_early and early and late and (early, late) != (early_late, late_early):
            return True
    return False


_LEVEL_VERBS = frozenset("reach hit attain top".split())


def _ranked_alike(t: Token, sign: int, quote: Clause) -> bool:
    """``t`` ranks its thing first ("a career-best streak", "the best tally") where the
    quote ranks it first on its own scale, the same way ("the longest such streak of her
    career", "the highest tally"): a superlative restating a superlative."""
    if t.low.split("-")[-1] not in ("best", "worst") and not superlative(t):
        return False
    return any(superlative(u) and direction_of(u) in (("magnitude", sign), ("quality", sign))
               for u in quote.tokens)  # (not "the latest update": a time, no rank)


def _worded_alike(t: Token, quote: Clause, found: list[tuple[int, str, int, bool]]) -> bool:
    """The quote has the directional word itself in another form, or a synonym of it,
    where its own reading finds no direction ("thermal expansion of up to 180 mm" for
    "expands by as much as 180 mm", "can damage the seal" for "may harm it"): the same
    change, worded alike, not one the quote leaves unsaid (``found``: the quote's
    directional words)."""
    if t.low in _COMPARISON_WORDS:
        return False  # ("more" is no word of a change: "as much as" does not say it)
    at = {h[0] for h in found}
    return any(n not in at and is_content(u) and (covered(u, t.forms) or covered(t, u.forms))
               for n, u in enumerate(quote.tokens))


def _keeps_base(said: Clause, source: Clause) -> bool:
    """The sentence names what its quote compares with, without "than" ("Compared with
    full-sun plants, …", "tenfold the lithium of graphite" for "ten times more … than
    graphite"): every content word after the quote's "than", up to a pause, in the
    sentence's words (or in a part of one of its compounds), the first of them within
    five words after a word that compares ("compared", "against", "of"…, not "after")."""
    words = source.words()
    at = order_word_at(words, "than")
    if at is None:
        return False
    base = []
    for i in range(at + 1, len(source.tokens)):
        if source.pause_before(i):
            break
        if is_content(source.tokens[i]):
            base.append(source.tokens[i])
    # (what the compared are doing is no part of the base when a thing is named: "those
    # receiving placebo" is said "placebo")
    base = _named_things(base)
    toks = [t for c in clauses(said.text) for t in c.tokens]
    if not base:  # ("than those who did not": a base in no words of its own, said as "non-participants")
        return any(t.low in _OUTDOING for t in toks)
    have = {f for t in toks for f in t.forms}
    have |= {f for t in toks if "-" in t.low for part in t.low.split("-") if part for f in token(part, 0, 0).forms}
    first = [n for n, t in enumerate(toks) if covered(base[0], set(t.forms)) or "-" in t.low and any(
        token(part, 0, 0).forms & base[0].forms for part in t.low.split("-") if part)]
    # (the comparing word opens the phrase the word is in: "Compared with participants
    # who slept eight hours" for "than those who slept eight hours")
    return all(covered(t, have) for t in base) and any(
        u.low in _COMPARING for n in first for u in toks[max(0, n - _BASE_REACH):n])


_BASE_REACH = 5


# Verbs whose object is what the subject is compared with ("outscored a matched group").
_OUTDOING = frozenset("outscored outscores outperformed outperforms outpaced outpaces outsold outsells outnumbered "
                      "outnumber outnumbers outgrew outgrows outstripped outstrips surpassed surpasses overtook "
                      "overtakes".split())
_COMPARING = frozenset("compared comparison against versus vs relative over of unlike".split()) | _OUTDOING


def converse(said: Clause, source: Clause) -> tuple[str, str] | None:
    """A word whose counterpart (``CONVERSES``: reads/writes, client/server) stands in
    the quote's clause where the sentence has the word itself."""
    mine = {x for t in said.tokens for x in t.lemmas}
    theirs = {x for t in source.tokens for x in t.lemmas}
    for word in sorted(mine - theirs):
        other = CONVERSES.get(word, frozenset()) & (theirs - mine)
        if other and not _roles_exchanged(said, word, source, other) \
                and _near(said, {word}) & _near(source, other):
            return "comparative", f'it says "{word}" where its quote says "{min(other)}"'
    for word in sorted(mine & theirs):
        for other in sorted(CONVERSES.get(word, frozenset()) & mine & theirs):
            if _contexts(said, word) & (_contexts(source, other) - _contexts(source, word)):
                return "role", f'it says "{word}" where its quote says "{other}" and "{other}" where it says "{word}"'
    return None


def _near(clause: Clause, lemmas: set[str] | frozenset[str]) -> set[str]:
    """The forms of the content words within three words of a word of ``lemmas``: what
    it is said of. A counterpart said of other things ("sends the segment again" for
    "… if no acknowledgement is received") turns nothing."""
    toks = clause.tokens
    return {f for i, t in enumerate(toks) if set(t.lemmas) & lemmas
            for u in toks[max(0, i - 3):i + 4] if u is not t and is_content(u) for f in u.forms}


def _contexts(clause: Clause, word: str) -> set[tuple[str, str]]:
    """The content words either side of each place of ``word`` in the clause ("row" and
    "table" around "left" in "every row of the left table")."""
    toks, out = clause.tokens, set()
    for i, t in enumerate(toks):
        if word in t.lemmas:
            before = next((min(u.forms) for u in reversed(toks[:i]) if is_content(u)), "")
            after = next((min(u.forms) for u in toks[i + 1:] if is_content(u)), "")
            if before and after:
                out.add((before, after))
    return out


def _roles_exchanged(said: Clause, word: str, source: Clause, other: frozenset[str]) -> bool:
    """The converse word comes with its two sides exchanged: "banks borrow from the
    central bank" restates "the central bank lends to banks"."""
    i = next((n for n, t in enumerate(said.tokens) if word in t.lemmas), None)
    j = next((n for n, t in enumerate(source.tokens) if other & set(t.lemmas)), None)
    if i is None or j is None:
        return False
    (ss, _), (so, _) = phrase(said, i, -1), phrase(said, i, 1)
    (qs, _), (qo, _) = phrase(source, j, -1), phrase(source, j, 1)
    so, qo = so or _up_to_pause(said, i), qo or _up_to_pause(source, j)  # ("lost 3–1 to Harbour City")
    if _by_agent(said, i) and not _by_agent(source, j):
        # ("was beaten … by Denver" restates "lost … to Denver", the sides where they were)
        return bool(ss & qs or not qs) and bool(_up_to_pause(said, i) & (qo | _up_to_pause(source, j)))
    return bool((ss & qo) - qs) and bool((so & qs) - qo)


def _by_agent(clause: Clause, i: int) -> bool:
    """Token ``i`` is a passive verb with its agent ("was beaten 104–98 by Denver")."""
    words = clause.words()
    return i > 0 and words[i - 1] in ("is", "are", "was", "were", "been", "be") and "by" in words[i + 1:i + 5]


def _up_to_pause(clause: Clause, i: int) -> set[str]:
    """The content words after token ``i`` up to the clause's next pause."""
    return {min(t.forms) for t in clause.tokens[i + 1:clause.pause_after(i)] if is_content(t)}
