"""A clause with no subject of its own, said of the subject of the clause before it.

"…, and writes data to disk", "…, which occupies the carrier thread", "… while
charging an annual fee of 0.2%": such a clause says its predicate of what the clause
before it (or, for a relative clause, what that clause speaks of) names. When it rests
on another quote than that clause, the quote must say it of the same thing, by name,
by pointing back ("It …"), or by naming it again ("the population …"). Read by
:mod:`shared.verification.meaning_anchor` for each clause after the first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shared.verification.anaphora import anaphoric
from shared.verification.clause_parts import subject, subject_tokens
from shared.verification.clause_roles import pivots
from shared.verification.clauses import AUX, Clause, covered
from shared.verification.figure_binding import Failure, fail
from shared.verification.lexicon import CONDITION_OPENERS
from shared.verification.quote_subjects import CARRIERS, own_subject
from shared.verification.verb_reading import passive, verbness

__all__ = ["carried_subject"]

def carried_subject(before: Clause, before_readings: list[tuple[Clause, Clause, Clause]], clause: Clause,
                     readings: list[tuple[Clause, Clause, Clause]], quotes: Sequence[str],
                     antecedent: Clause | None = None) -> Failure | None:
    """A clause with no subject of its own ("…, and writes data to disk") says its
    predicate of the subject of the clause before it (for a relative clause, "…, which
    occupies the carrier thread and will…", of what that clause speaks of, its
    ``antecedent``). When it rests on another quote than that clause, the quote must say
    it of the same thing: "Redis keeps its data in memory and writes to a commit log"
    takes Cassandra's predicate."""
    toks = clause.tokens
    # (or a participle after "while", "after", "before": "… while charging an annual fee of 0.2%")
    participle = len(toks) > 1 and toks[0].low in _WHILE_DOING and toks[1].low.endswith("ing") and toks[1].verb
    if not toks or not participle and (toks[0].low not in CARRIERS or subject(clause)):
        return None
    if before.tokens and before.tokens[0].low in CONDITION_OPENERS:
        return None  # "When a row grows…, TOAST moves… and compresses…": its subject is not the first words
    if len(clause.tokens) > 1 and clause.tokens[1].low.endswith("ing") \
            and any(t.low == "with" for t in before.tokens[1:]):
        return None  # "…, with wind contributing 27% and overtaking gas": it goes on from the "with" phrase
    carried, named = subject(before), before
    if not carried and antecedent is not None:
        carried, named = subject(antecedent), antecedent
    if not carried:
        return None
    # (a quote's clause is told by its text and place: tokens are shared between texts
    # that open alike, "Version 4.1 …" and "Version 4.2 …")
    earlier = {(whole.text, whole.start) for _, _, whole in before_readings if whole.tokens}
    for _, aligned, whole in readings:
        if not whole.tokens or (whole.text, whole.start) in earlier:
            return None  # it rests on the quote the clause before it rests on
        own = {f for f in own_subject(aligned) if not f.endswith("li")}
        if _object_of(carried, before, aligned) and not _named_apart(before, aligned):
            return None  # "… in 5% of patients receiving dapagliflozin": the quote speaks of what it is given to
        if not own or own & carried and not _named_apart(before, aligned) or _verb_of(own, clause, aligned) \
                or anaphoric(whole.text[whole.start:whole.end]) or _agentless(clause, aligned) \
                or _named_again(aligned, before_readings):
            return None
    said = " ".join(t.text for t in named.tokens if min(t.forms) in carried)
    return fail("merge", f'it gives "{said}" what another quote says of something else',
                missing=[t.text for t in clause.content[:1]])


# Words that open a participle said of the clause's subject ("while charging", "after buying").
_WHILE_DOING = frozenset("while whilst after before since when by".split())


def _named_again(aligned: Clause, before_readings: list[tuple[Clause, Clause, Clause]]) -> bool:
    """The quote clause's subject is "the" and one noun ("…, the population recovered to
    210 pairs") that the subject of the quote the clause before rests on has ("The grey
    heron population along the river had fallen…"): it names that quote's thing again."""
    head = subject_tokens(aligned)
    if len(head) != 1 or aligned.text[:head[0].start].split()[-1:] not in (["the"], ["The"]):
        return False
    return any(head[0].forms & u.forms for _, theirs, _ in before_readings for u in subject_tokens(theirs))


def _verb_of(own: set[str], clause: Clause, aligned: Clause) -> bool:
    """The quote's subject is the clause's own verb said as a noun ("Commercial operation
    began in 2019" for "…, and began operating in 2019"): the quote speaks of the act, not
    of another thing."""
    nouns = {u.low for u in aligned.tokens if u.forms & own}
    return any(t.verb and t.forms & own and t.low not in nouns for t in clause.tokens[1:])


def _object_of(carried: set[str], before: Clause, aligned: Clause) -> bool:
    """The carried subject stands after a participle in the quote's clause, outside its
    subject ("patients receiving dapagliflozin", "those treated with X"), with no name or
    figure the sentence's clause lacks ("added in Python 3.11" is another version)."""
    toks, said = aligned.tokens, before.text[before.start:before.end]
    for i, t in enumerate(toks[1:], start=1):
        after = toks[i + 1:i + 4]
        if not after or not (t.low.endswith(("ing", "ed")) and t.verb and carried <= {f for u in after for f in u.forms}):
            continue
        phrase = aligned.text[t.end:after[-1].end + 8]  # (with the figure after the last word: "Python 3.11")
        if not any(w not in said for w in re.findall(r"\d[\d.,]*|\b[A-Z]\w*", phrase)):
            return True
    return False


def _named_apart(one: Clause, other: Clause) -> bool:
    """The subjects of the two clauses, alike in their words ("Version …", "Drug …"), each
    have a name or figure the other lacks ("Version 4.1" and "Version 4.2", "Drug X" and
    "Drug Y"): two things."""
    def names(clause: Clause) -> set[str]:
        toks = clause.tokens
        end = next((i for i in range(1, len(toks)) if toks[i].low in AUX or verbness(clause, i) >= 2), None) \
            or next((i for i in range(1, len(toks)) if verbness(clause, i) >= 1), 3)  # ("Drug X cut")
        region = clause.text[toks[0].start:toks[end].start] if end < len(toks) else clause.text[toks[0].start:]
        return {t.low for i, t in enumerate(toks[:end]) if i and t.text[:1].isupper()} \
            | set(re.findall(r"\d+(?:[.,]\d+)*", region))  # ("Version 2.1": one figure, not "2" and "1")
    mine, theirs = names(one), names(other)
    if mine - theirs and theirs - mine:
        return True
    # ("The eastern line" and "The western line": one head, a word in place of another)
    a, b = subject_tokens(one), subject_tokens(other)
    return len(a) == len(b) > 1 and bool(a[-1].forms & b[-1].forms) and sum(
        not x.forms & y.forms and not covered(x, y.forms) for x, y in zip(a, b, strict=True)) == 1


def _agentless(clause: Clause, aligned: Clause) -> bool:
    """The quote says the clause's predicate in the passive, naming no one who does it
    ("base quality scores are recalibrated"): its subject is what is done to, and the
    clause's carried subject ("the pipeline … recalibrates") is not another's."""
    found = pivots(clause, aligned)
    if found is None or not passive(aligned, found[1]) or passive(clause, found[0]):
        return False  # ("…, but they should be used to limit…": both passive, of two things)
    return all(u.low != "by" for u in aligned.tokens[found[1] + 1:])
