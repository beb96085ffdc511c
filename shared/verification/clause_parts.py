"""Where a clause's subject is, and the parts a clause cuts into, for the meaning checks.

The subject before a clause's verb (past a qualifier that opens the clause, an
apposition, or a bound on its figure), the subject of what a reporting verb's "that"
introduces, and the parts of a clause that carry something of their own: a qualifier
that opens it ("Commissioned by The Times in 1931, …"), an apposition at its end
("…, a Late Jurassic deposit"), and a relative clause after its object.
"""

from __future__ import annotations

from shared.verification.clause_reading import ARTICLES, DATES, direction_of
from shared.verification.condition_reading import FRONTING
from shared.verification.clauses import AUX, Clause, Token, adjective, is_content
from shared.verification.figure_words import bounds_figure
from shared.verification.verb_reading import DETERMINERS, inflected, modifier, verbness
from shared.research.text import STOPWORDS

__all__ = [
    "REPORTING",
    "after_adverb",
    "complement_subject",
    "dated",
    "fronted_end",
    "fronted_parts",
    "irregular_participle",
    "qualifier_end",
    "relative_parts",
    "subject",
    "subject_tokens",
    "trailing_parts",
]


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
        if out and _adverb_before_verb(clause, i):
            break  # "the library now holds", "the opera initially failed": the adverb goes with the verb
        if out and t.text[:1].isupper() and clause.tokens[i - 1].text[:1].isupper() and t.low not in AUX:
            out.append(t)  # "The Helix Growth Fund": a word of a name, not a change or a verb
            continue
        if t.low in AUX or (direction_of(t) and not _describes(clause, i, start)) or (
                i > start and verbness(clause, i) >= 2 and not (after_determiner and modifier(clause, i))):
            break
        if is_content(t):
            out.append(t)
    return out


def _adverb_before_verb(clause: Clause, i: int) -> bool:
    """Token ``i`` is an adverb ("now", "still", "initially") before an inflected verb."""
    toks = clause.tokens
    if i + 1 >= len(toks):
        return False
    t, nxt = toks[i], toks[i + 1]
    adverb = t.low in _TIME_ADVERBS or len(t.low) >= 5 and t.low.endswith("ly") and not t.verb \
        and not adjective(t.low)
    return adverb and nxt.verb and nxt.low != nxt.lemma and nxt.low.endswith(("ed", "s"))


_TIME_ADVERBS = frozenset("now still already currently then later also".split())


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
    return t.verb and (inflected(t, "ed") or t.low.endswith("ing") and any(x != t.low for x in t.lemmas)
                       or irregular_participle(t))


def irregular_participle(t: Token) -> bool:
    """A past participle not in "-ed" ("Built", "seen", "written")."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    return t.low != t.lemma and t.low in {w.lower() for w in lemminflect.getInflection(t.lemma, "VBN")}


# Adverbs that may stand before the participle of an opening qualifier ("Last seen from
# Earth in 1986, …", "Originally built as a warehouse, …").
_LEADING_ADVERBS = frozenset("last first originally initially once recently newly formerly jointly".split())


def after_adverb(toks: list[Token]) -> int:
    """Where an opening's verb may stand: 1 after a leading adverb ("Last seen …"), else 0."""
    return 1 if len(toks) > 1 and toks[0].low in _LEADING_ADVERBS else 0


def fronted_end(clause: Clause, reach: int = 14) -> int:
    """Where the clause goes on after a qualifier that opens it and ends at a comma
    within ``reach`` words ("Before the levy took effect, …", "Commissioned by The
    Times in 1931, the typeface …")."""
    toks = clause.tokens
    if not toks:
        return 0
    if toks[0].low in _OPENERS:
        return next((n for n in range(1, min(len(toks), reach)) if clause.pause_before(n)), 0)
    lead = after_adverb(toks) if _participle(toks[after_adverb(toks)]) else 0
    if lead or _participle(toks[0]) and not modifier(clause, 0):  # (not "Confirmed measles cases jumped")
        end = next((n for n in range(1, min(len(toks), reach + 6)) if clause.pause_before(n)), 0)
        # (a gerund that is the subject, "Padding is mainly a problem …, because", has its verb before the comma)
        finite = any(u.low in AUX or u.verb and inflected(u, "s") and not u.text[:1].isupper()
                     and toks[k - 1].low not in DETERMINERS for k, u in enumerate(toks[1:end], start=1))
        return 0 if finite and toks[lead].low.endswith("ing") else end
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
