"""Acronyms and short names a quote spells out: "ECB" for "European Central Bank", "LFP"
for "lithium iron phosphate", "Q2" for "the second quarter". A name the sentence gives
as an acronym (or spells out where the quote abbreviates it) is the quote's name, not a
new one."""

from __future__ import annotations

import re

__all__ = ["abbreviated"]


_LINKS = frozenset("of the and for on in de".split())
_CAPITALISED_RUN = re.compile(r"(?:[A-Z][\w'-]*\s+(?:(?:of|the|and|for|on|in|de)\s+)*)*[A-Z][\w'-]*")


_ORDINALS = ("first", "second", "third", "fourth")
_PERIODS = {"Q": "quarter", "H": "half"}


def _initials(run: str) -> str:
    return "".join(w[0] for w in run.split() if w.lower() not in _LINKS).upper()


def abbreviated(name: str, sentence: str, quote: str) -> bool:
    """``name`` is an acronym the quote spells out ("ECB" for "European Central Bank"),
    or a word of a name the sentence spells out whose acronym the quote uses; "Q2" for
    "the second quarter", "H1" for "the first half"."""
    period = re.fullmatch(r"([QH])([1-4])", name)
    if period and re.search(rf"\b{_ORDINALS[int(period[2]) - 1]}[\s-](?:{_PERIODS[period[1]]})\b", quote, re.I):
        return True
    capitals = sum(c.isupper() for c in name)
    if (name.isupper() or name.isalpha() and capitals >= 2 and name[0].isupper()) and 2 <= len(name) <= 6:
        short = name.upper()  # ("MiCA" for "Markets in Crypto-Assets")
        if any(_initials(m.group()) == short for m in _CAPITALISED_RUN.finditer(quote)):
            return True
        if len(name) >= 3 and _spelled_out(short, quote, links=name.isupper()):
            return True  # "LFP" for "lithium iron phosphate"; "MiCA": its "i" is a word ("in")
        if len(name) == 2 and name.isupper() and _spelled_out(short, quote, links=False, shortest=5):
            return True  # "AI" for "artificial intelligence": two long words in a row

    for m in _CAPITALISED_RUN.finditer(sentence):
        short = _initials(m.group())
        if len(short) >= 2 and re.search(rf"\b{re.escape(name)}\b", m.group()) \
                and re.search(rf"\b{short}\b", quote):
            return True
    return False


def _spelled_out(short: str, text: str, *, links: bool = True, shortest: int = 1) -> bool:
    """Words in a row of ``text``, in any case, whose initials spell ``short`` ("of",
    "and", "the" between them aside, unless not ``links``), each of ``shortest`` letters
    or more."""
    words = [w for w in re.findall(r"[^\W\d_]+", text) if not links or w.lower() not in _LINKS]
    n = len(short)
    return any("".join(w[0] for w in words[i:i + n]).upper() == short
               and all(len(w) >= shortest for w in words[i:i + n]) for i in range(len(words) - n + 1))
