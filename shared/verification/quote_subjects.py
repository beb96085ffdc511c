"""What a quote speaks of: the subject of the clause a sentence's clause restates,
whether the sentence keeps it, and a subject grafted onto it from another quote.

A merge of two quotes shows in their subjects: "epoll is limited to 1,024" from
"select is limited to 1,024" keeps the predicate and swaps the subject. These readers
find the quote clause a clause aligns with, its subject, and a word of the sentence
that stands where the quote has another.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.verification.anaphora import points_back
from shared.verification.clause_parts import complement_subject, fronted_end, subject, subject_tokens
from shared.verification.acronyms import abbreviated
from shared.verification.clauses import (
    Clause, Token, clauses, covered, forms_of, is_content, names, place_named, token,
)
from shared.verification.figure_base import Figure
from shared.verification.figures import figures, same_figure

__all__ = [
    "CARRIERS", "aligned_clause", "alignment", "gives_predicate", "grafted_subject", "keeps_subject", "other_setting",
    "own_subject", "stands_in", "subject_of",
]

# Words that carry a clause on with the subject of the one before ("…, and writes…").
CARRIERS = frozenset("and or but then yet".split())


def other_setting(clause: Clause, helping: Sequence[Sequence[Clause]]) -> str | None:
    """A quote that lends the clause a figure opens with a qualifier whose word the clause
    has another in place of ("In the southern region, … speeds were 310 Mbit/s" lent to
    "The northern region …"): what that qualifier speaks of, else None."""
    for quote in helping:
        for qc in quote:
            for u in qc.tokens[:fronted_end(qc)]:
                if is_content(u) and not u.forms & clause.forms and _stood_in(u, qc, clause):
                    return " ".join(t.text for t in qc.tokens[:fronted_end(qc)] if is_content(t))
    return None


def own_subject(quote_clause: Clause) -> set[str]:
    """The subject of a quote's clause; for one with none of its own ("…, but reduced the
    corn yield"), the subject of the clause before it in the quote."""
    found = subject(quote_clause)
    if found or not quote_clause.tokens or quote_clause.tokens[0].low not in CARRIERS:
        return found
    earlier = [c for c in clauses(quote_clause.text) if c.end <= quote_clause.start]
    return subject(earlier[-1]) if earlier else found


def stands_in(clause: Clause, t: Token, quote: Sequence[Clause], sentence: Clause) -> bool:
    """``t`` stands where the quote has another word the sentence does not: between the
    same two content words (or after the same one, at the clause's end)."""
    return _replaced(clause, t, quote, sentence.forms) is not None


def _around(c: Clause, i: int) -> tuple[frozenset[str], frozenset[str]]:
    before = next((u.forms for u in reversed(c.tokens[:i]) if is_content(u)), frozenset())
    after = next((u.forms for u in c.tokens[i + 1:] if is_content(u)), frozenset())
    return before, after


def _replaced(clause: Clause, t: Token, quote: Sequence[Clause], sentence: set[str]) -> Token | None:
    """The quote's word that ``t`` stands in for (see :func:`stands_in`)."""
    i = next(n for n, u in enumerate(clause.tokens) if u is t)
    return next((u for qc in quote for n, u in enumerate(qc.tokens)
                 if is_content(u) and not u.forms & sentence and _same_place(clause, i, qc, n)), None)


def _same_place(x: Clause, i: int, y: Clause, j: int, *, open_start: bool = False) -> bool:
    """Token ``i`` of ``x`` and token ``j`` of ``y`` stand between the same two content
    words (or after the same one, at their clauses' ends). ``open_start``: a side that
    opens the phrase in ``x`` ("The southern section") need not match."""
    before, after = _around(x, i)
    b, a = _around(y, j)
    return bool((before & b or not before and (open_start or not b)) and (after & a or not after and not a))


def gives_predicate(clause: Clause, own: set[str], mine: Sequence[Token], anchor: Sequence[Token], quote: str,
                     anchor_quote: str, sentence_figures: Sequence[Figure]) -> bool:
    """A quote gives the clause's predicate something its anchor quote does not: a word
    outside the clause's subject, or a figure."""
    if any(u not in anchor and not u.forms & own for u in mine):
        return True
    theirs, anchors = figures(quote), figures(anchor_quote)
    return any(clause.start <= f.start < clause.end + 1 and any(same_figure(f, q) for q in theirs)
               and not any(same_figure(f, q) for q in anchors) for f in sentence_figures)


