"""Set phrases read as the plain words a quote uses for the same thing.

A writer says "unless configured otherwise" or "out of the box" where the quote says "by
default", "the jobless rate" for "unemployment", "held steady" for "remained unchanged".
Word by word none of these is the quote's, and no synonym table joins them: WordNet
lists single words and a few fixed compounds, not these. Before the checks read a
sentence, each such phrase is replaced by the quote's wording, but only when one of its
quotes uses that wording: the phrase then restates the quote, and every check (a
dropped default, a negation, a figure) reads the sentence as it would the quote's words.

The table is short and written by hand on purpose: each entry is an equivalence in any
context (not a near-synonym that holds in some), and it grows only with pairs seen in
faithful sentences refused for want of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shared.verification.synonyms import synonyms

__all__ = ["IDIOMS", "PARTICLES", "plain_wording"]

# phrase -> the plain wordings it restates, the first a quote uses taken
IDIOMS: dict[str, tuple[str, ...]] = {
    "unless configured otherwise": ("by default",),
    "unless otherwise configured": ("by default",),
    "unless set otherwise": ("by default",),
    "out of the box": ("by default",),
    "jobless rate": ("unemployment rate", "unemployment"),
    "did not change": ("remained unchanged", "was unchanged", "stayed flat", "held steady", "remained stable",
                       "unchanged"),
    "didn't change": ("remained unchanged", "was unchanged", "stayed flat", "held steady", "remained stable",
                      "unchanged"),
    "held steady": ("remained unchanged", "was unchanged", "unchanged"),
    "stayed flat": ("remained unchanged", "was unchanged", "unchanged"),
    "found the net": ("scored",),
    "every one of": ("each of",),
    "every now and then": ("occasionally", "sometimes", "from time to time"),
    "now and then": ("occasionally", "sometimes", "from time to time"),
    "now and again": ("occasionally", "sometimes", "from time to time"),
    "every so often": ("occasionally", "sometimes", "from time to time"),
    "once in a while": ("occasionally", "sometimes", "from time to time"),
    "from time to time": ("occasionally", "sometimes"),
    "without optical aid": ("to the naked eye", "with the naked eye"),
    "without any optical aid": ("to the naked eye", "with the naked eye"),
    "without dropping a set": ("in straight sets",),
    "left untreated": ("without treatment",),
    "lost their lives": ("died",),
    "lost his life": ("died",),
    "lost her life": ("died",),
    "aboard": ("on board",),
    "adjusted for inflation": ("in real terms",),
    "after adjusting for inflation": ("in real terms",),
    "inflation-adjusted": ("real",),
    "without food": ("on an empty stomach",),
    "Oscar for": ("Academy Award for",),
    # days with a fixed date, for the date a quote gives
    "New Year's Day": ("1 January", "January 1"),
    "New Year’s Day": ("1 January", "January 1"),
    "New Year's Eve": ("31 December", "December 31"),
    "New Year’s Eve": ("31 December", "December 31"),
    "Christmas Day": ("25 December", "December 25"),
    "Christmas Eve": ("24 December", "December 24"),
    "Boxing Day": ("26 December", "December 26"),
    "Valentine's Day": ("14 February", "February 14"),
    "Valentine’s Day": ("14 February", "February 14"),
    "Halloween": ("31 October", "October 31"),
    "Bastille Day": ("14 July", "July 14"),
}

def _words(text: str) -> re.Pattern[str]:
    """``text`` found as whole words, in any letter case."""
    return re.compile(rf"\b{re.escape(text)}\b", re.IGNORECASE)


# each phrase's pattern, with its plain wordings and theirs
_PATTERNS = [(_words(phrase), [(plain, _words(plain)) for plain in plains]) for phrase, plains in IDIOMS.items()]


def plain_wording(sentence: str, quotes: Sequence[str]) -> str:
    """``sentence`` with each set phrase (:data:`IDIOMS`) said in the wording one of
    ``quotes`` uses for it, and each verb with a particle ("gave back") said as the
    quote's one word for it ("returned", see :func:`_one_word_verbs`); unchanged when no
    quote uses that wording."""
    said = " ".join(quotes)
    for pattern, plains in _PATTERNS:
        plain = next((p for p, found in plains if found.search(said)), None)
        if plain is not None:
            sentence = pattern.sub(lambda m, p=plain: p.capitalize() if m.group()[:1].isupper() else p, sentence)
    return _one_word_verbs(sentence, said)


# The particles of a verb said in two words ("pulled back", "broke down", "called off").
PARTICLES = frozenset("back down up out off away over".split())
_PHRASAL = re.compile(rf"\b([A-Za-z]+) ({'|'.join(sorted(PARTICLES))})\b")
_WORD = re.compile(r"[A-Za-z]+")
_TENSES = ("VBZ", "VBD", "VBN", "VBG", "VB")
# Verbs too general to restate a phrase ("be" for "make up", "have" for "take on").
_LIGHT = frozenset("be have do get go make take give put set come".split())


def _one_word_verbs(sentence: str, said: str) -> str:
    """``sentence`` with a verb and its particle said as the one word a quote uses for
    the same act: "the glacier pulled back" reads "the glacier retreated" when a quote
    says "retreated", "gives back None" reads "returns None". WordNet lists such verbs
    as one entry ("pull_back"), with their one-word synonyms in their common senses; a
    quote's word that is none of those leaves the phrase as written."""
    if not _PHRASAL.search(sentence):
        return sentence
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    theirs = {lemma for word in _WORD.findall(said)
              for lemma in lemminflect.getAllLemmas(word.lower()).get("VERB", ())}

    def one_word(m: re.Match[str]) -> str:
        verb = m.group(1).lower()
        for lemma in lemminflect.getAllLemmas(verb).get("VERB", ()):
            same = sorted(s for s in synonyms(f"{lemma}_{m.group(2)}") if s in theirs and s not in _LIGHT)
            if same:  # said in the sentence's own tense: "pulled back" -> "retreated"
                tag = next((t for t in _TENSES if verb in lemminflect.getInflection(lemma, t)), "VB")
                return (lemminflect.getInflection(same[0], tag) or (same[0],))[0]
        return m.group()

    return _PHRASAL.sub(one_word, sentence)
