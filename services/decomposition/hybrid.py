"""Queries for hybrid steps, written in the light of what their dependencies found.

A hybrid step gets no queries in the first iteration. In the first refinement pass
after every step it depends on has verified claims, its queries are written from
those claims: by the model (the claims go in as data blocks), or offline by adding
the claims' key terms to the step's own text. The step is then marked as run in this
iteration, with the query texts it ran, so its own findings can be told apart later.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from services.decomposition import prompts
from services.decomposition.offline import key_terms
from services.decomposition.plan import balanced_pubmed, clean_texts, queries_for
from shared.research.envelope import Claim, JobEnvelope, Plan, RetrievalMethod, SearchQuery, StepKind, SubQuestion
from shared.llm.engine import JobLLM
from shared.llm.providers import LLMInvalidOutput
from shared.llm.prompting import block
from shared.research.steps import claims_by_step, mark_ran, ready_steps
from shared.research.text import normalize_query, terms

__all__ = ["HybridQueries", "hybrid_queries", "offline_step_queries"]

log = logging.getLogger(__name__)

CLAIMS_PER_DEPENDENCY = 5  # findings shown per dependency (the envelope's order: most confident first)
OFFLINE_TERMS = 4  # key terms of the findings added to the step's text, offline


class StepQueries(BaseModel):
    step_id: str
    web_queries: list[str] = Field(default_factory=list)
    pubmed_queries: list[str] = Field(default_factory=list)


class HybridQueries(BaseModel):
    """Record the searches for each sub-question whose dependencies now have findings."""

    steps: list[StepQueries]


def offline_step_queries(step: SubQuestion, findings: Sequence[Claim], *, iteration: int) -> list[SearchQuery]:
    """Deliberately simple: the findings steer the search only through their words.
    The key terms that recur most in the dependencies' claims, and that the step's own
    text lacks, are appended to it (at most OFFLINE_TERMS); nothing is inferred from
    what the claims mean. One query per provider, as for any step."""
    have = set(terms(step.text))
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for claim in findings:
        for word in dict.fromkeys(key_terms(claim.text)):
            if len(word) > 2 and not set(terms(word)) <= have:
                counts[word] += 1
                first_seen.setdefault(word, len(first_seen))
    extra = sorted(counts, key=lambda w: (-counts[w], first_seen[w]))[:OFFLINE_TERMS]
    text = " ".join([step.text.strip().rstrip("?.!"), *extra])
    return queries_for(text, iteration=iteration)


def _model_step_queries(step: SubQuestion, answer: StepQueries | None, *, iteration: int) -> list[SearchQuery]:
    web = clean_texts(answer.web_queries if answer else [])
    # Unlike the first pass, the unbalanced queries are dropped before the two are kept.
    pubmed = [q for q in clean_texts(answer.pubmed_queries if answer else [], None) if balanced_pubmed(q)][:2]
    return [
        SearchQuery(provider=RetrievalMethod.RAG, text=step.text, iteration=iteration),
        *(SearchQuery(provider=RetrievalMethod.RAG, text=q, iteration=iteration) for q in web),
        *(SearchQuery(provider=RetrievalMethod.WEB, text=q, iteration=iteration) for q in web),
        *(SearchQuery(provider=RetrievalMethod.PUBMED, text=q, iteration=iteration) for q in pubmed),
    ]


def _findings(step: SubQuestion, have: Mapping[str, Sequence[Claim]]) -> list[Claim]:
    return [c for dep in step.depends_on for c in have.get(dep, [])[:CLAIMS_PER_DEPENDENCY]]


async def hybrid_queries(envelope: JobEnvelope, llm: JobLLM) -> tuple[Plan, list[SearchQuery]]:
    """(the plan with the hybrid steps now ready marked as run, their queries). Steps
    whose dependencies have no verified claims yet wait for a later pass."""
    plan = envelope.plan
    assert plan is not None
    have = claims_by_step(plan, envelope.claims, envelope.scored_sources, envelope.analysis_claims)
    ready = ready_steps(plan, StepKind.HYBRID, have)
    if not ready:
        return plan, []
    iteration = envelope.iteration
    answers = await _ask(envelope, ready, have, llm)
    per_step: dict[str, list[SearchQuery]] = {}
    for step in ready:
        findings = _findings(step, have)
        mine = answers.get(step.id) if answers is not None else None
        if mine is not None and (mine.web_queries or mine.pubmed_queries):
            per_step[step.id] = _model_step_queries(step, mine, iteration=iteration)
        else:
            per_step[step.id] = offline_step_queries(step, findings, iteration=iteration)
    asked = {normalize_query(q) for q in envelope.queries_run}
    queries = [q for s in ready for q in per_step[s.id] if normalize_query(q.text) not in asked]
    marked = mark_ran(plan, [s.id for s in ready], iteration,
                      searched={i: [q.text for q in qs] for i, qs in per_step.items()})
    return marked, queries


async def _ask(envelope: JobEnvelope, ready: Sequence[SubQuestion], have: Mapping[str, Sequence[Claim]],
               llm: JobLLM) -> dict[str, StepQueries] | None:
    """The model's queries per ready step id; None offline or when its answer is unusable."""
    if llm.offline:
        return None
    plan = envelope.plan
    assert plan is not None
    steps = []
    for step in ready:
        findings = "\n".join(block("finding", c.text, step=dep)
                             for dep in step.depends_on for c in have.get(dep, [])[:CLAIMS_PER_DEPENDENCY])
        steps.append(block("step", step.text, id=step.id) + "\n" + findings)
    prompt = prompts.HYBRID_PROMPT.format(
        question=block("question", plan.refined_question), steps="\n".join(steps),
        asked=block("asked", "\n".join(f"- {q}" for q in dict.fromkeys(envelope.queries_run)) or "(none)"),
    )
    try:
        answer = await llm.structured(
            HybridQueries, system=prompts.HYBRID_SYSTEM, prompt=prompt, tool_name="record_step_queries",
            offline=lambda: HybridQueries(steps=[]),
        )
    except LLMInvalidOutput as exc:
        log.warning("hybrid step queries unusable (%s): offline queries for %s", exc, ", ".join(s.id for s in ready))
        return None
    return {s.step_id: s for s in answer.steps}