def grafted_subject(clause: Clause, quotes: Sequence[str], quote_clauses: Sequence[list[Clause]],
                     quote_forms: Sequence[set[str]], best: int) -> str | None:
    """The clause's subject comes from another quote than its anchor and holds none of
    the anchor's subject ("Carl Hewitt and his colleagues can send messages to other
    actors" from "Carl Hewitt and his colleagues described the model" and "The actor can
    send messages to other actors"): that subject, else None."""
    said = subject_tokens(clause)
    if not said or points_back(quotes[best]):
        return None
    theirs = subject_of(clause, quote_clauses[best])
    kept = theirs & {min(t.forms) for t in said}
    if not theirs or kept == theirs:
        return None
    foreign = [t for t in said if not t.forms & quote_forms[best]
               and any(t.forms & f for j, f in enumerate(quote_forms) if j != best)]
    if kept:  # part of the anchor's subject kept: grafted only where another quote's words stand in for the rest
        aligned = aligned_clause(clause, quote_clauses[best])
        foreign = [t for t in foreign if (u := _replaced(clause, t, [aligned], clause.forms)) is not None
                   and not covered(t, u.forms)]  # ("World rice prices" for "Global rice prices": a synonym)
    return " ".join(t.text for t in said) if foreign and len(foreign) * 2 >= len(said) else None


def aligned_clause(clause: Clause, quote: Sequence[Clause]) -> Clause:
    keys = clause.content
    return max(quote, key=lambda qc: alignment(keys, qc))


def subject_of(clause: Clause, quote: Sequence[Clause]) -> set[str]:
    """The subject of the quote's clause that best matches ``clause`` (and of what its
    reporting verb's "that" says: "Curators confirmed that the capsule held…"), without
    adverbs ("typically")."""
    aligned = aligned_clause(clause, quote)
    return {f for f in subject(aligned) | complement_subject(aligned) if not f.endswith("li")}


_NEGATING = ("non-", "anti-", "un-", "counter-")  # "non-atomic" does not name what "atomic" does


def keeps_subject(clause: Clause, quote: Sequence[Clause], *, whole: bool = False) -> bool:
    """The subject of the quote's clause that best matches ``clause`` is in it, with
    every name it has ("the Swiss National Bank" is not kept by "the Bank of Japan")
    and no word of it swapped for another ("the northern section" for "the southern
    section"); ``whole``: every word of it."""
    own = subject_of(clause, quote)
    have = clause.forms.union(*(token(part, 0, 0).forms for t in clause.tokens
                                if "-" in t.low and not t.low.startswith(_NEGATING)
                                for part in t.low.split("-") if part))  # "patch-tested" has "patch"
    if not own or (own - have if whole else not own & have):
        return False
    text = quote[0].text if quote else ""
    labelled = {n.split()[0]: n for n in names(clause.text) if " " in n}  # ("Block C")
    for name in names(text):  # each name kept, or its acronym ("JWST" for "James Webb Space Telescope")
        forms = token(name.lower(), 0, 0).forms & own
        if forms and not forms <= have and not abbreviated(name, text, clause.text):
            return False
        if " " in name and labelled.get(name.split()[0], name) != name:
            return False  # "Block D" where the clause names "Block C": another of the kind
    opener = quote[0].tokens[0] if quote and quote[0].tokens else None
    if opener is not None and opener.text[:1].isupper() and opener.low.endswith(("'s", "’s")) \
            and opener.forms & own and not opener.forms & have \
            and not any(place_named(t.text, opener.text) for t in clause.tokens):  # ("German" for "Germany's")
        return False  # "Dunmark's coffee exports": a name, though it opens the quote
    aligned = aligned_clause(clause, quote)
    return not any(u.forms & own and (not u.verb or u.low in _ORDINALS) and not u.forms & clause.forms
                   and _stood_in(u, aligned, clause)
                   for u in subject_tokens(aligned))  # (a word that may be a verb may be the subject's end)


# ("the second season": an ordinal in a subject is no verb, though "second" may be one)
_ORDINALS = frozenset("first second third fourth fifth sixth seventh eighth ninth tenth".split())


def _stood_in(u: Token, quote_clause: Clause, clause: Clause) -> bool:
    """A word of ``clause`` that the quote lacks stands where ``u`` does in the quote."""
    i = next(n for n, x in enumerate(quote_clause.tokens) if x is u)
    if _around(quote_clause, i) == (frozenset(), frozenset()):
        return False
    return any(is_content(t) and not t.forms & quote_clause.forms and _same_place(quote_clause, i, clause, n,
                                                                                  open_start=True)
               for n, t in enumerate(clause.tokens))


def alignment(keys: Sequence[Token], quote_clause: Clause) -> int:
    """How many of a sentence clause's content words a quote clause holds. The clauses
    that hold most are its aligned clause (together, when several tie: a sentence that
    spans them is read against all of them)."""
    forms = forms_of([quote_clause])
    return len([t for t in keys if covered(t, forms)])
