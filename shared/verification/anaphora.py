"""Quotes that point back: what they speak of was named before them, perhaps in another
quote ("Its effect is monitored…", "The decline was…", "As a result, …"). Such a quote
may lend a clause its predicate without a subject of its own (see
:mod:`shared.verification.meaning_anchor`).
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.verification.clause_roles import subject_tokens
from shared.verification.clauses import clauses, covered
from shared.verification.lexicon import DIRECTIONS

__all__ = ["anaphoric"]


_ANAPHORS = frozenset("it its they their this that these those such".split())
# Openers that go on from what was said before ("As a result, the ratio reached 9.1").
_GOING_ON = ("as a result", "as a consequence", "in response", "in turn", "consequently", "therefore", "thus",
             "in addition", "moreover", "however", "in contrast", "by contrast", "meanwhile")


def anaphoric(quote: str, others: Sequence[str] = ()) -> bool:
    """The quote opens by pointing back ("Its effect...", "This loss...", "Despite its
    name, ...", "The decline is...": a bare "the" and a noun for an event or act; "The
    subsidies cover…" after a quote that named "price-gap subsidies", one of ``others``):
    what it speaks of was named before it, perhaps in another quote."""
    return _points_back(quote) or _named_before(quote, others)


def _named_before(quote: str, others: Sequence[str]) -> bool:
    """The quote's subject is a short definite noun phrase ("The target", "About 78% of
    these interruptions") or an act ("Shading raises…") each of whose words another quote
    has: it speaks of what that quote named ("a fuel target", "leaves … are shaded"),
    where "The northern region" after "the southern region" names another."""
    said = clauses(quote)
    own = subject_tokens(said[0]) if said and others else []
    if not own or len(own) > 2:
        return False
    opening = [t.low for t in said[0].tokens if t.start < own[-1].start]
    act = len(own) == 1 and own[0].start == said[0].tokens[0].start and own[0].low.endswith("ing")
    if not act and not (opening and opening[0] in _DEFINITE) and not _ANAPHORS & set(opening):
        return False
    forms = {f for other in others if other != quote for c in clauses(other) for t in c.tokens for f in t.forms}
    return all(covered(t, forms) for t in own)


_DEFINITE = frozenset("the these those".split())


def _points_back(quote: str) -> bool:
    words = [w.strip("\"'([,;:").lower() for w in quote.split()[:4]]
    if not words:
        return False
    if words[0] in _ANAPHORS or quote.lower().startswith(_GOING_ON):
        return True
    lead, _, rest = quote.partition(",")
    if len(lead.split()) <= 3 and rest and any(w.lower() in _ANAPHORS for w in lead.split()):
        return True  # "Despite its name, the conflict spanned…"
    after = [w.lower() for w in rest.split()[:2]] if len(lead.split()) <= 8 else []
    if after[:1] and after[0] in _ANAPHORS or after == ["the", "same"] or words[:2] == ["the", "same"]:
        return True  # "With about 3.3 billion speakers, it is…", "Over the final 20 m, the same athletes…"
    if "also" in words[1:4]:
        return True  # "The release also introduces…", "Participants also improved…": it goes on from before
    return (len(words) >= 3 and words[0] == "the" and words[2] in _BARE_NOUN_FOLLOWERS
            and quote.split()[1].islower() and _an_act(words[1]))


# Shell nouns: words for an event or an act that stand for one a text has just told of.
_EVENTS = frozenset("change changes conflict war crisis outbreak move decision ruling shift reform event loss "
                    "surge slowdown slump jump decrease collapse recovery expansion contraction".split())
_BARE_NOUN_FOLLOWERS = frozenset("is was are were has had followed began came reflects reflected "
                                 "lasted spanned occurred happened".split())


def _an_act(word: str) -> bool:
    """A noun for an event or a change ("the increase", "the conflict"): a bare "the"
    before it points back to what the text told of, where "the kernel" names a thing."""
    return word in DIRECTIONS or word in _EVENTS
