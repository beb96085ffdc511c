"""Turning questions into checklist titles, without a model.

A checklist item names what an answer must cover, so it reads as a statement-shaped
phrase, not a question: "How does PostgreSQL protect against wraparound?" becomes
"How PostgreSQL protects against wraparound", "What is a decorator?" becomes
"Definition of a decorator". The rules are small and conservative: a question whose
subject and verb cannot be told apart keeps its own words (minus the question mark),
which is still grammatical.

Guarantees: deterministic; :func:`statement` never returns an empty string for a
non-blank question; :func:`split_clauses` returns at least one clause for a non-blank
question and loses no words but the joining "and".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["VERBS", "Clause", "parse_clause", "resolve_pronouns", "split_clauses", "statement", "third_person"]

WH_WORDS = frozenset({"what", "how", "why", "when", "where", "which", "who", "whom", "whose"})
_DO = frozenset({"does", "do", "did"})
_BE = frozenset({"is", "are", "was", "were"})
_MODALS = frozenset({"can", "could", "should", "would", "will", "shall", "may", "might", "must",
                     "has", "have", "had"})
_AUX = _DO | _BE | _MODALS
_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "its", "their"})
_PRONOUNS = frozenset({"it", "they", "them", "one", "this", "these"})
_GENERIC_SUBJECTS = frozenset({"you", "i", "we", "one", "someone", "people", "a user", "users"})
_IMPERATIVES = frozenset({"explain", "describe", "list", "name", "summarize", "summarise",
                          "outline", "give", "show", "tell", "discuss"})
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


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def _low(token: str) -> str:
    return token.strip(".,;:!?()[]\"'“”‘’").lower()


@dataclass(frozen=True)
class Clause:
    """One question, read.

    ``kind``: "definition" ("What is X?"), "wh" (a wh-question with a subject and verb
    told apart), "yes-no", "subject-wh" ("Which settings control it?"), "imperative",
    or "other" (kept as written). ``subject`` is the noun phrase asked about, when known.
    """

    text: str  # the clause as asked, without its final punctuation
    kind: str
    statement: str  # the checklist form, capitalized, no final punctuation
    subject: str | None = None
    wh: str | None = None
    verb: str | None = None  # the main verb's base form, when found
    rest: str | None = None  # the words after the main verb, when found


def _subject_ok(tokens: list[str]) -> bool:
    return bool(tokens) and _low(tokens[-1]) not in _NOT_SUBJECT_END and any(
        _low(t) not in _DETERMINERS for t in tokens)


def _find_verb(tokens: list[str], start: int) -> int | None:
    """Index of the main verb: the first known verb after a plausible subject
    ``tokens[start:index]``."""
    for i in range(start + 1, len(tokens)):
        if _low(tokens[i]) in VERBS and _subject_ok(tokens[start:i]):
            return i
    return None


def _find_participle(tokens: list[str], start: int) -> int | None:
    """Index of a participle ("evaluated", "written", "running") after a subject, for
    questions whose auxiliary is a form of "be"."""
    for i in range(start + 1, len(tokens)):
        low = _low(tokens[i])
        if len(low) > 4 and low.endswith(("ed", "en", "ing")) and _subject_ok(tokens[start:i]):
            return i
    return None


def _find_second_phrase(tokens: list[str], start: int) -> int | None:
    """Index of the determiner that opens the complement in "Why is X a problem":
    the subject runs up to it."""
    for i in range(start + 1, len(tokens)):
        if _low(tokens[i]) in ("a", "an", "the") and _subject_ok(tokens[start:i]):
            return i
    return None


def _inverted(lead: str, aux: str, tokens: list[str], start: int) -> tuple[str, str, str | None, str] | None:
    """(statement, subject, verb, rest) of "<lead> <aux> <subject> <verb> <rest>", or
    None when the subject cannot be told from the rest."""
    aux_low = aux.lower()
    if aux_low in _DO:
        v = _find_verb(tokens, start)
        if v is None or aux_low == "did":
            return None
        subject = " ".join(tokens[start:v])
        rest = " ".join(tokens[v + 1:])
        if subject.lower() in _GENERIC_SUBJECTS and lead.lower() != "whether":
            return _join(lead, "to", tokens[v], rest), subject, _low(tokens[v]), rest
        verb = third_person(tokens[v]) if aux_low == "does" else tokens[v]
        return _join(lead, subject, verb, rest), subject, _low(tokens[v]), rest
    if aux_low in _BE:
        split = _find_participle(tokens, start) or _find_second_phrase(tokens, start)
        if split is None:
            return None
        subject = " ".join(tokens[start:split])
        rest = " ".join(tokens[split:])
        return _join(lead, subject, aux_low, rest), subject, None, rest
    v = _find_verb(tokens, start)
    if v is None:
        return None
    subject = " ".join(tokens[start:v])
    rest = " ".join(tokens[v + 1:])
    if subject.lower() in _GENERIC_SUBJECTS and aux_low in ("can", "should", "could") and lead.lower() != "whether":
        return _join(lead, "to", " ".join(tokens[v:])), subject, _low(tokens[v]), rest
    return _join(lead, subject, aux_low, " ".join(tokens[v:])), subject, _low(tokens[v]), rest


def _join(*parts: str) -> str:
    return _capitalize(" ".join(p for p in parts if p))


def parse_clause(text: str) -> Clause:
    """Read one question (no joined second question in it)."""
    text = " ".join(text.split()).rstrip("?.!;, ")
    tokens = text.split(" ")
    if not text:
        return Clause(text, "other", "")
    lead = _low(tokens[0])
    if lead in _IMPERATIVES and len(tokens) > 1:
        rest = tokens[1:]
        if _low(rest[0]) == "me" and len(rest) > 1:
            rest = rest[1:]
        inner = parse_clause(" ".join(rest))
        if inner.kind != "other":
            return inner
        return Clause(text, "imperative", _capitalize(" ".join(rest)), subject=" ".join(rest))
    if lead in WH_WORDS and len(tokens) > 2 and _low(tokens[1]) in _AUX:
        aux = _low(tokens[1])
        if lead in ("what", "who") and aux in _BE:
            subject = " ".join(tokens[2:])
            low = subject.lower()
            if " of " in f" {low} " or " between " in f" {low} " or low.startswith(("the main ", "the key ", "the most ")):
                return Clause(text, "definition", _capitalize(subject), subject=subject, wh=lead)
            return Clause(text, "definition", f"Definition of {subject}", subject=subject, wh=lead)
        done = _inverted(tokens[0], aux, tokens, 2)
        if done is not None:
            return Clause(text, "wh", done[0], subject=done[1], wh=lead, verb=done[2], rest=done[3])
        return Clause(text, "other", _capitalize(text), wh=lead)
    if lead in WH_WORDS:
        # "Which settings control it": the wh-phrase is the subject, nothing moves.
        return Clause(text, "subject-wh", _capitalize(text), wh=lead)
    if lead in _AUX and len(tokens) > 2:
        done = _inverted("whether", tokens[0], tokens, 1)
        if done is not None:
            return Clause(text, "yes-no", done[0], subject=done[1], verb=done[2], rest=done[3])
    return Clause(text, "other", _capitalize(text))


# A second question joined to the first: ", and which settings...", " and how...",
# or a new sentence.
_JOIN = re.compile(
    r"(?:,\s*(?:and\s+)?|\s+and\s+)(?=(?:what|how|why|when|where|which|who|whether|is|are|does|do|can|should)\b)"
    r"|(?<=[?;])\s+",
    re.IGNORECASE,
)


def split_clauses(question: str) -> list[str]:
    """The questions asked in ``question``, each without its final punctuation."""
    text = " ".join(question.split())
    parts = [p.strip(" ,;?.!") for p in _JOIN.split(text)]
    return [p for p in parts if p] or ([text] if text else [])


def resolve_pronouns(clause: str, subject: str | None) -> str:
    """``clause`` with a pronoun standing for ``subject`` replaced by it, so a
    sub-question asked alone still says what it is about: "what does it prevent" →
    "what does the GIL prevent"."""
    if not subject:
        return clause
    tokens = clause.split(" ")
    out = []
    replaced = False
    for i, token in enumerate(tokens):
        if not replaced and i > 0 and _low(token) in _PRONOUNS and token == token.lower() and (
                _low(token) in ("it", "they", "them") or _low(tokens[i - 1]) not in _DETERMINERS):
            # "one" and "this" only as pronouns, never as determiners ("this lock").
            if _low(token) in ("one", "this", "these") and i + 1 < len(tokens):
                out.append(token)
                continue
            out.append(subject)
            replaced = True
            continue
        out.append(token)
    return " ".join(out)


def statement(question: str) -> str:
    """The checklist title for one question: see :class:`Clause`."""
    return parse_clause(question).statement
