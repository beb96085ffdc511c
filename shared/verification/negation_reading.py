"""Readings of negation that a count of "not" and "never" misses: the ways a sentence and
its quote say the same thing, one with a negation and one without ("stopped recommending"
for "no longer recommended", "not released until it commits" for "released only when it
commits", "cannot log in without a code" for "a code is required"), and the ways they
differ though their negations agree ("still sends it traffic" for "stops routing
traffic"). :mod:`shared.verification.meaning` weighs them when it compares a clause's
polarity with its quote's.
"""

from __future__ import annotations

from shared.verification.clause_reading import denies_exceeding, negations
from shared.verification.clauses import Clause, adjective, clauses, covered, forms_of, is_content, unknown_word
from shared.verification.lexicon import CESSATION, DENIERS, NEGATORS, OMISSION, PRIVATIVE, WORD_NEGATING_PREFIXES
from shared.research.text import STOPWORDS

__all__ = ["advised_against", "automatic", "avoided", "before_other_negated_predicate", "capped", "ceased", "contrasted", "denied_before", "ended_doing", "negated_both",
           "negated_words", "not_since", "not_until", "not_without", "omitted", "privative", "set_aside", "until_after_negation"]


def not_without(clause: Clause, other: Clause) -> bool:
    """``clause`` negates with "without" or "unless" as well ("cannot log in without a
    code", "Without a catalyst, the reaction does not proceed"): a thing needed, which
    ``other`` says with "required", "needs", "must" or "only" and no negation."""
    words = set(clause.words())
    return bool(words & {"without", "unless"}) and bool(set(other.words()) & _NEEDED) and not negations(other)


_NEEDED = frozenset("only require requires required requiring need needs needed must presence".split())


def before_other_negated_predicate(said: Clause, source: Clause) -> Clause:
    """``source`` up to an "and" that opens a negated predicate of its own ("was begun in
    1248 and was not completed until 1880") when ``said`` has none of that predicate's
    content words but another clause of its sentence has ("It was begun in 1248, and it
    was only finished in 1880": that clause restates the predicate, and answers for its
    negation). Else ``source`` whole."""
    words = source.words()
    for i, w in enumerate(words):
        if w != "and" or i == 0 or not any(x in NEGATORS or x.endswith("n't") for x in words[i + 1:i + 4]):
            continue
        tail = [t for t in source.tokens[i + 1:] if (is_content(t) or t.low.isdigit()) and t.low not in NEGATORS]
        if tail and not any(covered(t, said.forms) for t in tail):
            others = _other_clauses(said)
            if any(covered(t, others) for t in tail):
                return Clause.spanning(source.tokens[:i], source.text)
    return source


def _other_clauses(said: Clause) -> set[str]:
    """The word forms of the sentence's clauses other than ``said``."""
    return forms_of([c for c in clauses(said.text) if (c.start, c.end) != (said.start, said.end)])


def set_aside(clause: Clause, j: int) -> bool:
    """The word at ``j`` is what "rather than" or "instead of" sets aside (within three words)."""
    words = clause.words()[max(0, j - 4):j]
    return any((a, b) in (("rather", "than"), ("instead", "of")) for a, b in zip(words, words[1:], strict=False))


