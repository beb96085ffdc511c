"""The deterministic planner: what the decomposition stage answers without a model,
and the rules every plan shares.

Pure functions of the question's text (same input, same output): the sub-questions
(:func:`offline_sub_questions`, in the model's answer format so the same parser reads
both), the checklist (:func:`offline_checklist`), each step's kind
(:func:`classify_step`) and the question's key terms (:func:`key_terms`).

They are put together here from rules kept apart: a question's shape (enumeration,
comparison) in :mod:`services.decomposition.shape`, the follow-ups a plain question's
form calls for in :mod:`services.decomposition.followups`, its clauses and titles in
:mod:`services.decomposition.phrasing`.
"""

from __future__ import annotations

import json
import re

from shared.research.envelope import ChecklistItem, StepKind
from shared.research.plan_review import CHECKLIST_MAX as PLAN_CHECKLIST_MAX
from shared.research.plan_review import CHECKLIST_MIN as PLAN_CHECKLIST_MIN
from shared.research.text import STOPWORDS, normalize_query, terms

from services.decomposition.followups import examples_of_doing, follow_ups, worth_defining
from services.decomposition.inversion import VERBS
from services.decomposition.joined import qualify_bare_noun, resolve_pronouns, split_clauses
from services.decomposition.phrasing import Clause, parse_clause, statement
from services.decomposition.shape import Sides, bare, shape
from services.decomposition.wordforms import be_for, do_for, verb_lemma

__all__ = ["CHECKLIST_MAX", "CHECKLIST_MIN", "classify_step", "echoes", "key_terms", "offline_checklist",
           "offline_sub_questions"]

CHECKLIST_MIN = PLAN_CHECKLIST_MIN  # the same bounds a user's edit of the plan passes
CHECKLIST_MAX = PLAN_CHECKLIST_MAX

# -- sub-questions ------------------------------------------------

_CONTEXT_FILLER = frozenset({"focus", "focusing", "focused", "interested", "interest", "need",
                             "needs", "want", "wants", "please", "especially", "particularly",
                             "mainly", "context", "user", "i'm", "looking", "consider",
                             "considering", "answer", "question", "scope"})
_LEAD = re.compile(
    r"^\s*(?:(?:what|which|how|why|when|where|who|is|are|was|were|does|do|did|can|could|"
    r"should|would|will|shall|tell\s+me|explain|describe|give|list|the|a|an|about|of)\b[\s,]*)+",
    re.IGNORECASE,
)
_TRAILING_VERB = re.compile(r"\s+(?:work|works|function|functions|mean|means|or not)$", re.IGNORECASE)
_WORD_CASED = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)


def _topic(question: str) -> str:
    """The subject of a question the clause rules could not read: lead words, a verb
    right after them ("What makes a good API" is about a good API, not "makes a good
    API") and trailing verbs removed."""
    text = " ".join(question.split()).rstrip("?.! ")
    text = _LEAD.sub("", text)
    first, _, after = text.partition(" ")
    if after and (verb_lemma(first) or "") in VERBS:
        text = _LEAD.sub("", after)
    text = _TRAILING_VERB.sub("", text).strip(" ,")
    if not text:
        text = " ".join(key_terms(question)[:5])
    return text or question.strip()


def _context_phrase(context: str | None) -> str:
    if not context:
        return ""
    kept = [w for w in _WORD_CASED.findall(context)
            if w.lower() not in STOPWORDS and w.lower() not in _CONTEXT_FILLER]
    return " ".join(kept[:6])


# Forms whose subject the later questions of a question may point back to: "What is
# the GIL and what does it prevent?", "What causes deadlocks and how can lock ordering
# prevent them?".
_ANCHORING = frozenset({"definition", "list", "what-verb"})


def _read_clauses(question: str) -> list[Clause]:
    """The questions asked in ``question``, read; a pronoun in a later one that stands
    for what the first is about is replaced by it, and a bare plural noun that is its
    subject made a part of it ("entries" after a question about git reflog: "git
    reflog entries"), so each can be asked and answered alone."""
    texts = split_clauses(question)
    if not texts:
        return []
    first = parse_clause(texts[0])
    anchor = first.subject if first.kind in _ANCHORING else None
    owner = first.subject if first.kind != "subject-wh" and not first.generic else None
    return [first, *(parse_clause(qualify_bare_noun(resolve_pronouns(t, anchor), owner)) for t in texts[1:])]


_ASKERS = frozenset({"you", "i", "we", "one", "a program", "a user"})


def _subject(clauses: list[Clause], question: str) -> str:
    """What a plain question is about: its first clause's subject as the clause reads
    it (X in "the purpose of X", the object in "How do I reduce X"), else its topic."""
    for clause in clauses:
        if clause.kind != "subject-wh" and clause.subject and clause.subject.lower() not in _ASKERS:
            return clause.subject
    return _topic(question)


def _as_question(clause: Clause) -> str:
    return clause.text[:1].upper() + clause.text[1:] + "?"


