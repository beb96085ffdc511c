"""A clause's conditions, for the scope check (:mod:`shared.verification.scope`).

A condition is what a clause holds under: an opening qualifier that ends at a comma
("In patients under 60 with a BMI below 30, …"), and phrases opened by within, when,
if, unless, during, among, "by default", or "in"/"on"/"for" before a name or a group
("in the Alps", "for adults"). A setting ("In the trial, …", "In a statement, …"), an
opening that points back ("Over the same period, …"), a date ("on Thursday") and what a
participle takes ("based on Prejean's memoir") are none.
"""

from __future__ import annotations

from shared.verification.clause_reading import ARTICLES, DATES
from shared.verification.clauses import Clause, Token, adjective, is_content
from shared.verification.figure_words import figure_word
from shared.verification.lexicon import CONDITION_OPENERS

__all__ = ["FRONTING", "SETTINGS", "SPANS", "conditions", "fronted", "opening_qualifier"]


# Where a finding was made or said ("In the trial, ...", "In this study, ...", "In a
# statement, ..."): its setting, not a condition that narrows it.
SETTINGS = frozenset("trial study cohort analysis experiment survey paper report review sample dataset "
                     "benchmark test evaluation investigation work statement interview letter speech filing "
                     "release briefing announcement testimony".split())


FRONTING = frozenset("in on for at with over during under among within after when if unless once of".split())


def opening_qualifier(clause: Clause, reach: int = 16) -> list[Token]:
    """The words of a qualifier that opens the clause, after its opener, up to its comma
    within ``reach`` words ("In patients under 60 with a BMI below 30, …", "With fsync
    disabled, …"); none for a setting ("In the trial, …") nor for one that points back
    ("Over the same period, …", "In that year, …": the time another quote gives, which a
    sentence may say in its own words)."""
    toks = clause.tokens
    if not toks or toks[0].low not in FRONTING:
        return []
    end = next((n for n in range(1, min(len(toks), reach)) if clause.pause_before(n)), 0)
    words = toks[1:end]
    content = [u for u in words if is_content(u)]
    # (a setting with a figure, "In the 2019 cohort, …", says which one: a condition)
    setting = not any(u.low[:1].isdigit() for u in words) and (
        {u.lemma for u in content} <= SETTINGS
        or len(words) <= 4 and content and content[-1].lemma in SETTINGS and words[0].low in ARTICLES)
    if setting or any(u.low in _POINTING for u in words[:3]):
        return []  # (also "In its annual report, …": a setting named by its kind)
    if len(words) == 1 and words[0].low in _LINKING:
        return []  # ("In addition, …", "In fact, …": a link to what came before, no condition)
    return words


_POINTING = frozenset("same that this these those".split())
_LINKING = frozenset("addition fact turn short contrast comparison summary sum conclusion particular brief".split())
SPANS = frozenset("period time span year month week day decade century interval window stretch era season".split())


