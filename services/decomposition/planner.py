"""The planner: model calls around the offline rules of plan.py.

Each step asks the LLM layer for a pydantic model and passes the offline engine's
answer for the same step, which is used when no model is configured or the job's token
budget is spent. What the model returns always goes through the same rules as the
offline answer: sub-questions through plan.parse_sub_questions (strip numbering, dedupe,
original first, cap 8, ``[query]`` when the answer is junk), queries through the
never-repeat filter. A model answer that fails validation falls back to ``[query]``;
a refused call (bad key, bad request) fails the job; an unavailable provider is retried
by the stage runner.
"""

from __future__ import annotations

import json
import logging
import re

from pydantic import BaseModel, Field

from services.decomposition import prompts
from services.decomposition.offline import CHECKLIST_MAX, CHECKLIST_MIN, classify_step, key_terms
from services.decomposition.plan import (
    first_plan,
    parse_sub_questions,
    pubmed_query,
    queries_for,
    refinement_queries,
    strip_numbered_prefix,
)
from shared.envelope import (
    ChecklistItem,
    CoverageStatus,
    JobEnvelope,
    Plan,
    ResearchRequest,
    RetrievalMethod,
    SearchQuery,
    StepKind,
    SubQuestion,
)
from shared.llm import JobLLM, LLMInvalidOutput
from shared.prompting import block
from shared.text import normalize_query

log = logging.getLogger(__name__)

KNOWN_CLAIMS = 12  # claims summarized for a refinement pass


# -- structured-output schemas ----------------------------------------------------


class Brief(BaseModel):
    """Record the research brief: refined question, scope boundaries, key terms, checklist."""

    refined_question: str = Field(min_length=3, max_length=2_000)
    in_scope: list[str] = Field(default_factory=list, max_length=10)
    out_of_scope: list[str] = Field(default_factory=list, max_length=10)
    key_terms: list[str] = Field(default_factory=list, max_length=15)
    checklist: list[str] = Field(min_length=CHECKLIST_MIN, max_length=CHECKLIST_MAX,
                                 description="3 to 7 items a complete answer must address")


class StepDraft(BaseModel):
    question: str
    kind: StepKind = StepKind.INDEPENDENT
    web_queries: list[str] = Field(default_factory=list, description="1 or 2 plain web search queries")
    pubmed_queries: list[str] = Field(default_factory=list, description="0 to 2 queries in PubMed syntax")


class Decomposition(BaseModel):
    """Record the sub-questions (1 to 8), their kinds and their search queries."""

    # No maxItems: a long list is capped at 8 by the parser rather than rejected.
    sub_questions: list[StepDraft] = Field(min_length=1, description="1 to 8 sub-questions")


class Clarification(BaseModel):
    """Record whether the question needs clarifying before research starts."""

    needs_clarification: bool
    questions: list[str] = Field(default_factory=list, description="at most 3 short questions")


class ItemQueries(BaseModel):
    item_id: str
    web_queries: list[str] = Field(default_factory=list)
    pubmed_queries: list[str] = Field(default_factory=list)


class Refinement(BaseModel):
    """Record new search queries aimed at the open checklist items."""

    queries: list[ItemQueries]


# -- clarification --------------------------------------------------------------------

_MIN_SPECIFIC_TERMS = 3


def offline_clarification(request: ResearchRequest) -> Clarification:
    """The offline engine asks only when the question is too short to plan from: fewer
    than three content terms, question and context together."""
    terms = key_terms(f"{request.question} {request.context or ''}")
    if len(terms) >= _MIN_SPECIFIC_TERMS:
        return Clarification(needs_clarification=False)
    subject = " ".join(terms) or request.question.strip()
    return Clarification(needs_clarification=True, questions=[
        f"Which aspect of {subject} should the research focus on?",
        "Is there a domain, population, place or period it should be limited to?",
        "What will the answer be used for (a decision, an overview, a comparison)?",
    ])


