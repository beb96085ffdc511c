"""Polarity: whether a clause negates what the clause of its quote it restates affirms,
or the reverse ("rows are removed" against "rows are not removed").

Negations are counted by parity in the parts of the quote's clause the sentence restates,
with the ways negation is said without "not" (:mod:`shared.verification.negation_reading`)
weighed on both sides; a word one side negates and the other states plainly is a flip
whatever else either negates; and the group a comparison is made with ("than those who
did not") is no denial of the claim. :mod:`shared.verification.meaning` runs this check
first.
"""

from __future__ import annotations

from shared.verification.clause_reading import clause_parts, negations, not_only, prefix_flips
from shared.verification.clauses import AUX, Clause, covered, is_content
from shared.verification.lexicon import CONDITION_OPENERS, NEGATORS, OMISSION, PRIVATIVE, WORD_NEGATING_PREFIXES
from shared.verification.negation_reading import (
    advised_against, automatic, avoided, before_other_negated_predicate, capped, ceased, contrasted, ended_doing, negated_both, negated_words,
    not_since, not_until, not_without, omitted, privative, set_aside,
)
from shared.research.text import STOPWORDS

__all__ = ["denied_elsewhere", "polarity"]

def denied_elsewhere(said: Clause, source: Clause, whole: Clause) -> bool:
    """A clause of the quote sentence other than the one ``said`` aligns with denies, in
    words all of which ``said`` has, what ``said`` states: "The author's 2021 novel won the
    Booker Prize" against "… was shortlisted for the Booker Prize but did not win"."""
    if negations(said):
        return False
    rest = [t for t in whole.tokens if not source.start <= t.start < source.end]
    if not rest:
        return False
    other = Clause.spanning(rest, whole.text)
    toks = other.tokens
    for i, t in enumerate(toks):
        if t.low not in ("not", "n't", "never") and not t.low.endswith("n't"):
            continue
        end = other.pause_after(i)
        denied = [u for u in toks[i + 1:end] if is_content(u)]
        if denied and denied[0].verb and all(covered(u, said.forms) for u in denied):
            return True
    return False


def polarity(said: Clause, source: Clause) -> tuple[str, str] | None:
    """Polarity read against the parts of the quote's clause that the clause restates: a
    part of two content words or more, none of them the clause's (", with no change in
    yield"), is not what it restates, and a negation there is not one it drops (a
    condition, one opened by "without" too, is kept: dropping it is scope's to read).
    Likewise the clause's own parts that share no word with the quote ("Unlike hard disk
    drives, …, SSDs have no moving parts" read against the quote on hard disks) say
    nothing of it."""
    base = _denied_base(source)
    if base is not None:  # "… higher than those who did not": the other group, no denial of the claim
        if said.tokens and said.tokens[0].low == "without" and len(said.tokens) <= 4:
            return None  # ("… above their peers | without tutoring": that group named)
        source = Clause.spanning(source.tokens[:base], source.text)
        said = _without_base(said)
    if _governed_flip(said, source) or _governed_flip(source, said):
        return "negation", "it negates what its quote affirms, or affirms what its quote negates"
    return _polarity_of(_parts_about(said, source), _parts_about(source, said, _CONDITION_OR_WITHOUT))


_CONDITION_OR_WITHOUT = CONDITION_OPENERS | {"without"}
_BASE_DOERS = frozenset("those people ones others patients students participants children adults".split())


def _denied_base(clause: Clause) -> int | None:
    """Where the clause's comparison base starts when it is the group that did not
    ("… scored higher than those who did not", "… than those who had not"): the place of
    its "than", else None."""
    words = clause.words()
    for i, w in enumerate(words):
        rest = words[i + 1:]
        if w == "than" and len(rest) in (4, 5) and rest[0] in _BASE_DOERS and rest[1] in ("who", "that") \
                and rest[-1] in ("not", "n't") and all(r in AUX for r in rest[2:-1]):
            return i
    return None


def _without_base(clause: Clause) -> Clause:
    """The clause without its words for the group that did not ("non-attendees", "than
    those who did not", "their peers without tutoring")."""
    toks = clause.tokens
    base = _denied_base(clause)
    kept = toks[:base] if base is not None else toks
    kept = [t for t in kept if not t.low.startswith("non-")]
    end = next((n for n, t in enumerate(kept) if t.low == "without" and n and kept[n - 1].low in _PEERS), len(kept))
    kept = kept[:end]
    return Clause.spanning(kept, clause.text) if kept else clause


