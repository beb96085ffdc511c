"""Questions joined in one ("What is the GIL and what does it prevent?"): where one
ends and the next begins (:func:`split_clauses`), and the words a later one borrows
from the first so that it can be asked alone (:func:`resolve_pronouns`,
:func:`qualify_bare_noun`).

Apart from :mod:`services.decomposition.phrasing`, which reads one question: these
rules only cut and patch the text before it is read. :func:`split_clauses` returns at
least one clause for a non-blank question and loses no words but the joining "and".
"""

from __future__ import annotations

import re

from shared.research.text import terms

from services.decomposition.inversion import AUX, DETERMINERS, low
from services.decomposition.wordforms import is_plural_noun

__all__ = ["PRONOUNS", "qualify_bare_noun", "resolve_pronouns", "split_clauses"]

PRONOUNS = frozenset({"it", "they", "them", "one", "this", "these"})
_ARTICLES = frozenset({"a", "an", "the"})
_PRONOUNS = PRONOUNS

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
        if not replaced and i > 0 and low(token) in _PRONOUNS and token == token.lower() and (
                low(token) in ("it", "they", "them") or low(tokens[i - 1]) not in DETERMINERS):
            # "one" and "this" only as pronouns, never as determiners ("this lock").
            if low(token) in ("one", "this", "these") and i + 1 < len(tokens):
                out.append(token)
                continue
            out.append(subject)
            replaced = True
            continue
        out.append(token)
    return " ".join(out)


def qualify_bare_noun(clause: str, subject: str | None) -> str:
    """``clause`` with a bare plural noun right after its auxiliary made a part of
    ``subject``, so a later question asked alone still says whose it is: "how long
    are entries kept" after "what does git reflog record" asks how long git reflog
    entries are kept ("entries of the reflog" after a subject with an article). A
    noun the subject already names stands for the subject itself."""
    if not subject:
        return clause
    tokens = clause.split(" ")
    at = next((i for i, t in enumerate(tokens[:4]) if low(t) in AUX), None)
    if at is None or at + 1 >= len(tokens) or not is_plural_noun(tokens[at + 1]):
        return clause
    noun = tokens[at + 1]
    if set(terms(noun)) <= set(terms(subject)):
        whose = subject
    elif low(subject.split(" ")[0]) in _ARTICLES:
        whose = f"{noun} of {subject}"
    else:
        whose = f"{subject} {noun}"
    return " ".join([*tokens[:at + 1], whose, *tokens[at + 2:]])
