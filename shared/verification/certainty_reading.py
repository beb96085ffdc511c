"""How sure a clause says what it says, for the meaning checks (``shared.verification.meaning``).

A clause is hedged ("may", "suggests", "is expected to"), plain, or strong ("must",
"proves", "is certain to"); a limit or a rule's order ("may not exceed 10 cents",
"before they can be merged") and a capacity stated ("can store 3.9 billion cubic
metres") hedge nothing. An intention ("hopes to begin", "is in talks to sign") is read
with the act it intends, and a permission given ("lets a tenant end the lease") as what
"may" or "can" gives. The rest of what a clause states is read by
:mod:`shared.verification.clause_reading`.
"""

from __future__ import annotations

from shared.verification.clause_reading import ARTICLES, clause_parts, direction_of
from shared.verification.clauses import Clause, Token, adjective, is_content
from shared.verification.figure_words import EXCEED, figure_word
from shared.verification.lexicon import CAUSAL, HEDGES, STRONG

__all__ = ["certainty", "intended", "permits"]


def certainty(clause: Clause, about: set[str] | None = None, *, intent: bool = True) -> int:
    """1 hedged, 2 plain, 3 strong ("must", "proves", "is certain to"). With ``about`` (the word forms of a clause read
    against this one), a hedge counts only in a part of the clause (:func:`clause_parts`)
    that shares a word with it: "…, after which the dose can be adjusted" hedges the
    adjusting, not "the effect is achieved" before it. ``intent``: an intention ("hopes
    to begin", "the goal") counts as a hedge."""
    for part in clause_parts(clause):
        hedged = {t.low for n, t in enumerate(part) if (t.low in HEDGES or t.low in _EXPECTED and (
                      n + 1 < len(part) and part[n + 1].low == "to" or n and part[n - 1].low in ARTICLES | _BE)
                      or _evidence_fits(part, n))
                  and not t.text.isupper()  # ("the CAN bus")
                  and not (t.text == "May" and t.start > clause.start)  # ("on 3 May": the month)
                  and not (t.low == "likely" and n and part[n - 1].low in ("more", "less", "most", "least", "as"))
                  and not _limit_after(part, n)} | _expects(part, intent=intent)
        if hedged and (about is None or any(
                t.forms & about for t in part if is_content(t) and t.low not in HEDGES and not direction_of(t))):
            return 1
    words = clause.words()
    sure = any(w in ("certain", "sure") and words[n + 1:n + 2] == ["to"] for n, w in enumerate(words))
    strong = {w for n, w in enumerate(words) if w in STRONG and not (
        w in _TURNED_OUT and n + 1 < len(words) and (words[n + 1][:1].isdigit() or adjective(words[n + 1])))
        and not (w.startswith("establish") and words[n + 1:n + 2] != ["that"])}  # ("to establish the orchestra")
    return 3 if strong or sure else 2


def _evidence_fits(part: list[Token], n: int) -> bool:
    """"are consistent with", "is compatible with": evidence that fits a claim without
    establishing it (a hedge)."""
    return part[n].low in ("consistent", "compatible") and n + 1 < len(part) and part[n + 1].low == "with" \
        and n > 0 and part[n - 1].low in _BE | {"remain", "remains", "remained"}


# "proved 94% effective", "proved popular": what a thing turned out to be, not a proof
_TURNED_OUT = frozenset("proved proven".split())


def _expects(part: list[Token], *, intent: bool) -> set[str]:
    """The verb of an expectation with its infinitive ("Analysts expect the merger to be
    completed", "forecasts prices to rise"): a hedge on what is expected; with ``intent``,
    also an intention ("hopes to begin") or its noun ("the goal")."""
    return {t.low for n, t in enumerate(part) if t.lemma in _EXPECT_VERBS and t.verb
            and any(u.low == "to" and part[m - 1].low != "up" and m + 1 < len(part) and part[m + 1].verb
                    for m, u in enumerate(part[n + 1:n + 7], start=n + 1))
            or intent and (_intends(part, n) or t.low in _INTENT_NOUNS)}


