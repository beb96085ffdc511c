"""What a clause says, read word by word, for the meaning checks (``shared.verification.meaning``).

Each reader looks at one clause (``shared.verification.clauses.Clause``) and returns what it
states: its negations, quantifiers and frequency, certainty, directional words (with
their axis and sign, and whether they compare or merely describe), its conditions, its
verb and the subject and object phrases around it. The checks compare what two clauses
say; these functions only read.
"""

from __future__ import annotations

from shared.verification.clauses import AUX, BE, Clause, Token, is_content, lemmas_of, token
from shared.verification.lexicon import (
    CONDITION_OPENERS, DIRECTIONS, EXCLUSIVE, HEDGES, NEGATIVE_PREFIXES, NEGATORS, QUANTIFIERS, RARE, STRONG,
)
from shared.research.text import STOPWORDS

__all__ = [
    "BINDING_STOPS",
    "DETERMINERS",
    "FREQUENCY",
    "FRONTING",
    "LEADS_VERB",
    "MONTHS",
    "NUMBER_WORDS",
    "NOT_PARTICIPLES",
    "ORDER_WORDS",
    "PHRASE_STOPS",
    "SETTINGS",
    "WEAK",
    "bound_sign",
    "certainty",
    "conditions",
    "direction_flipped",
    "direction_of",
    "directions",
    "fronted",
    "fronted_end",
    "hits",
    "modifier",
    "negations",
    "not_only",
    "parts",
    "passive",
    "phrase",
    "pivots",
    "prefix_flips",
    "quantity",
    "role_parts",
    "same_verb",
    "side",
    "sides",
    "subject",
    "subject_tokens",
    "complement_subject",
    "swapped",
    "verbness",
]


MONTHS = frozenset("january february march april may june july august september october november december".split())


def negations(clause: Clause) -> int:
    words = clause.words()
    count = 0
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in NEGATORS:
            if w in ("not", "n't") and nxt in ("only", "just", "merely"):
                continue  # "not only": an addition, not a negation
            if w in ("no", "not") and nxt in ("less", "more", "fewer", "later", "earlier", "greater") \
                    and i + 2 < len(words) and words[i + 2] == "than":
                continue  # "no less than 10": a bound ("at least 10"), not a negation
            if w in ("fails", "fail", "failed", "failing") and nxt != "to":
                continue
            if w == "nor" and "neither" in words:
                continue  # "neither ... nor" negates once
            count += 1
    return count


def prefix_flips(said: Clause, source: Clause) -> int:
    """Words negated by a prefix on one side whose stem stands bare on the other
    ("unsafe" / "safe"): each one flips polarity."""
    flips = 0
    for mine, theirs in ((said, source), (source, said)):
        their_forms = theirs.forms
        for t in mine.tokens:
            if t.forms & their_forms:
                continue
            for prefix in NEGATIVE_PREFIXES:
                rest = t.low[len(prefix):]
                if t.low.startswith(prefix) and len(rest) >= 4 and token(rest, 0, 0).forms & their_forms:
                    flips += 1
                    break
    return flips


FREQUENCY = frozenset("sometimes occasionally often frequently commonly usually typically generally normally "
                       "always invariably never".split())


def quantity(clause: Clause, *, subject_only: bool = False) -> tuple[int | None, int | None, bool, bool]:
    """(strongest quantifier of a noun, strongest frequency adverb, says "rarely"/"few",
    says "only"). With ``subject_only``, only quantifiers among the clause's first three
    words count (what "some" says of an object, "trading some throughput", limits nothing).
    The parts of a compound count as words ("at-most-once")."""
    words = parts(clause)
    strength: int | None = None
    frequency: int | None = None
    rare = exclusive = False
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in RARE and not (w == "few" and prev == "a"):
            rare = True
        elif w == "few":  # "a few"
            strength = max(strength or 0, 1)
        if w in EXCLUSIVE and prev not in ("not", "n't") and not (w == "alone" and prev != "alone") \
                and not (w == "only" and nxt[:1].isdigit()):  # "grew by only 4%": merely, not exclusively
            exclusive = exclusive or w != "alone"
        level = QUANTIFIERS.get(w)
        if level is None or (w == "all" and prev == "at") or (w == "most" and prev in ("the", "at")):
            continue
        if w == "each" and nxt == "other":
            continue
        if w in FREQUENCY and prev in ("most", "more", "less", "least"):
            continue  # "the most commonly used": a superlative, not how often
        if w in FREQUENCY:
            frequency = max(frequency or 0, level)
        elif not subject_only or i <= 2:
            strength = max(strength or 0, level)
    return strength, frequency, rare, exclusive


