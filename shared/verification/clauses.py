"""Reading a sentence for the meaning checks: words, their lemmas, clauses.

A word is matched through its stem and its lemmas (lemminflect's tables, shipped in
its wheel), so "DELETE" meets "deleted" and "children" meets "child"; the parts of
speech a word may take tell the checks which words may be verbs. A clause ends at
";", ":", a dash, a comma or word that opens a contrasting or new clause, before
"without" and a gerund, and at "and" before a verb. Also here: whether a sentence *is* one of its
quotes, the names it carries, and which clauses of two sentences speak of the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from shared.verification.figures import digit_words, figures
from shared.verification.synonyms import broader, synonyms
from shared.verification.lexicon import (
    DIRECTIONS, EXCLUSIVE, HEDGES, NEGATIVE_PREFIXES, NEGATORS, QUANTIFIERS, RARE, STRONG,
)
from shared.research.text import STOPWORDS, sentence_spans, stem

__all__ = ["AUX", "BE", "Clause", "Token", "aligned_pair", "broader_forms", "clauses", "covered", "forms_of", "is_content",
           "is_quoted", "lemmas_of", "names", "place_named", "salient_tokens", "token", "unknown_word", "warm_up"]

_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*|n't")
# Where a clause ends: ";", ":", a dash, and a comma or word that opens a contrasting
# or new clause (", plus folate and iron": what a second quote adds). A plain comma does
# not (it may set off a condition of the clause).
_CLAUSE_BREAK = re.compile(
    r"\s*(?:;|:\s|\s[–—-]\s|,\s*(?:but|while|whereas|although|though|yet|so|and|or|which|whilst|plus)\b"
    r"|\b(?:but|whereas|although|though|whilst|even\s+as)\b)\s*", re.IGNORECASE)
_FEATURE_WORDS = NEGATORS | QUANTIFIERS.keys() | RARE | EXCLUSIVE | HEDGES | STRONG | DIRECTIONS.keys()
BE = frozenset("is are was were be been being get gets got".split())
AUX = BE | frozenset("has have had do does did will would shall should".split())
_FOOTNOTE = re.compile(r"\[\d+\]")
_AGE = re.compile(r"\d+(?:-(?:to-)?\d+)?-(?:year|month|week|day)-olds?", re.IGNORECASE)  # ("16-to-24-year-olds")


@dataclass(frozen=True)
class Token:
    text: str
    low: str
    forms: frozenset[str]  # stem of the word and of its lemma(s)
    lemma: str
    lemmas: tuple[str, ...]
    start: int
    end: int
    verb: bool  # may be a verb


def warm_up() -> None:
    """Load the lemma, unit and synonym tables now (a few seconds on first use): a stage
    calls this at start-up, so that its first check does not hold up its event loop."""
    lemmas_of("warming")
    figures("3 ms")
    synonym_forms("warming")


# The endings of a word the lexicon does not know that make it a verb ("phosphorylates",
# "parasitised", "upregulated", "ossifies"): the verb-forming suffixes, inflected.
_VERB_SUFFIX = re.compile(r"..(?:at|[iy]s|iz)(?:es|ed)$|..(?:ifies|ified)$")


@lru_cache(maxsize=8192)
def lemmas_of(low: str) -> tuple[tuple[str, ...], bool, bool]:
    """(lemmas, may be a verb, may be something else)."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    found = lemminflect.getAllLemmas(low)
    if not found and _VERB_SUFFIX.search(low):
        found = lemminflect.getAllLemmasOOV(low, "VERB")  # "phosphorylates": a verb by its form
    lemmas = tuple(dict.fromkeys(lemma for group in found.values() for lemma in group)) or (low,)
    verb = "VERB" in found or "AUX" in found
    return lemmas, verb, bool(set(found) - {"VERB", "AUX"})


