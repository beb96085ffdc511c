"""Who does what in a clause, for the meaning checks (``shared.verification.meaning``).

These readers find a clause's verb (how surely a word is one, whether it is passive),
the subject and object phrases on either side of it, and the verb or order word
("than", "before", "after") two clauses share, so that the checks can tell a sentence
that keeps its quote's roles from one that turns them round ("A acquired B" against
"B acquired A"), and whose subject a clause speaks of.
"""

from __future__ import annotations

from shared.verification.clause_reading import ARTICLES, DATES, PHRASE_STOPS, WEAK, direction_of, only_a_thing
from shared.verification.condition_reading import FRONTING
from shared.verification.clauses import AUX, BE, Clause, Token, is_content, lemmas_of
from shared.verification.figure_words import bounds_figure, figure_word, order_word_at
from shared.research.text import STOPWORDS

__all__ = [
    "DETERMINERS",
    "REPORTING",
    "dated",
    "LEADS_VERB",
    "NOT_PARTICIPLES",
    "ORDER_WORDS",
    "complement_subject",
    "fronted_end",
    "qualifier_end",
    "modifier",
    "passive",
    "phrase",
    "pivots",
    "role_parts",
    "same_verb",
    "side",
    "sides",
    "subject",
    "subject_tokens",
    "swapped",
    "verbness",
]


def passive(clause: Clause, pivot: int) -> bool:
    """The verb at ``pivot`` is passive: a participle ("removed", "written", "held")
    after a form of "be" (or "get") within the two words before it, or with its agent
    after it ("Linear B, deciphered by Michael Ventris, …")."""
    t = clause.tokens[pivot]
    participle = (t.low.endswith(("ed", "en")) or t.low != t.lemma) and t.low not in NOT_PARTICIPLES
    agent = pivot + 1 < len(clause.tokens) and clause.tokens[pivot + 1].low == "by"
    return participle and (agent or any(u.low in BE for u in clause.tokens[max(0, pivot - 3):pivot]))



NOT_PARTICIPLES = frozenset("often even open seen then when been".split())


_POSSESSIVES = frozenset("their its his her our your my".split())
DETERMINERS = ARTICLES | frozenset("our your his her their its my each every some many any no most all both few "
                                   "several such".split())


LEADS_VERB = AUX | frozenset("can cannot could may might must will would should to not n't never also often "
                                "always usually".split())


def verbness(clause: Clause, i: int) -> int:
    """How surely token ``i`` is the clause's verb: 2 after an auxiliary or modal, or
    inflected as a verb ("preempts", "referenced") or only ever a verb; 1 a word that
    may be a verb; 0 not one ("running" as an adjective, a word that is never a verb)."""
    t = clause.tokens[i]
    if t.low in STOPWORDS or t.low in AUX:
        return 0
    prev = clause.tokens[i - 1].low if i else ""
    if not (t.verb or direction_of(t)):
        return 0
    if prev == "to":
        return 1  # an infinitive: a verb, but seldom the clause's own
    if prev in LEADS_VERB:
        return 3
    if prev[:1].isdigit() and _inflected(t, "ed"):
        return 3  # "from 2010 to 2020 lowered": a verb after a figure
    # (a capital "A" after a word is a name's letter, "protein kinase A activates", not an article)
    letter = i > 1 and clause.tokens[i - 1].text == "A"
    if t.low.endswith("ing") or not letter and (prev in DETERMINERS or figure_word(prev)) \
            or prev in ("percentage", "basis"):
        return 0  # "the fire", "most cases", "four days", "25 eagles", "3 percentage points": a noun
    if _inflected(t, "ed"):
        after = clause.tokens[i + 1].low if i + 1 < len(clause.tokens) else ""
        if after == "by" and i and prev not in STOPWORDS and not clause.pause_before(i) \
                and not any(u.low in AUX for u in clause.tokens[max(0, i - 3):i]):
            return 1  # "delays caused by faults": a participle that qualifies its noun
        return 3
    inflected = t.low != t.lemma and t.low.endswith("s")
    nxt = clause.tokens[i + 1] if i + 1 < len(clause.tokens) else None
    if inflected and nxt is not None and nxt.verb and nxt.low not in STOPWORDS and not clause.pause_before(i + 1) \
            and nxt.low == nxt.lemma and (_change(nxt) or not lemmas_of(nxt.low)[2]):
        return 0  # "compression fractures increase the risk": a plural noun before its verb
    if inflected and i + 1 < len(clause.tokens) and clause.pause_before(i + 1) and prev not in LEADS_VERB:
        return 1  # "…light sources, acquired": the end of a noun phrase more likely than a verb
    if not inflected and prev not in STOPWORDS and nxt is not None and nxt.low in _POSSESSIVES \
            and not clause.pause_before(i) and not clause.pause_before(i + 1):
        return 2  # "the standby nodes replicate their logs": a word before "their" is a verb
    return 2 if inflected or not lemmas_of(t.low)[2] else 1