def not_until(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` says "not … until" where ``other`` says "only when" (or "only
    after", "only once"): "is not released until the transaction commits" is "is released
    only when it commits"."""
    theirs = other.words()
    until = until_after_negation(clause)
    if until is None:
        return 0
    if any(a == "only" and b in ("when", "after", "once", "if", "until")
           for a, b in zip(theirs, theirs[1:], strict=False)):
        return 1
    if "before" in theirs and set(theirs) & _NEEDED and not negations(other):
        return 1  # "cannot be merged until two maintainers approve" for "must be approved before it is merged"
    if any(a in ("take", "takes", "took", "taken", "taking") and b == "until"
           for a, b in zip(theirs, theirs[1:], strict=False)) and not negations(other):
        return 1  # "took until 1880 to finish" for "was not completed until 1880"
    # Or ``other`` states the time "until" names, with no negation and not as a bound
    # before it: "was not finished until twelve years after he died" for "was completed
    # twelve years after his death"; "not approved until 2019" for "approved in 2019".
    when = [t for t in clause.tokens[until + 1:until + 7] if is_content(t) or t.low[:1].isdigit()]
    if not when or "before" in theirs or "until" in theirs or negations(other):
        return 0
    forms = forms_of([other])
    return int(all(covered(t, forms) for t in when))


def not_since(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` says a thing has not happened "since" a time ("a level not seen
    since 2009", "has not won a title since 1987") where ``other``, negating nothing,
    says it is the most or the last one since then ("its lowest level since 2009", "the
    club's last league title came in 1987")."""
    words = clause.words()
    since = next((n for n, w in enumerate(words) if w == "since" and n + 1 < len(words) and words[n + 1][:1].isdigit()),
                 None)
    if since is None or not any(w in ("not", "never") or w.endswith("n't") for w in words[:since]) \
            or negations(other):
        return 0
    return int(any(t.low == "last" or t.low.endswith("est") and t.lemma != t.low for t in other.tokens))


def contrasted(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` sets a thing aside with "rather than" or "instead of" where
    ``other`` sets aside the same thing with "not" ("the column's type rather than the
    value's" for "the value's type, not the column's")."""
    words, theirs = clause.words(), other.words()
    for i, (a, b) in enumerate(zip(words, words[1:], strict=False)):
        if (a, b) in (("rather", "than"), ("instead", "of")):
            aside = {f for t in clause.tokens[i + 2:i + 8] if is_content(t) for f in t.forms}
            if any(w == "not" and {f for t in other.tokens[j + 1:j + 7] if is_content(t) for f in t.forms} & aside
                   for j, w in enumerate(theirs)):
                return 1
    return 0


def negated_both(said: Clause, source: Clause) -> bool:
    """``source`` negates two predicates that ``said`` states with no negation at all
    ("failed to meet … did not reach" against "met … reached"): an even count is not
    always a double negative."""
    if negations(said) or negations(source) < 2:
        return False
    words, hit = source.words(), 0
    for i, w in enumerate(words):
        if w in NEGATORS:
            governed = [t for t in source.tokens[i + 1:i + 4] if is_content(t)][:1]
            hit += bool(governed and governed[0].forms & said.forms)
    return hit >= 2


def negated_words(clause: Clause, other: Clause) -> int:
    """Words of ``clause`` negated by "un-", "non-", "a-" or "-less" ("unaware",
    "non-binding", "asymptomatic", "jobless") that ``other`` lacks. (Not "in-" or "dis-": "increase" and "discover"
    negate nothing.)"""
    return sum(1 for t in clause.tokens if not t.forms & other.forms and t.low not in NEGATORS | STOPWORDS
               and (any(t.low.startswith(p) and len(t.low) - len(p) >= 4 and not unknown_word(t.low[len(p):])
                        for p in WORD_NEGATING_PREFIXES) and t.low not in ("unlike", "unless")
                    or _without_suffix(t.low)
                    or t.low.startswith("a") and len(t.low) >= 7 and not unknown_word(t.low[1:])  # "asymptomatic"
                    and adjective(t.low, unknown=True)))


def capped(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` says a thing "cannot exceed" (or "may not exceed") a limit and
    ``other`` says the limit as a cap with no negation ("caps the size at 16 MB", "limits
    dataset size to available RAM", "the maximum size is 16 MB"): a bound, not a denial."""
    words = clause.words()
    says = any(denies_exceeding(words, i) for i in range(len(words)))
    return int(says and not negations(other) and any(t.lemma in _CAPS for t in other.tokens))


_CAPS = frozenset("cap limit maximum restrict".split())


def privative(clause: Clause, other: Clause) -> int:
    """Words of ``clause`` whose meaning holds a negation ("prohibits", "a shortage of",
    "advised against")
    where ``other`` has neither the word nor another of its kind, nor a verb that ends or
    leaves out a thing ("stops birds from shedding" is no negation of "prevents")."""
    if any(t.lemma in PRIVATIVE | CESSATION | OMISSION for t in other.tokens):
        return 0
    toks = clause.tokens
    advised = sum(1 for n in range(len(toks)) if advised_against(clause, n)
                  and "against" not in other.words())  # "is advised against" is "should not"
    return advised + sum(1 for t in toks if t.lemma in PRIVATIVE and not t.forms & other.forms)


_ADVISING = frozenset("advise recommend warn caution counsel".split())


def advised_against(clause: Clause, n: int) -> bool:
    """The word at ``n`` is the "against" of "advised against", "warns against"."""
    toks = clause.tokens
    return toks[n].low == "against" and n > 0 and bool(set(toks[n - 1].lemmas) & _ADVISING)


def _without_suffix(word: str) -> bool:
    """A word negated by "-less" ("jobless": without a job), not "unless" or "regardless"."""
    stem = word.removesuffix("less")
    return word.endswith("less") and len(stem) >= 3 and word not in ("unless", "regardless", "nevertheless",
                                                                        "nonetheless") and not unknown_word(stem)


def ceased(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` ends a state with a verb ("stopped", "removed") where ``other``
    says "no longer"."""
    words = other.words()
    no_longer = any(a == "no" and b == "longer" for a, b in zip(words, words[1:], strict=False))
    return int(no_longer and any(t.lemma in CESSATION and t.verb for t in clause.tokens))


def denied_before(clause: Clause, i: int) -> bool:
    """A denier ("no", "not", "never", "without") stands within three words before token ``i``."""
    return any(u.low in DENIERS for u in clause.tokens[max(0, i - 3):i])


def ended_doing(clause: Clause, other: Clause) -> bool:
    """``clause`` ends a doing ("stops routing traffic", "ceased publishing") that
    ``other`` states with no end and no negation ("still sends it traffic"), or says
    goes on ("will be suspended" for "will continue to operate")."""
    if negations(other) or any(CESSATION.intersection(t.lemmas) for t in other.tokens):
        return False  # ("were closed to new admissions": an end too, of what "stopped taking" ends)
    toks = clause.tokens
    if not negations(clause) and any(CESSATION.intersection(t.lemmas) and t.verb for t in toks) \
            and any(t.lemma == "continue" and t.verb for t in other.tokens):
        return True
    for n, (t, u) in enumerate(zip(toks, toks[1:], strict=False)):
        if t.lemma in CESSATION and t.verb and u.low.endswith("ing"):
            # the doing, in its words or by what it is done to ("routing traffic" as "sends it traffic")
            done = [u, *[v for v in toks[n + 2:n + 5] if is_content(v)][:1]]
            if any(covered(v, other.forms) for v in done):
                return True
    return False


def omitted(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` says with a verb that a thing is not given ("is omitted", "was
    withheld") where ``other`` negates ("no timeout is supplied") and has no such verb."""
    return int(bool(negations(other)) and any(t.lemma in OMISSION and not t.forms & other.forms for t in clause.tokens))


def avoided(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` says a thing is kept from happening with a verb ("to avoid
    running aground", "refrained from voting") where ``other``, with no negation and no
    such verb, aims at it ("so as to run aground"): a negation in other words."""
    if negations(other):
        return 0
    theirs = other.tokens
    for i, t in enumerate(clause.tokens):
        if t.lemma not in _KEPT_FROM or not t.verb or t.forms & other.forms:
            continue
        governed = next((u for u in clause.tokens[i + 1:i + 3] if is_content(u)), None)
        # (what is avoided, said in the other as what is aimed at: "so as to run aground")
        if governed is not None and any(u.forms & governed.forms and j and theirs[j - 1].low == "to"
                                        for j, u in enumerate(theirs)):
            return 1
    return 0


_KEPT_FROM = frozenset("avoid refrain".split())


def automatic(clause: Clause, other: Clause) -> int:
    """1 when ``clause`` says "automatically" (or "automatic") where ``other`` says
    "without manual intervention" ("without human input", "without user action")."""
    words, theirs = clause.words(), other.words()
    return int(any(w.startswith("automatic") for w in words) and any(
        w == "without" and set(theirs[n + 1:n + 3]) & _HANDS for n, w in enumerate(theirs)))


_HANDS = frozenset("manual manually human user operator".split())


def until_after_negation(clause: Clause) -> int | None:
    """Where ``clause`` says "until" after a negation ("not … until"), or None."""
    words = clause.words()
    negation = next((i for i, w in enumerate(words) if w in ("not", "never", "cannot") or w.endswith("n't")), None)
    return None if negation is None or "until" not in words[negation + 1:] else words.index("until", negation + 1)
