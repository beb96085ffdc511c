"""The deterministic planner: what the decomposition stage answers without a model,
and the rules every plan shares.

Pure functions of the question's text (same input, same output): the sub-questions
(:func:`offline_sub_questions`, in the model's answer format so the same parser reads
both), the checklist (:func:`offline_checklist`), each step's kind
(:func:`classify_step`) and the question's key terms (:func:`key_terms`).
"""

from __future__ import annotations

import json
import re

from shared.research.envelope import ChecklistItem, StepKind
from shared.research.text import STOPWORDS, normalize_query, terms

from services.decomposition.phrasing import (
    VERBS,
    Clause,
    parse_clause,
    resolve_pronouns,
    split_clauses,
    statement,
)

__all__ = ["CHECKLIST_MAX", "CHECKLIST_MIN", "classify_step", "key_terms", "offline_checklist", "offline_sub_questions"]

CHECKLIST_MIN = 3
CHECKLIST_MAX = 7

# -- sub-questions ------------------------------------------------

_TOKEN_EDGE = ".,;:!?()[]{}\"'“”‘’"
_DETERMINERS = frozenset({"the", "a", "an", "some", "any", "my", "our", "your", "their", "its"})
# Words that end a noun phrase although shared.research.text does not treat them as stop words.
_BOUNDARY = frozenset({"use", "using", "choose", "pick", "prefer", "better", "worse", "best",
                       "compare", "compared", "differ", "work", "works", "i", "we", "it"})
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


def _bare(token: str) -> str:
    return token.strip(_TOKEN_EDGE)


def _ends_clause(token: str) -> bool:
    return token != token.rstrip(".,;:!?")


def _is_boundary(token: str) -> bool:
    low = _bare(token).lower()
    return not low or low in STOPWORDS or low in _BOUNDARY


def _walk_back(tokens: list[str], end: int, limit: int = 3) -> list[str]:
    """The noun phrase ending just before ``end``."""
    out: list[str] = []
    i = end - 1
    while i >= 0 and len(out) < limit:
        if _is_boundary(tokens[i]) or (out and _ends_clause(tokens[i])):
            break
        out.insert(0, _bare(tokens[i]))
        i -= 1
    return out


def _walk_forward(tokens: list[str], start: int, limit: int = 3) -> list[str]:
    """The noun phrase starting at ``start`` (leading determiners skipped)."""
    i = start
    while i < len(tokens) and _bare(tokens[i]).lower() in _DETERMINERS:
        i += 1
    out: list[str] = []
    while i < len(tokens) and len(out) < limit:
        if _is_boundary(tokens[i]):
            break
        out.append(_bare(tokens[i]))
        if _ends_clause(tokens[i]):
            break
        i += 1
    return out


def _list_items(tokens: list[str]) -> list[str]:
    """Items of an enumeration "A, B and C" (or "A, B, or C"); [] if there is none."""
    first = next((i for i, t in enumerate(tokens) if t.endswith(",")), None)
    if first is None:
        return []
    head = _walk_back(tokens, first + 1)
    if not head:
        return []
    items = [" ".join(head)]
    i = first + 1
    current: list[str] = []
    while i < len(tokens):
        low = _bare(tokens[i]).lower()
        if low in ("and", "or"):
            if current:
                items.append(" ".join(current))
            # The last item is as long as the longest earlier one: nothing marks
            # where it ends ("..., Go and Rust handle memory").
            tail = _walk_forward(tokens, i + 1, limit=max(len(x.split()) for x in items))
            if tail:
                items.append(" ".join(tail))
            break
        current.append(_bare(tokens[i]))
        if tokens[i].endswith(","):
            items.append(" ".join(current))
            current = []
        elif _ends_clause(tokens[i]) or len(current) > 3:
            return []
        i += 1
    else:
        return []
    items = [item for item in items if item]
    return items if len(items) >= 3 else []