def _what_is(phrase: str) -> str:
    return f"What {be_for(phrase)} {phrase}?"


def _comparison_subs(sides: Sides) -> list[str]:
    """Each side, how they differ, how they compare, and when to choose which (for
    what the question says the choice is for: "for CPU-bound work")."""
    a, b, purpose = sides
    tail = f" {purpose}" if purpose else ""
    return [
        f"What {be_for(a)} {a}?",
        f"What {be_for(b)} {b}?",
        f"How do {a} and {b} differ?",
        f"How do {a} and {b} compare in cost and performance?",
        f"When is it better to choose {a}, and when {b}{',' + tail if tail else ''}?",
    ]


def offline_sub_questions(question: str, context: str | None) -> str:
    """What the decomposition LLM would answer: a JSON array of numbered sub-questions.

    Comparisons ("X vs Y", "the difference between X and Y", "X or Y", "compare X and
    Y", "X differ from Y", "X instead of Y") get a definition of each side, how they
    differ, how they compare in cost and performance, and when to choose which;
    enumerations ("X, Y and Z") a definition per item and the comparison questions,
    and one of a thing's aspects ("the causes, symptoms and treatments of diabetes")
    a question per aspect that keeps whose it is. A
    plain question asking several things ("How does X work, and which settings
    control it?") is split into its questions; one asking one thing gets the questions
    its form calls for (:func:`~services.decomposition.followups.follow_ups`: "What
    limits X?" the factors and examples of limits, "What is X?" how X works, examples
    and limitations...). A context adds one question tying the subject to it. A blank
    question gets "[]".
    """
    if not question.strip():
        return "[]"
    listing, sides = shape(question)
    subs: list[str]
    if listing:
        listing = listing._replace(names=listing.names[:4])
        subject = listing.whole()
        subs = [_what_is(member) for member in listing.members()]
        if not listing.owner:  # the causes and the treatments of a disease are not alternatives
            subs += [f"How do {subject} compare?", f"When should each of {subject} be chosen?"]
    elif sides:
        subject = f"{sides.a} and {sides.b}"
        subs = _comparison_subs(sides)
    else:
        clauses = _read_clauses(question)
        subject = _subject(clauses, question)
        if len(clauses) > 1:
            # Its own questions say what it needs; the first one's object is defined.
            obj = clauses[0].obj
            subs = [_as_question(c) for c in clauses]
            if worth_defining(obj, subject):
                subs.append(f"What {be_for(obj or '')} {obj}?")
        else:
            subs = follow_ups(clauses[0], subject)
    scope = _context_phrase(context)
    if scope:
        subs.append(f"How {do_for(subject)} {subject} apply to {scope}?")
    return json.dumps([f"{n}. {text}" for n, text in enumerate(subs, start=1)])


# -- key terms, checklist ----------------------------------------------------------


def key_terms(question: str) -> list[str]:
    """Content words of ``question`` in order, lower-cased and unstemmed (they are used
    as search text), one per stem; stop words, one-letter words and request filler
    ("focus", "scope", "please"...) removed."""
    out: list[str] = []
    seen: set[str] = set()
    for word in _WORD_CASED.findall(question):
        low = word.lower()
        stems = set() if low in _CONTEXT_FILLER else set(terms(low))
        if not stems or stems <= seen:
            continue
        seen.update(stems)
        out.append(low)
    return out


# Rewrites of the offline planner's own sub-question templates into checklist titles;
# the first match wins. Any other question is turned around by phrasing.statement
# ("How does X work?" -> "How X works", "What is X?" -> "Definition of X").
_CHECKLIST_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^What (?:is|are) meant by (.+)$", re.I), r"Definition of \1"),
    (re.compile(r"^What are examples of (.+)$", re.I), r"Examples of \1"),
    (re.compile(r"^What are the limitations of (.+)$", re.I), r"Limitations of \1"),
    (re.compile(r"^What are the advantages of (.+)$", re.I), r"Advantages of \1"),
    (re.compile(r"^What (?:are|were) the (benefits|risks|consequences) of (.+)$", re.I), r"\1 of \2"),
    (re.compile(r"^What are the alternatives to (.+)$", re.I), r"Alternatives to \1"),
    (re.compile(r"^What are the (first steps|steps by which|steps to) (.+)$", re.I), r"\1 \2"),
    (re.compile(r"^What should be considered when (.+)$", re.I), r"What to consider when \1"),
    (re.compile(r"^How do (.+?) and (.+?) compare in (.+)$", re.I), r"\1 versus \2: \3"),
    (re.compile(r"^How do (.+?) and (.+?) differ$", re.I), r"How \1 and \2 differ"),
    (re.compile(r"^When is it better to choose (.+?), and when (.+?), (.+)$", re.I), r"When to choose \1 or \2 \3"),
    (re.compile(r"^When is it better to choose (.+?), and when (.+)$", re.I), r"When to choose \1 or \2"),
    (re.compile(r"^How do (.+) compare$", re.I), r"Comparison of \1"),
    (re.compile(r"^When should each of (.+) be chosen$", re.I), r"When to choose each of \1"),
    (re.compile(r"^When should each (.+) be used$", re.I), r"When to use each \1"),
    (re.compile(r"^How (?:does|do) (.+) apply to (.+)$", re.I), r"\1 in the context of \2"),
]


