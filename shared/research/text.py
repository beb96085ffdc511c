"""Text primitives shared by every stage: canonical form, hashing, sentences, terms.

The canonical text is the single reference for every locator in the system: it is
computed once (when a document is indexed or a page fetched), hashed, archived, and
every ``char:start-end`` points into it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import Stemmer

_TRAILING_WS = re.compile(r"[ \t\f\v]+\n")
_MANY_NEWLINES = re.compile(r"\n{3,}")
_INLINE_WS = re.compile(r"[ \t\f\v\u00a0]+")
# C0 controls other than tab, newline and carriage return (which become spaces or line
# ends below), and DEL. PostgreSQL refuses a NUL in a text column, and the rest are
# invisible noise that would still count in every offset.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")
# The information separators \x1c-\x1f, NEL and the Unicode line/paragraph separators
# are line breaks to str.splitlines: one line end each, so every reader sees the lines
# canonicalize() sees.
_LINE_BREAKS = re.compile(r"[\x1c-\x1f\x85\u2028\u2029]")
# A surrogate code point in a str is always unpaired (decoders combine pairs) and
# cannot be encoded as UTF-8: hashing, archiving or storing the text would fail.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def canonicalize(text: str) -> str:
    """NFC, LF line ends, single spaces inside lines, at most one blank line in a row.

    The result holds no control character but newline (no NUL: PostgreSQL refuses it)
    and no lone surrogate (each becomes U+FFFD), whatever the source: local files,
    fetched pages, search results, PubMed records and PDF pages all pass through here.
    """
    text = _SURROGATE.sub("\ufffd", text)
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _LINE_BREAKS.sub("\n", text)
    text = _CONTROL.sub("", text)
    text = _INLINE_WS.sub(" ", text)
    text = _TRAILING_WS.sub("\n", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return "\n".join(line.strip(" ") for line in text.split("\n")).strip()


def text_hash(text: str) -> str:
    """Object-store key of a canonical text: ``sha256-<hex>`` (NATS object names
    may not contain ':'); :func:`hash_label` gives the ``sha256:<hex>`` label that digests and reports show."""
    return "sha256-" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_label(key: str) -> str:
    return key.replace("sha256-", "sha256:", 1)


def short_hash(text: str, length: int = 8) -> str:
    """The 8-hex-character hash of a query (digest cache keys, a payload's ``query_hash``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


# A sentence may end at . ! ? (optionally followed by closing quotes/brackets) before
# whitespace; it always ends at a blank line and before a line that looks like a
# heading or list item. A "." needs no whitespace check for numbers: "3.11" and "2.5"
# have none after the dot.
_TERMINAL = re.compile(r"[.!?][\"')\]’”]*\s+")
_HARD_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:#|[-*+] |\d+[.)] ))")
# The word (with any inner dots) just before a final ".".
_LAST_WORD = re.compile(r"([^\W_]+(?:\.[^\W_]+)*)\.$")
# Abbreviations that do not end a sentence, lower-cased without their final dot. "etc."
# and "Inc." are left out: they end sentences as often as not.
_ABBREVIATIONS = frozenset("""
    e.g i.e cf vs viz approx resp esp incl
    mr mrs dr prof sr jr mt rev capt lt sgt
    fig figs eqs vol vols pp ch refs eds al
    jan feb mar apr jun jul aug sep sept oct nov
    u.s u.k u.n e.u a.m p.m ph.d b.sc m.sc
""".split())
# Abbreviations only before a number ("No. 7", "p. 12", "Sec. 4"): otherwise the word
# may well end a sentence ("the answer is no.", "3 ms.", "state of the art.").
_BEFORE_NUMBER = frozenset({"p", "n", "no", "nos", "nr", "eq", "sec", "secs", "art", "para",
                            "ref", "tab", "ed", "ms"})


def _ends_sentence(text: str, dot_at: int, next_at: int) -> bool:
    """Whether the "." at ``dot_at`` ends its sentence; the next sentence would start
    at ``next_at``."""
    m = _LAST_WORD.search(text, max(0, dot_at - 40), dot_at + 1)
    nxt = text[next_at:next_at + 1]
    if nxt and nxt.islower():
        return False  # "e.g. the", "approx. three": a sentence starts with a capital
    if m is None:
        return True
    word = m.group(1)
    low = word.lower()
    if low in _ABBREVIATIONS:
        return False
    before = text[m.start(1) - 1] if m.start(1) else " "
    if len(word) == 1 and word.isupper() and (before.isspace() or before in "(\"'“‘"):
        return False  # an initial: "J. R. R. Tolkien", "Donald E. Knuth"; not "I/O."
    if "." in word and all(len(part) == 1 for part in word.split(".")):
        return False  # "U.S.", "e.g.", "a.k.a."
    if low in _BEFORE_NUMBER and nxt.isdigit():
        return False
    return True


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, end exclusive, leading/trailing blanks trimmed:
    ``text[start:end]`` is the sentence exactly.

    A period ends a sentence unless it closes a known abbreviation ("e.g.", "Dr.",
    "et al.", "Fig. 2", "vs."), an initial or a dotted acronym ("U.S."), or the next
    sentence would start in lower case; decimals and versions ("3.11") never split.
    """
    cuts: list[tuple[int, int]] = [(m.start(), m.end()) for m in _HARD_BREAK.finditer(text)]
    for m in _TERMINAL.finditer(text):
        if text[m.start()] != "." or _ends_sentence(text, m.start(), m.end()):
            # The sentence keeps its closing quotes/brackets; the blanks are trimmed.
            cuts.append((m.end(), m.end()))
    cuts.sort()
    spans: list[tuple[int, int]] = []
    pos = 0
    for start, end in cuts:
        if start < pos:
            continue  # a terminal inside a hard break already cut
        _append_trimmed(text, pos, start, spans)
        pos = end
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


_STEMMER = Stemmer.Stemmer("english")


def stem(word: str) -> str:
    """Snowball English stem of a lower-case word: "threading", "threads" and "thread"
    meet, as do "processes" and "process".

    One exception: agent nouns in "-ator" keep their own stem. Snowball reduces
    "generator" and "generates" alike to "generat", "decorator" and "decorated" to
    "decor"; in technical text the thing (a generator, an iterator, an allocator) is
    seldom what the verb is about.
    """
    if word.endswith("ators"):
        return word[:-1]
    if word.endswith("ator"):
        return word
    return _STEMMER.stemWord(word)


def terms(text: str) -> list[str]:
    """Content terms: lower-cased, stop words removed, stemmed by :func:`stem`, in order.

    The one tokenizer for matching text: the BM25 index, the digest's snippet ranking,
    claim relevance and checklist coverage all use it, so they agree on what matches.
    """
    return [stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1]


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
