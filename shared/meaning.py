"""Whether a sentence means what its quotes say: deterministic meaning checks.

Sharing words is not agreeing: "rows are removed" and "rows are not removed" share
every content word. So a sentence is read clause by clause, each clause is anchored
to the one quote it restates, and it must agree with the clause of that quote it
aligns with in:

* **anchoring** ("merge", "number", "name", "terms"): the clause's content words,
  figures and names come from its anchor quote, not assembled from several quotes
  (a list "X and Y both..." may draw each member from its own quote); enough of the
  sentence's content words occur in its quotes;
* **polarity** ("negation"): the same parity of negation (not, never, without,
  cannot, fails to, lacks, un-/in-/dis- words against their stems);
* **quantity** ("quantifier"): no stronger quantifier or frequency than the quote's
  (some < many/often < most/usually < all/always), a limiting one not dropped, no
  "only" the quote lacks, "rarely"/"few" on both sides or neither;
* **certainty** ("modality"): no more certain than the quote (a hedge such as
  may/might/can/suggests is not dropped; "proves", "must", "conclusively" are not
  added; association does not become cause);
* **direction** ("comparative"): directional words (increases/reduces,
  faster/slower, better/worse, before/after, adds/removes) agree on their axis, and a
  comparison is not stated where the quote states none;
* **roles** ("role"): who does what to whom around the shared verb or "than" is
  kept (a passive restatement flips it back);
* **scope** ("scope"): a condition of the quote ("within a partition", "in patients
  over 75", "by default", "when the cache is cold") is not dropped.

Sentences are read into words and clauses by :mod:`shared.clauses` (words matched by
stem and lemma, so "DELETE" meets "deleted"), anchored by :mod:`shared.meaning_anchor`,
and their figures read with units by :mod:`shared.figures`. A sentence that is one of
its quotes (or a whole sentence of one) is ``quoted`` and needs no check.
"""

from __future__ import annotations

from collections import Counter

from shared.clauses import AUX, BE, Clause, Token, aligned_pair, is_content, lemmas_of, token
from shared.figures import figures, same_figure
from shared.lexicon import (
    CAUSAL, CONDITION_OPENERS, CONVERSES, CORRELATIONAL, DIRECTIONS, EXCLUSIVE, HEDGES, NEGATIVE_PREFIXES, NEGATORS,
    QUANTIFIERS, RARE, STRONG,
)
from shared.text import STOPWORDS

__all__ = ["compare", "contradicts"]

_MONTHS = frozenset("january february march april may june july august september october november december".split())

def _negations(clause: Clause) -> int:
    words = clause.words()
    count = 0
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in NEGATORS:
            if w in ("not", "n't") and nxt in ("only", "just", "merely"):
                continue  # "not only": an addition, not a negation
            if w in ("fails", "fail", "failed", "failing") and nxt != "to":
                continue
            if w == "nor" and "neither" in words:
                continue  # "neither ... nor" negates once
            count += 1
    return count


def _prefix_flips(said: Clause, source: Clause) -> int:
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


_FREQUENCY = frozenset("sometimes occasionally often frequently commonly usually typically generally normally "
                       "always invariably never".split())


def _quantity(clause: Clause, *, subject_only: bool = False) -> tuple[int | None, int | None, bool, bool]:
    """(strongest quantifier of a noun, strongest frequency adverb, says "rarely"/"few",
    says "only"). With ``subject_only``, only quantifiers among the clause's first three
    words count (what "some" says of an object, "trading some throughput", limits nothing).
    The parts of a compound count as words ("at-most-once")."""
    words = _parts(clause)
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
        if w in EXCLUSIVE and prev not in ("not", "n't") and not (w == "alone" and prev != "alone"):
            exclusive = exclusive or w != "alone"
        level = QUANTIFIERS.get(w)
        if level is None or (w == "all" and prev == "at") or (w == "most" and prev in ("the", "at")):
            continue
        if w == "each" and nxt == "other":
            continue
        if w in _FREQUENCY:
            frequency = max(frequency or 0, level)
        elif not subject_only or i <= 2:
            strength = max(strength or 0, level)
    return strength, frequency, rare, exclusive


