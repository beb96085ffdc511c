"""Which word is a clause's verb, and what its subject undergoes, for the meaning checks.

How surely a word is the clause's verb (after an auxiliary, inflected as one, or only a
word that may be one), whether a participle describes the noun after it, and the
clause's voice: a passive, a participle after its noun ("a configuration pushed to
edge routers"), or a verb of change with no object ("hectares burned"), each of which
makes its subject what the act is done to.
"""

from __future__ import annotations

from functools import lru_cache

from shared.verification.clause_reading import ARTICLES, PHRASE_STOPS, WEAK, direction_of
from shared.verification.clauses import AUX, BE, Clause, Token, is_content, lemmas_of
from shared.verification.figure_words import figure_word
from shared.research.text import STOPWORDS

__all__ = [
    "DETERMINERS",
    "LEADS_VERB",
    "NOT_PARTICIPLES",
    "inflected",
    "modifier",
    "passive",
    "undergoes",
    "verbness",
]


def passive(clause: Clause, pivot: int) -> bool:
    """The verb at ``pivot`` is passive: a participle ("removed", "written", "held")
    after a form of "be" (or "get") within the two words before it, or with its agent
    after it ("Linear B, deciphered by Michael Ventris, …")."""
    t = clause.tokens[pivot]
    participle = (t.low.endswith(("ed", "en")) or t.low != t.lemma or past_participle(t.low)) \
        and t.low not in NOT_PARTICIPLES
    agent = pivot + 1 < len(clause.tokens) and clause.tokens[pivot + 1].low == "by" \
        and not measure_at(clause, pivot + 2)  # (not "retreated by around two kilometres": a measure)
    return participle and (agent or any(u.low in BE for u in clause.tokens[max(0, pivot - 3):pivot]))


# Words that make the figure after them approximate ("roughly 900", "over 40").
APPROXIMATE = frozenset("about around roughly approximately nearly almost some circa over under".split())


def measure_at(clause: Clause, i: int) -> bool:
    """A figure stands at ``i``, perhaps after a word that makes it approximate ("two
    kilometres", "around 40%", "roughly half"): a measure, no party to a verb ("by a
    committee", "by one of its founders" name one)."""
    toks = clause.tokens
    if i < len(toks) and toks[i].low in APPROXIMATE:
        i += 1
    return i < len(toks) and figure_word(toks[i].low) and toks[i].low not in ("a", "an", "one")