def _comparison_sides(tokens: list[str]) -> tuple[str, str] | None:
    lows = [_bare(t).lower() for t in tokens]
    if "between" in lows:
        b = lows.index("between")
        if "and" in lows[b + 1:]:
            a_end = lows.index("and", b + 1)
            left = [_bare(t) for t in tokens[b + 1:a_end] if _bare(t)]
            while left and left[0].lower() in _DETERMINERS:
                left.pop(0)
            right = _walk_forward(tokens, a_end + 1, limit=4)
            if left and right and len(left) <= 5:
                return " ".join(left), " ".join(right)
    for i, low in enumerate(lows):
        # "How do tuples differ from lists", "use asyncio instead of a thread pool"
        if (low == "from" and i > 0 and lows[i - 1] in ("differ", "differs", "different")) or (
                low == "of" and i > 0 and lows[i - 1] == "instead"):
            left = _walk_back(tokens, i - 1)
            right = _walk_forward(tokens, i + 1)
            if left and right:
                return " ".join(left), " ".join(right)
        if low in ("vs", "versus", "or") or (
            low in ("compare", "compared") and i + 1 < len(lows) and lows[i + 1] in ("to", "with")
        ):
            right_start = i + 2 if low in ("compare", "compared") else i + 1
            left = _walk_back(tokens, i)
            right = _walk_forward(tokens, right_start)
            if left and right:
                return " ".join(left), " ".join(right)
        if low == "compare" and i == 0 and "and" in lows:
            a_end = lows.index("and")
            left = [_bare(t) for t in tokens[1:a_end] if _bare(t)]
            right = _walk_forward(tokens, a_end + 1)
            if left and right:
                return " ".join(left), " ".join(right)
    return None


def _plural(phrase: str) -> bool:
    """Whether a noun phrase reads as plural: a compound, or a lower-case last word
    that looks plural (capitalized words are taken as names: "Postgres", "Kubernetes")."""
    parts = phrase.split()
    if not parts:
        return False
    if " and " in f" {phrase} ":
        return True
    last = parts[-1]
    if last[:1].isupper():
        return False
    last = last.lower()
    return len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is", "ous"))


def _be(phrase: str) -> str:
    return "are" if _plural(phrase) else "is"


def _enumerate(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _topic(question: str) -> str:
    """The subject of a plain question: lead words and trailing verbs removed."""
    text = " ".join(question.split()).rstrip("?.! ")
    text = _LEAD.sub("", text)
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


def _shape(question: str) -> tuple[list[str], tuple[str, str] | None]:
    """(enumerated items, comparison sides) of a question; both empty for a plain one."""
    tokens = " ".join(question.split()).split(" ")
    items = _list_items(tokens)
    return items, (None if items else _comparison_sides(tokens))


def _read_clauses(question: str) -> list[Clause]:
    """The questions asked in ``question``, read; a pronoun in a later one that stands
    for what the first defines ("What is the GIL and what does it prevent?") is
    replaced by it, so each can be asked and answered alone."""
    texts = split_clauses(question)
    if not texts:
        return []
    first = parse_clause(texts[0])
    anchor = first.subject if first.kind == "definition" else None
    return [first, *(parse_clause(resolve_pronouns(t, anchor)) for t in texts[1:])]


def _subject(clauses: list[Clause], question: str) -> str:
    """What a plain question is about: its first clause's subject ("the purpose of X"
    is about X), else its topic."""
    for clause in clauses:
        if clause.kind in ("definition", "wh", "yes-no") and clause.subject and \
                clause.subject.lower() not in ("you", "i", "we", "one", "a program", "a user"):
            subject = clause.subject
            m = re.match(r"^the (?:purpose|role|meaning|use|uses|goal|function) of (.+)$", subject, re.I)
            return m.group(1) if m else subject
    return _topic(question)


# Verbs whose clause ends in a place or manner ("work in Python"), not in an object.
_INTRANSITIVE = frozenset({"work", "behave", "happen", "occur", "exist", "matter", "function"})


def _object(clause: Clause) -> str | None:
    """The noun phrase a wh-question's verb acts on ("protect against transaction ID
    wraparound" -> "transaction ID wraparound"), when it ends the clause."""
    if clause.kind != "wh" or not clause.rest or clause.verb in _INTRANSITIVE:
        return None
    tokens = clause.rest.split(" ")
    phrase = _walk_back(tokens, len(tokens), limit=4)
    if not phrase or any(w.lower() in VERBS or w.lower().endswith("ed") for w in phrase):
        return None
    out = " ".join(phrase)
    return None if clause.subject and out.lower() == clause.subject.lower() else out


def _as_question(clause: Clause) -> str:
    return clause.text[:1].upper() + clause.text[1:] + "?"


def offline_sub_questions(question: str, context: str | None) -> str:
    """What the decomposition LLM would answer: a JSON array of numbered sub-questions.

    Comparisons ("X vs Y", "between X and Y", "X or Y", "compare X and Y", "X differ
    from Y", "X instead of Y") get a definition of each side, how they differ, how
    they compare in cost and performance, and when to choose which; enumerations ("X,
    Y and Z") a definition per item and the comparison questions. A plain question
    asking several things ("How does X work, and which settings control it?") is
    split into its questions; then its subject's definition, workings, examples and
    limitations are asked, each unless a question already asks it. A context adds
    one question tying the subject to it. A blank question gets "[]".
    """
    if not question.strip():
        return "[]"
    items, sides = _shape(question)
    subs: list[str]
    if items:
        listed = _enumerate(items[:4])
        subject = listed
        subs = [f"What {_be(item)} {item}?" for item in items[:4]]
        subs += [f"How do {listed} compare?", f"When should each of {listed} be chosen?"]
    elif sides:
        a, b = sides
        subject = f"{a} and {b}"
        subs = [
            f"What {_be(a)} {a}?",
            f"What {_be(b)} {b}?",
            f"How do {a} and {b} differ?",
            f"How do {a} and {b} compare in cost and performance?",
            f"When is it better to choose {a}, and when {b}?",
        ]
    else:
        clauses = _read_clauses(question)
        subject = _subject(clauses, question)
        first = clauses[0]
        obj = _object(first)
        plural = _plural(subject)
        if len(clauses) > 1:
            # Its own questions say what it needs; the first one's object is defined.
            subs = [_as_question(c) for c in clauses]
            if obj:
                subs.append(f"What {_be(obj)} {obj}?")
        else:
            subs = []
            if first.kind != "definition":
                subs.append(f"What {'are' if plural else 'is'} {subject}?")
            if obj:
                subs.append(f"What {_be(obj)} {obj}?")
            if first.kind == "definition":
                subs.append(f"How {'do' if plural else 'does'} {subject} work?")
            subs.append(f"What are examples of {subject}?")
            if first.kind == "definition":
                subs.append(f"What are the limitations of {subject}?")
    scope = _context_phrase(context)
    if scope:
        subs.append(f"How {'do' if _plural(subject) else 'does'} {subject} apply to {scope}?")
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
    (re.compile(r"^How do (.+?) and (.+?) compare in (.+)$", re.I), r"\1 versus \2: \3"),
    (re.compile(r"^How do (.+?) and (.+?) differ$", re.I), r"How \1 and \2 differ"),
    (re.compile(r"^When is it better to choose (.+?), and when (.+)$", re.I), r"When to choose \1 or \2"),
    (re.compile(r"^How do (.+) compare$", re.I), r"Comparison of \1"),
    (re.compile(r"^When should each of (.+) be chosen$", re.I), r"When to choose each of \1"),
    (re.compile(r"^How (?:does|do) (.+) apply to (.+)$", re.I), r"\1 in the context of \2"),
]