@lru_cache(maxsize=8192)
def token(text: str, start: int, end: int) -> Token:
    low = text.lower().replace("’", "'")
    lemmas, verb, _ = lemmas_of(low)
    forms = frozenset({stem(low), *(stem(x.lower()) for x in lemmas)})
    return Token(text, low, forms, lemmas[0].lower(), tuple(x.lower() for x in lemmas), start, end, verb)


def _tokens(text: str) -> list[Token]:
    out = []
    for m in _TOKEN.finditer(text):
        word = m.group()
        if word.lower().endswith("n't") and word.lower() != "n't":  # "doesn't" -> "does" + "n't"
            out.append(token(word[:-3], m.start(), m.end() - 3))
            out.append(token("n't", m.end() - 3, m.end()))
        else:
            out.append(token(word, m.start(), m.end()))
    return out


# Prepositions the shared stop list keeps (it serves search too): no content of their own.
_PREPOSITIONS = frozenset("among amongst via upon across toward towards despite beyond whilst per onto".split())


def is_content(t: Token) -> bool:
    return t.low not in STOPWORDS and t.low not in _FEATURE_WORDS and t.lemma not in _FEATURE_WORDS \
        and t.low not in _PREPOSITIONS and (len(t.low) > 1 or t.text in _LETTER_NAMES) and not t.low.isdigit()


# A capital letter that names a thing ("T cells", "vitamin C", "plan B"); not "A" or "I".
_LETTER_NAMES = frozenset("BCDEFGHJKLMNOPQRSTUVWXYZ")


# -- clauses and their features ------------------------------------------------------------


@dataclass
class Clause:
    tokens: list[Token]
    start: int
    end: int
    text: str = ""  # the whole text the clause is part of (token offsets point into it)

    def pause_before(self, i: int) -> bool:
        """Punctuation stands between token ``i - 1`` and token ``i`` (not the comma or
        point inside a figure, "1,200", "6.5")."""
        if i <= 0:
            return False
        between = self.text[self.tokens[i - 1].end:self.tokens[i].start]
        if between in (",", ".") and self.tokens[i - 1].low[-1:].isdigit() and self.tokens[i].low[:1].isdigit():
            return False
        return any(c in ",;:.()" for c in between)

    def pause_after(self, i: int) -> int:
        """The index of the first token after token ``i`` that a pause stands before, or
        the clause's length: where the phrase ``i`` is in ends."""
        return next((n for n in range(i + 1, len(self.tokens)) if self.pause_before(n)), len(self.tokens))

    @property
    def content(self) -> list[Token]:
        return [t for t in self.tokens if is_content(t)]

    @property
    def forms(self) -> set[str]:
        return {f for t in self.tokens for f in t.forms}

    def words(self) -> list[str]:
        return [t.low for t in self.tokens]

    @classmethod
    def spanning(cls, tokens: list[Token], text: str) -> Clause:
        """The clause of ``tokens`` (at least one), from the first's start to the last's end."""
        return cls(tokens, tokens[0].start, tokens[-1].end, text)

    @classmethod
    def joined(cls, parts: list[Clause]) -> Clause:
        """The clauses ``parts`` (at least one, of one text) read as one."""
        return cls([t for c in parts for t in c.tokens], parts[0].start, parts[-1].end, parts[0].text)

    def cut(self, n: int) -> tuple[Clause, Clause]:
        """The clause cut before token ``n`` (0 < n < len(tokens)): the words before it and from it on."""
        return Clause.spanning(self.tokens[:n], self.text), Clause.spanning(self.tokens[n:], self.text)


