"""The follow-up sub-questions of a plain question asking one thing, by its form
(:func:`follow_ups`).

Each form asks for something different, so what an answer needs besides the question
itself differs too: "What is X?" needs how X works, examples and limitations; "What
limits X?" the factors and examples of limits; "What are the types of X?" how each
type works and when to use it. Every sub-question is phrased so that its checklist
title reads well and names the question's subject, which is what the coverage rule
matches sentences against.

Apart from :mod:`services.decomposition.offline`, which assembles the sub-questions of
every shape of question: these rules are what each form calls for, and they read only
the clause (:class:`~services.decomposition.phrasing.Clause`) and the word forms.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from services.decomposition.asker import action, impersonal
from services.decomposition.doing import action_subs
from services.decomposition.inversion import VERBS
from services.decomposition.phrasing import CAUSE_VERBS, LIMIT_VERBS, MEANS_VERBS, NEGATIVE_HEADS, Clause
from services.decomposition.wordforms import (
    be_for,
    compact,
    do_for,
    gerund,
    head_of,
    quality_verb,
    reads_plural,
    singular,
)

__all__ = ["examples_of_doing", "follow_ups", "worth_defining"]

# Verbs of taking something up: "When should I use X" calls for X's limitations.
_CHOOSING = frozenset({"use", "choose", "adopt", "prefer", "pick", "enable", "need", "avoid"})
# Verbs whose clause ends in a place or manner ("work in Python"), not in an object.
_INTRANSITIVE = frozenset({"work", "behave", "happen", "occur", "exist", "matter", "function"})


def follow_ups(first: Clause, subject: str) -> list[str]:
    """The sub-questions after ``first``, a question asking one thing about ``subject``.
    A question about doing something (the asker's "How do I...", "Should I...", or a
    thing's "How does Git decide...") gets those of :mod:`services.decomposition.doing`."""
    found = action_subs(first, subject, examples_of_doing(first, subject), worth_defining)
    if found is not None:
        return found
    build: Callable[[Clause, str], list[str]] = _BY_KIND.get(first.kind, _subject_subs)
    return build(first, subject)


_COUNTING = frozenset("""one two three four five six seven eight nine ten some several many few each every
                        all both any most more other""".split())


def worth_defining(phrase: str | None, subject: str) -> bool:
    """Whether the noun phrase a question acts on needs its own definition: one of two
    words or more is usually a term of art ("transaction ID wraparound"); a single word
    is usually a common one whose definition the answer does not need ("latency")."""
    if not phrase or phrase.lower() == subject.lower():
        return False
    words = _words(phrase)
    if _counted(words):
        return False  # "two exceptions", "some updates": counted things, not a term
    return len(words) >= 2 and not any(w in VERBS for w in words)


def _words(phrase: str) -> list[str]:
    """The phrase's words, lower-cased, without its articles."""
    return [w.lower() for w in phrase.split(" ") if w.lower() not in ("a", "an", "the")]


def _counted(words: list[str]) -> bool:
    """The words name things by their count ("two branches", "some updates", "3 files")."""
    return bool(words) and (words[0] in _COUNTING or words[0].isdigit())


def _what_is(phrase: str) -> str:
    return f"What {be_for(phrase)} {phrase}?"


# Adjectives of size, age or sameness: "a large repository" is a large one, not a term.
_PLAIN_ADJECTIVES = frozenset("""large big small huge tiny long short old new different same whole entire
                                 many several other good bad slow fast""".split())


def _no_term(phrase: str) -> bool:
    """A phrase no answer defines: a list of things ("Windows and Linux developers"), a
    count of them ("two branches") or a plain adjective's thing ("a large repository")."""
    words = _words(phrase)
    return bool(words) and ("and" in words or "or" in words or words[0] in _PLAIN_ADJECTIVES or _counted(words))


def _done_to(clause: Clause) -> bool:
    """The asker's "How do I V X…": the question is about doing, its object the thing done to."""
    return clause.generic and clause.wh == "how" and bool(clause.verb)


def _steps(clause: Clause) -> str:
    """The steps of the asker's doing ("What are the steps to stop Windows and Linux
    developers from committing files with different line endings?")."""
    done = " ".join(p for p in (clause.verb, (clause.rest or "").split(",")[0]) if p)
    return f"What are the steps to {impersonal(done)}?"


def _examples(phrase: str) -> str:
    """Examples of one definite thing ("the GIL") are examples of it at work."""
    definite = phrase.lower().startswith("the ") and not reads_plural(phrase)
    return f"What are examples of {phrase}{' in practice' if definite else ''}?"


def _counterpart(head: str | None, subject: str) -> str:
    """After the good side, the bad one, and after the bad side the good one; costs
    call for how to reduce them."""
    if head in ("cost", "costs", "overhead"):
        return f"How can one reduce the {head} of {subject}?"
    if head in NEGATIVE_HEADS:
        return f"What are the advantages of {subject}?"
    return f"What are the limitations of {subject}?"


# "the symptoms of Lyme disease", "the pros and cons of remote work": X is what it is about.
_PART_HEADS = frozenset({"cause", "causes", "effect", "effects", "consequence", "consequences", "impact",
                         "implications", "history"})
_PART_OF = re.compile(r"^(?:the\s+)?(?:[\w-]+\s+){0,3}?[\w-]+\s+of\s+((?:the\s+)?[^\W\d_][\w-]*(?:\s+[\w-]+){0,3})$",
                      re.IGNORECASE)


def _definition_subs(clause: Clause, subject: str) -> list[str]:
    """"What is X?", "What is the purpose of X?": how X works, examples of it, and
    its limitations (or the counterpart of the aspect asked). "What are the symptoms
    of X?" (a part of X no rule names) asks about X: what X is, and examples."""
    part = _PART_OF.match(subject) if clause.head is None else None
    if part:
        return [_what_is(part.group(1)), _examples(subject)]
    if clause.head in _PART_HEADS:  # "the causes of inflation": subject is "inflation"
        return [_what_is(subject), _examples(clause.statement[:1].lower() + clause.statement[1:])]
    return [f"How {do_for(subject)} {subject} work?", _examples(subject), _counterpart(clause.head, subject)]


def _kind_subs(clause: Clause, subject: str) -> list[str]:
    """"What are the types of X?": X, then how each type works and when each is used."""
    kind, one = singular(clause.head or "type"), singular(subject)
    return [_what_is(subject), f"How does each {kind} of {one} work?", f"When should each {kind} of {one} be used?"]


def _means_subs(clause: Clause, subject: str) -> list[str]:
    """"What are the ways to reduce X?": X, examples of reducing it, and what each way
    cannot do."""
    goal = " ".join(p for p in (clause.verb, clause.rest) if p)
    subs = [_what_is(clause.obj)] if clause.obj else []
    subs.append(f"What are examples of {gerund(clause.verb or '')} {clause.rest or ''}".rstrip() + "?")
    subs.append(f"What are the limitations of each {singular(clause.head or 'way')} to {goal}?")
    return subs


def _how_well(said: str) -> str | None:
    """"How well do threads scale?" for "the scalability of threads": sentences say
    the verb, which the quality noun does not match (see wordforms.quality_verb)."""
    parts = head_of(said)
    verb = quality_verb(parts[0]) if parts else None
    if parts is None or verb is None:
        return None
    _, of, tail = parts
    return f"How well {do_for(of)} {of} {verb}{tail}?"


def _agent_subs(clause: Clause, subject: str) -> list[str]:
    """"What causes X?": X, how to prevent it, examples. "What prevents X?": X and its
    causes. "What limits X?" / "What affects X?": the factors, how well X does what
    its quality noun names ("How well do threads scale?") or else what X is, and
    examples of them."""
    verb = clause.verb or ""
    if verb in CAUSE_VERBS and clause.aux == "did":  # "What caused X", "What led to X": a past event
        return [f"What was the timeline of {subject}?", f"What were the consequences of {subject}?"]
    if verb in CAUSE_VERBS:
        return [_what_is(subject), f"How can one prevent {subject}?", _examples(subject)]
    if verb in MEANS_VERBS:
        return [_what_is(subject), f"What causes {subject}?"]
    # "thread scaling": the follow-ups name a quality by its verb (wordforms.compact).
    verbal = compact(clause.rest or subject, verbal=True)
    how_well = _how_well(clause.rest or "")
    examples = (f"What are examples of limits on {verbal}?" if verb in LIMIT_VERBS
                else f"What are examples of factors that {verb} {verbal}?")
    return [f"What factors {verb} {verbal}?", how_well or _what_is(subject), examples]


def _which_subs(clause: Clause, subject: str) -> list[str]:
    """"Which brokers support X?": X when it is a term of art, and how they do it."""
    subs = [_what_is(clause.obj)] if clause.obj and worth_defining(clause.obj, subject) else []
    subs.append(f"How {do_for(subject)} {subject} {clause.verb} {clause.rest}".rstrip() + "?")
    return subs


_THAN = re.compile(r"^((?:(?:more|less)\s+)?[\w-]+)\s+than\s+(?:(?:a|an|the)\s+)?(.+)$", re.IGNORECASE)


def _comparative(clause: Clause, subject: str) -> list[str] | None:
    """"Is asyncio faster than threads?": each side, how they differ, and when the
    comparison holds."""
    m = _THAN.match(clause.rest or "") if clause.verb is None else None
    if m is None:
        return None
    other = m.group(2)
    return [_what_is(subject), _what_is(other), f"How do {subject} and {other} differ?",
            f"When {be_for(subject)} {subject} {m.group(1)} than {other}?"]


def _acted_on(clause: Clause) -> str | None:
    """The verb's words up to the end of its object ("affect latency" out of "affect
    latency in concurrent servers"), "" for a verb ending the clause, None otherwise."""
    rest = clause.rest or ""
    if not rest:
        return ""
    if not clause.obj:  # "decide which files are ignored", "rise after wars": all of it
        return rest.split(",")[0]
    return rest[:rest.find(clause.obj) + len(clause.obj)] if clause.obj in rest else clause.obj


def examples_of_doing(clause: Clause, subject: str) -> str:
    """Examples of the question's own action ("garbage collection pauses affecting
    latency", "reducing GC pauses", "what the decorator generates"), which say more
    than examples of the subject alone; examples of the subject when the action
    cannot be told."""
    acted = _acted_on(clause) if clause.verb and clause.verb not in _INTRANSITIVE else None
    if acted is not None:
        acted = re.sub(r"\s+(?:from|to|in|on|at|into|with|for)$", "", acted)  # "reading its configuration from"
        doing = " ".join(p for p in (gerund(clause.verb or ""), acted) if p)
        if clause.generic and clause.wh == "how":
            return f"What are examples of {doing}?"
        if not clause.generic and (clause.wh in ("how", "why", "where", "when")
                                   or clause.kind in ("yes-no", "consequence")):
            return f"What are examples of {subject} {doing}?"
    if clause.kind == "wh" and clause.wh == "what" and clause.verb and not clause.generic:
        return f"What are examples of {clause.statement[:1].lower()}{clause.statement[1:]}?"
    return _examples(subject)


def _subject_subs(clause: Clause, subject: str) -> list[str]:
    """Any other question: what its subject is, what it acts on when that is a term of
    art, for "when/why should I use X" the limitations of X, and examples."""
    if clause.kind == "yes-no":
        compared = _comparative(clause, subject)
        if compared:
            return compared
    subs = [_steps(clause) if _done_to(clause) and _no_term(subject) else _what_is(subject)]
    if worth_defining(clause.obj, subject):
        subs.append(_what_is(clause.obj or ""))
    if clause.generic and clause.wh in ("when", "why") and clause.verb in _CHOOSING:
        subs.append(f"What are the limitations of {subject}?")  # "When should I use X"
    elif clause.generic and clause.wh == "when" and clause.verb:  # "When should I sell a stock"
        subs.append(f"What should be considered when {action(clause.verb, clause.rest or '')}?")
    subs.append(examples_of_doing(clause, subject))
    return subs


_BY_KIND: dict[str, Callable[[Clause, str], list[str]]] = {
    "definition": _definition_subs,
    "list": _kind_subs,
    "means": _means_subs,
    "what-verb": _agent_subs,
    "which": _which_subs,
}