def certainty(clause: Clause, about: set[str] | None = None) -> int:
    """1 hedged, 2 plain, 3 strong. With ``about`` (the word forms of a clause read
    against this one), a hedge counts only in a part of the clause (between commas or
    before "but", "which"...) that shares a word with it: "…, after which the dose can
    be adjusted" hedges the adjusting, not "the effect is achieved" before it."""
    words = clause.words()
    part_start = 0
    for i, w in enumerate(words + [""]):
        if i == len(words) or (i and (clause.pause_before(i) or w in _PART_OPENERS)):
            part = clause.tokens[part_start:i]
            hedged = {t.low for n, t in enumerate(part) if t.low in HEDGES
                      and not (t.low == "likely" and n and part[n - 1].low in ("more", "less", "most", "least", "as"))}
            if hedged and (about is None or any(
                    t.forms & about for t in part if is_content(t) and t.low not in HEDGES and not direction_of(t))):
                return 1
            part_start = i
    return 3 if set(words) & STRONG else 2


_PART_OPENERS = frozenset("but which whereas while though although yet".split())


def hits(clause: Clause) -> list[tuple[int, str, int, bool]]:
    """(position, axis, sign, weak) of each directional word of the clause. A weak one is a
    plain adjective ("high", "large", "fast"): it agrees or disagrees with another on its
    axis, but is not a comparison of its own. "no longer" is no direction."""
    out = []
    for i, t in enumerate(clause.tokens):
        hit = direction_of(t)
        if hit is None:
            continue
        prev = clause.tokens[i - 1].low if i else ""
        nxt = clause.tokens[i + 1].low if i + 1 < len(clause.tokens) else ""
        if t.low == "longer" and prev in ("no", "any"):
            continue
        if t.low in ("fasting", "fasted"):
            continue  # going without food, not speed
        if t.lemma == "grow" and (nxt.endswith("er") or nxt in ("more", "less")):
            continue  # "has grown warmer": has become, not an increase of its own
        head = t.low.split("-", 1)[0]
        out.append((i, hit[0], hit[1], t.low in WEAK or head in WEAK))
    return out


_BOUND_WORDS = frozenset("more less fewer greater over under above below".split())


def bounds_figure(clause: Clause, i: int) -> bool:
    """"more than 1,000", "under 5 ms": a bound on a figure (checked with the figure), not a comparison."""
    if clause.tokens[i].low not in _BOUND_WORDS:
        return False
    toks = clause.tokens
    if i >= 2 and toks[i - 1].low == "or" and (toks[i - 2].low[:1].isdigit() or toks[i - 2].low in NUMBER_WORDS):
        return True  # "7,000 or more steps": "at least 7,000"
    n = i + 1 + (i + 1 < len(clause.tokens) and clause.tokens[i + 1].low == "than")
    return n < len(clause.tokens) and (clause.tokens[n].low[:1].isdigit() or clause.tokens[n].low in NUMBER_WORDS)


NUMBER_WORDS = frozenset("""two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
    sixty seventy eighty ninety hundred dozen half a""".split())


def directions(clause: Clause) -> list[tuple[str, int]]:
    return [(axis, sign) for _, axis, sign, _ in hits(clause)]


def direction_of(t: Token) -> tuple[str, int] | None:
    """(axis, sign) of a directional word, by its form, any of its lemmas ("fell": "fall")
    or the head of a compound ("lower-priority")."""
    hit = DIRECTIONS.get(t.low)
    if hit is None:
        hit = next((DIRECTIONS[x] for x in t.lemmas if x in DIRECTIONS), None)
    if hit is None and "-" in t.low:
        hit = next((DIRECTIONS[part] for part in t.low.split("-") if part in DIRECTIONS), None)
    return hit


def passive(clause: Clause, pivot: int) -> bool:
    """The verb at ``pivot`` is passive: a participle ("removed", "written", "held")
    after a form of "be" (or "get") within the two words before it."""
    t = clause.tokens[pivot]
    participle = (t.low.endswith(("ed", "en")) or t.low != t.lemma) and t.low not in NOT_PARTICIPLES
    return participle and any(u.low in BE for u in clause.tokens[max(0, pivot - 3):pivot])