def clauses(text: str) -> list[Clause]:
    """The clauses of ``text``: cut at the breaks above, before "without" and a gerund
    (its own negated clause), at "and" before a verb ("reduced latency and increased
    throughput", "… and still sends it traffic", "… and was associated with…"), and at
    "while" between two figures. A piece with no content word of its own ("…, which is not slower",
    "…, but not both") stays with the clause before it, whose words it turns."""
    tokens = _tokens(text)
    cuts = [0] + [m.start() for m in _CLAUSE_BREAK.finditer(text)] + [len(text) + 1]
    for i, t in enumerate(tokens[1:-1], start=1):
        nxt, after = tokens[i + 1], tokens[i + 2] if i + 2 < len(tokens) else None
        # (not "passengers and crew evacuated": a noun that may be a verb, before the verb)
        noun = after is not None and after.verb and after.low != after.lemma and after.low.endswith(("ed", "s"))
        # ("without increasing memory" is a clause; "those without a degree" a noun's qualifier)
        # ("wetting and drying": two gerunds, one thing)
        gerunds = nxt.low.endswith("ing") and tokens[i - 1].low.endswith("ing")
        # ("long and short vowels": two adjectives of one noun)
        gerunds = gerunds or adjective(tokens[i - 1].low) and adjective(nxt.low) and nxt.low == nxt.lemma \
            and after is not None and not after.verb and is_content(after)
        if t.low == "while" and any(u.low[:1].isdigit() for u in tokens[:i]) \
                and any(u.low[:1].isdigit() for u in tokens[i + 1:]):
            cuts.append(t.start)  # "grew 2.3 percent while receipts hit 25 billion euros": two facts
        if (t.low == "without" and nxt.low.endswith("ing")) or (
                t.low == "and" and nxt.verb and nxt.low not in STOPWORDS and not noun and not gerunds) or (
                t.low == "and" and _adverb_and_verb(tokens[i + 1:i + 4])) or (
                t.low == "and" and _auxiliary_and_verb(tokens[i - 1], tokens[i + 1:i + 4])) or (
                t.low == "and" and _do_and_verb(tokens[:i], tokens[i + 1:i + 4])) or (
                t.low == "and" and _subject_and_verb(tokens[:i], tokens[i + 1:i + 6])):
            cuts.append(t.start)
    cuts.sort()
    parts: list[list[Token]] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        part = [t for t in tokens if a <= t.start < b]
        if not part:
            continue
        if parts and not any(is_content(t) for t in part):
            parts[-1] += part  # "…, which is not slower": its words turn the clause before it
        elif parts and not any(is_content(t) for t in parts[-1]):
            parts[-1] += part
        else:
            parts.append(part)
    out = [Clause.spanning(part, text) for part in parts]
    return out or [Clause([], 0, 0, text)]


def _finite(t: Token, *, noun_too: bool = False) -> bool:
    """A verb's inflected form ("pushes", "revised") or an auxiliary; with ``noun_too``,
    also an inflected verb whose first lemma is a noun's ("proceeds")."""
    lemma_differs = any(x != t.low for x in t.lemmas) if noun_too else t.low != t.lemma
    return t.low in _AUXILIARIES or t.verb and lemma_differs and t.low.endswith(("s", "ed"))


def _subject_and_verb(before: list[Token], after: list[Token]) -> bool:
    """After "and", a clause of its own: a determiner, one to three words and a finite verb
    ("… and the broker pushes messages"), where the words before "and" have a verb of their
    own (not "The cat and the dog ran", one subject of two nouns)."""
    if len(after) < 3 or after[0].low not in ("the", "its", "their", "his", "her") or not any(map(_finite, before)):
        return False
    verb = next((n for n in range(2, min(len(after), 5)) if _finite(after[n])), None)
    return verb is not None and all((is_content(u) or u.low == "of") and not _finite(u) for u in after[1:verb])


