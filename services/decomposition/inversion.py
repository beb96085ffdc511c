"""Inverted questions turned around, without a model.

"Why is the GIL a problem?", "How does PostgreSQL protect against wraparound?",
"Should I use asyncio?": a lead word (none for a yes-no question), an auxiliary, then
the subject and the main verb. Turned around, "<lead> <aux> <subject> <verb> <rest>"
is a title ("Reasons the GIL is a problem", "How PostgreSQL protects against
wraparound", "Whether to use asyncio") with its subject, verb and rest told apart
(:class:`Reading`).

Apart from :mod:`services.decomposition.phrasing`, which tells a question's form and
hands the inverted ones here: this is the word-by-word part, where a subject ends and
the main verb begins, so the word tables that decide it (auxiliaries, determiners, the
known verbs) and the small token helpers both modules use live here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.research.text import STOPWORDS

from services.decomposition.wordforms import (
    asker_verb,
    base_verb_or_unknown,
    is_adverb,
    is_past_participle,
    past,
    verb_capable,
    word_classes,
)

__all__ = [
    "AUX", "BE", "DETERMINERS", "MODALS", "VERBS", "Reading", "capitalize", "inverted", "join", "low", "quality_noun",
    "subject_ok",
    "third_person",
]

_DO = frozenset({"does", "do", "did"})
BE = frozenset({"is", "are", "was", "were"})
MODALS = frozenset({"can", "could", "should", "would", "will", "shall", "may", "might", "must",
                    "has", "have", "had"})
AUX = _DO | BE | MODALS
DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "its", "their"})
_GENERIC_SUBJECTS = frozenset({"you", "i", "we", "one", "someone", "people", "a user", "users"})
# Words after which a subject cannot end: a verb found right after one is not the verb.
_NOT_SUBJECT_END = frozenset({"the", "a", "an", "and", "or", "of", "in", "on", "for", "to",
                              "with", "by", "from", "at", "as", "between", "into", "its", "their",
                              "that", "which", "who"})
# Base forms of verbs that questions about systems, science and code ask with: the
# first one after a possible subject is taken as the main verb. Nouns that are also
# verbs ("process", "lock") are left out when they more often name things.
VERBS = frozenset("""
    accept access achieve acquire add affect allocate allow apply avoid become behave
    block break build cache call cause change check choose clean close collect come
    communicate compare compute configure connect consume contain control convert copy
    crash create cure deal decide define delete deliver depend deploy detect determine
    develop differ do emit enable encrypt ensure evaluate execute exist expire extend
    fail find fix follow free generate get grow guarantee handle happen help hold hurt
    implement import improve include increase influence inherit interact isolate iterate
    keep leak limit load look make manage match matter mean measure mitigate move need
    occur open override parse pass perform persist predict prevent produce protect
    provide raise reach react read receive recover reduce relate release remove
    replace represent require resolve respond resume retry return reuse run scale
    schedule select send serve share shrink side-step sidestep sign speed spread start stop
    store suspend support survive take tolerate track treat trigger try turn use
    validate vary verify wait work wrap write yield
