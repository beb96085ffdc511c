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
from collections.abc import Sequence

from pydantic import BaseModel, Field, model_validator

from services.decomposition import prompts
from services.decomposition.offline import CHECKLIST_MAX, CHECKLIST_MIN, classify_step, key_terms
from services.decomposition.plan import (
    balanced_pubmed,
    clean_texts,
    first_plan,
    parse_sub_questions,
    pubmed_query,
    queries_for,
    refinement_queries,
    schedule_first,
    strip_numbered_prefix,
)
from shared.research.envelope import (
    ChecklistItem,
    ContextHit,
    CoverageStatus,
    JobEnvelope,
    Plan,
    ResearchRequest,
    RetrievalMethod,
    SearchQuery,
    StepKind,
    SubQuestion,
)
from shared.llm.engine import JobLLM
from shared.llm.providers import LLMInvalidOutput
from shared.llm.prompting import block
from shared.research.steps import graph_problem
from shared.research.text import normalize_query

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
    id: str = Field("", max_length=40, description='a short unique id such as "q1"')
    question: str
    kind: StepKind = StepKind.INDEPENDENT
    depends_on: list[str] = Field(default_factory=list, max_length=8,
                                  description="ids of the earlier sub-questions whose findings this one needs")
    web_queries: list[str] = Field(default_factory=list, description="1 or 2 plain web search queries")
    pubmed_queries: list[str] = Field(default_factory=list, description="0 to 2 queries in PubMed syntax")


class Decomposition(BaseModel):
    """Record the sub-questions (1 to 8), their kinds, dependencies and search queries."""

    # No maxItems: a long list is capped at 8 by the parser rather than rejected.
    sub_questions: list[StepDraft] = Field(min_length=1, description="1 to 8 sub-questions")

    @model_validator(mode="after")
    def _executable(self) -> Decomposition:
        """A plan that cannot be executed is refused here, so the LLM layer re-asks the
        model once with the reason: ids are numbered by position where blank, then no
        duplicate id, no dependency on an unknown step or on itself, and no cycle."""
        for n, draft in enumerate(self.sub_questions, start=1):
            draft.id = " ".join(draft.id.split()) or f"q{n}"
            draft.depends_on = list(dict.fromkeys(" ".join(d.split()) for d in draft.depends_on if d.strip()))
        problem = graph_problem([(d.id, d.depends_on) for d in self.sub_questions])
        if problem:
            raise ValueError(f"{problem}; depends_on may only name other sub-questions' ids, without a cycle")
        return self


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
    return clean_texts(answer.questions, 3)


# -- the first pass -----------------------------------------------------------------------


def _step_queries(text: str, draft: StepDraft | None) -> list[SearchQuery]:
    """RAG searches the sub-question itself; web and PubMed take the model's queries,
    or the offline ones when it gave none (or unbalanced PubMed syntax)."""
    if draft is None:
        return queries_for(text, iteration=0)
    web = clean_texts(draft.web_queries) or [text]
    if draft.pubmed_queries:
        pubmed = [q for q in clean_texts(draft.pubmed_queries) if balanced_pubmed(q)] or [pubmed_query(text)]
    else:
        pubmed = []  # the model judged PubMed irrelevant to this step
    return [
        SearchQuery(provider=RetrievalMethod.RAG, text=text),
        *(SearchQuery(provider=RetrievalMethod.WEB, text=q) for q in web),
        *(SearchQuery(provider=RetrievalMethod.PUBMED, text=q) for q in pubmed),
    ]


async def plan_first(request: ResearchRequest, llm: JobLLM, *, max_sub_questions: int,
                     context_hits: Sequence[ContextHit] = (), notes: list[str] | None = None) -> Plan:
    """Iteration 0: the research brief (grounded in the context search's titles and
    snippets, when it ran), the checklist, the steps with their dependencies, and the
    independent steps' first queries. A decomposition the model got wrong twice
    (e.g. a dependency cycle) gives way to the offline steps; ``notes`` is told why."""
    offline = first_plan(request, max_sub_questions=max_sub_questions)
    if llm.offline:
        return offline
    brief = await _brief(request, llm, offline, context_hits)
    checklist = _checklist(brief.checklist) or offline.checklist
    drafts, problem = await _decompose(request, brief.refined_question, checklist, llm, offline)
    made = {
        "refined_question": brief.refined_question, "checklist": checklist, "engine": llm.label,
        "in_scope": clean_texts(brief.in_scope, 10), "out_of_scope": clean_texts(brief.out_of_scope, 10),
        "key_terms": clean_texts(brief.key_terms, 15) or offline.key_terms,
    }
    if problem is not None:
        if notes is not None:
            notes.append(f"steps: offline (the model's plan was unusable: {problem})")
        return offline.model_copy(update=made)
    # The model's list goes through the same parser as the offline answer.
    texts = parse_sub_questions(json.dumps([d.question for d in drafts]), request.question, cap=max_sub_questions)
    by_key: dict[str, StepDraft] = {}
    for d in drafts:  # the first draft of a duplicated question wins, as in the parser
        by_key.setdefault(normalize_query(strip_numbered_prefix(d.question)), d)
    steps = _steps(texts, by_key)
    plan = Plan(sub_questions=steps, **made)
    return schedule_first(plan, lambda step: _step_queries(step.text, by_key.get(normalize_query(step.text))))