def fronted(clause: Clause) -> list[Token]:
    """The content words of a short qualifier that opens the clause (:func:`opening_qualifier`)."""
    return [u for u in opening_qualifier(clause, reach=10) if is_content(u) or u.low.isdigit()]


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
        opens = t.low in CONDITION_OPENERS and not (t.low == "where" and clause.pause_before(i))
        # (", where it remained": a relative clause on the word before, not a condition)
        if t.low == "by" and nxt is not None and nxt.low == "default":
            out.append([nxt])
            continue
        if t.low in ("in", "on", "for") and nxt is not None and nxt.low == "the" and i + 2 < len(toks) \
                and toks[i + 2].text[:1].isupper() and toks[i + 2].low not in DATES and not _argument(toks, i):
            # "in the Alps", "for the EU": a place or a named group, its capitalised words
            named = [u for u in toks[i + 2:i + 6] if u.text[:1].isupper()]
            run = toks[i + 2:i + 2 + next((n for n, u in enumerate(toks[i + 2:i + 6]) if not u.text[:1].isupper()),
                                          len(named))]
            out.append(run)
            continue
        if t.low in ("in", "on", "for") and nxt is not None and nxt.low not in DATES and not _argument(toks, i) and (
                nxt.text[:1].isupper() or nxt.low in ("patients", "adults", "children", "women", "men", "mice", "rats",
                                                      "small", "large")):
            opens = True
        group = next((n for n in range(i + 1, min(i + 4, len(toks))) if toks[n].low in _GROUPS), None) \
            if t.low == "for" and i and adjective(toks[i - 1].low) else None
        if group is not None:  # "free for city residents": whom it is free for (up to them)
            out.append([u for u in toks[i + 1:group + 1] if is_content(u)])
            continue
        if t.low == "in" and [u.low for u in toks[i + 1:i + 2]] == ["the"] and i + 3 < len(toks) \
                and toks[i + 2].low in _RELATION and toks[i + 3].low == "of":
            opens = True  # "in the presence of chlorides"
        if t.low in ("on", "at", "during") and not any(clause.pause_before(k) for k in range(i + 1, min(i + 4, len(toks)))) \
                and (any(u.low in _WHEN_IT_HOLDS for u in toks[i + 1:i + 3])
                     or [u.low for u in toks[i + 1:i + 2]] == ["the"] and i + 3 < len(toks)
                     and toks[i + 2].low in _ORDINAL_DAYS and toks[i + 3].low in _WEEKDAYS):
            opens = True  # "on Sundays", "at weekends", "on the first Sunday of every month": when it holds
        if t.low == "than" and i >= 2 and toks[i - 1].low.endswith("er") and nxt is not None \
                and figure_word(nxt.low) and is_content(toks[i - 2]):
            opens = True  # "supermarkets larger than 400 square metres": which ones
        if not opens:
            continue
        phrase = []
        for n, u in enumerate(toks[i + 1:i + 6], start=i + 1):
            if u.low in CONDITION_OPENERS or u.low in _CLAUSE_LINKS or clause.pause_before(n):
                break  # ("in Portugal before the peloton transfers": the condition is "in Portugal")
            phrase.append(u)
        content = [u for u in phrase if is_content(u) or u.low.isdigit()]
        relation = next((n for n, u in enumerate(toks[i + 1:i + 4], start=i + 1)
                         if u.low in _RELATION and n + 1 < len(toks) and toks[n + 1].low == "of"), None)
        if relation is not None:  # "in the presence of a catalyst": the condition is the catalyst
            content = [u for n, u in enumerate(toks[relation + 2:relation + 6], start=relation + 2)
                       if is_content(u) and not any(toks[k].low in CONDITION_OPENERS or clause.pause_before(k)
                                                    for k in range(relation + 2, n + 1))]
        if any(u.low in _POINTING for u in phrase[:2]) and any(u.lemma in SPANS for u in phrase):
            continue  # "during the same period": the time another quote gives ("if this flag is set" is a condition)
        if content:
            out.append(content)
    return out


_RELATION = frozenset("presence absence".split())
# Words that link another clause or event, ending a condition's phrase.
_CLAUSE_LINKS = frozenset("before after until because while whereas although though".split())
# People a rule or an offer holds for ("for city residents", "for existing subscribers").
_GROUPS = frozenset("""residents citizens members subscribers employees staff students pupils visitors users
    customers owners holders drivers tenants pensioners veterans beginners newcomers households""".split())
# Times of the week, day or year a statement may hold only at.
# (a weekday alone, "on Thursday", is when a thing happened; the plural, when it holds)
_WHEN_IT_HOLDS = frozenset("mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends weekdays "
                           "holidays".split())
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_ORDINAL_DAYS = frozenset("first second third fourth last".split())


def _argument(toks: list[Token], i: int) -> bool:
    """The preposition at ``i`` follows a participle whose argument it opens ("an opera
    based on Prejean's memoir", "published in Nature"): what it names is no condition."""
    # ("approved for adults", "licensed for use in the EU": "for" names whom it holds for, a condition)
    if i > 1 and toks[i - 1].low in _PARTICLES and (toks[i - 2].verb or toks[i - 2].low.endswith("ed")) \
            and toks[i].low != "for":
        return True  # "as set out in Section 4", "laid down in the treaty"
    return i > 0 and toks[i - 1].low.endswith("ed") and toks[i - 1].low != "need" and toks[i].low != "for"


_PARTICLES = frozenset("out down forth up".split())