def _checklist_description(sub_question: str) -> str:
    text = " ".join(sub_question.split()).rstrip("?. ")
    for pattern, replacement in _CHECKLIST_RULES:
        if pattern.match(text):
            out = pattern.sub(replacement, text, count=1)
            return out[:1].upper() + out[1:]
    return statement(text) or text


def offline_checklist(refined: str, sub_questions: list[str]) -> list[ChecklistItem]:
    """The research checklist, offline: 3 to 7 items, ids ``c1``..``cN``, each a title that
    reads as what the answer must cover ("How PostgreSQL protects against
    transaction ID wraparound", "Which settings control it").

    ``sub_questions`` is :func:`parse_sub_questions`' output: its first item is the
    original question. A plain question asking one thing is an item itself (what it
    asks is the heart of the answer); one asking several is covered by the
    sub-questions it was split into; a comparison or enumeration is covered by its
    sides' items. Items are padded with the subject's examples, limitations and
    definition up to three.
    """
    question = sub_questions[0] if sub_questions else refined
    items, sides = _shape(question)
    clauses = [] if items or sides else _read_clauses(question)
    own = [clauses[0].statement] if len(clauses) == 1 and clauses[0].statement else []
    descriptions: list[str] = []
    seen: set[str] = set()
    for desc in [*own, *(_checklist_description(sub) for sub in sub_questions[1:])]:
        key = normalize_query(desc)
        if key and key not in seen:
            seen.add(key)
            descriptions.append(desc)
    subject = _subject(clauses, question) if clauses else (
        _enumerate(items[:4]) if items else f"{sides[0]} and {sides[1]}" if sides else refined)
    for pad in (f"Examples of {subject}", f"Limitations of {subject}", f"Definition of {subject}"):
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
    tokens = [_bare(t) for t in low.split(" ")]
    if (tokens and tokens[0] in _DEPENDENT_LEAD) or any(p in low for p in _DEPENDENT_PHRASES):
        return StepKind.DEPENDENT
    if _HYBRID_WORDS.intersection(tokens) or any(p in low for p in _HYBRID_PHRASES):
        return StepKind.HYBRID
    return StepKind.INDEPENDENT