def _certainty(clause: Clause) -> int:
    words = set(clause.words())
    if words & HEDGES:
        return 1
    return 3 if words & STRONG else 2


def _hits(clause: Clause) -> list[tuple[int, str, int, bool]]:
    """(position, axis, sign, weak) of each directional word of the clause. A weak one is a
    plain adjective ("high", "large", "fast"): it agrees or disagrees with another on its
    axis, but is not a comparison of its own. "no longer" is no direction."""
    out = []
    for i, t in enumerate(clause.tokens):
        hit = _direction_of(t)
        if hit is None:
            continue
        prev = clause.tokens[i - 1].low if i else ""
        if t.low == "longer" and prev in ("no", "any"):
            continue
        head = t.low.split("-", 1)[0]
        out.append((i, hit[0], hit[1], t.low in _WEAK or head in _WEAK))
    return out


def _directions(clause: Clause) -> list[tuple[str, int]]:
    return [(axis, sign) for _, axis, sign, _ in _hits(clause)]


def _direction_of(t: Token) -> tuple[str, int] | None:
    """(axis, sign) of a directional word, by its form, any of its lemmas ("fell": "fall")
    or the head of a compound ("lower-priority")."""
    hit = DIRECTIONS.get(t.low)
    if hit is None:
        hit = next((DIRECTIONS[x] for x in t.lemmas if x in DIRECTIONS), None)
    if hit is None and "-" in t.low:
        hit = next((DIRECTIONS[part] for part in t.low.split("-") if part in DIRECTIONS), None)
    return hit


def _passive(clause: Clause, pivot: int) -> bool:
    """The verb at ``pivot`` is passive: a participle ("removed", "written", "held")
    after a form of "be" (or "get") within the two words before it."""
    t = clause.tokens[pivot]
    participle = (t.low.endswith(("ed", "en")) or t.low != t.lemma) and t.low not in _NOT_PARTICIPLES
    return participle and any(u.low in BE for u in clause.tokens[max(0, pivot - 3):pivot])


# Where a finding was made ("In the trial, ...", "In this study, ..."): its setting, not
# a condition that narrows it.
_SETTINGS = frozenset("trial study cohort analysis experiment survey paper report review sample dataset "
                      "benchmark test evaluation investigation work".split())
_FRONTING = frozenset("in on for at with over during under among within after when if unless once".split())


def _fronted(clause: Clause) -> list[Token]:
    """A qualifier that opens the clause and ends at a comma ("In patients over 75, ...",
    "With fsync disabled, ...", "On a cache hit, ..."): its content words."""
    toks = clause.tokens
    if not toks or toks[0].low not in _FRONTING:
        return []
    for n in range(1, min(len(toks), 10)):
        if clause.pause_before(n):
            words = [u for u in toks[1:n] if is_content(u) or u.low.isdigit()]
            return [] if {u.lemma for u in words} <= _SETTINGS else words
    return []


