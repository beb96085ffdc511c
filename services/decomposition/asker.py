"""The asker taken out of a title, and an action named as a noun phrase.

A question may be asked in the first or second person ("How do I decide which index
to use?", "Why is my program slow?", "Can I undo a commit?"); a checklist item never
is: it names what the answer covers, for anyone ("How to decide which index to use",
"Reasons the program is slow", "Risks of undoing a commit"). :func:`impersonal` takes
the asker out of a phrase; :func:`action` names what the asker (or a thing) does as
an -ing phrase ("deciding which index to use", "rebasing or merging"), the subject a
question about doing something is about.

Deterministic; both return their input's words when nothing applies.
"""

from __future__ import annotations

from services.decomposition.inversion import MODALS, VERBS, capitalize, low, third_person
from services.decomposition.wordforms import asker_verb, gerund, verb_capable

__all__ = ["action", "impersonal"]

_POSSESSIVES = frozenset({"my", "our", "your"})
_ASKERS = frozenset({"i", "we", "you"})
_OBJECT_ASKERS = frozenset({"me", "us"})
_EDGE = ".,;:!?()[]\"'“”‘’"
# "I am", "we are", "you were": the verb "one" takes.
_BE_FORMS = {"am": "is", "are": "is", "were": "was", "was": "was"}


def _verb_for_one(word: str) -> str:
    """The verb after "one" where it followed "I", "we" or "you"."""
    lowered = word.lower()
    if lowered in _BE_FORMS:
        return _BE_FORMS[lowered]
    if lowered in MODALS and lowered not in ("have", "has"):
        return word
    return third_person(word)


def impersonal(text: str) -> str:
    """``text`` with the asker taken out: "my", "our" and "your" become "the" ("Why is
    my program slow" -> "... the program is slow"), "I", "we" or "you" before their
    verb become "one" with the verb agreeing ("if I have diabetes" -> "if one has
    diabetes"), "me" and "us" become "one". A capital "I" not followed by a verb (a
    numeral: "World War I") is kept."""
    tokens = text.split(" ")
    out: list[str] = []
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        core = token.strip(_EDGE)
        lowered = core.lower()
        nxt = tokens[i + 1].strip(_EDGE) if i + 1 < len(tokens) else ""
        word: str | None = None
        if lowered in _POSSESSIVES:
            word = "the"
        elif lowered in _ASKERS and (lowered != "i" or core == "I") and nxt and (
                asker_verb(nxt) or nxt.lower() in _BE_FORMS or nxt.lower() in MODALS):
            out.append(token.replace(core, "One" if i == 0 else "one", 1))
            out.append(tokens[i + 1].replace(nxt, _verb_for_one(nxt), 1))
            skip = True
            continue
        elif lowered in _OBJECT_ASKERS:
            word = "one"
        if word is None:
            out.append(token)
        else:
            out.append(token.replace(core, capitalize(word) if i == 0 and core[:1].isupper() else word, 1))
    return " ".join(out)


# Words after which a second verb of a compound one ("force push to main") comes:
# "to" and its kin, never an object.
_COMPOUND_AFTER = frozenset({"to", "into", "onto"})


def action(verb: str, rest: str) -> str:
    """What is done, as an -ing phrase: "decide" + "which index to use" -> "deciding
    which index to use"; a second verb joined by "or" or "and" takes the -ing form too
    ("rebasing or merging"), and so does the second word of a compound verb ("force
    pushing to main"). The asker is taken out (:func:`impersonal`)."""
    words = rest.split(" ") if rest else []
    if len(words) >= 2 and words[0].lower() in ("or", "and") and asker_verb(words[1].strip(_EDGE)):
        words[1] = gerund(words[1].strip(_EDGE)) + words[1][len(words[1].rstrip(_EDGE)):]
    elif (len(words) >= 2 and low(verb) not in VERBS and words[0].islower() and verb_capable(words[0])
          and words[1].lower() in _COMPOUND_AFTER):
        return impersonal(" ".join([verb, gerund(words[0]), *words[1:]]))
    return impersonal(" ".join([gerund(verb), *words]))