async def _brief(request: ResearchRequest, llm: JobLLM, offline: Plan, context_hits: Sequence[ContextHit]) -> Brief:
    def offline_brief() -> Brief:
        return Brief(refined_question=offline.refined_question, key_terms=offline.key_terms,
                     checklist=[c.description for c in offline.checklist])

    found = "\n".join(block("result", f"{h.title}\n{h.snippet}", provider=h.provider.value) for h in context_hits)
    prompt = prompts.BRIEF_PROMPT.format(
        question=block("question", request.question), context=block("context", request.context),
        clarification=block("clarification", request.clarification),
        found=f"What a quick search of the sources found (titles and snippets):\n{found}" if found else "",
    )
    try:
        return await llm.structured(
            Brief, system=prompts.BRIEF_SYSTEM, prompt=prompt, tool_name="record_brief", offline=offline_brief,
        )
    except LLMInvalidOutput as exc:
        log.warning("research brief unusable (%s): using the offline brief", exc)
        return offline_brief()


async def _decompose(request: ResearchRequest, refined: str, checklist: list[ChecklistItem], llm: JobLLM,
                     offline: Plan) -> tuple[list[StepDraft], str | None]:
    """The model's steps, or ([], why they are unusable)."""
    prompt = prompts.DECOMPOSE_PROMPT.format(
        question=block("question", refined), context=block("context", request.context),
        clarification=block("clarification", request.clarification),
        checklist=block("checklist", "\n".join(f"- {c.description}" for c in checklist)),
    )
    try:
        answer = await llm.structured(
            Decomposition, system=prompts.DECOMPOSE_SYSTEM, prompt=prompt, tool_name="record_sub_questions",
            offline=lambda: Decomposition(sub_questions=[
                StepDraft(id=s.id, question=s.text, kind=s.kind, depends_on=s.depends_on) for s in offline.sub_questions]),
        )
    except LLMInvalidOutput as exc:
        log.warning("sub-questions unusable (%s): using the offline steps", exc)
        return [], str(exc)
    return answer.sub_questions, None


def _steps(texts: list[str], by_key: dict[str, StepDraft]) -> list[SubQuestion]:
    """The parsed sub-questions as steps, with the model's ids, kinds and dependencies.
    The original question (first) is independent; a step the model called independent
    but gave dependencies needs earlier results, so it is hybrid; a dependency on a
    step the parser dropped (a duplicate, or past the cap) is dropped too."""
    steps: list[SubQuestion] = []
    for i, text in enumerate(texts):
        draft = by_key.get(normalize_query(text))
        kind = StepKind.INDEPENDENT if i == 0 else (draft.kind if draft else classify_step(text, i))
        deps = list(draft.depends_on) if draft and i else []
        if kind is StepKind.INDEPENDENT and deps:
            kind = StepKind.HYBRID
        steps.append(SubQuestion(id=draft.id if draft else "", text=text, kind=kind, depends_on=deps))
    if not steps[0].id and "q0" not in {s.id for s in steps}:
        steps[0].id = "q0"  # the original question, when the model did not list it: before its q1
    kept = {s.id for s in steps if s.id}
    for step in steps:
        if lost := [d for d in step.depends_on if d not in kept]:
            log.info("step %s: dependencies %s were not kept in the plan", step.id, ", ".join(lost))
            step.depends_on = [d for d in step.depends_on if d in kept]
    return steps


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
    # The research memory lists every search answered so far, per provider.
    searched = [*envelope.queries_run, *(s.text for s in envelope.memory.searched)]
    offline = refinement_queries(plan, iteration=iteration, queries_run=searched)
    open_items = [c for c in plan.checklist if c.status is not CoverageStatus.SATISFIED]
    if llm.offline or not open_items:
        return offline
    asked = [*searched, *(q.text for q in plan.queries)]
    prompt = prompts.REFINE_PROMPT.format(
        question=block("question", plan.refined_question),
        known=block("known", "\n".join(f"- {c.text}" for c in envelope.claims[:KNOWN_CLAIMS]) or "(nothing yet)"),
        open_items=block("open_items", "\n".join(f"- {c.id} ({c.status.value}): {c.description}" for c in open_items)),
        gaps=block("gaps", "\n".join(f"- {g}" for g in envelope.knowledge_gaps) or "(none recorded)"),
        memory=block("memory", "\n".join(envelope.memory.gap_lines()) or "(no open gaps recorded)"),
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
        for provider, texts in ((RetrievalMethod.WEB, clean_texts(item.web_queries)),
                                (RetrievalMethod.PUBMED, [q for q in clean_texts(item.pubmed_queries) if balanced_pubmed(q)])):
            for text in texts:
                key = normalize_query(text)
                if key and key not in seen:
                    seen.add(key)
                    out.append(SearchQuery(provider=provider, text=text, iteration=iteration))
                    if provider is RetrievalMethod.WEB:
                        out.append(SearchQuery(provider=RetrievalMethod.RAG, text=text, iteration=iteration))
    # Nothing new from the model: the offline variants may still find something.
    return out or offline
