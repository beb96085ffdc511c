"""Who does what in a clause, for the meaning checks (``shared.verification.meaning``).

These readers find a clause's verb (how surely a word is one, whether it is passive),
the subject and object phrases on either side of it, and the verb or order word
("than", "before", "after") two clauses share, so that the checks can tell a sentence
that keeps its quote's roles from one that turns them round ("A acquired B" against
"B acquired A"), and whose subject a clause speaks of.
"""


from __future__ import annotations

from shared.verification.clause_parts import fronted_end, qualifier_end
from shared.verification.clause_reading import PHRASE_STOPS, direction_of, only_a_thing
from shared.verification.clauses import AUX, BE, Clause, Token, adjective, is_content
from shared.verification.figure_words import order_word_at
from shared.verification.lexicon import SAME_ACT
from shared.verification.verb_reading import modifier, passive, undergoes, verbness

__all__ = [
    "ORDER_WORDS",
    "acted",
    "phrase",
    "pivots",
    "role_parts",
    "same_verb",
    "side",
    "sides",
    "swapped",
]


def pivots(said: Clause, source: Clause) -> tuple[int, int] | None:
    """The index, in each clause, of the verb (or "than") they share: the surest verb of
    ``said`` that ``source`` has, and its first occurrence there."""
    words, theirs = said.words(), source.words()
    for word in ORDER_WORDS:
        i, j = order_word_at(words, word), order_word_at(theirs, word)
        if (i is None or j is None) and word in words and word in theirs:
            i, j = words.index(word), theirs.index(word)  # (both bound a figure: "more than 20 miles")
        if i is not None and j is not None and not _paired(words, word) and not _paired(theirs, word) \
                and not _same_time(said, i, source, j):
            return i, j
    a, b = max(1, qualifier_end(said)), max(1, qualifier_end(source))  # (not a verb of an opening qualifier)
    candidates = [(-max(verbness(said, i), acted(said.tokens[i], source, b)), i) for i in range(a, len(said.tokens))]
    for rank, i in sorted(candidates):
        if rank == 0:
            break
        forms = said.tokens[i].forms | _same_acts(said.tokens[i])
        found = [j for j, u in enumerate(source.tokens) if j >= b and (u.forms | set(u.lemmas)) & forms]
        if found:
            return i, max(found, key=lambda j: (verbness(source, j), -j))
    return None


ORDER_WORDS = ("than", "before", "after")


def acted(t: Token, source: Clause, start: int = 0) -> int:
    """How surely the quote's verb for the same act as ``t`` ("defeated" for "beat") is
    one: a word the sentence may use as a noun ("beat") is its verb when the quote's is
    (the same verb too: "beat" for "was beaten")."""
    same = _same_acts(t)
    if not same:
        return 0
    same |= set(t.lemmas)
    return max((verbness(source, j) for j, u in enumerate(source.tokens) if j >= start and same & set(u.lemmas)),
               default=0)


def _same_acts(t: Token) -> set[str]:
    """The verbs that name the same act as ``t`` (:data:`SAME_ACT`), by its lemmas."""
    return {w for x in t.lemmas for w in SAME_ACT.get(x, ())}


def _same_time(said: Clause, i: int, source: Clause, j: int) -> bool:
    """"before"/"after" opens the same time in both clauses ("… sued the hospital after
    the surgery", "After the surgery, …"), or "than" the same bound ("on tables larger
    than one million rows"): what the clause happens in, not one of two things it orders;
    the clause turns on its verb."""
    if said.words()[i] == "than":  # (the same words on each side, in another order before it: the two things
        # it orders are not its sides)
        def order(clause: Clause, at: int) -> list[str]:
            return [min(t.forms) for t in clause.tokens[:at] if is_content(t)]
        return bool(side(said, i, 1)) and side(said, i, 1) == side(source, j, 1) \
            and side(said, i, -1) == side(source, j, -1) and order(said, i) != order(source, j)
    if i < qualifier_end(said) and j < qualifier_end(source):
        return True
    when = phrase(said, i, 1)[0]
    return bool(when) and when == phrase(source, j, 1)[0]


def _paired(words: list[str], word: str) -> bool:
    """"before and after surgery": a span of time, not one thing ordered before another."""
    i = words.index(word)
    return (i + 1 < len(words) and words[i + 1] in ("and", "or")) or (i > 0 and words[i - 1] in ("and", "or"))


