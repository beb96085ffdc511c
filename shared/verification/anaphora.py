"""Quotes that point back: what they speak of was named before them, perhaps in another
quote ("Its effect is monitored…", "The decline was…", "As a result, …"). Such a quote
may lend a clause its predicate without a subject of its own (see
:mod:`shared.verification.meaning_anchor`).
"""

from __future__ import annotations

import re

from shared.verification.lexicon import DIRECTIONS, MONTHS

__all__ = ["anaphoric", "points_back"]


_ANAPHORS = frozenset("it its they their this that these those such he she".split())
# A person named before, as the subject a little way in ("In 1903 she became…"). Not
# "it": a little way in, it is as often a dummy ("In Rust it is impossible…") or an
# object ("Rust achieves it…").
_SUBJECT_PRONOUNS = frozenset("he she they".split())
# Openers that go on from what was said before ("As a result, the ratio reached 9.1").
_GOING_ON = ("as a result", "as a consequence", "in response", "in turn", "consequently", "therefore", "thus",
             "in addition", "moreover", "however", "in contrast", "by contrast", "meanwhile")


_PAUSE = re.compile(r",(?!\d)")


def anaphoric(quote: str) -> bool:
    """The quote opens by pointing back ("Its effect...", "This loss...", "Despite its
    name, ...", "The decline is...": a bare "the" and a noun for an event or act): what it
    speaks of was named before it, perhaps in another quote."""
    opening = [w.strip("\"'([,;:").lower() for w in quote.split()[:7]]
    words = opening[:4]
    if not words:
        return False
    if words[0] in _ANAPHORS or quote.lower().startswith(_GOING_ON) or _SUBJECT_PRONOUNS & set(words[1:4]):
        return True
    pause = _PAUSE.search(quote)  # (a comma inside a figure, "1,280", is no pause)
    lead, rest = (quote[:pause.start()], quote[pause.end():]) if pause else (quote, "")
    if len(lead.split()) <= 3 and rest and any(w.lower() in _ANAPHORS for w in lead.split()):
        return True  # "Despite its name, the conflict spanned…"
    after = [w.lower() for w in rest.split()[:2]] if len(lead.split()) <= 8 else []
    if after[:1] and after[0] in _ANAPHORS or after == ["the", "same"] or words[:2] == ["the", "same"]:
        return True  # "With about 3.3 billion speakers, it is…", "Over the final 20 m, the same athletes…"
    if words[2:3] == ["it"] and words[3:4] and words[3] not in _DUMMY_AFTER and _time_opener(words[:2]):
        return True  # "Last year it sold 2.1 million tickets", "In 2019 it merged with…" (not "In 2019 it was…")
    if {"its", "their"} & set(opening[:5]) and {"it", "they"} & set(opening[2:7]):
        return True  # "For most of its length it runs underground": what "its" and "it" speak of came before
    if "also" in words[1:4]:
        return True  # "The release also introduces…", "Participants also improved…": it goes on from before
    if words[1:2] == ["of"] and words[2:3] and words[2] in _BACK and words[3:4] \
            and (words[3] == "who" or words[3].endswith(("ed", "en"))):
        # "Most of those infected…": people a quote told of (not "Each of these mechanisms",
        # which names its own thing)
        return True
    if words[0] in _STUDY_ROLES or words[0] == "the" and words[1:2] and words[1] in _STUDY_ROLES:
        return True  # "Participants on the new drug…": those of a study told of before
    first = quote.split()
    return words[0] == "the" and any(
        len(words) > n + 1 and words[n + 1] in _BARE_NOUN_FOLLOWERS and first[n].islower() and _an_act(words[n])
        and all(w.islower() for w in first[1:n]) for n in (1, 2))  # "The decline was…", "The root cause was…"


_DUMMY_AFTER = frozenset("is was 's seems seemed appears appeared takes took".split())
_TIME_WORDS = frozenset("year month week season quarter decade century spring summer autumn winter".split())


def _time_opener(words: list[str]) -> bool:
    """Two words that say when ("last year", "in 2019", "in March")."""
    first, second = (words + ["", ""])[:2]
    return first in ("last", "this", "next", "that", "each", "every") and second in _TIME_WORDS \
        or first in ("in", "on", "by", "since") and (second.isdigit() or second in MONTHS)


# People a study or survey is made of: a quote that opens with them speaks of one told of before.
_STUDY_ROLES = frozenset("participants respondents enrollees interviewees".split())


# Shell nouns: words for an event or an act that stand for one a text has just told of.
_EVENTS = frozenset("change changes conflict war crisis outbreak move decision ruling shift reform event loss "
                    "surge slowdown slump jump decrease collapse recovery expansion contraction "
                    "cause reason outcome consequence".split())
_BARE_NOUN_FOLLOWERS = frozenset("is was are were has had followed began came reflects reflected "
                                 "lasted spanned occurred happened".split())


def _an_act(word: str) -> bool:
    """A noun for an event or a change ("the increase", "the conflict"): a bare "the"
    before it points back to what the text told of, where "the kernel" names a thing."""
    return word in DIRECTIONS or word in _EVENTS


# Words that point back from inside a quote ("About 78% of these interruptions…",
# "Maize yields fell 30 percent that year"). Not "it": inside a quote it is as often the
# quote's own subject ("other actors whose addresses it knows").
_BACK = frozenset("these those".split())
_BACK_PHRASES = ("that year", "the same year", "the same period", "that period", "that time")


def points_back(quote: str) -> bool:
    """The quote speaks, somewhere in it, of what was named before it: it opens by
    pointing back (:func:`anaphoric`), or a word or phrase inside it does."""
    if anaphoric(quote):
        return True
    low = quote.lower()
    words = {w.strip("\"'()[],;:.") for w in low.split()}
    return bool(words & _BACK) or any(p in low for p in _BACK_PHRASES) or _OBJECT_PRONOUN.search(low) is not None


# "The upper house approved it…": the object of a past verb, what a quote before named
# (not "made it possible", "found it hard": a dummy before what it stands for).
_OBJECT_PRONOUN = re.compile(r"\b[a-z]{3,}ed\s+(?:it|them)\b(?!\s+(?:is|was|to|that|possible|impossible|clear|"
                             r"difficult|hard|easy|easier|harder|necessary|likely|unlikely)\b)")
