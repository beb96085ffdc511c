"""The follow-up sub-questions of a question about doing something (:func:`action_subs`).

Two kinds of question ask about an action rather than a thing:

- the asker's own ("How do I decide which index to use?", "Should I take aspirin
  daily?", "Can I undo a commit?", "Is it safe to force push?"): the answer is steps,
  what to weigh, benefits and risks of the doing, never "What is deciding which index
  to use?";
- a thing's ("How does Git decide which files are ignored?", "How does the Fed choose
  interest rates?"): the answer is the process, so the follow-ups ask for its steps
  and what determines it, not "What is Git?". "Why does Git use SHA-1?" asks the
  reasons for a named thing's choice: its consequences follow, not its definition.

Apart from :mod:`services.decomposition.followups`, which has the follow-ups of the
other forms: these read only the clause and name the doing with
:func:`~services.decomposition.asker.action`.
"""

from __future__ import annotations

from collections.abc import Callable

from services.decomposition.asker import action, impersonal
from services.decomposition.inversion import third_person
from services.decomposition.phrasing import Clause
from services.decomposition.wordforms import be_for, word_classes

__all__ = ["action_subs"]

# Verbs whose clause ends in a place or manner ("work in Python"): "How does X work"
# asks what X is and does, which the definition follow-ups answer.
_INTRANSITIVE = frozenset({"work", "behave", "happen", "occur", "exist", "matter", "function"})
# Auxiliaries of "Should I...": whether the doing is worth it. "Do I need..." asks what
# decides it; others ("Can I...", "Is it safe to...") whether it can be done without harm.
_WORTH = frozenset({"should", "would", "shall"})
_ARTICLES = frozenset({"a", "an", "the"})
# Words opening what a choice is between: "decide which index to use", "choose between X and Y".
_CHOICE_OPENERS = frozenset({"which", "what", "whether", "between", "among", "when", "how"})


def _what_is(phrase: str) -> str:
    return f"What {be_for(phrase)} {phrase}?"


def _named(phrase: str) -> bool:
    """Whether a noun phrase names something ("Git", "the Roman Empire", "Python's
    garbage collector"): one of its words is capitalized."""
    return any(w[:1].isupper() for w in phrase.split(" ") if w.lower() not in _ARTICLES)


def _definable(obj: str | None, doing: str, worth: Callable[[str | None, str], bool]) -> list[str]:
    """The object's definition when it is a term of art and not a thing done "daily"
    or "quickly" (an adverb is no part of what is defined)."""
    if not obj or "ADV" in word_classes(obj.split(" ")[-1]):
        return []
    return [_what_is(obj)] if worth(obj, doing) else []


def _asker_subs(clause: Clause, worth: Callable[[str | None, str], bool]) -> list[str] | None:
    """"How do I V...", "Should I V...", "Is it safe to V...": about the doing."""
    verb, rest = clause.verb or "", clause.rest or ""
    doing = action(verb, rest)
    if clause.kind == "yes-no" and clause.aux in ("do", "does", "did"):
        # "Do I need a visa to visit Japan": what decides it, and cases of it.
        said = impersonal(" ".join(p for p in (third_person(verb), rest) if p))
        return [f"What determines whether one {said}?", *_definable(clause.obj, doing, worth),
                f"What are examples of {doing}?"]
    if clause.kind == "yes-no":
        subs = ([f"What are the benefits of {doing}?", f"What are the risks of {doing}?"] if clause.aux in _WORTH
                else [f"What are the risks of {doing}?", f"What are the alternatives to {doing}?"])
        return subs + _definable(clause.obj, doing, worth)
    if clause.kind == "consequence":  # "What happens if I skip a dose"
        return [f"What should one do after {doing}?", *_definable(clause.obj, doing, worth)]
    if clause.wh == "what" and verb == "do" and rest.lower().startswith(("if ", "when ")):
        # "What should I do if my code leaks memory": the first steps, and the situation.
        situation = impersonal(rest.split(" ", 1)[1])
        return [f"What are the first steps {impersonal(rest)}?",
                f"What are examples of handling situations where {situation}?"]
    if clause.obj:
        return None  # "How do I reduce GC pauses", "When should I use backpressure": about the object
    if clause.wh == "how":
        # For a choice ("decide which index to use"), what to weigh; else the steps.
        doing = doing.split(",")[0]
        if rest.split(" ")[0].lower() in _CHOICE_OPENERS:
            return [f"What should be considered when {doing}?", f"What are examples of {doing}?"]
        return [f"What are the steps to {impersonal(' '.join(p for p in (verb, rest.split(',')[0]) if p))}?",
                f"What are examples of {doing}?"]
    return [f"What should be considered when {doing}?", f"What are examples of {doing}?"]


def action_subs(clause: Clause, subject: str, examples: str,
                worth: Callable[[str | None, str], bool]) -> list[str] | None:
    """The follow-ups of a question about doing something, or None for any other.
    ``examples`` is the examples sub-question of the clause's own action; ``worth``
    tells whether a phrase the clause acts on needs a definition."""
    if clause.generic and clause.verb:
        return _asker_subs(clause, worth)
    rest = clause.rest or ""
    if clause.wh == "why" and not clause.verb and rest and " " not in rest and "ADJ" in word_classes(rest.lower()):
        # "Why is my program slow": finding out why, and what to do about it.
        said = f"{subject} {be_for(subject)} {rest}"
        return [f"How can one diagnose why {said}?", f"How can one make {subject} less {rest}?"]
    if clause.kind not in ("wh", "consequence") or not clause.verb or clause.verb in _INTRANSITIVE:
        return None
    define = _definable(clause.obj, subject, worth)
    if clause.wh == "how" and clause.aux in ("do", "does") and clause.statement.startswith("How "):
        body = clause.statement[len("How "):]  # "Git decides which files are ignored"
        return [f"What determines how {body}?", *define, examples]
    if clause.kind == "consequence" and _named(subject):  # "What happens when the Fed raises rates"
        return [*define, examples]
    if clause.wh == "why" and _named(subject) and examples.startswith("What are examples of "):
        doing = examples[len("What are examples of "):].rstrip("?")  # "Git using SHA-1"
        return [f"What are the consequences of {doing}?", *define, examples]
    return None