def sides(clause: Clause, pivot: int) -> tuple[set[str], set[str]]:
    """The content words before and after ``pivot``, each without the other's; after
    "than", up to an adjunct of time or place that follows what is compared ("than the
    long-term mean during the 2022 growing season": the season is the whole clause's)."""
    before = {min(t.forms) for t in clause.tokens[:pivot] if is_content(t)}
    end = len(clause.tokens)
    if clause.tokens[pivot].low == "than":
        end = next((n for n in range(pivot + 2, end) if clause.tokens[n].low in _ADJUNCTS), end)
    after = {min(t.forms) for t in clause.tokens[pivot + 1:end] if is_content(t)}
    return before - after, after - before


# Prepositions that open an adjunct of time or place, not part of a compared thing.
_ADJUNCTS = frozenset("during throughout across since".split())


def side(clause: Clause, pivot: int, step: int) -> set[str]:
    """Every content word on one side of ``pivot``."""
    toks = clause.tokens[:pivot] if step < 0 else clause.tokens[pivot + 1:]
    return {min(t.forms) for t in toks if is_content(t)}


def phrase(clause: Clause, pivot: int, step: int) -> tuple[set[str], bool]:
    """The content words of the phrase next to the verb at ``pivot``: its subject
    (``step`` -1) or its object (+1), up to a preposition, a clause word or punctuation;
    and whether it ended cleanly (at the clause's edge or punctuation, so it is the
    whole phrase, not the tail of one cut at an inner "with" or "that")."""
    if step < 0:
        named = _apposed(clause, pivot)
        if named is not None:
            return named, True
    out: set[str] = set()
    i = pivot + step
    if step < 0:
        i = _before_frame(clause, pivot)
    while 0 <= i < len(clause.tokens) and len(out) < 6:
        if clause.pause_before(i if step > 0 else i + 1) and not (step > 0 and i == pivot + 1):
            return out, True
        t = clause.tokens[i]
        if t.low in PHRASE_STOPS:
            if step > 0 and (i == pivot + 1 or t.low == "by" and i == pivot + 2
                             and clause.tokens[pivot + 1].low in PHRASE_STOPS):
                i += step  # "lends to X", "borrows from X", "is preyed on by X": part of the verb
                continue
            return out, step > 0  # an object ends at its preposition; a subject cut there is a tail
        if t.low in ("and", "or", "but"):
            # a coordination inside the phrase is not read whole; at the clause's start, or before a
            # second predicate ("terminates TLS and forwards traffic"), it is the phrase's edge
            return out, i == 0 or (step > 0 and i + 1 < len(clause.tokens) and verbness(clause, i + 1) >= 1)
        if abs(i - pivot) > 1 and verbness(clause, i) >= 2 and not modifier(clause, i):
            return out, False  # another verb: the phrase is not read whole
        if is_content(t):
            out.add(min(t.forms))
        elif _ranks_noun(clause, i):
            out.add(t.low)  # ("the larger fish", "the smaller fish": which of two alike)
        i += step
    return out, 0 <= i < len(clause.tokens) or True


def _ranks_noun(clause: Clause, i: int) -> bool:
    """The word at ``i`` is a compared adjective before a content word ("the larger
    fish", "older patients"): it tells two things with one name apart."""
    t, toks = clause.tokens[i], clause.tokens
    return t.low.endswith(("er", "est")) and adjective(t.low) and direction_of(t) is not None \
        and i + 1 < len(toks) and is_content(toks[i + 1])


# Words of a frame the verb's subject stands before: "is likely to", "was able to".
_FRAME_WORDS = frozenset("likely unlikely able unable set due about going certain sure".split())


def _before_frame(clause: Clause, pivot: int) -> int:
    """Where the subject of the verb at ``pivot`` ends when a frame stands between
    them, "Poor sleep was found to precede …", "Depressive symptoms tended to precede
    …", "The fund is likely to grow …": the token before the frame (one to four words
    of auxiliaries, adverbs and one verb of the frame, then "to"); else the token
    before the verb."""
    toks = clause.tokens
    if pivot < 2 or toks[pivot - 1].low != "to":
        return pivot - 1
    i, verbs = pivot - 2, 0
    while i >= 0 and pivot - 1 - i <= 4:
        t = toks[i]
        if t.low in AUX or t.low in BE or t.low in ("not", "never", "also") or t.low.endswith("ly") \
                and t.low not in _FRAME_WORDS:
            i -= 1
        elif (t.low in _FRAME_WORDS or verbness(clause, i) >= 1) and verbs == 0 and not only_a_thing(t.low):
            verbs += 1
            i -= 1
        else:
            break
    return i if verbs and i < pivot - 2 else pivot - 1