def adjective(word: str, *, unknown: bool = False) -> bool:
    """lemminflect's tables read ``word`` as an adjective ("stiff", not "memory"); with
    ``unknown``, so does a word no table knows."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    lemmas = lemminflect.getAllLemmas(word)
    return "ADJ" in lemmas or unknown and not lemmas


# Auxiliaries and modals that open a predicate after "and" ("… and was associated with…").
_AUXILIARIES = frozenset("is are was were has have had will would can could may might must should shall".split())


def _auxiliary_and_verb(before: Token, following: list[Token]) -> bool:
    """The tokens after an "and" open a predicate of their own with an auxiliary and its
    verb ("… by 30 percent and was associated with…", "… and can be fined"), after a
    word that ends a phrase (not "more and more", "and/or")."""
    words = [t.low for t in following]
    if len(following) < 2 or words[0] not in _AUXILIARIES or before.low in STOPWORDS:
        return False
    nxt = following[1]
    if words[0] in ("is", "are", "was", "were") and nxt.low in ("the", "a", "an", "its", "their", "one") \
            or words[0] in ("has", "have", "had") and nxt.low == "to":
        return True  # "… and was the first release to…", "… and has to be kept cold": a predicate of its own
    return nxt.low in ("not", "be", "been", "also", "now", "still") or nxt.verb and nxt.low not in STOPWORDS \
        and (nxt.low.endswith(("ed", "en")) or nxt.low == nxt.lemma)


def _do_and_verb(before: list[Token], following: list[Token]) -> bool:
    """After "and", "do", "does" or "did" and a verb, perhaps denied ("… and does not
    occur at room temperature"), where the words before "and" have a finite verb of
    their own: a second predicate of the same subject."""
    words = [t.low for t in following]
    if len(words) < 2 or words[0] not in ("do", "does", "did") or not any(_finite(t, noun_too=True) for t in before):
        return False
    verb = following[2] if words[1] in ("not", "n't", "also", "still") and len(following) > 2 else following[1]
    return verb.verb and verb.low not in STOPWORDS


def _adverb_and_verb(following: list[Token]) -> bool:
    """The tokens after an "and" open a predicate with an adverb before its verb: "still
    sends", "never returns", "no longer sends" (as "and stops sending" opens one)."""
    words = [t.low for t in following]
    if words[:2] == ["no", "longer"]:
        return len(following) > 2 and following[2].verb
    return words[:1] != [] and words[0] in _PREDICATE_ADVERBS and len(following) > 1 and following[1].verb \
        and following[1].low not in STOPWORDS


# Adverbs that open a predicate of its own after "and", one a quote may turn with "stops":
# "… and still sends it traffic", "… and never returns".
_PREDICATE_ADVERBS = frozenset("still never".split())


def _normal(text: str) -> str:
    text = _FOOTNOTE.sub("", text).replace("“", '"').replace("”", '"').replace("’", "'").replace("–", "-")
    text = " ".join(text.split()).strip().rstrip(".!;:").strip()
    # Case is kept but for the first letter (a sentence may open where its quote did not):
    # "7,000 Mb/s" is not "7,000 MB/s", nor "2 mW" "2 MW".
    return text[:1].casefold() + text[1:]


def is_quoted(sentence: str, quotes: Sequence[str]) -> bool:
    """The sentence is one of its quotes, or a whole sentence of one."""
    said = _normal(sentence)
    if not said:
        return False
    for quote in quotes:
        if _normal(quote) == said or any(_normal(quote[a:b]) == said for a, b in sentence_spans(quote)):
            return True
    return False


# Where a new sentence (or a clause that starts like one) begins: its first word is
# capitalized by grammar, not because it is a name.
_CLAUSE_START = re.compile(r"(?:^|[.!?:]\s+|\n)[\"'(\[“‘]*")
_NAME_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def salient_tokens(sentence: str) -> list[str]:
    """The sentence's proper names and acronyms: capitalized words that do not open a
    sentence or clause or are no word of the language, and anywhere a word with a capital
    after its first letter ("NASA", "mRNA"). Single letters are left out."""
    starts = {m.end() for m in _CLAUSE_START.finditer(sentence)}
    out: list[str] = []
    for m in _NAME_TOKEN.finditer(sentence):
        word, start = m.group(), m.start()
        pieces = word.split("-")
        while len(pieces) > 1 and pieces[-1].islower():
            pieces.pop()  # "Lyon-based", "US-led": the name is "Lyon", "US"
        while len(pieces) > 1 and pieces[0].islower():
            start += len(pieces.pop(0)) + 1  # "mid-March", "anti-EU"
        word = "-".join(pieces)
        if len(word) < 2 or not any(c.isalpha() for c in word):
            continue
        inner_capital = any(c.isupper() for c in word[1:])
        if inner_capital or (word[0].isupper() and (start not in starts or _no_word(word))):
            out.append(word)
    return list(dict.fromkeys(out))


def _no_word(word: str) -> bool:
    """A capitalized word that opens a sentence and is no word of the language ("Orun
    has the denser atmosphere"): a name there too."""
    low = word.lower()
    return word.isalpha() and low not in STOPWORDS and low not in _OPENING_WORDS and unknown_word(low)


# Adjectives of places not made by adding an ending to the place's name.
_IRREGULAR_PLACES: dict[str, tuple[str, ...]] = {
    adjective: tuple(places.split("|")) for adjective, places in (
        ("French", "France"), ("British", "Britain|United Kingdom|UK"), ("English", "England"),
        ("Scottish", "Scotland"), ("Welsh", "Wales"), ("Irish", "Ireland"), ("Spanish", "Spain"),
        ("Dutch", "Netherlands|Holland"), ("Swiss", "Switzerland"), ("Greek", "Greece"), ("Turkish", "Turkey"),
        ("Polish", "Poland"), ("Danish", "Denmark"), ("Swedish", "Sweden"), ("Finnish", "Finland"),
        ("Norwegian", "Norway"), ("Icelandic", "Iceland"), ("Portuguese", "Portugal"), ("Thai", "Thailand"),
        ("Filipino", "Philippines"), ("Peruvian", "Peru"), ("Malagasy", "Madagascar"), ("Belgian", "Belgium"),
        ("Argentine", "Argentina"), ("American", "United States|US|USA|America"),
        ("Czech", "Czechia|Czech Republic"), ("Slovak", "Slovakia"), ("Afghan", "Afghanistan"),
        ("Uzbek", "Uzbekistan"), ("Kazakh", "Kazakhstan"))}


def place_named(adjective: str, text: str) -> str | None:
    """The place of ``text`` whose adjective ``adjective`` is ("Bangladesh" for
    "Bangladeshi", "Kenya" for "Kenyan", "China" for "Chinese"), or None."""
    if not adjective.isalpha() or not adjective[0].isupper():
        return None
    for place in _IRREGULAR_PLACES.get(adjective, ()):
        found = re.search(rf"(?<!\w){place}(?!\w)", text)
        if found:
            return found.group()
    for suffix in ("ian", "ese", "an", "i", "n"):
        stem = adjective.removesuffix(suffix)
        found = re.search(rf"(?<!\w){re.escape(stem)}\w{{0,2}}(?!\w)", text) \
            if stem != adjective and len(stem) >= 4 else None
        if found and found.group() != adjective:
            return found.group()
    return None


def unknown_word(word: str) -> bool:
    """No lemma of ``word`` is in lemminflect's tables: a name ("simvastatin", "kubelet")."""
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    return not lemminflect.getAllLemmas(word)


# Function words that open sentences and that neither STOPWORDS nor the lemma tables
# (open word classes) have.
_OPENING_WORDS = frozenset("""although though since whereas unless whenever among amongst amid despite
    without every many several either neither within across besides beyond toward towards whilst whose yet
    following given like unlike per via throughout upon""".split())


def names(sentence: str) -> list[str]:
    """Proper names and acronyms (:func:`salient_tokens`) and words with digits ("SHA-256"),
    not ages ("34-year-olds") or a measure joined to the noun it measures
    ("6.5-metre-diameter"): figures, checked as such, their words as words. A measure
    alone stays a name ("64-bit")."""
    measures = tuple(f"{f.surface}-" for f in figures(sentence) if f.unit and "-" in f.surface)
    digits = {_PARTICIPLE_TAIL.sub("", w) for w in digit_words(sentence)}  # "2.0-licensed": the name "2.0"
    return list(dict.fromkeys([*salient_tokens(sentence),
                               *sorted(w for w in digits if not _AGE.fullmatch(w)
                                       and not w.startswith(measures or ("\0",))),
                               *(m.group() for m in _LETTER_LABEL.finditer(sentence) if _labels(sentence, m))]))


# A capitalised word labelled by a single capital letter ("Group A", "Vitamin D", "Plan
# B"): a name of its own, the letter part of it (a single letter alone is no name).
_LETTER_LABEL = re.compile(r"\b[A-Z][a-z]+ [A-HJ-Z]\b(?![\w.'’-])")
_NEXT = re.compile(r"\s+([a-z]+)")


def _labels(sentence: str, m: re.Match[str]) -> bool:
    """The letter of ``m`` labels the word before it ("Drug A reduced…"), not the noun
    after it ("Helper T cells", where the first word is capitalised for its place)."""
    after = _NEXT.match(sentence, m.end())
    return m.start() > 0 or after is None or token(after.group(1), 0, 0).verb


# A participle joined to a name or figure ("x86-based", "2.0-licensed"): the name is the rest.
_PARTICIPLE_TAIL = re.compile(r"(?:-[a-z]+ed)+$")


def covered(t: Token, forms: set[str] | frozenset[str]) -> bool:
    """``t``, one of its synonyms, or (for "unsafe") its stem "safe" is among ``forms``
    (polarity is checked apart)."""
    if t.forms & forms or synonym_forms(t.low) & forms:
        return True
    parts = [p for p in t.low.split("-") if p]
    if len(parts) > 1 and all(token(p, 0, 0).forms & forms or p in STOPWORDS for p in parts):
        return True  # "planting-date" for "planting dates", "text-message" for "text message"
    head = time_of(t.low)
    if head and token(head, 0, 0).forms & forms:
        return True  # "daytime" for "during the day", "wartime" for "in the war"
    for prefix in NEGATIVE_PREFIXES:
        rest = t.low[len(prefix):]
        if t.low.startswith(prefix) and len(rest) >= 4 and token(rest, 0, 0).forms & forms:
            return True
    return False


def time_of(low: str) -> str | None:
    """The word a closed compound of "time" names the time of ("day" in "daytime",
    "war" in "wartime"), or None ("overtime", "sometime" name no such thing)."""
    head = low[:-4] if low.endswith("time") else ""
    return head if len(head) >= 3 and head not in STOPWORDS else None


@lru_cache(maxsize=16384)
def synonym_forms(low: str) -> frozenset[str]:
    """The stems of the synonyms of a word's lemmas (:mod:`shared.verification.synonyms`)."""
    return frozenset(stem(s) for lemma in lemmas_of(low)[0] for s in synonyms(lemma.lower()))


@lru_cache(maxsize=16384)
def broader_forms(low: str) -> frozenset[str]:
    """The stems of the broader names of a noun's lemmas ("bird" for "eagles")."""
    return frozenset(stem(b) for lemma in lemmas_of(low)[0] for b in broader(lemma.lower()))


def forms_of(cls: Sequence[Clause]) -> set[str]:
    return {f for c in cls for t in c.tokens for f in t.forms}


def aligned_pair(a: str, b: str) -> tuple[Clause, Clause] | None:
    """The clauses of ``a`` and ``b`` that speak of the same thing (at least two shared
    content words, and half of the shorter clause's), best aligned first; None when
    no clause pair does."""
    best: tuple[int, Clause, Clause] | None = None
    for x in clauses(a):
        xs = {min(t.forms) for t in x.content}
        for y in clauses(b):
            ys = {min(t.forms) for t in y.content}
            y_forms = forms_of([y])
            size = len({min(t.forms) for t in x.content if covered(t, y_forms)})
            if size >= 2 and size * 2 >= min(len(xs), len(ys)) and (best is None or size > best[0]):
                best = (size, x, y)
    return None if best is None else (best[1], best[2])