def _intends(part: list[Token], n: int) -> bool:
    """The word at ``n`` opens an intention with the act intended after "to" ("hopes to
    begin", "is in talks to sign")."""
    t = part[n]
    opens = t.lemma in _INTEND_VERBS or t.low == "talks" and n and part[n - 1].low == "in"
    return opens and n + 2 < len(part) and part[n + 1].low == "to" and part[n + 2].verb


def intended(clause: Clause) -> set[str]:
    """The lemmas of the acts the clause says are intended ("plans to convert the mill":
    "convert")."""
    toks = clause.tokens
    return {lemma for n in range(len(toks)) if _intends(toks, n) for lemma in toks[n + 2].lemmas}


def permits(clause: Clause) -> bool:
    """The clause gives a permission or an ability ("lets a tenant end the lease",
    "allows members to archive", "are able to archive"): what may be done, as "may" or
    "can" says it."""
    toks = clause.tokens
    return any(t.lemma in _PERMIT_VERBS and t.verb or t.low == "able" and toks[n + 1:n + 2] and toks[n + 1].low == "to"
               for n, t in enumerate(toks))


# Verbs of a permission or an ability given ("lets", "allows … to", "enables … to"); not
# "entitled to", a right, which is more than "may request".
_PERMIT_VERBS = frozenset("let allow permit enable".split())


# Verbs of an intention before the act intended ("hopes to begin production", "would aim
# to reduce waiting lists"): the act is planned, not done or sure.
_INTEND_VERBS = frozenset("hope aim intend plan seek".split())
# ("is the goal set out in the agreement": an aim named as a noun)
_INTENT_NOUNS = frozenset("goal aim objective objectives intention intentions ambition".split())


_EXPECT_VERBS = frozenset("expect anticipate predict forecast".split())


# Words that hedge what follows "to" ("is expected to return", "is thought to be a
# factor"), the noun after them ("the projected cost") or the subject they are said of
# ("perihelion is anticipated in late November"); not "lower than expected".
_EXPECTED = frozenset("expected anticipated thought believed projected forecast predicted".split())
_BE = frozenset("is are was were be been being".split())


def _limit_after(part: list[Token], n: int) -> bool:
    """"may not exceed 10 cents", "may not come off until the concrete has cured", "before
    they can be merged": a limit or a rule's order, not a hedge."""
    words = [t.low for t in part[n + 1:n + 5]]
    if any(t.low in _ORDERS for t in part[max(0, n - 2):n]):
        return True  # "before they can be merged"
    if words[:1] == ["not"] and any(t.low in _ORDERS for t in part[n + 2:n + 9]):
        return True  # "may not be merged until two maintainers approve"
    if part[n].low == "can" and _capacity(part, n):
        return True  # "can store 3.9 billion cubic metres", "can be fined up to 4%": what it holds or allows
    return words[:1] == ["not"] and words[1:2] != [] and words[1] in EXCEED and any(figure_word(w) for w in words[2:])


# Verbs that tell an effect ("can prevent 90% of cases" is a possibility, not a capacity)
_EFFECTS = frozenset("prevent prevents kill kills cure cures cause causes lead leads trigger triggers save saves "
                     "avoid avoids protect protects lower".split())


def _capacity(part: list[Token], n: int) -> bool:
    """"can" at ``n`` before a verb and a figure it reaches ("can store 3.9 billion cubic
    metres", "can be charged … in 18 minutes", "operate … as low as -25 °C"): a capacity,
    stated, not a possibility; not a change or an effect ("can cut costs by 30%")."""
    after = part[n + 1:n + 9]
    verb = next((t for t in after if t.low not in _BE and t.low not in ("also", "still", "only")), None)
    if verb is None or verb.low == "not" or direction_of(verb) is not None and verb.low not in EXCEED \
            or verb.low in _EFFECTS or verb.lemma in CAUSAL:
        return False  # (a bound, "can exceed 320 km/h", is a capacity)
    return any(t.low[:1].isdigit() for t in after)


_ORDERS = frozenset("until before unless".split())