_PEERS = frozenset("peers counterparts classmates those others".split())


def _parts_about(clause: Clause, other: Clause, openers: frozenset[str] = CONDITION_OPENERS) -> Clause:
    """The parts of ``clause`` (:func:`clause_parts`) of fewer than two content words,
    opened by one of ``openers``, or sharing a content word with ``other``; all of it
    when none is."""
    kept = [t for part in clause_parts(clause)
            if len([u for u in part if is_content(u)]) < 2 or part[0].low in openers
            or any(is_content(u) and u.forms & other.forms for u in part)
            for t in part]
    return Clause.spanning(kept, clause.text) if kept else clause


def _governed_flip(one: Clause, other: Clause) -> bool:
    """A word ``one`` negates ("was not proportionate") that ``other`` states with no
    negation before it ("was proportionate"), whatever else either negates."""
    toks, theirs = one.tokens, other.tokens
    for i, t in enumerate(toks):
        if t.low not in ("not", "n't", "never", "cannot") and not t.low.endswith("n't"):
            continue
        if i + 1 < len(toks) and toks[i + 1].low in _NOT_A_NEGATION:
            continue
        # (the word after the negation: "never blocks on locks" negates "blocks", not "locks")
        governed = next((u for u in toks[i + 1:i + 4] if u.low not in AUX and u.low not in STOPWORDS), None)
        if governed is None:
            continue
        found = [j for j, u in enumerate(theirs) if is_content(u) and u.forms & governed.forms]
        contrast = one.text[:t.start].rstrip().endswith(",")  # "a warning, not an error"
        if not_until(one, other) or not_since(one, other) or contrast and any(set_aside(other, j) for j in found):
            continue  # "not released until it commits" for "released only when"; "not an error" for "rather than";
            # "has not erupted since 1913" for "last erupted in 1913"
        if not_without(one, other):
            continue  # "cannot log in without a code" for "a code is required to log in"
        if any(u.low in {p + governed.low for p in WORD_NEGATING_PREFIXES} for u in theirs):
            continue  # "colonies that were not exposed" for "unexposed colonies"
        if any(v.lemma in OMISSION for j in found for v in theirs[max(0, j - 2):j]):
            continue  # "so as not to run aground" for "to avoid running aground"
        if any(v.lemma in PRIVATIVE or advised_against(other, k) for j in found for k, v in
               enumerate(theirs[:j]) if k >= j - 4) and not any(v.lemma in PRIVATIVE for v in toks):
            continue  # "may not ask" for "prohibits employers from asking"; "should not" for "advised against"
        if found and not any(v.low in NEGATORS or v.low.endswith("n't") or v.low.startswith(WORD_NEGATING_PREFIXES)
                             for v in theirs[:max(found) + 1]):
            return True
    return False


# After "not": an addition ("not only"), a bound ("not more than"), an end ("no longer").
_NOT_A_NEGATION = frozenset("only just merely longer less more fewer later earlier greater exceeding exceed exceeds "
                            "above over below under".split())


def _polarity_of(said: Clause, source: Clause) -> tuple[str, str] | None:
    source = before_other_negated_predicate(said, source)
    flips = prefix_flips(said, source)
    if not_only(said) != not_only(source):
        return "negation", "it negates what its quote affirms, or affirms what its quote negates"
    if (negations(said) + flips + avoided(said, source) - negations(source) - avoided(source, said)) % 2 == 0:
        if negated_both(said, source) and not not_without(source, said) \
                or negated_both(source, said) and not not_without(said, source):
            return "negation", "it drops two negations of its quote (or adds two): not a double negative"
        if not flips and (ended_doing(source, said) or ended_doing(said, source)):
            return "negation", "it says a thing goes on where its quote says it stops, or the reverse"
        return None
    if not flips and (negations(said) + negated_words(said, source) + ceased(said, source) + contrasted(said, source)
                      + not_until(said, source) + not_since(said, source) + omitted(said, source)
                      + automatic(said, source) + avoided(said, source) + privative(said, source)
                      + capped(said, source)
                      - negations(source) - negated_words(source, said) - ceased(source, said)
                      - contrasted(source, said) - not_until(source, said) - not_since(source, said)
                      - omitted(source, said) - automatic(source, said) - avoided(source, said)
                      - privative(source, said) - capped(source, said)) % 2 == 0:
        return None  # "do not know" for "are unaware"; "stopped recommending" for "no longer recommended"
    return "negation", "it negates what its quote affirms, or affirms what its quote negates"