async def clarifying_questions(request: ResearchRequest, llm: JobLLM) -> list[str]:
    """Up to 3 questions, or [] when the question is clear enough (or the user has
    already answered)."""
    if not request.clarify or request.clarification:
        return []
    prompt = prompts.CLARIFY_PROMPT.format(
        question=block("question", request.question), context=block("context", request.context)
    )
    try:
        answer = await llm.structured(
            Clarification, system=prompts.CLARIFY_SYSTEM, prompt=prompt, tool_name="record_clarification",
            offline=lambda: offline_clarification(request), max_tokens=512,
        )
    except LLMInvalidOutput as exc:
        log.warning("clarification answer unusable (%s): researching without asking", exc)
        return []
    if not answer.needs_clarification:
        return []
    questions = [" ".join(q.split()) for q in answer.questions if q.strip()]
    return list(dict.fromkeys(questions))[:3]


# -- the first pass -----------------------------------------------------------------------


def _balanced(query: str) -> bool:
    """Even quotes and matched parentheses and field-tag brackets: PubMed syntax that
    E-utilities can parse (a model's truncated query usually fails this)."""
    return (query.count('"') % 2 == 0 and query.count("(") == query.count(")")
            and query.count("[") == query.count("]") and bool(query.strip()))


def _clean(queries: list[str], limit: int = 2) -> list[str]:
    out = [" ".join(q.split()) for q in queries if q and q.strip()]
    return list(dict.fromkeys(out))[:limit]


def _step_queries(text: str, draft: StepDraft | None) -> list[SearchQuery]:
    """RAG searches the sub-question itself; web and PubMed take the model's queries,
    or the offline ones when it gave none (or unbalanced PubMed syntax)."""
    if draft is None:
        return queries_for(text, iteration=0)
    web = _clean(draft.web_queries) or [text]
    if draft.pubmed_queries:
        pubmed = [q for q in _clean(draft.pubmed_queries) if _balanced(q)] or [pubmed_query(text)]
    else:
        pubmed = []  # the model judged PubMed irrelevant to this step
    return [
        SearchQuery(provider=RetrievalMethod.RAG, text=text),
        *(SearchQuery(provider=RetrievalMethod.WEB, text=q) for q in web),
        *(SearchQuery(provider=RetrievalMethod.PUBMED, text=q) for q in pubmed),
    ]


def _dedupe(queries: list[SearchQuery]) -> list[SearchQuery]:
    seen: set[tuple[RetrievalMethod, str]] = set()
    out = []
    for q in queries:
        key = (q.provider, normalize_query(q.text))
        if key[1] and key not in seen:
            seen.add(key)
            out.append(q)
    return out


async def plan_first(request: ResearchRequest, llm: JobLLM, *, max_sub_questions: int) -> Plan:
    """Iteration 0: the research brief, the checklist, sub-questions and their first queries."""
    offline = first_plan(request, max_sub_questions=max_sub_questions)
    if llm.offline:
        return offline
    context = block("context", request.context)
    clarification = block("clarification", request.clarification)

    def offline_brief() -> Brief:
        return Brief(refined_question=offline.refined_question, key_terms=offline.key_terms,
                     checklist=[c.description for c in offline.checklist])

    brief_prompt = prompts.BRIEF_PROMPT.format(
        question=block("question", request.question), context=context, clarification=clarification,
    )
    try:
        brief = await llm.structured(
            Brief, system=prompts.BRIEF_SYSTEM, prompt=brief_prompt, tool_name="record_brief", offline=offline_brief,
        )
    except LLMInvalidOutput as exc:
        log.warning("research brief unusable (%s): using the offline brief", exc)
        brief = offline_brief()
    checklist = _checklist(brief.checklist) or offline.checklist

    decompose_prompt = prompts.DECOMPOSE_PROMPT.format(
        question=block("question", brief.refined_question), context=context, clarification=clarification,
        checklist=block("checklist", "\n".join(f"- {c.description}" for c in checklist)),
    )
    try:
        drafts = (await llm.structured(
            Decomposition, system=prompts.DECOMPOSE_SYSTEM, prompt=decompose_prompt, tool_name="record_sub_questions",
            offline=lambda: Decomposition(sub_questions=[StepDraft(question=s.text, kind=s.kind) for s in offline.sub_questions]),
        )).sub_questions
    except LLMInvalidOutput as exc:
        log.warning("sub-questions unusable (%s): falling back to the question", exc)
        drafts = []

    # The model's list goes through the same parser as the offline answer.
    texts = parse_sub_questions(json.dumps([d.question for d in drafts]) if drafts else None,
                                request.question, cap=max_sub_questions)
    by_key: dict[str, StepDraft] = {}
    for d in drafts:  # the first draft of a duplicated question wins, as in the parser
        by_key.setdefault(normalize_query(strip_numbered_prefix(d.question)), d)
    subs: list[SubQuestion] = []
    queries: list[SearchQuery] = []
    for i, text in enumerate(texts):
        draft = by_key.get(normalize_query(text))
        kind = StepKind.INDEPENDENT if i == 0 else (draft.kind if draft else classify_step(text, i))
        subs.append(SubQuestion(text=text, kind=kind))
        if kind is not StepKind.DEPENDENT:
            queries.extend(_step_queries(text, draft))
    return Plan(
        refined_question=brief.refined_question,
        sub_questions=subs,
        checklist=checklist,
        queries=_dedupe(queries),
        in_scope=_clean(brief.in_scope, 10),
        out_of_scope=_clean(brief.out_of_scope, 10),
        key_terms=_clean(brief.key_terms, 15) or offline.key_terms,
        engine=llm.label,
    )


