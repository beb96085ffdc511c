"""Word forms the checklist titles need: a verb's base, past and -ing forms, a
noun's singular and plural, whether a phrase reads as plural, and "the scalability
of threads" read as "thread scalability".

The forms come from lemminflect's tables (English lemmas and inflections), so a title
can turn a question's words around ("How do X affect Y?" -> "Examples of X affecting
Y", "Which setting controls X?" -> "Settings that control X") without guessing at
suffixes. Every function is deterministic and returns its input unchanged when the
tables do not know the word.
"""

from __future__ import annotations

import re
from functools import lru_cache

from shared.research.text import STOPWORDS

__all__ = [
    "asker_verb", "base_verb_or_unknown", "be_for", "compact", "do_for", "gerund", "head_of", "is_adverb",
    "is_past_participle", "is_plural_noun", "participle",
    "past", "plural", "quality_verb", "reads_plural", "singular", "verb_capable", "verb_lemma", "word_classes",
]


@lru_cache(maxsize=4096)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    return dict(lemminflect.getAllLemmas(word))


@lru_cache(maxsize=4096)
def _inflect(word: str, tag: str) -> str | None:
    import lemminflect  # noqa: PLC0415 - its tables load on first use

    forms = lemminflect.getInflection(word, tag)
    return forms[0] if forms else None


def word_classes(word: str) -> frozenset[str]:
    """The parts of speech the tables know ``word`` as ("NOUN", "VERB", "ADJ"...)."""
    return frozenset(_lemmas(word.lower()))


def verb_lemma(word: str) -> str | None:
    """The base form of ``word`` read as a verb ("limits" -> "limit"), or None when
    the tables know no verb of that form."""
    found = _lemmas(word.lower()).get("VERB")
    return found[0].lower() if found else None


def verb_capable(word: str) -> bool:
    """Whether a lower-case word can be a verb's base form, whatever else it can be."""
    return word not in STOPWORDS and word in _lemmas(word).get("VERB", ())


def base_verb_or_unknown(word: str, *, only: bool = True) -> bool:
    """Whether a lower-case word can be a verb's base form ("reclaim"; with ``only``,
    nothing but a verb or an adjective), or is unknown to the tables ("frobnicate")."""
    if word in STOPWORDS:  # "a", "the", "in": function words are never the verb ("show a merge")
        return False
    found = _lemmas(word)
    if not found:
        return word.isalpha()
    return word in found.get("VERB", ()) and not (only and set(found) - {"VERB", "ADJ"})


def asker_verb(word: str) -> bool:
    """Whether a word right after "I", "you" or "we" is their verb ("decide", "have",
    "rebase"): a lower-case base form, or a word the tables do not know."""
    if not word.islower() or not word.replace("-", "").isalpha():
        return False
    found = _lemmas(word)
    return not found or word in found.get("VERB", ()) or word in found.get("AUX", ())


def participle(verb: str) -> str:
    """The past participle of a base verb ("need" -> "needed", "write" -> "written")."""
    return _inflect(verb.lower(), "VBN") or f"{verb}ed"


def is_past_participle(word: str) -> bool:
    """Whether a word is a verb's past participle, irregular ones included ("kept",
    "written", "ignored"), and not its base form as well ("run" is both); a word the
    tables do not know is one when it ends in "-ed" ("inlined")."""
    word = word.lower()
    if not _lemmas(word):
        return word.isalpha() and len(word) > 4 and word.endswith("ed")
    lemma = verb_lemma(word)
    return bool(lemma) and lemma != word and _inflect(lemma, "VBN") == word


def past(verb: str) -> str:
    """The past tense of a base verb ("change" -> "changed", "run" -> "ran")."""
    if "-" in verb:
        head, tail = verb.rsplit("-", 1)
        return f"{head}-{past(tail)}"
    return _inflect(verb.lower(), "VBD") or f"{verb}ed"


def gerund(verb: str) -> str:
    """The -ing form of a base verb ("affect" -> "affecting"); a hyphenated verb
    inflects its last part ("side-step" -> "side-stepping")."""
    if "-" in verb:
        head, tail = verb.rsplit("-", 1)
        return f"{head}-{gerund(tail)}"
    return _inflect(verb.lower(), "VBG") or f"{verb}ing"


def is_adverb(word: str) -> bool:
    """Whether the tables know ``word`` only as an adverb ("concurrently", "quickly"):
    such a word ends a noun phrase."""
    return set(_lemmas(word.lower())) == {"ADV"}


def is_plural_noun(word: str) -> bool:
    """Whether a word as written is a plural common noun ("threads", "indexes"):
    lower-case, as capitalized words are names ("Kubernetes", "Postgres")."""
    if not word or not word.islower() or not word.endswith("s"):
        return False
    found = _lemmas(word).get("NOUN")
    return bool(found) and found[0] != word


# Prepositions and relative pronouns that end a noun phrase's core: "locks in
# Python" and "the settings that control autovacuum" are about locks and settings,
# and the phrase's number is theirs.
_QUALIFYING = frozenset({"in", "for", "on", "of", "with", "under", "within", "at", "between", "from",
                         "to", "during", "across", "by", "that", "which", "who"})


