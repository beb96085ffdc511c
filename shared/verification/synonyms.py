"""Synonyms from WordNet, so that a faithful paraphrase ("climbed" for "rose",
"roughly" for "about", "death" for "die") is not counted as new matter.

WordNet's database files are read where the WordNet tools look for them:
``$WNSEARCHDIR``, else ``/usr/share/wordnet`` (Debian's and Ubuntu's ``wordnet-base``).
A word's synonyms are the other one-word members of its most common senses (WordNet
lists a word's senses most frequent first), for each part of speech, and the words
WordNet derives from it in those senses ("death" from "die", "loss" from "lose"):
rarer senses ("rise" as "rebel") would let a sentence say what its quote does not. Without the
files no word has synonyms: every check still runs, and refuses more faithful
rewordings; the first lookup logs that once.

Only the share of a sentence's words found in its quotes uses synonyms. The meaning
checks (negation, direction, roles...) read the words themselves.
"""

from __future__ import annotations

import logging
import os
from functools import cache, lru_cache
from pathlib import Path

__all__ = ["BROADER_STEPS", "SENSES", "antonyms", "available", "broader", "synonyms", "wordnet_dir"]

log = logging.getLogger(__name__)

# How many of a word's senses, most common first, give it synonyms (per part of speech).
SENSES = 3
_PARTS = ("noun", "verb", "adj", "adv")


def wordnet_dir() -> Path:
    return Path(os.environ.get("WNSEARCHDIR") or "/usr/share/wordnet")


@cache
def _index() -> dict[str, list[tuple[str, tuple[int, ...]]]]:
    """lemma -> [(part of speech, offsets of its synsets, most common first)]."""
    root, out = wordnet_dir(), {}
    for part in _PARTS:
        path = root / f"index.{part}"
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            log.warning("WordNet not readable at %s (%s); synonyms are not recognised, so faithful "
                        "rewordings that use them are refused (install Debian's wordnet-base or set WNSEARCHDIR)",
                        path, exc)
            return {}
        for line in lines:
            if not line or line.startswith(" "):
                continue  # the licence header
            fields = line.split()
            pointers = int(fields[3])
            senses = int(fields[2])
            offsets = tuple(int(x) for x in fields[6 + pointers:6 + pointers + senses])
            out.setdefault(fields[0], []).append((part, offsets))
    return out


def available() -> bool:
    """WordNet's files were found and read."""
    return bool(_index())


_POS = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}


@lru_cache(maxsize=65536)
def _synset(part: str, offset: int) -> tuple[tuple[str, ...], tuple[tuple[int, str, int, int], ...]]:
    """The synset at ``offset`` of ``data.<part>``: its lemmas (lower case, in order),
    and its derivation links (source word number, target part, target offset, target
    word number): "die" links to "death", "lose" to "loss"."""
    with (wordnet_dir() / f"data.{part}").open("rb") as f:
        f.seek(offset)
        fields = f.readline().decode("utf-8", errors="replace").split()
    count = int(fields[3], 16)
    words = tuple(w.split("(", 1)[0].lower() for w in fields[4:4 + 2 * count:2])
    at = 4 + 2 * count
    links = []
    for n in range(int(fields[at])):
        symbol, target, pos, ends = fields[at + 1 + 4 * n:at + 5 + 4 * n]
        if symbol == "+":
            links.append((int(ends[:2], 16), _POS[pos], int(target), int(ends[2:], 16)))
        elif symbol == "!":  # an antonym: a word of the target set (its number; 0 for all of them)
            links.append((-2 - int(ends[:2], 16), _POS[pos], int(target), int(ends[2:], 16)))
        elif symbol in ("@", "@i"):
            links.append((-1, _POS[pos], int(target), 0))  # a broader synset ("bird" over "eagle")
    return words, tuple(links)


def _one_word(word: str) -> bool:
    return "_" not in word and "-" not in word


@lru_cache(maxsize=16384)
def synonyms(word: str) -> frozenset[str]:
    """The other one-word members of ``word``'s most common senses, and the words
    derived from it in those senses ("death" for "die"), lower case."""
    low = word.lower()
    entries = _index().get(low)
    if not entries:
        return frozenset()
    found: set[str] = set()
    for part, offsets in entries:
        for offset in offsets[:SENSES]:
            try:
                words, links = _synset(part, offset)
                found.update(w for w in words if _one_word(w))
                mine = words.index(low) + 1 if low in words else 0
                for source, target_part, target, n in links:
                    if source == mine and n:
                        derived = _synset(target_part, target)[0][n - 1]
                        if _one_word(derived):
                            found.add(derived)
            except (OSError, ValueError, IndexError) as exc:
                log.warning("WordNet synset %s/%d unreadable (%s); %r gets no synonyms from it",
                            part, offset, exc, word)
    return frozenset(found - {low})


# How many steps up from a noun's most common sense its broader words are taken.
BROADER_STEPS = 2


@lru_cache(maxsize=16384)
def broader(word: str) -> frozenset[str]:
    """One-word names of what a noun's most common sense is a kind of, up to
    ``BROADER_STEPS`` steps ("bird", "raptor" for "eagle"): a sentence may call a thing
    by a broader name."""
    entries = dict(_index().get(word.lower(), []))
    offsets = entries.get("noun", ())[:1]
    found: set[str] = set()
    frontier = [("noun", o) for o in offsets]
    try:
        for _ in range(BROADER_STEPS):
            step = []
            for part, offset in frontier:
                for source, target_part, target, _n in _synset(part, offset)[1]:
                    if source == -1:
                        step.append((target_part, target))
                        found.update(w for w in _synset(target_part, target)[0] if _one_word(w))
            frontier = step
    except (OSError, ValueError, IndexError) as exc:
        log.warning("WordNet hypernyms of %r unreadable (%s); it gets no broader names", word, exc)
    return frozenset(found)


@lru_cache(maxsize=16384)
def antonyms(word: str, part_of_speech: str | None = None) -> frozenset[str]:
    """The one-word opposites WordNet gives ``word`` in its most common senses
    ("reject" for "accept", "establish" for "abolish"), lower case; of its senses as
    ``part_of_speech`` ("noun", "verb", "adj", "adv") alone when given."""
    low = word.lower()
    found: set[str] = set()
    for part, offsets in _index().get(low, []):
        if part_of_speech is not None and part != part_of_speech:
            continue
        for offset in offsets[:SENSES]:
            try:
                words, links = _synset(part, offset)
                mine = words.index(low) + 1 if low in words else 0
                for source, target_part, target, n in links:
                    if source <= -2 and (source == -2 or -2 - source == mine):
                        theirs = _synset(target_part, target)[0]
                        found.update(w for w in (theirs[n - 1:n] if n else theirs) if _one_word(w))
            except (OSError, ValueError, IndexError) as exc:
                log.warning("WordNet antonyms of %r unreadable (%s); it gets none from that sense", word, exc)
    return frozenset(found - {low})