def _checklist_description(sub_question: str) -> str:
    text = " ".join(sub_question.split()).rstrip("?. ")
    for pattern, replacement in _CHECKLIST_RULES:
        if pattern.match(text):
            out = pattern.sub(replacement, text, count=1)
            return out[:1].upper() + out[1:]
    return statement(text) or text


def _words(text: str) -> list[str]:
    return sorted(w.lower() for w in _WORD_CASED.findall(text))


def echoes(title: str, question: str) -> bool:
    """Whether ``title`` is ``question`` with its words only reordered (the same
    words, as many times each): such an item tells the reader nothing the question
    did not, so the checklist leaves it out."""
    return _words(title) == _words(question)


def offline_checklist(refined: str, sub_questions: list[str]) -> list[ChecklistItem]:
    """The research checklist, offline: 3 to 7 items, ids ``c1``..``cN``, each a title that
    reads as what the answer must cover ("How PostgreSQL protects against
    transaction ID wraparound", "Factors that limit thread scalability").

    ``sub_questions`` is :func:`parse_sub_questions`' output: its first item is the
    original question. A plain question asking one thing is an item itself, in the
    title its form calls for (what it asks is the heart of the answer); one asking
    several is covered by the sub-questions it was split into; a comparison or
    enumeration by its sides' items. No item only reorders the question's words.
    Items are padded with the subject's examples, limitations
    and definition up to three.
    """
    question = sub_questions[0] if sub_questions else refined
    listing, sides = shape(question)
    clauses = [] if listing or sides else _read_clauses(question)
    own = [clauses[0].statement] if len(clauses) == 1 and clauses[0].statement else []
    descriptions: list[str] = []
    seen: set[str] = set()
    for desc in [*own, *(_checklist_description(sub) for sub in sub_questions[1:])]:
        key = normalize_query(desc)
        if key and key not in seen and not echoes(desc, question):
            seen.add(key)
            descriptions.append(desc)
    subject = _subject(clauses, question) if clauses else (
        listing._replace(names=listing.names[:4]).whole() if listing else f"{sides.a} and {sides.b}" if sides
        else refined)
    # Examples of what the question's first clause does ("Examples of a traceback showing
    # two exceptions"), which say more than examples of its subject ("Examples of a traceback").
    examples = _checklist_description(examples_of_doing(clauses[0], subject)) if clauses else f"Examples of {subject}"
    for pad in (examples, f"Limitations of {subject}", f"Definition of {subject}"):
        if len(descriptions) >= CHECKLIST_MIN:
            break
        if normalize_query(pad) not in seen:
            seen.add(normalize_query(pad))
            descriptions.append(pad)
    return [ChecklistItem(id=f"c{n}", description=d)
            for n, d in enumerate(descriptions[:CHECKLIST_MAX], start=1)]


# -- step kinds ---------------------------------------------------------------------

_DEPENDENT_LEAD = frozenset({"summarize", "summarise", "synthesize", "synthesise", "recommend",
                             "conclude", "combine", "integrate", "consolidate"})
_DEPENDENT_PHRASES = ("based on the above", "based on these", "based on the previous",
                      "given the above", "from the above", "in conclusion",
                      "overall recommendation", "final recommendation")
_HYBRID_WORDS = frozenset({"compare", "compared", "comparison", "comparing", "versus", "vs",
                           "differ", "differs", "difference", "differences", "trade-off",
                           "trade-offs", "tradeoff", "tradeoffs", "better", "worse", "choose",
                           "choosing", "chosen", "prefer", "preferable", "relative", "contrast"})
_HYBRID_PHRASES = ("when should", "when to", "which is", "which one")


def classify_step(sub_question: str, index: int) -> StepKind:
    """The step's kind. The original question (index 0) is always INDEPENDENT:
    nothing precedes it. Otherwise a sub-question that opens with an analysis verb
    ("Summarize...", "Recommend...") or refers back to earlier findings is DEPENDENT;
    one that compares or chooses is HYBRID; the rest are factual look-ups."""
    if index == 0:
        return StepKind.INDEPENDENT
    low = " ".join(sub_question.lower().split())
    tokens = [bare(t) for t in low.split(" ")]
    if (tokens and tokens[0] in _DEPENDENT_LEAD) or any(p in low for p in _DEPENDENT_PHRASES):
        return StepKind.DEPENDENT
    if _HYBRID_WORDS.intersection(tokens) or any(p in low for p in _HYBRID_PHRASES):
        return StepKind.HYBRID
    return StepKind.INDEPENDENT