@lru_cache(maxsize=8192)
def past_participle(low: str) -> bool:
    """``low`` is a verb's past participle ("withdrawn", "held"), whatever else it may be
    ("withdrawn" is an adjective too)."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    return any(low in lemminflect.getInflection(lemma, "VBN") for lemma in lemminflect.getAllLemmas(low).get("VERB", ()))


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
    if prev[:1].isdigit() and inflected(t, "ed"):
        return 3  # "from 2010 to 2020 lowered": a verb after a figure
    # (a capital "A" after a word is a name's letter, "protein kinase A activates", not an article)
    letter = i > 1 and clause.tokens[i - 1].text == "A"
    if t.low.endswith("ing") or not letter and (prev in DETERMINERS or figure_word(prev)) \
            or prev in ("percentage", "basis"):
        return 0  # "the fire", "most cases", "four days", "25 eagles", "3 percentage points": a noun
    if inflected(t, "ed"):
        after = clause.tokens[i + 1].low if i + 1 < len(clause.tokens) else ""
        if after == "by" and i and prev not in STOPWORDS and not clause.pause_before(i) \
                and not any(u.low in AUX for u in clause.tokens[max(0, i - 3):i]):
            return 1  # "delays caused by faults": a participle that qualifies its noun
        return 3
    s_form = t.low != t.lemma and t.low.endswith("s")
    nxt = clause.tokens[i + 1] if i + 1 < len(clause.tokens) else None
    if s_form and nxt is not None and nxt.verb and nxt.low not in STOPWORDS and not clause.pause_before(i + 1) \
            and nxt.low == nxt.lemma and (_change(nxt) or not lemmas_of(nxt.low)[2]):
        return 0  # "compression fractures increase the risk": a plural noun before its verb
    if s_form and i + 1 < len(clause.tokens) and clause.pause_before(i + 1) and prev not in LEADS_VERB:
        return 1  # "…light sources, acquired": the end of a noun phrase more likely than a verb
    if s_form and i > 1 and prev not in STOPWORDS and not clause.tokens[i - 1].text[:1].isupper() \
            and not clause.pause_before(i) and not clause.pause_before(i - 1) \
            and clause.tokens[i - 2].low not in STOPWORDS and not modifier(clause, i - 2) \
            and verbness(clause, i - 2) >= 2:  # (not "Shared memory makes": a participle before its noun)
        return 1  # "receive free breakfasts": a plural after a verb and its adjective, the verb's object
    if not s_form and prev not in STOPWORDS and nxt is not None and nxt.low in _POSSESSIVES \
            and not clause.pause_before(i) and not clause.pause_before(i + 1):
        return 2  # "the standby nodes replicate their logs": a word before "their" is a verb
    # ("drove", "rose": a verb's irregular past, read as surely as "-ed")
    past = not t.low.endswith(("s", "ing")) and not letter and _irregular_past(t.low)
    return 2 if s_form or past or not lemmas_of(t.low)[2] else 1


def _change(t: Token) -> bool:
    """A verb of change ("increase", "cut"), not an adjective or comparative ("short", "more")."""
    return direction_of(t) is not None and t.low not in WEAK and not t.low.endswith(("er", "est")) \
        and t.low not in ("more", "less", "fewer", "most", "least", "best", "worst", "up", "down")


@lru_cache(maxsize=4096)
def _irregular_past(low: str) -> bool:
    """``low`` is a verb's simple past, unlike its participle ("drove", "rose", "grew";
    not "known" or "kept", which may describe a noun, nor "number", a comparative of
    "numb")."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    lemmas = [lemma for lemma in lemminflect.getAllLemmas(low).get("VERB", ()) if lemma != low]
    return any(low in lemminflect.getInflection(lemma, "VBD") and low not in lemminflect.getInflection(lemma, "VBN")
               for lemma in lemmas)


def inflected(t: Token, suffix: str) -> bool:
    """``t`` ends in ``suffix`` and has a lemma other than itself ("acquired": acquire)."""
    return t.low.endswith(suffix) and any(x != t.low for x in t.lemmas)


def modifier(clause: Clause, i: int) -> bool:
    """A participle used as an adjective: "-ed"/"-en" right before a content word
    ("developed economies")."""
    nxt = clause.tokens[i + 1] if i + 1 < len(clause.tokens) else None
    return clause.tokens[i].low.endswith(("ed", "en")) and nxt is not None and is_content(nxt)


# Verbs whose subject, with no object, is what undergoes the change ("1.8 million
# hectares burned" is "the fire season burned 1.8 million hectares").
_ERGATIVE = frozenset("burn break melt sink open close shatter dissolve freeze thaw spread flood collapse "
                      "crack tear bend split".split())


_WHEN = frozenset("on in at during since until before after".split())


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
    # (a date or time after its preposition, "opened on 9 November", governs nothing)
    governs = after is not None and (verbness(clause, i + 2) >= (1 if nxt == "to" else 2)
                                     or after.low[:1].isdigit() and nxt not in _WHEN)
    reduced = i and t.low.endswith(("ed", "en")) and is_content(toks[i - 1]) and verbness(clause, i - 1) < 2 \
        and nxt in PHRASE_STOPS and nxt != "by" and not governs \
        and not any(u.low in ("and", "or", "but") for u in toks[i + 1:]) \
        and any(verbness(clause, k) >= 2 or toks[k].low in BE for k in range(len(toks)) if k != i)
    return bool(reduced) or t.lemma in _ERGATIVE and (not nxt or nxt in PHRASE_STOPS and not governs)
