"""Research planning: the model's decomposition answer parsed, plans and search queries.

The deterministic rules a plan is made of (offline sub-questions, checklist, step
kinds, key terms) are in :mod:`services.decomposition.offline`.

Guarantees:

* :func:`parse_sub_questions` implements the decomposition answer's parsing rules exactly: it never
  raises, always returns at least ``[query]``, puts the original query first, holds no
  two sub-questions that differ only in case or whitespace, and never exceeds ``cap``.
* The ``offline_*`` functions stand in for the LLM of this release. They are pure and
  deterministic (same input, same output); an LLM layer will later replace them while
  the parsing rules above stay.
* :func:`refinement_queries` never returns a query already run, nor the same query
  twice (compared case- and whitespace-insensitively).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

from shared.research.envelope import (
    CoverageStatus,
    Plan,
    ResearchRequest,
    RetrievalMethod,
    SearchQuery,
    StepKind,
    SubQuestion,
)
from shared.research.plan_review import MAX_STEPS
from shared.research.steps import default_dependencies, mark_ran
from shared.research.text import normalize_query, terms

from services.decomposition.offline import classify_step, key_terms, offline_checklist, offline_sub_questions

MAX_SUB_QUESTIONS = MAX_STEPS  # the same cap a user's edit of the plan passes

# -- parsing the decomposition answer ---------------------------------------------

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)

# "1. x", "2) x", "3 - x", "4: x", "(5) x". The dot must not be a decimal point, and a
# dash or colon must be followed by a space, so "1.5 million..." and "2024-05 data"
# keep their numbers.
_NUMBERED = re.compile(r"^\s*(?:\(\d{1,3}\)|\d{1,3}(?:\.(?!\d)|\)|\s*[-\u2013\u2014:](?=\s)))\s*")


_NOT_JSON = object()


def _loads(text: str) -> object:
    try:
        return json.loads(text.strip())
    except (ValueError, RecursionError):  # RecursionError: absurdly nested arrays
        return _NOT_JSON


def _first_list(raw: str) -> list[object] | None:
    """The array a model answered with, or None.

    The whole text is read first, then each ```json fence; the first that is JSON
    decides (a JSON object is a non-list answer, even if an array is nested in it).
    Only when neither is JSON is prose searched for an embedded array, since models
    wrap arrays in sentences.
    """
    for text in (raw, *(m.group(1) for m in _FENCE.finditer(raw))):
        value = _loads(text)
        if value is not _NOT_JSON:
            return value if isinstance(value, list) else None
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\[", raw):
        try:
            value, _ = decoder.raw_decode(raw, m.start())
        except (ValueError, RecursionError):
            continue
        # A footnote such as "[1]" in the prose is an array too, but not the answer.
        if isinstance(value, list) and any(isinstance(v, str) for v in value):
            return value
    return None


def strip_numbered_prefix(text: str) -> str:
    return _NUMBERED.sub("", text, count=1).strip()


def parse_sub_questions(raw: str | None, query: str, *, cap: int = MAX_SUB_QUESTIONS) -> list[str]:
    """The parsing rules, applied to a model's raw answer.

    Falls back to ``[query]`` when nothing usable can be read. Non-string items in the
    array are ignored, as is anything that is empty once its numbered prefix is gone.
    """
    query = query.strip()
    cap = max(cap, 1)
    items = _first_list(raw) if raw else None
    if not items:
        return [query]
    seen = {normalize_query(query)}
    subs: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        text = strip_numbered_prefix(item)
        key = normalize_query(text)
        if not key or key in seen:
            continue
        seen.add(key)
        subs.append(text)
    if not subs:
        return [query]
    return [query, *subs][:cap]


# -- a model's search queries -------------------------------------------------------


def clean_texts(texts: Iterable[str], limit: int | None = 2) -> list[str]:
    """The non-blank texts, whitespace normalized, each once, the first ``limit`` (all
    of them when None): a model's list of queries, questions or terms as used."""
    out = [" ".join(t.split()) for t in texts if t and t.strip()]
    return list(dict.fromkeys(out))[:limit]


def balanced_pubmed(query: str) -> bool:
    """Even quotes and matched parentheses and field-tag brackets: PubMed syntax that
    E-utilities can parse (a model's truncated query usually fails this)."""
    return (query.count('"') % 2 == 0 and query.count("(") == query.count(")")
            and query.count("[") == query.count("]") and bool(query.strip()))


# -- refined question ----------------------------------------------------------------


def refine_question(question: str, context: str | None) -> str:
    """The question with the context appended as its scope, whitespace normalized."""
    q = " ".join(question.split())
    ctx = " ".join((context or "").split())
    return f"{q} (Scope: {ctx})" if ctx else q


# -- plans and queries ---------------------------------------------------------------


_PUBMED_TERMS = 3


def pubmed_query(text: str) -> str:
    """A PubMed query, offline: a query in PubMed syntax, the text's first key
    terms each searched in title/abstract and joined with AND, e.g.
    ``"mesothelioma"[tiab] AND "immunotherapy"[tiab]``."""
    words = [w for w in key_terms(text) if len(w) > 2][:_PUBMED_TERMS] or key_terms(text)[:1]
    return " AND ".join(f'"{w}"[tiab]' for w in words) if words else text


def queries_for(text: str, *, iteration: int) -> list[SearchQuery]:
    """One query per provider for a searchable step: the text itself for the local
    index and the web, a PubMed-syntax version for PubMed."""
    return [
        SearchQuery(provider=RetrievalMethod.RAG, text=text, iteration=iteration),
        SearchQuery(provider=RetrievalMethod.WEB, text=text, iteration=iteration),
        SearchQuery(provider=RetrievalMethod.PUBMED, text=pubmed_query(text), iteration=iteration),
    ]


def first_plan(request: ResearchRequest, *, max_sub_questions: int = MAX_SUB_QUESTIONS) -> Plan:
    """The offline iteration-0 plan: per searchable sub-question, one query per provider."""
    context = request.context
    if request.clarification:
        context = f"{context}; {request.clarification}" if context else request.clarification
    refined = refine_question(request.question, context)
    raw = offline_sub_questions(request.question, context)
    texts = parse_sub_questions(raw, request.question, cap=max_sub_questions)
    subs = [SubQuestion(text=t, kind=classify_step(t, i)) for i, t in enumerate(texts)]
    plan = Plan(refined_question=refined, sub_questions=subs, checklist=offline_checklist(refined, texts),
                key_terms=key_terms(refined))
    return schedule_first(plan, lambda step: queries_for(step.text, iteration=0))


def dedupe_queries(queries: list[SearchQuery]) -> list[SearchQuery]:
    """One query per (provider, text), compared case- and whitespace-insensitively."""
    seen: set[tuple[RetrievalMethod, str]] = set()
    out = []
    for q in queries:
        key = (q.provider, normalize_query(q.text))
        if key[1] and key not in seen:
            seen.add(key)
            out.append(q)
    return out


def schedule_first(plan: Plan, queries_of: Callable[[SubQuestion], list[SearchQuery]]) -> Plan:
    """Iteration 0 of a plan: hybrid and dependent steps that name no dependency get
    the earlier steps (shared.research.steps.default_dependencies); only the independent steps
    search now, and they are marked as run, with their queries. A hybrid step's
    queries are written once its dependencies have claims (a refinement pass); a
    dependent step never searches."""
    steps = default_dependencies(plan.sub_questions)
    independent = [s for s in steps if s.kind is StepKind.INDEPENDENT]
    per_step = {s.id: queries_of(s) for s in independent}
    plan = plan.model_copy(update={
        "sub_questions": steps,
        "queries": dedupe_queries([q for s in independent for q in per_step[s.id]]),
    })
    return mark_ran(plan, [s.id for s in independent], 0,
                    searched={i: [q.text for q in qs] for i, qs in per_step.items()})


_VARIANT_SUFFIXES = ("", "examples", "evidence", "limitations")


def refinement_queries(plan: Plan, *, iteration: int, queries_run: list[str]) -> list[SearchQuery]:
    """Queries for the checklist items still open (UNSATISFIED or PARTIAL).

    The query is the item's description plus the refined question's key terms it
    lacks; when that was already asked, variants adding "examples", "evidence" or
    "limitations" are tried in turn, and an item whose variants were all asked gets
    no query. ``plan.queries`` count as asked too. [] means nothing new to ask.
    """
    asked = {normalize_query(q) for q in queries_run}
    asked.update(normalize_query(q.text) for q in plan.queries)
    extra = key_terms(plan.refined_question)
    out: list[SearchQuery] = []
    for item in plan.checklist:
        if item.status is CoverageStatus.SATISFIED:
            continue
        desc = " ".join(item.description.split()).rstrip("?.!")
        have = set(terms(desc))
        missing = [w for w in extra if not set(terms(w)) <= have]
        base = " ".join([desc, *missing]).strip()
        if not base:
            continue
        for suffix in _VARIANT_SUFFIXES:
            text = f"{base} {suffix}".strip()
            key = normalize_query(text)
            if key not in asked:
                asked.add(key)
                out.extend(q for q in queries_for(text, iteration=iteration)
                           if q.provider is not RetrievalMethod.PUBMED or normalize_query(q.text) not in asked)
                asked.update(normalize_query(q.text) for q in out)
                break
    return out