def _conditions(clause: Clause) -> list[list[Token]]:
    """The clause's conditions: what follows an opener ("within", "when", "by default",
    "in"/"on" + a name), up to the next opener or punctuation, at most five words."""
    out = []
    toks = clause.tokens
    fronted = _fronted(clause)
    if fronted:
        out.append(fronted)
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        opens = t.low in CONDITION_OPENERS
        if t.low == "by" and nxt is not None and nxt.low == "default":
            out.append([nxt])
            continue
        if t.low in ("in", "on", "for") and nxt is not None and nxt.low not in _MONTHS and (nxt.text[:1].isupper() or nxt.low in
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


# -- the assessment ------------------------------------------------------------------------


def compare(said: Clause, source: Clause, whole: Clause | None = None) -> tuple[str, str] | None:
    """(category, reason) of the first way clause ``said`` departs from ``source``, the
    clause of its quote it aligns with (``whole``: that entire quote)."""
    for check in (_polarity, _quantifiers, _modality, _direction, _converse, _roles, _scope):
        problem = check(said, source, whole) if check in (_direction, _roles) else check(said, source)
        if problem is not None:
            return problem
    return None


def _polarity(said: Clause, source: Clause) -> tuple[str, str] | None:
    flips = _prefix_flips(said, source)
    if (_negations(said) + flips - _negations(source)) % 2 or _not_only(said) != _not_only(source):
        return "negation", "it negates what its quote affirms, or affirms what its quote negates"
    return None


def _not_only(clause: Clause) -> int:
    """How often the clause says "not only", "not just", "not merely": an addition, not a
    negation, but not the same as "only" either."""
    words = clause.words()
    return sum(1 for w, nxt in zip(words, words[1:], strict=False)
               if w in ("not", "n't") and nxt in ("only", "just", "merely"))


def _parts(clause: Clause) -> list[str]:
    return [part for w in clause.words() for part in (w.split("-") if "-" in w else (w,))]


# Universal words that say the same ("each server", "every server", "all servers").
_UNIVERSAL = {"each": "every", "all": "every", "invariably": "always", "universally": "always"}


def _quantifiers(said: Clause, source: Clause) -> tuple[str, str] | None:
    (mine, my_often, my_rare, my_only) = _quantity(said)
    (theirs, their_often, their_rare, their_only) = _quantity(source)
    if my_only and not their_only:
        return "quantifier", 'it says "only" where its quote does not'
    if my_rare != their_rare:
        return "quantifier", "it changes how rare or common its quote says this is"
    if mine is not None and mine > (theirs if theirs is not None else 3):
        return "quantifier", "it generalises beyond its quote's quantifier"
    extra = Counter(_UNIVERSAL.get(w, w) for w in _parts(said) if QUANTIFIERS.get(w) == 4) \
        - Counter(_UNIVERSAL.get(w, w) for w in _parts(source) if QUANTIFIERS.get(w) == 4)
    if extra:
        return "quantifier", f'it says "{min(extra)}" more often than its quote does'
    if my_often is not None and my_often > (their_often if their_often is not None else 3):
        return "quantifier", "it says this happens more often than its quote does"
    limiting, _, _, _ = _quantity(source, subject_only=True)
    if mine is None and limiting is not None and limiting < 4:
        return "quantifier", "it drops the quote's limiting quantifier (some, many, most...)"
    if my_often is None and their_often is not None and their_often < 4:
        return "quantifier", "it drops the quote's frequency (sometimes, often, usually...)"
    return None


def _modality(said: Clause, source: Clause) -> tuple[str, str] | None:
    if _certainty(said) > _certainty(source):
        return "modality", "it is more certain than its quote (a hedge dropped or certainty added)"
    mine, theirs = set(said.words()), set(source.words())
    changes = any(_direction_of(t) and _verbness(said, i) >= 2 for i, t in enumerate(said.tokens))
    if (mine & CAUSAL or changes) and not theirs & CAUSAL and theirs & CORRELATIONAL and not mine & CORRELATIONAL:
        return "modality", "it states as cause what its quote states as association"
    return None


_COMPARATIVE_AXES = frozenset({"magnitude", "speed", "quality", "cost"})
# Plain adjectives of direction: they agree or disagree on their axis, but compare nothing.
_WEAK = frozenset("high low large small big long short fast slow quick cheap expensive costly pricey wide narrow "
                  "tall above below upward downward".split())


def _direction(said: Clause, source: Clause, whole: Clause | None = None) -> tuple[str, str] | None:
    """Each directional word of ``said`` agrees with the quote's word bound to the same
    thing, else with the aligned clause's words on its axis (on an axis that clause does
    not speak of, the whole quote's, ``whole``); a comparison is not stated where the quote
    states none, nor more of them than it states, nor without the quote's "than"."""
    theirs, everywhere = _hits(source), _hits(whole) if whole is not None else _hits(source)
    mine = _hits(said)
    for i, axis, sign, weak in mine:
        bound = _bound_sign(said, i, axis, whole or source, weak=weak)
        if bound == sign:
            continue
        lemmas = set(said.tokens[i].lemmas)
        pool = [h for h in theirs if h[1] == axis and (weak or not h[3])] \
            or [h for h in everywhere if h[1] == axis and (weak or not h[3])
                and (h[2] != sign or lemmas & set((whole or source).tokens[h[0]].lemmas))]
        if bound is None and sign in {h[2] for h in pool}:
            continue
        if bound is not None or pool:
            if _swapped(said, source) and "than" in said.words():
                continue  # "Y is slower than X" restates "X is faster than Y"
            return "comparative", f"it reverses the direction ({axis}) its quote states"
        if axis in _COMPARATIVE_AXES and not weak:
            return "comparative", f"it states a direction ({axis}) its quote does not"
    stated = [h for h in mine if h[1] in _COMPARATIVE_AXES and not h[3]]
    quoted = max(len([h for h in hits if h[1] in _COMPARATIVE_AXES and not h[3]]) for hits in (theirs, everywhere))
    if quoted and len(stated) > quoted:
        return "comparative", "it states more comparisons than its quote does"
    if "than" in source.words() and "than" not in said.words() and stated:
        return "comparative", "it drops or changes what its quote compares it with"
    return None


def _bound_sign(said: Clause, i: int, axis: str, whole: Clause, *, weak: bool = True) -> int | None:
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
    if target is None:
        return None
    toks = whole.tokens
    signs = {m: (a, s_) for m, a, s_, w in _hits(whole) if a == axis and (weak or not w)}
    for n, u in enumerate(toks):
        if not u.forms & target.forms:
            continue
        for m in range(n - 1, max(-1, n - 5), -1):  # before it ("reduces latency"), within its phrase
            if toks[m].low in _BINDING_STOPS or whole.pause_before(m + 1):
                break
            if m in signs:
                return signs[m][1]
        for m in range(n + 1, min(len(toks), n + 3)):  # or right after it ("interest rates rise")
            if toks[m].low in _BINDING_STOPS or whole.pause_before(m):
                break
            if m in signs:
                return signs[m][1]
    return None


# Words between a directional word and what it governs that end the binding.
_BINDING_STOPS = frozenset("when if while because since as that which who than and or but whereas unless".split())


_NOT_PARTICIPLES = frozenset("often even open seen then when been".split())
_DETERMINERS = frozenset("the a an its their this these those our your his her each every some many any no".split())
_LEADS_VERB = AUX | frozenset("can cannot could may might must will would should to not n't never also often "
                                "always usually".split())


def _verbness(clause: Clause, i: int) -> int:
    """How surely token ``i`` is the clause's verb: 2 after an auxiliary or modal, or
    inflected as a verb ("preempts", "referenced") or only ever a verb; 1 a word that
    may be a verb; 0 not one ("running" as an adjective, a word that is never a verb)."""
    t = clause.tokens[i]
    if t.low in STOPWORDS or t.low in AUX:
        return 0
    prev = clause.tokens[i - 1].low if i else ""
    if not (t.verb or _direction_of(t)):
        return 0
    if prev == "to":
        return 1  # an infinitive: a verb, but seldom the clause's own
    if prev in _LEADS_VERB:
        return 3
    if t.low.endswith("ing") or prev in _DETERMINERS:
        return 0
    if t.low != t.lemma and t.low.endswith("ed"):
        return 3
    inflected = t.low != t.lemma and t.low.endswith("s")
    return 2 if inflected or not lemmas_of(t.low)[2] else 1


def _modifier(clause: Clause, i: int) -> bool:
    """A participle used as an adjective: "-ed"/"-en" right before a content word
    ("developed economies")."""
    nxt = clause.tokens[i + 1] if i + 1 < len(clause.tokens) else None
    return clause.tokens[i].low.endswith(("ed", "en")) and nxt is not None and is_content(nxt)


def _converse(said: Clause, source: Clause) -> tuple[str, str] | None:
    """A word whose counterpart (``CONVERSES``: reads/writes, client/server) stands in
    the quote's clause where the sentence has the word itself."""
    mine = {x for t in said.tokens for x in t.lemmas}
    theirs = {x for t in source.tokens for x in t.lemmas}
    for word in sorted(mine - theirs):
        other = CONVERSES.get(word, frozenset()) & (theirs - mine)
        if other:
            return "comparative", f'it says "{word}" where its quote says "{min(other)}"'
    return None


def _pivots(said: Clause, source: Clause) -> tuple[int, int] | None:
    """The index, in each clause, of the verb (or "than") they share: the surest verb of
    ``said`` that ``source`` has, and its first occurrence there."""
    words, theirs = said.words(), source.words()
    for word in _ORDER_WORDS:
        if word in words and word in theirs:
            return words.index(word), theirs.index(word)
    candidates = [(-_verbness(said, i), i) for i in range(1, len(said.tokens))]
    for rank, i in sorted(candidates):
        if rank == 0:
            break
        forms = said.tokens[i].forms
        found = [j for j, u in enumerate(source.tokens) if j > 0 and u.forms & forms]
        if found:
            return i, max(found, key=lambda j: (_verbness(source, j), -j))
    return None


_ORDER_WORDS = ("than", "before", "after")
# Where a subject or object phrase ends: a preposition (other than "of"), or a word that
# opens a clause of its own.
_PHRASE_STOPS = frozenset("""in on at to from into onto by with for over under through during via across toward
    towards against between among within without about after before than when if while because since unless
    which that who whom whose as where once until""".split())


def _sides(clause: Clause, pivot: int) -> tuple[set[str], set[str]]:
    before = {min(t.forms) for t in clause.tokens[:pivot] if is_content(t)}
    after = {min(t.forms) for t in clause.tokens[pivot + 1:] if is_content(t)}
    return before - after, after - before


def _side(clause: Clause, pivot: int, step: int) -> set[str]:
    """Every content word on one side of ``pivot``."""
    toks = clause.tokens[:pivot] if step < 0 else clause.tokens[pivot + 1:]
    return {min(t.forms) for t in toks if is_content(t)}


def _phrase(clause: Clause, pivot: int, step: int) -> tuple[set[str], bool]:
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
        if t.low in _PHRASE_STOPS:
            if step > 0 and i == pivot + 1:  # "lends to X", "borrows from X": part of the verb
                i += step
                continue
            return out, step > 0  # an object ends at its preposition; a subject cut there is a tail
        if t.low in ("and", "or", "but"):
            return out, i == 0  # a coordination inside the phrase: not read whole (at the clause's start: its edge)
        if abs(i - pivot) > 1 and _verbness(clause, i) >= 2 and not _modifier(clause, i):
            return out, False  # another verb: the phrase is not read whole
        if is_content(t):
            out.add(min(t.forms))
        i += step
    return out, 0 <= i < len(clause.tokens) or True


def _role_parts(said: Clause, source: Clause) -> tuple[set[str], set[str], set[str], set[str], bool] | None:
    """(the sentence's subject and object, the quote's subject and object, as the
    sentence's voice reads them, around the verb or order word they share; whether
    all four phrases were read whole around a sure verb)."""
    pivots = _pivots(said, source)
    if pivots is None:
        return None
    p, q = pivots
    if said.words()[p] in _ORDER_WORDS:
        ss, so = _sides(said, p)
        qs, qo = _sides(source, q)
        clean = False
        whole_ss, whole_qs, whole_qo = _side(said, p, -1), _side(source, q, -1), _side(source, q, 1)
        if whole_ss and not whole_ss & whole_qs and whole_ss <= whole_qo:
            ss, qs, qo = whole_ss, whole_qs, whole_qo - whole_qs  # its subject is the quote's other side
    else:
        (ss, c1), (so, c2) = _phrase(said, p, -1), _phrase(said, p, 1)
        (qs, c3), (qo, c4) = _phrase(source, q, -1), _phrase(source, q, 1)
        clean = c1 and c2 and c3 and c4 and min(_verbness(said, p), _verbness(source, q)) >= 2
    if _passive(said, p) != _passive(source, q):
        qs, qo = qo, qs
    return ss, so, qs, qo, clean


def _swapped(said: Clause, source: Clause) -> bool:
    parts = _role_parts(said, source)
    if parts is None:
        return False
    ss, so, qs, qo, _ = parts
    return bool((ss & qo) - qs) and bool((so & qs) - qo)


def _roles(said: Clause, source: Clause, whole: Clause | None = None) -> tuple[str, str] | None:
    parts = _role_parts(said, source)
    if parts is None:
        return None
    ss, so, qs, qo, clean = parts
    if bool((ss & qo) - qs) and bool((so & qs) - qo):
        if said.words().count("than") and _directions(said) and _direction_flipped(said, source):
            return None  # "Y is slower than X" restates "X is faster than Y"
        return "role", "it swaps who does what to whom in its quote"
    if not clean:
        return None
    quote_forms = (whole or source).forms
    for mine, theirs, other, what in ((ss, qs, qo, "subject"), (so, qo, qs, "object")):
        stray = {f for f in mine - theirs - other if f in quote_forms}
        if mine and theirs and not mine & theirs and stray:
            return "role", f"its {what} is another of its quote's than the one the quote gives this verb"
    return None


def _direction_flipped(said: Clause, source: Clause) -> bool:
    mine, theirs = _directions(said), _directions(source)
    return any((a, -s) in theirs for a, s in mine)


def _scope(said: Clause, source: Clause) -> tuple[str, str] | None:
    mine = said.forms
    for condition in _conditions(source):
        if not any(t.forms & mine for t in condition):
            words = " ".join(t.text for t in condition)
            return "scope", f'it drops its quote\'s condition ("{words}")'
    return None


def contradicts(statement: str, other: str) -> str | None:
    """The reason (a category: "negation", "quantifier", "comparative", "role",
    "number") when ``other`` states the opposite of ``statement`` about the same
    subject; None when it does not (unrelated, or agreeing)."""
    for a, b in ((statement, other), (other, statement)):
        pair = aligned_pair(a, b)
        if pair is None:
            continue
        said, source = pair
        same_subject = bool(_subject(said) & _subject(source))
        if _polarity(said, source) and same_subject and _same_verb(said, source):
            return "negation"  # the same subject, the same verb, one of them negated
        problem = _direction(said, source) or _roles(said, source)
        if problem and problem[0] in ("comparative", "role") and _directions(source) and same_subject:
            return problem[0]
        (mine, my_often, _, _), (theirs, their_often, _, _) = _quantity(said), _quantity(source)
        if (mine == 4 and theirs is not None and theirs < 4) or \
                (my_often == 4 and their_often is not None and their_often < 4):
            return "quantifier"
        if _figures_disagree(a, b):
            return "number"
    return None


def _same_verb(said: Clause, source: Clause) -> bool:
    """Both clauses turn on the same verb: surely a verb on both sides, or on one side
    after an auxiliary or "not" (or they turn on "than"/"before"/"after")."""
    pivots = _pivots(said, source)
    if pivots is None:
        return False
    p, q = pivots
    sure = sorted((_verbness(said, p), _verbness(source, q)))
    return said.words()[p] in _ORDER_WORDS or sure[0] >= 2 or (sure[0] >= 1 and sure[1] >= 3)


def _subject(clause: Clause) -> set[str]:
    """The content words before the clause's first verb, auxiliary or directional word."""
    out: set[str] = set()
    for i, t in enumerate(clause.tokens):
        if t.low in AUX or _direction_of(t) or (i and _verbness(clause, i) >= 2):
            break
        if is_content(t):
            out.add(min(t.forms))
    return out


def _figures_disagree(a: str, b: str) -> bool:
    """Both state a figure in the same unit, and no figure of one restates any of the other."""
    fa, fb = figures(a), figures(b)
    units = {f.unit for f in fa if f.unit} & {f.unit for f in fb if f.unit}
    if not units:
        return False
    return not any(same_figure(x, y) for x in fa for y in fb if x.unit in units)