def _apposed(clause: Clause, pivot: int) -> set[str] | None:
    """The subject of a verb after an apposition, "Cymer, the San Diego maker of light
    sources, acquired …": the name and the apposition's words; None when the verb has
    no apposition before it."""
    toks = clause.tokens
    if pivot < 3 or not clause.pause_before(pivot):
        return None
    b = next((n for n in range(pivot - 1, 0, -1) if clause.pause_before(n)), None)
    if b is None or toks[b].low not in ("the", "a", "an"):
        return None
    start = next((n for n in range(b - 1, 0, -1) if clause.pause_before(n)), fronted_end(clause))
    head = [t for t in toks[start:b] if is_content(t)]
    if not head or len(toks[start:b]) > 5 or any(t.low in AUX or t.verb and t.low != t.lemma for t in toks[start:b]):
        return None
    return {min(t.forms) for t in head + [t for t in toks[b:pivot] if is_content(t)]}


def role_parts(said: Clause, source: Clause) -> tuple[set[str], set[str], set[str], set[str], bool] | None:
    """(the sentence's subject and object, the quote's subject and object, as the
    sentence's voice reads them, around the verb or order word they share; whether
    all four phrases were read whole around a sure verb)."""
    found = pivots(said, source)
    if found is None:
        return None
    p, q = found
    if said.words()[p] in ORDER_WORDS:
        ss, so = sides(said, p)
        qs, qo = sides(source, q)
        clean = False
        whole_ss, whole_qs, whole_qo = side(said, p, -1), side(source, q, -1), side(source, q, 1)
        if whole_ss and not whole_ss & whole_qs and whole_ss <= whole_qo:
            ss, qs, qo = whole_ss, whole_qs, whole_qo - whole_qs  # its subject is the quote's other side
    else:
        (ss, c1), (so, c2) = phrase(said, p, -1), phrase(said, p, 1)
        (qs, c3), (qo, c4) = phrase(source, q, -1), phrase(source, q, 1)
        clean = c1 and c2 and c3 and c4 and min(verbness(said, p), verbness(source, q)) >= 2
        so, qo = _agent(said, p) or _unless_adjunct(said, p, so), _agent(source, q) or _unless_adjunct(source, q, qo)
    if undergoes(said, p) != undergoes(source, q) and (qs or not so):
        qs, qo = qo, qs  # (not when the quote's subject stands before an aside: "The museum, designed by…, opened")
    return ss, so, qs, qo, clean


# Prepositions of place a passive's adjunct may open ("planted along the shore").
_PLACE_WORDS = frozenset("along around beside near beyond outside inside throughout".split())


def _unless_adjunct(clause: Clause, pivot: int, after: set[str]) -> set[str]:
    """``after``, the words after the verb at ``pivot``; none when the verb is passive and
    a preposition other than "by" or "to" follows it ("were planted along the shore"): what it
    opens is where or when, no party to the act."""
    toks = clause.tokens
    if pivot + 1 < len(toks) and passive(clause, pivot) and toks[pivot + 1].low in PHRASE_STOPS | _PLACE_WORDS \
            and toks[pivot + 1].low not in ("by", "to"):
        return set()
    return after


def _agent(clause: Clause, pivot: int) -> set[str]:
    """The agent a passive verb at ``pivot`` names after "by" beyond its adjuncts ("was
    beaten in straight sets in the semi-final by the qualifier Mia Haro"), or none: the
    words of its "by" phrase, up to a pause or another verb."""
    toks = clause.tokens
    if not undergoes(clause, pivot) or pivot + 1 >= len(toks) or toks[pivot + 1].low not in PHRASE_STOPS:
        return set()  # (an agent right after the verb is read as its object phrase)
    for i in range(pivot + 2, len(toks) - 1):
        if clause.pause_before(i) or verbness(clause, i) >= 3:
            return set()  # (a surer verb than "sets" in "in straight sets")
        if toks[i].low == "by":
            return phrase(clause, i, 1)[0]
    return set()


def swapped(said: Clause, source: Clause) -> bool:
    parts = role_parts(said, source)
    if parts is None:
        return False
    ss, so, qs, qo, _ = parts
    return bool((ss & qo) - qs) and bool((so & qs) - qo)


def same_verb(said: Clause, source: Clause) -> bool:
    """Both clauses turn on the same verb: surely a verb on both sides, or on one side
    after an auxiliary or "not" (or they turn on "than"/"before"/"after")."""
    found = pivots(said, source)
    if found is None:
        return False
    p, q = found
    sure = sorted((max(verbness(said, p), acted(said.tokens[p], source, q)), verbness(source, q)))
    return said.words()[p] in ORDER_WORDS or sure[0] >= 2 or (sure[0] >= 1 and sure[1] >= 3)