def _split_core(phrase: str) -> tuple[list[str], list[str]]:
    """(core, qualifier) words of a noun phrase: the qualifier starts at its first
    preposition or relative pronoun ("locks" + "in Python")."""
    words = phrase.split(" ")
    at = next((i for i, w in enumerate(words) if i > 0 and w.lower() in _QUALIFYING), len(words))
    return words[:at], words[at:]


def singular(phrase: str) -> str:
    """The noun phrase with its head noun in the singular ("database indexes" ->
    "database index", "locks in Python" -> "lock in Python"); unchanged when that
    word is not a known plural."""
    core, tail = _split_core(phrase)
    if core and is_plural_noun(core[-1]):
        core[-1] = _lemmas(core[-1])["NOUN"][0]
    return " ".join(core + tail)


def plural(phrase: str) -> str:
    """The noun phrase with its last word in the plural ("setting" -> "settings"); a
    word already plural, a name (capitalized) or an unknown word is kept."""
    words = phrase.split(" ")
    last = words[-1]
    if not last.islower() or is_plural_noun(last) or "NOUN" not in _lemmas(last):
        return phrase
    words[-1] = _inflect(last, "NNS") or last
    return " ".join(words)


# Nouns naming how well something does a verb, with the verb and its -ing noun.
# Sentences say the verb ("threads scale poorly", "poor scaling"), and the stemmer does
# not bring "scalability" and "scale" together, so titles about the noun also use the
# verb. ("performance" needs no entry: it stems like "perform".)
_QUALITY_VERBS = {"scalability": ("scale", "scaling")}


def quality_verb(noun: str) -> str | None:
    """The verb a quality noun names ("scalability" -> "scale"), or None."""
    found = _QUALITY_VERBS.get(noun.lower())
    return found[0] if found else None


# "the scalability of threads [in Python]": a one-word head, "of", a complement of
# one or two words without determiners, and an optional trailing qualifier.
_HEAD_OF = re.compile(
    r"^(?:the\s+)?(?P<head>[^\W\d_][\w-]*)\s+of\s+(?P<x>[\w-]+(?:\s+[\w-]+)?)"
    r"(?P<tail>\s+(?:in|on|for|under|with|within|during|across|at|when)\s+.+)?$",
    re.IGNORECASE,
)
_NOT_IN_COMPLEMENT = frozenset({"a", "an", "the", "this", "that", "these", "those", "its", "their",
                                "and", "or", "of", "to", "in", "on", "for", "with", "by"})


# Heads that count or group their complement rather than name a property of it: "the
# number of threads" is not "thread number".
_NOT_PROPERTIES = frozenset({"number", "amount", "count", "set", "list", "group", "part", "pair", "lot",
                             "rest", "majority", "sum", "total", "use", "purpose", "role", "meaning",
                             "kind", "type", "form", "way", "example", "examples"})


def head_of(phrase: str) -> tuple[str, str, str] | None:
    """(head, complement, qualifier) of "the N of X [qualifier]" where N names a
    property of X ("the scalability of threads in Python"), or None."""
    m = _HEAD_OF.match(phrase)
    if not m or m.group("head").lower() in _NOT_PROPERTIES or any(
            w.lower() in _NOT_IN_COMPLEMENT for w in m.group("x").split()):
        return None
    return m.group("head"), m.group("x"), (m.group("tail") or "")


def compact(phrase: str, *, verbal: bool = False) -> str:
    """"the scalability of threads" -> "thread scalability": the way a title names a
    property of something, shorter than the question's "of" phrase; with ``verbal``,
    a quality noun is named by its verb ("thread scaling", see _QUALITY_VERBS). Any
    other phrase is returned as it is."""
    parts = head_of(phrase)
    if parts is None:
        return phrase
    head, x, tail = parts
    found = _QUALITY_VERBS.get(head.lower()) if verbal else None
    return f"{singular(x)} {found[1] if found else head.lower()}{tail}"


def reads_plural(phrase: str) -> bool:
    """Whether a noun phrase reads as plural, for the verb that follows it: a compound
    ("X and Y"), or a head noun (the last word before any qualifier: "locks in
    Python") that is lower-case and looks plural (capitalized words are taken as
    names: "Postgres", "Kubernetes")."""
    core, _ = _split_core(" ".join(phrase.split()))
    core = [w for w in core if not w.startswith("(")]  # "literals (f-strings)": an aside
    if not core or not core[0]:
        return False
    if "and" in (w.lower() for w in core):
        return True
    last = core[-1]
    if last[:1].isupper():
        return False
    last = last.lower()
    nouns = _lemmas(last).get("NOUN", ())
    if last in nouns and not _lemmas(last).get("VERB"):  # "diabetes", "news": a singular noun ending in -s
        return False
    return len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is", "ous"))


def be_for(phrase: str) -> str:
    """"is" or "are", as the phrase reads."""
    return "are" if reads_plural(phrase) else "is"


def do_for(phrase: str) -> str:
    """"does" or "do", as the phrase reads."""
    return "do" if reads_plural(phrase) else "does"