def _change(t: Token) -> bool:
    """A verb of change ("increase", "cut"), not an adjective or comparative ("short", "more")."""
    return direction_of(t) is not None and t.low not in WEAK and not t.low.endswith(("er", "est")) \
        and t.low not in ("more", "less", "fewer", "most", "least", "best", "worst", "up", "down")


def _inflected(t: Token, suffix: str) -> bool:
    """``t`` ends in ``suffix`` and has a lemma other than itself ("acquired": acquire)."""
    return t.low.endswith(suffix) and any(x != t.low for x in t.lemmas)


def modifier(clause: Clause, i: int) -> bool:
    """A participle used as an adjective: "-ed"/"-en" right before a content word
    ("developed economies")."""
    nxt = clause.tokens[i + 1] if i + 1 < len(clause.tokens) else None
    return clause.tokens[i].low.endswith(("ed", "en")) and nxt is not None and is_content(nxt)


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
    candidates = [(-verbness(said, i), i) for i in range(a, len(said.tokens))]
    for rank, i in sorted(candidates):
        if rank == 0:
            break
        forms = said.tokens[i].forms
        found = [j for j, u in enumerate(source.tokens) if j >= b and u.forms & forms]
        if found:
            return i, max(found, key=lambda j: (verbness(source, j), -j))
    return None


ORDER_WORDS = ("than", "before", "after")


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
    before = {min(t.forms) for t in clause.tokens[:pivot] if is_content(t)}
    after = {min(t.forms) for t in clause.tokens[pivot + 1:] if is_content(t)}
    return before - after, after - before


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
            if step > 0 and i == pivot + 1:  # "lends to X", "borrows from X": part of the verb
                i += step
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
        i += step
    return out, 0 <= i < len(clause.tokens) or True


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
    if undergoes(said, p) != undergoes(source, q):
        qs, qo = qo, qs
    return ss, so, qs, qo, clean


# Verbs whose subject, with no object, is what undergoes the change ("1.8 million
# hectares burned" is "the fire season burned 1.8 million hectares").
_ERGATIVE = frozenset("burn break melt sink open close shatter dissolve freeze thaw spread flood collapse "
                      "crack tear bend split".split())


def undergoes(clause: Clause, i: int) -> bool:
    """The subject of the verb at ``i`` is what the act is done to: a passive; a participle
    after its noun, before a preposition, ahead of the clause's own verb ("a faulty
    configuration pushed to edge routers triggered …"); or a verb of change with no
    object ("hectares burned in the fire season")."""
    toks = clause.tokens
    if passive(clause, i):
        return True
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    after = toks[i + 2] if i + 2 < len(toks) else None
    t = toks[i]
    # (not "decided to divert": an infinitive; not "burned about 12,000 hectares": a figure)
    governs = after is not None and (verbness(clause, i + 2) >= (1 if nxt == "to" else 2) or after.low[:1].isdigit())
    reduced = i and t.low.endswith(("ed", "en")) and is_content(toks[i - 1]) and verbness(clause, i - 1) < 2 \
        and nxt in PHRASE_STOPS and nxt != "by" and not governs \
        and not any(u.low in ("and", "or", "but") for u in toks[i + 1:]) \
        and any(verbness(clause, k) >= 2 or toks[k].low in BE for k in range(len(toks)) if k != i)
    return bool(reduced) or t.lemma in _ERGATIVE and (not nxt or nxt in PHRASE_STOPS and not governs)


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
    sure = sorted((verbness(said, p), verbness(source, q)))
    return said.words()[p] in ORDER_WORDS or sure[0] >= 2 or (sure[0] >= 1 and sure[1] >= 3)


def subject(clause: Clause) -> set[str]:
    """The content words before the clause's first verb, auxiliary or directional word,
    after a qualifier that opens it ("If several cases are ready, select chooses…");
    a participle before a noun ("the extended line") is no verb."""
    return {min(t.forms) for t in subject_tokens(clause)}


