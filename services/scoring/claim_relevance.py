"""How well a candidate claim sentence answers the question and each checklist item.

The offline claim step (:mod:`services.scoring.claims`) ranks the sentences it could
quote twice: by how well they answer the job's question (:func:`question_relevance`) and
by how squarely they answer one checklist item (:func:`may_answer` to be considered for
it, :func:`answer_score` to rank). Terms are idf-weighted over the candidates
(:func:`idf_weights`), so a word every sentence says tells little.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from shared.research.claims import leans_on_context, states_of
from shared.research.text import STOPWORDS, terms, words

MIN_ITEM_WEIGHT = 1 / 3  # of an item's idf-weighted subject a sentence must carry to be chosen for it


@dataclass
class Candidate:
    """A sentence a source offers as a claim, with its terms."""

    source_index: int
    order: int  # position among all candidates, for stable tie-breaking
    quote: str
    locator: str
    snippet_relevance: float
    text: str
    terms: frozenset[str]
    negated: bool
    # Its own terms plus those of the heading it opens the section of ("global
    # interpreter lock" above "The mechanism used by the CPython interpreter..."):
    # what the sentence is about, for choosing it; what it says is ``terms``.
    about: frozenset[str] = frozenset()


# The planner's "X in the context of Y" says how X and Y relate; "context" alone is a
# subject word ("context managers").
def may_answer(claim_terms: set[str], item: set[str], idf: dict[str, float] | None = None) -> bool:
    """Whether a sentence is worth choosing for an item: min(2, n) shared subject
    terms and, with ``idf``, at least a third of the item's subject weight. Looser than
    :func:`claim_matches_item`, which decides what a claim is credited with: a long
    item's best sentences often name only part of it. The weight keeps a word every
    sentence of the sources says ("git" in Git's manual, "python" in Python's) from
    making any sentence an answer to "What git reflog records"."""
    if not item or len(claim_terms & item) < min(2, len(item)):
        return False
    return idf is None or weight(claim_terms & item, idf) >= MIN_ITEM_WEIGHT * weight(item, idf)


# A sentence that defines or states what something is or does, near its start.
_STATES = re.compile(r"\b(?:is|are|was|were|means|refers to|allows?|provides?|lets|makes?|"
                     r"returns?|uses?|runs?|can|must|will|does|do)\b", re.IGNORECASE)


LEANING_PENALTY = 0.75  # below a plain statement's opening bonus plus most of a share of the subject


# An aside in brackets ("(see later in this section)") points the reader elsewhere
# without the sentence itself depending on it.
_ASIDE = re.compile(r"\([^()]*\)")


def leaning(text: str) -> float:
    """How much a sentence leans on its context (:func:`leans_on_context`), its
    bracketed asides aside: a penalty."""
    return LEANING_PENALTY * leans_on_context(_ASIDE.sub("", text))


def idf_weights(candidates: Sequence[frozenset[str]]) -> dict[str, float]:
    """Inverse document frequency of every term over the candidate sentences: a term
    in every sentence ("python" in Python's docs) tells little about any of them."""
    df: dict[str, int] = {}
    for term_set in candidates:
        for t in term_set:
            df[t] = df.get(t, 0) + 1
    n = len(candidates)
    return {t: math.log(1 + n / d) for t, d in df.items()}


def weight(term_set: set[str] | frozenset[str], idf: dict[str, float]) -> float:
    return sum(idf.get(t, 0.0) for t in term_set)


def question_relevance(rep: Candidate, support: int, source_relevance: float, wanted: set[str],
               question: set[str], idf: dict[str, float]) -> float:
    """How well a sentence answers the question, before any checklist item:

    * the share of the question's subject weight it carries (idf-weighted, so rare
      terms count more), counted twice;
    * the share of all wanted terms (question and sub-questions) it carries, over the
      square root of its length, so a short sentence that says the thing beats a long
      one that mentions everything;
    * a bonus when it names a wanted term in its first words and states something of
      it ("Tuples are immutable", "A context manager is an object that...");
    * the search relevance of its source, and a little for each further source;
    * less for a sentence that leans on its context (:func:`leaning`).
    """
    q_share = weight(rep.about & question, idf) / (weight(question, idf) or 1.0)
    density = weight(rep.about & wanted, idf) / (weight(wanted, idf) or 1.0) / math.sqrt(len(rep.terms))
    opening = rep.text.split(" ")[:4]
    leads = bool(set(terms(" ".join(opening))) & wanted) and bool(_STATES.search(" ".join(rep.text.split(" ")[:8])))
    return (2 * q_share + 3 * density + (0.5 if leads else 0.0) + 0.5 * source_relevance
            + 0.1 * (support - 1) - leaning(rep.text))


# Words that answer a kind of item: how something works is told with calls, methods
# and steps; examples with "such as"; limitations with "cannot" and "only".
_ASPECT_CUES: list[tuple[re.Pattern[str], re.Pattern[str]]] = [
    (re.compile(r"^(?:how\b.*\bworks?$|mechanisms?\b)", re.IGNORECASE),
     re.compile(r"\b(?:calls?|called|invoke[sd]?|method|methods|protocol|when|returns?|executes?|"
                r"executed|first|then|before|after|until)\b", re.IGNORECASE)),
    (re.compile(r"^examples?\b", re.IGNORECASE),
     re.compile(r"\b(?:for example|for instance|such as|e\.g\.|includes?|including|like)\b", re.IGNORECASE)),
    (re.compile(r"^limitations?\b", re.IGNORECASE),
     re.compile(r"\b(?:cannot|can't|only|however|but|limit|limits|limited|drawbacks?|overhead|slow|"
                r"slower|costs?|unless|not)\b", re.IGNORECASE)),
]


def aspect_cue(description: str) -> re.Pattern[str] | None:
    for kind, cue in _ASPECT_CUES:
        if kind.search(description.strip()):
            return cue
    return None


def answer_score(rep: Candidate, subject: set[str], idf: dict[str, float],
             cue: re.Pattern[str] | None = None) -> float:
    """How squarely a sentence answers one checklist item: the share of the item's
    subject weight it carries, twice; up to 1.5 more when it opens with the subject
    ("Tuples are immutable" answers "Definition of tuples"). An item of a kind with
    ``cue`` words (how it works, examples, limitations) is answered by those words
    rather than by a definition: half a point per distinct cue word, up to 1.5, and
    the opening counts half."""
    share = weight(rep.about & subject, idf) / (weight(subject, idf) or 1.0)
    head = rep.text.split(" ")
    first = terms(" ".join(head[:3]))
    if states_of(rep.text, subject, _STATES) or (rep.about - rep.terms) & subject:
        # "Tuples are immutable", "A context manager is an object", or the first
        # sentence under a heading that names the subject (a glossary entry).
        opens = 1.5
    elif set(first) & subject:
        opens = 0.5
    else:
        opens = 0.0
    if cue is None:
        return 2 * share + opens - leaning(rep.text)
    said = {m.group(0).lower() for m in cue.finditer(rep.text)}
    return 2 * share + opens / 2 + min(1.5, 0.5 * len(said)) - leaning(rep.text)


_ACRONYM_WORDS = (3, 4)  # words an acronym stands for: "GIL", "TCP/IP" aside


def _acronyms(text: str) -> dict[str, frozenset[str]]:
    """Acronyms that runs of three or four content words of ``text`` would have, with
    the words' terms: "global interpreter lock" -> {"gil": {global, interpret, lock}}."""
    out: dict[str, frozenset[str]] = {}
    run: list[str] = []
    for word in [*words(text), ""]:
        if word and word.isalpha() and word not in STOPWORDS:
            run.append(word)
            continue
        for size in _ACRONYM_WORDS:
            for i in range(len(run) - size + 1):
                window = run[i:i + size]
                out.setdefault("".join(w[0] for w in window), frozenset(terms(" ".join(window))))
        run = []
    return out


def expand_acronyms(candidates: list[Candidate], asked: str, wanted: set[str]) -> None:
    """A sentence saying "the GIL" is about the "global interpreter lock" asked for,
    and one saying "global interpreter lock" about the "GIL" asked for: each gets the
    other form in its ``about`` terms."""
    spelled = {a: ws for a, ws in _acronyms(asked).items() if len(ws) >= 3}
    for cand in candidates:
        extra: set[str] = set()
        for acronym in cand.terms & spelled.keys():
            extra |= spelled[acronym]
        extra |= {a for a in _acronyms(cand.text) if a in wanted}
        if extra:
            cand.about = cand.about | extra
