"""Text primitives shared by every stage: canonical form, hashing, sentences, terms.

The canonical text is the single reference for every locator in the system: it is
computed once (when a document is indexed or a page fetched), hashed, archived, and
every ``char:start-end`` points into it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_TRAILING_WS = re.compile(r"[ \t\f\v]+\n")
_MANY_NEWLINES = re.compile(r"\n{3,}")
_INLINE_WS = re.compile(r"[ \t\f\v\u00a0]+")


def canonicalize(text: str) -> str:
    """NFC, LF line ends, single spaces inside lines, at most one blank line in a row."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _INLINE_WS.sub(" ", text)
    text = _TRAILING_WS.sub("\n", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return "\n".join(line.strip(" ") for line in text.split("\n")).strip()


def text_hash(text: str) -> str:
    """Object-store key of a canonical text: ``sha256-<hex>`` (NATS object names
    may not contain ':'); :func:`hash_label` gives seed 002's ``sha256:<hex>`` form."""
    return "sha256-" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_label(key: str) -> str:
    return key.replace("sha256-", "sha256:", 1)


def short_hash(text: str, length: int = 8) -> str:
    """Seed 002's 8-char hex query hash."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) before
# whitespace, or at a blank line / line that looks like a heading or list item.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s*(?:#|[-*+] |\d+[.)] ))")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, end exclusive, leading/trailing blanks trimmed:
    ``text[start:end]`` is the sentence exactly."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        _append_trimmed(text, pos, m.start(), spans)
        pos = m.end()
    _append_trimmed(text, pos, len(text), spans)
    return spans


def _append_trimmed(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end))


_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not of off on once
    only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves vs versus between what's which how's does do done
    tell explain describe compare difference differences""".split()
)

NEGATIONS = frozenset({"not", "no", "never", "cannot", "can't", "won't", "doesn't", "isn't",
                       "aren't", "don't", "didn't", "wasn't", "weren't", "neither", "nor",
                       "without", "none", "nothing", "unlike"})


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _stem(word: str) -> str:
    """A light suffix strip so 'threads'/'thread' and 'processes'/'process' meet."""
    if word.endswith(("ss", "us", "is")):  # process, status, analysis: not plurals
        return word
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "ies":
                return word[:-3] + "y"
            if suffix == "es" and not word.endswith(("sses", "shes", "ches", "xes")):
                return word[:-1]
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """Content terms: lower-cased, stop words removed, lightly stemmed, in order."""
    return [_stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1]


def has_negation(text: str) -> bool:
    return any(w in NEGATIONS for w in words(text))


def jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def normalize_query(text: str) -> str:
    """The identity of a search query: case- and whitespace-insensitive, so a
    refinement pass can tell that a query was already run for the job."""
    return " ".join(text.split()).casefold()


def is_statement(sentence: str, *, min_words: int = 4) -> bool:
    """A quotable sentence: not a markdown heading, at least ``min_words`` long, and
    ending like a sentence (a plain-text heading such as "Fog signals" has no final
    punctuation)."""
    return (
        not sentence.startswith("#")
        and len(words(sentence)) >= min_words
        and sentence.rstrip("\"')]’”").endswith((".", "!", "?", ":", ";"))
    )