def subject_tokens(clause: Clause) -> list[Token]:
    """The tokens of :func:`subject`."""
    out: list[Token] = []
    start = fronted_end(clause)
    skip_to = 0
    for i, t in enumerate(clause.tokens):
        if i < max(start, skip_to):
            continue
        if out and clause.pause_before(i):
            skip_to = _apposition_end(clause, i)
            if i < skip_to:
                continue
        after_determiner = i > 0 and clause.tokens[i - 1].low in DETERMINERS
        if _bounds_figure(clause, i):
            continue  # "More than 90,000 households lost power": a bound on the subject's figure
        if t.low in AUX or (direction_of(t) and not _describes(clause, i, start)) or (
                i > start and verbness(clause, i) >= 2 and not (after_determiner and modifier(clause, i))):
            break
        if is_content(t):
            out.append(t)
    return out


def _bounds_figure(clause: Clause, i: int) -> bool:
    """Token ``i`` is "more" of "more than 90,000", or the "than" after it."""
    return bounds_figure(clause, i) or (clause.tokens[i].low == "than" and i > 0 and bounds_figure(clause, i - 1))


def _apposition_end(clause: Clause, i: int) -> int:
    """Where an apposition opening at ``i`` ends (", 6.5 metres across,", ", a typeface
    drawn in 1931,"): the next pause, when it opens with a figure or an article; else
    ``i`` (a list's next member is the subject's too)."""
    toks = clause.tokens
    if toks[i].low not in ("a", "an", "the") and not toks[i].low[:1].isdigit():
        return i
    end = next((n for n in range(i + 1, len(toks)) if clause.pause_before(n)), i)
    if any(toks[n].low in AUX or verbness(clause, n) >= 2 for n in range(i + 1, end)):
        return i  # the clause goes on to its verb: no apposition
    return end


def _describes(clause: Clause, i: int, start: int) -> bool:
    """A directional participle that describes the noun after it ("A reduced rate of
    13.5% applies"), not the clause's verb: at the subject's start or after a determiner,
    before a content word, and not surely a verb."""
    toks = clause.tokens
    if not (toks[i].low.endswith(("ed", "en")) and toks[i].low != toks[i].lemma):
        return False  # (a plain "high" or "best-known" is read as before: it may open a merge's cut)
    opens = i == start or toks[i - 1].low in DETERMINERS
    return opens and i + 1 < len(toks) and is_content(toks[i + 1]) and not clause.pause_before(i + 1) \
        and verbness(clause, i) < 2


# Words that open a qualifier before a clause's subject ("Before the levy took effect, …").
_OPENERS = FRONTING | frozenset("before after since until because although though while as despite ahead "
                                "following unlike like according".split())


def complement_subject(clause: Clause) -> set[str]:
    """The subject of what a reporting verb's "that" introduces ("Curators confirmed
    that the capsule contained…": the capsule), or nothing."""
    words = clause.words()
    for i, w in enumerate(words[1:-1], start=1):
        if w == "that" and clause.tokens[i - 1].lemma in REPORTING:
            return subject(clause.cut(i + 1)[1])
    return set()


REPORTING = frozenset("say find confirm report show note estimate conclude announce indicate reveal state "
                       "argue believe suggest demonstrate determine".split())


_PREPOSITIONS = frozenset("in on for at with over during under among within".split())


def qualifier_end(clause: Clause) -> int:
    """Where the clause goes on after a prepositional phrase that opens it ("Under a
    supply agreement signed in May, …"), whose verbs are not the clause's; 0 when it
    opens otherwise ("Because the test misses cases, …" states a clause of its own)."""
    return fronted_end(clause) if clause.tokens and clause.tokens[0].low in _PREPOSITIONS else 0


def _participle(t: Token) -> bool:
    """A verb's participle that can open a qualifier ("Commissioned", "Carrying")."""
    return t.verb and (_inflected(t, "ed") or t.low.endswith("ing") and any(x != t.low for x in t.lemmas))


def fronted_end(clause: Clause, reach: int = 14) -> int:
    """Where the clause goes on after a qualifier that opens it and ends at a comma
    within ``reach`` words ("Before the levy took effect, …", "Commissioned by The
    Times in 1931, the typeface …")."""
    toks = clause.tokens
    if not toks:
        return 0
    if toks[0].low in _OPENERS:
        return next((n for n in range(1, min(len(toks), reach)) if clause.pause_before(n)), 0)
    if _participle(toks[0]) and not modifier(clause, 0):  # (not "Confirmed measles cases jumped")
        end = next((n for n in range(1, min(len(toks), reach + 6)) if clause.pause_before(n)), 0)
        # (a gerund that is the subject, "Padding is mainly a problem …, because", has its verb before the comma)
        finite = any(u.low in AUX or u.verb and _inflected(u, "s") and not u.text[:1].isupper()
                     and toks[k - 1].low not in DETERMINERS for k, u in enumerate(toks[1:end], start=1))
        return 0 if finite else end
    return 0