""".split())


def third_person(verb: str) -> str:
    """The verb's third person singular present: "protect" → "protects",
    "do" → "does", "apply" → "applies", "side-step" → "side-steps"."""
    if "-" in verb:
        head, tail = verb.rsplit("-", 1)
        return f"{head}-{third_person(tail)}"
    low = verb.lower()
    irregular = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if low in irregular:
        return irregular[low]
    if low.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def low(token: str) -> str:
    return token.strip(".,;:!?()[]\"'“”‘’").lower()


def subject_ok(tokens: list[str]) -> bool:
    return bool(tokens) and low(tokens[-1]) not in _NOT_SUBJECT_END and any(
        low(t) not in DETERMINERS for t in tokens)


# Words that open what a verb acts on.
_OBJECT_OPENERS = frozenset({"a", "an", "the", "its", "their", "your", "my", "our", "this", "that", "these",
                             "those", "or", "and"})


def _find_verb(tokens: list[str], start: int) -> int | None:
    """Index of the main verb after an auxiliary: the first known verb after a
    plausible subject ``tokens[start:index]``. Failing that (after "does" or "can" a
    verb must come): the last word when it can be a verb's base form ("Why do threads
    deadlock") or is a lower-case word unknown to the word tables ("frobnicate"), else
    the last word that can only be a verb ("How does Python's GC reclaim memory").
    Capitalized words are names, never the verb. After "I", "you" or "we" the next
    word is the verb ("How do I decide", "Can I drink")."""
    if low(tokens[start]) in _ASKERS and start + 1 < len(tokens) and asker_verb(_bare(tokens[start + 1])):
        return start + 1
    for i in range(start + 1, len(tokens)):
        if low(tokens[i]) in VERBS and subject_ok(tokens[start:i]):
            return i
    # A word that can be a verb, right before what it acts on ("Git show a merge
    # conflict", "you finish or abandon the merge"): the verb, though it can be a noun too.
    for i in range(start + 1, len(tokens) - 1):
        word = tokens[i].strip(".,;:!?()[]\"'“”‘’")
        if (word.islower() and low(tokens[i + 1]) in _OBJECT_OPENERS and verb_capable(word)
                and subject_ok(tokens[start:i])):
            return i
    found = _base_form(tokens, start)
    if found is not None:
        return found
    for i in range(len(tokens) - 1, start, -1):
        word = tokens[i].strip(".,;:!?()[]\"'“”‘’")
        only = i < len(tokens) - 1
        if word.islower() and base_verb_or_unknown(word, only=only) and subject_ok(tokens[start:i]):
            return i
    return None


_ASKERS = frozenset({"i", "you", "we"})


def _base_form(tokens: list[str], start: int) -> int | None:
    """Index of the main verb in its base form, which after "does" or "can" must come
    ("How does insulin regulate blood sugar", "How do central banks fight inflation",
    "How can a rejected push be forced"): "be"; else a word that can only be a verb;
    else one followed by a function word ("git push refuse some updates": "refuse",
    not "push"); else the first word that can be a verb. None when no word can be."""
    found = [i for i in range(start + 1, len(tokens) - 1)
             if _bare(tokens[i]).islower() and subject_ok(tokens[start:i])
             and (low(tokens[i]) == "be" or verb_capable(_bare(tokens[i])))]
    for test in (lambda i: low(tokens[i]) == "be",
                 lambda i: "NOUN" not in word_classes(low(tokens[i])),
                 lambda i: low(tokens[i + 1]) in STOPWORDS):
        chosen = next((i for i in found if test(i)), None)
        if chosen is not None:
            return chosen
    return found[0] if found else None


def _bare(token: str) -> str:
    return token.strip(".,;:!?()[]\"'“”‘’")


def _is_participle(token: str) -> bool:
    word = low(token)
    return (len(word) > 4 and word.endswith(("ed", "en", "ing"))) or is_past_participle(word)


def _find_participle(tokens: list[str], start: int) -> int | None:
    """Index of a participle ("evaluated", "written", "running") after a subject, for
    questions whose auxiliary is a form of "be"."""
    for i in range(start + 1, len(tokens)):
        if _is_participle(tokens[i]) and subject_ok(tokens[start:i]):
            return i
    return None


def _find_comparative(tokens: list[str], start: int) -> int | None:
    """Index where "faster than Y" or "more costly than Y" begins after a subject:
    "Is asyncio faster than threads" is about asyncio, compared with threads."""
    for i in range(start + 1, len(tokens) - 1):
        if low(tokens[i + 1]) != "than":
            continue
        j = i - 1 if i - 1 > start and low(tokens[i - 1]) in ("more", "less") else i
        if subject_ok(tokens[start:j]):
            return j
    return None


def _find_second_phrase(tokens: list[str], start: int) -> int | None:
    """Index of the determiner that opens the complement in "Why is X a problem":
    the subject runs up to it."""
    for i in range(start + 1, len(tokens)):
        if low(tokens[i]) in ("a", "an", "the") and subject_ok(tokens[start:i]):
            return i
    return None


@dataclass(frozen=True)
class Reading:
    """An inverted question turned around: its title, subject, verb and what follows."""

    statement: str
    subject: str
    verb: str | None
    rest: str
    generic: bool = False
    aux: str | None = None


# A be-question turned into a statement keeps every word ("Why is the GIL a problem"
# -> "Why the GIL is a problem") and only reorders the question; the title names what
# the lead word asks for instead: why asks for reasons, where for places, how for the
# way, when for the point (an event: "when are X evaluated") or the conditions at which
# the statement holds.
_BE_LEADS = {"why": "Reasons", "where": "Places where", "how": "The way"}


# "How long are entries kept": a span or a rate of what is done, not a quality of the thing.
_HOW_DONE = {"how long": "Length of time", "how often": "Frequency at which"}


def _be_lead(lead: str, participle: bool) -> str:
    low = lead.lower()
    if low == "when":
        return "The point at which" if participle else "Conditions under which"
    if participle and low in _HOW_DONE:
        return _HOW_DONE[low]
    return _BE_LEADS.get(low, _counted_lead(lead))


# "How many threads can a process run" turned around is still its own words; a title
# names the quantity: "Number of threads a process can run".
_COUNTED = {"many": "Number of", "much": "Amount of"}
# "How fast is asyncio": the quality the adjective asks about, as a noun ("Speed of
# asyncio"); an adjective not listed leaves the question's words.
_QUALITY_NOUNS = {"fast": "Speed", "slow": "Speed", "quick": "Speed", "big": "Size", "large": "Size",
                  "small": "Size", "long": "Length", "expensive": "Cost", "costly": "Cost", "cheap": "Cost",
                  "reliable": "Reliability", "secure": "Security", "safe": "Safety", "often": "Frequency",
                  "common": "Prevalence", "accurate": "Accuracy", "efficient": "Efficiency",
                  "possible": "Feasibility", "legal": "Legality", "necessary": "Necessity", "risky": "Risks",
                  "worth": "Value"}


def quality_noun(adjective: str) -> str | None:
    """The noun naming the quality an adjective asks about ("safe" -> "Safety"), or None."""
    return _QUALITY_NOUNS.get(adjective.lower())


def _counted_lead(lead: str) -> str:
    words = lead.split(" ")
    if len(words) > 2 and words[0].lower() == "how" and words[1].lower() in _COUNTED:
        return " ".join([_COUNTED[words[1].lower()], *words[2:]])
    return lead


def _quality_title(lead: str, subject: str) -> str | None:
    """"How fast is asyncio" -> "Speed of asyncio"."""
    words = lead.lower().split(" ")
    noun = _QUALITY_NOUNS.get(words[1]) if len(words) == 2 and words[0] == "how" else None
    return f"{noun} of {subject}" if noun else None


def _inverted_be(lead: str, aux: str, tokens: list[str], start: int) -> Reading | None:
    """"<lead> is <subject> <complement>": the subject ends at a participle or a
    comparative (whichever comes first), else at the article opening the complement.
    After a wh-phrase ("How fast is asyncio") the subject may be all that follows."""
    found = [i for i in (_find_participle(tokens, start), _find_comparative(tokens, start)) if i is not None]
    split = min(found) if found else _find_second_phrase(tokens, start)
    if split is None and len(tokens) > start + 1 and "ADJ" in word_classes(low(tokens[-1])) \
            and subject_ok(tokens[start:-1]):
        split = len(tokens) - 1  # "Why is my program slow": the subject runs up to the adjective
    if split is None:
        if " " not in lead or len(tokens) <= start:
            return None
        split = len(tokens)
    subject = " ".join(tokens[start:split])
    rest = " ".join(tokens[split:])
    quality = _quality_title(lead, subject) if not rest else None
    if quality:
        return Reading(quality, subject, None, rest)
    participle = split < len(tokens) and _is_participle(tokens[split])
    return Reading(join(_be_lead(lead, participle), subject, aux, rest), subject, None, rest)


def _generic_statement(lead: str, aux: str, subject: str, phrase: str) -> str:
    """The title when the asker is the subject ("How do I reduce GC pauses?"): how,
    when or what *to* do is what the asker wants to know, and "why should I" asks
    for reasons to; other forms keep the asker ("Why do we need X" -> "Why we need X")."""
    first = lead.split(" ")[0].lower()
    if first == "whether" and aux in ("can", "could"):
        return join(lead, "it is possible to", phrase)  # "Can I undo a commit": not "Whether I can"
    if first == "whether":
        to_form = aux == "should"
    else:
        to_form = aux in ("can", "should", "could") or (aux in _DO and first == "how")
    if to_form:
        return join("Reasons" if first == "why" else lead, "to", phrase)
    return join(lead, subject, aux if aux in MODALS else "", phrase)


# "How does X affect Y" asks for X's effect on Y, which is how a person titles it.
_EFFECT_NOUNS = {"affect": "Effect", "impact": "Impact", "influence": "Influence"}


def inverted(lead: str, aux: str, tokens: list[str], start: int) -> Reading | None:
    """"<lead> <aux> <subject> <verb> <rest>" turned around, or None when the subject
    cannot be told from the rest."""
    aux_low = aux.lower()
    if aux_low in BE:
        return _inverted_be(lead, aux_low, tokens, start)
    v = _find_verb(tokens, start)
    if v is None:
        return None
    subject = " ".join(tokens[start:v])
    rest = " ".join(tokens[v + 1:])
    verb = {"does": third_person, "did": past}.get(aux_low, str)(tokens[v])
    if subject.lower() in _GENERIC_SUBJECTS:
        phrase = " ".join([tokens[v] if aux_low not in _DO or "how" in lead.lower() else verb, *tokens[v + 1:]])
        return Reading(_generic_statement(lead, aux_low, subject, phrase), subject, low(tokens[v]), rest, True,
                       aux_low)
    lead = _counted_lead(lead)
    # "a traceback sometimes": the adverb stays in the title, not in what it is about.
    core = tokens[start:v]
    while len(core) > 1 and is_adverb(low(core[-1])):
        core = core[:-1]
    about = " ".join(core)
    effect = _EFFECT_NOUNS.get(low(tokens[v])) if lead.lower() == "how" and rest else None
    if effect:
        return Reading(join(effect, "of", subject, "on", rest), about, low(tokens[v]), rest, aux=aux_low)
    if aux_low in _DO:
        return Reading(join(lead, subject, verb, rest), about, low(tokens[v]), rest, aux=aux_low)
    return Reading(join(lead, subject, aux_low, " ".join(tokens[v:])), about, low(tokens[v]), rest, aux=aux_low)


def join(*parts: str) -> str:
    return capitalize(" ".join(p for p in parts if p))