# Where a finding was made ("In the trial, ...", "In this study, ..."): its setting, not
# a condition that narrows it.
SETTINGS = frozenset("trial study cohort analysis experiment survey paper report review sample dataset "
                      "benchmark test evaluation investigation work".split())


FRONTING = frozenset("in on for at with over during under among within after when if unless once".split())


def fronted(clause: Clause) -> list[Token]:
    """A qualifier that opens the clause and ends at a comma ("In patients over 75, ...",
    "With fsync disabled, ...", "On a cache hit, ..."): its content words."""
    toks = clause.tokens
    if not toks or toks[0].low not in FRONTING:
        return []
    for n in range(1, min(len(toks), 10)):
        if clause.pause_before(n):
            words = [u for u in toks[1:n] if is_content(u) or u.low.isdigit()]
            return [] if {u.lemma for u in words} <= SETTINGS else words
    return []


def conditions(clause: Clause) -> list[list[Token]]:
    """The clause's conditions: what follows an opener ("within", "when", "by default",
    "in"/"on" + a name), up to the next opener or punctuation, at most five words."""
    out = []
    toks = clause.tokens
    opening = fronted(clause)
    if opening:
        out.append(opening)
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        opens = t.low in CONDITION_OPENERS
        if t.low == "by" and nxt is not None and nxt.low == "default":
            out.append([nxt])
            continue
        if t.low in ("in", "on", "for") and nxt is not None and nxt.low == "the" and i + 2 < len(toks) \
                and toks[i + 2].text[:1].isupper() and toks[i + 2].low not in MONTHS:
            # "in the Alps", "for the EU": a place or a named group, its capitalised words
            named = [u for u in toks[i + 2:i + 6] if u.text[:1].isupper()]
            run = toks[i + 2:i + 2 + next((n for n, u in enumerate(toks[i + 2:i + 6]) if not u.text[:1].isupper()),
                                          len(named))]
            out.append(run)
            continue
        if t.low in ("in", "on", "for") and nxt is not None and nxt.low not in MONTHS and (nxt.text[:1].isupper() or nxt.low in
                                                                  ("patients", "adults", "children", "women",
                                                                   "men", "mice", "rats", "small", "large")):
            opens = True
        if not opens:
            continue
        phrase = []
        for n, u in enumerate(toks[i + 1:i + 6], start=i + 1):
            if u.low in CONDITION_OPENERS or clause.pause_before(n):
                break
            phrase.append(u)
        content = [u for u in phrase if is_content(u) or u.low.isdigit()]
        if content:
            out.append(content)
    return out


def not_only(clause: Clause) -> int:
    """How often the clause says "not only", "not just", "not merely": an addition, not a
    negation, but not the same as "only" either."""
    words = clause.words()
    return sum(1 for w, nxt in zip(words, words[1:], strict=False)
               if w in ("not", "n't") and nxt in ("only", "just", "merely"))


def parts(clause: Clause) -> list[str]:
    return [part for w in clause.words() for part in (w.split("-") if "-" in w else (w,))]


# Plain adjectives of direction: they agree or disagree on their axis, but compare nothing.
WEAK = frozenset("high low large small big long short fast slow quick cheap expensive costly pricey wide narrow "
                  "tall above below upward downward".split())


def bound_sign(said: Clause, i: int, axis: str, whole: Clause, *, weak: bool = True) -> int | None:
    """The sign, on ``axis``, of the quote's directional word bound to the same thing as
    the sentence's word at ``i`` (the content word right after it, found in the quote
    with a directional word just before or right after it, within its phrase); None
    when there is none to bind. A comparison (``weak`` False) binds to comparisons only."""
    target = None
    for n in range(i + 1, min(i + 4, len(said.tokens))):
        if said.pause_before(n) or said.tokens[n].low in ("and", "or", "but"):
            break
        if is_content(said.tokens[n]):
            target = said.tokens[n]
            break
    found = None if target is None else _bound_to(target, axis, whole, weak=weak)
    if found is None:  # what it says of the word before it ("rainfall has fallen")
        found = next((_bound_to(t, axis, whole, weak=weak) for t in _subject_before(said, i)), None)
    return found


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


def _bound_to(target: Token, axis: str, whole: Clause, *, weak: bool) -> int | None:
    """The sign of the quote's directional word on ``axis`` next to ``target``."""
    toks = whole.tokens
    signs = {m: (a, s_) for m, a, s_, w in hits(whole) if a == axis and (weak or not w)}
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


NOT_PARTICIPLES = frozenset("often even open seen then when been".split())