def _checklist(items: list[str]) -> list[ChecklistItem]:
    texts = list(dict.fromkeys(" ".join(re.sub(r"^\s*(?:[-*]\s*)?(?:\[\s?[xX ]?\s?\]\s*)?", "", t).split()) for t in items))
    texts = [t for t in texts if t][:CHECKLIST_MAX]
    if len(texts) < CHECKLIST_MIN:
        return []
    return [ChecklistItem(id=f"c{n}", description=t) for n, t in enumerate(texts, start=1)]


# -- refinement passes ------------------------------------------------------------------------


async def plan_refinement(envelope: JobEnvelope, llm: JobLLM) -> list[SearchQuery]:
    """New queries for the open checklist items and knowledge gaps; never a query the
    job already ran (compared case- and whitespace-insensitively, across providers)."""
    plan = envelope.plan
    assert plan is not None
    iteration = envelope.iteration
    offline = refinement_queries(plan, iteration=iteration, queries_run=envelope.queries_run)
    open_items = [c for c in plan.checklist if c.status is not CoverageStatus.SATISFIED]
    if llm.offline or not open_items:
        return offline
    asked = [*envelope.queries_run, *(q.text for q in plan.queries)]
    prompt = prompts.REFINE_PROMPT.format(
        question=block("question", plan.refined_question),
        known=block("known", "\n".join(f"- {c.text}" for c in envelope.claims[:KNOWN_CLAIMS]) or "(nothing yet)"),
        open_items=block("open_items", "\n".join(f"- {c.id} ({c.status.value}): {c.description}" for c in open_items)),
        gaps=block("gaps", "\n".join(f"- {g}" for g in envelope.knowledge_gaps) or "(none recorded)"),
        asked=block("asked", "\n".join(f"- {q}" for q in dict.fromkeys(asked)) or "(none)"),
    )
    try:
        answer = await llm.structured(
            Refinement, system=prompts.REFINE_SYSTEM, prompt=prompt, tool_name="record_queries",
            offline=lambda: Refinement(queries=[]),
        )
    except LLMInvalidOutput as exc:
        log.warning("refinement queries unusable (%s): using the offline ones", exc)
        return offline
    seen = {normalize_query(q) for q in asked}
    out: list[SearchQuery] = []
    for item in answer.queries:
        for provider, texts in ((RetrievalMethod.WEB, _clean(item.web_queries)),
                                (RetrievalMethod.PUBMED, [q for q in _clean(item.pubmed_queries) if _balanced(q)])):
            for text in texts:
                key = normalize_query(text)
                if key and key not in seen:
                    seen.add(key)
                    out.append(SearchQuery(provider=provider, text=text, iteration=iteration))
                    if provider is RetrievalMethod.WEB:
                        out.append(SearchQuery(provider=RetrievalMethod.RAG, text=text, iteration=iteration))
    # Nothing new from the model: the offline variants may still find something.
    return out or offline