def fronted_parts(clause: Clause, reach: int = 32) -> tuple[Clause, Clause] | None:
    """A clause opened by a qualifier of its own that ends at a comma, cut there: the
    qualifier ("After the storm came ashore near the port city, …", "To reduce the risk
    of fire, …", "By raising the aperture to 0.55, …", "Founded around 850 BCE, …") and
    the clause that goes on with its own subject and verb; None when it has no such
    opening or the opening has no verb."""
    toks = clause.tokens
    end = fronted_end(clause, reach)
    if not end and len(toks) > 2 and (toks[0].low == "to" and toks[1].verb and toks[1].low == toks[1].lemma
                                      or toks[0].low == "by" and toks[1].verb and toks[1].low.endswith("ing")):
        end = next((n for n in range(2, min(len(toks), reach)) if clause.pause_before(n)), 0)
    if not end:  # "From September 1972, …": a time alone
        end = next((n for n in range(2, min(len(toks), 6)) if clause.pause_before(n)), 0)
        end = end if dated(toks[:end]) else 0
    rest = toks[end:]
    if not end or len(rest) < 3 or not any(u.verb or u.low in AUX for u in rest[1:]):
        return None
    if not any(u.verb and not modifier(clause, n) for n, u in enumerate(toks[:end])) and not dated(toks[:end]):
        return None  # "In Parkinson's disease, …": a setting, which scopes its clause, not a clause of its own
    return clause.cut(end)


def dated(opening: list[Token]) -> bool:
    """The opening is a time alone ("From September 1972", "In August 2019"): its words
    after the preposition are months, days and figures."""
    words = [u.low for u in opening[1:] if u.low not in ARTICLES]
    return bool(words) and opening[0].low in ("from", "in", "since", "on", "by", "until") \
        and all(w in DATES or w[:1].isdigit() for w in words)


# Words that open an apposition or an absolute phrase at a clause's end (", a rise that
# officials attributed to…", ", about 78% of them attributed to…", ", in which pottery…").
_TRAILING = frozenset("a an the about some roughly around nearly almost with in of during".split())


def trailing_parts(clause: Clause) -> tuple[Clause, Clause] | None:
    """A clause that ends with an apposition or an absolute phrase after a comma, cut
    there: the clause and what it adds of something it names ("…, a Late Jurassic
    deposit about 150 million years old"); None when it has none."""
    toks = clause.tokens
    for n in range(len(toks) - 3, 2, -1):
        t = toks[n]
        if not clause.pause_before(n) or not (t.low in _TRAILING or t.low[:1].isdigit()):
            continue
        if t.low in ("in", "of", "during") and toks[n + 1].low not in ("which", "whom"):
            continue  # (", in 2019, …" is the clause's own qualifier)
        head, tail = clause.cut(n)
        if not any(u.verb or u.low in AUX for u in head.tokens[1:]) or _finite(tail):
            return None  # (", the stage before it fills its buffer": a clause of its own, not an apposition)
        return head, tail
    return None


_RELATIVE = frozenset("that which who whom whose where when".split())


def _finite(part: Clause) -> bool:
    """The words have a verb of their own before any relative word ("the core
    invalidates every other copy", "about 95% occurred in the region"), not only a
    relative clause's ("a rise that officials attributed to…")."""
    for n, u in enumerate(part.tokens):
        if u.low in _RELATIVE:
            return False
        if n and (u.low in AUX or verbness(part, n) >= 2):
            return True
    return False


def relative_parts(clause: Clause) -> tuple[Clause, Clause] | None:
    """A clause whose object is followed by a relative clause of its own, with no comma
    ("… delivered 2.05 megajoules to a fuel target that released 3.15 megajoules"), cut
    before the relative word; None when it has none (a "that" after a verb, "found that
    …", opens what is found, not a relative clause)."""
    toks = clause.tokens
    for n in range(2, len(toks) - 2):
        if toks[n].low not in ("that", "which", "who") or clause.pause_before(n):
            continue
        if verbness(clause, n - 1) >= 2 or not is_content(toks[n - 1]) or not (
                toks[n + 1].low in AUX or toks[n + 1].verb and toks[n + 1].low not in STOPWORDS):
            continue
        if any(u.low in AUX or verbness(clause, k) >= 2 for k, u in enumerate(toks[:n]) if k):
            return clause.cut(n)
    return None