DETERMINERS = frozenset("the a an its their this these those our your his her each every some many any no most all "
                        "both few several such".split())


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
    if t.low.endswith("ing") or prev in DETERMINERS or prev in NUMBER_WORDS or prev[:1].isdigit():
        return 0  # "the fire", "most cases", "four days", "25 eagles": a noun
    if t.low != t.lemma and t.low.endswith("ed"):
        return 3
    inflected = t.low != t.lemma and t.low.endswith("s")
    return 2 if inflected or not lemmas_of(t.low)[2] else 1


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
        if word in words and word in theirs and not _paired(words, word) and not _paired(theirs, word):
            return words.index(word), theirs.index(word)
    candidates = [(-verbness(said, i), i) for i in range(1, len(said.tokens))]
    for rank, i in sorted(candidates):
        if rank == 0:
            break
        forms = said.tokens[i].forms
        found = [j for j, u in enumerate(source.tokens) if j > 0 and u.forms & forms]
        if found:
            return i, max(found, key=lambda j: (verbness(source, j), -j))
    return None


ORDER_WORDS = ("than", "before", "after")


def _paired(words: list[str], word: str) -> bool:
    """"before and after surgery": a span of time, not one thing ordered before another."""
    i = words.index(word)
    return (i + 1 < len(words) and words[i + 1] in ("and", "or")) or (i > 0 and words[i - 1] in ("and", "or"))


# Where a subject or object phrase ends: a preposition (other than "of"), or a word that
# opens a clause of its own.
PHRASE_STOPS = frozenset("""in on at to from into onto by with for over under through during via across toward
    towards against between among within without about after before than when if while because since unless
    which that who whom whose as where once until""".split())


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
    out: set[str] = set()
    i = pivot + step
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
            return out, i == 0  # a coordination inside the phrase: not read whole (at the clause's start: its edge)
        if abs(i - pivot) > 1 and verbness(clause, i) >= 2 and not modifier(clause, i):
            return out, False  # another verb: the phrase is not read whole
        if is_content(t):
            out.add(min(t.forms))
        i += step
    return out, 0 <= i < len(clause.tokens) or True


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
    if passive(said, p) != passive(source, q):
        qs, qo = qo, qs
    return ss, so, qs, qo, clean


def swapped(said: Clause, source: Clause) -> bool:
    parts = role_parts(said, source)
    if parts is None:
        return False
    ss, so, qs, qo, _ = parts
    return bool((ss & qo) - qs) and bool((so & qs) - qo)


def direction_flipped(said: Clause, source: Clause) -> bool:
    mine, theirs = directions(said), directions(source)
    return any((a, -s) in theirs for a, s in mine)


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
    for i, t in enumerate(clause.tokens):
        if i < start:
            continue
        after_determiner = i > 0 and clause.tokens[i - 1].low in DETERMINERS
        if t.low in AUX or direction_of(t) or (i > start and verbness(clause, i) >= 2
                                               and not (after_determiner and modifier(clause, i))):
            break
        if is_content(t):
            out.append(t)
    return out


# Words that open a qualifier before a clause's subject ("Before the levy took effect, …").
_OPENERS = FRONTING | frozenset("before after since until because although though while as despite ahead "
                                "following unlike like according".split())


def complement_subject(clause: Clause) -> set[str]:
    """The subject of what a reporting verb's "that" introduces ("Curators confirmed
    that the capsule contained…": the capsule), or nothing."""
    words = clause.words()
    for i, w in enumerate(words[1:-1], start=1):
        if w == "that" and clause.tokens[i - 1].lemma in _REPORTING:
            rest = Clause(clause.tokens[i + 1:], clause.tokens[i + 1].start, clause.end, clause.text)
            return subject(rest)
    return set()


_REPORTING = frozenset("say find confirm report show note estimate conclude announce indicate reveal state "
                       "argue believe suggest demonstrate determine".split())


def fronted_end(clause: Clause) -> int:
    """Where the clause goes on after a qualifier that opens it and ends at a comma."""
    toks = clause.tokens
    if not toks or toks[0].low not in _OPENERS:
        return 0
    return next((n for n in range(1, min(len(toks), 14)) if clause.pause_before(n)), 0)


def unknown_word(word: str) -> bool:
    """No lemma of ``word`` is in lemminflect's tables: a name ("simvastatin", "kubelet")."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use (clauses loads them first)

    return not lemminflect.getAllLemmas(word)
