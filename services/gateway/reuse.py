"""Reuse: a new question close to one the same user completed recently starts from
that job's research instead of from nothing.

When a job is admitted (and its request allows reuse, the default), the gateway looks
for the most similar job of the same user that COMPLETED within
``RESEARCH_REUSE_MAX_AGE_S`` over the same corpora and the same providers. Similarity
is the Jaccard overlap of the two questions' content terms, as the rest of the system
matches text (:func:`shared.research.text.terms`: lower-cased, stop words removed, Snowball
stems), so "How are lighthouses automated?" and "How were lighthouses automated" are
the same question (1.0) and word order never matters. At ``RESEARCH_REUSE_MIN_SIMILARITY``
or above, the new job starts from that job's final checkpoint (the envelope its
scoring handed to synthesis):

- when that job's checklist was fully satisfied and covers the new question (every
  content term of the new question is in the earlier question, its refined question,
  key terms or checklist) asked with the same context, the new job goes straight to synthesis with the earlier
  plan, sources, scores and verified claims: only the new report is written;
- otherwise it plans afresh, but with the earlier sources, digests, claims, research
  memory and queries already run: retrieval skips those queries, the digest stage
  does not digest the reused sources again, and on its first pass scoring extracts
  claims from the sources the job found itself only, carrying the earlier claims over
  (services/scoring/reused.py).

Reuse never crosses users, and never happens with ``"reuse": false`` or when corpora
or providers differ. The envelope's ``reused`` field (and the report's methodology)
says from which job, and how many sources and claims were taken over.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from nats.js import JetStreamContext
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway.models import Job
from shared.stores import checkpoints
from shared.research.envelope import CoverageStatus, JobEnvelope, ReusedWork, utcnow
from shared.platform.errors import PermanentError
from shared.research.events import JobStatus
from shared.subjects import Stage
from shared.research.text import jaccard, terms

__all__ = ["CANDIDATES", "Candidate", "covers", "find_similar", "follow_up_envelope", "question_similarity",
           "reused_envelope", "same_scope"]

log = logging.getLogger(__name__)

CANDIDATES = 50  # the user's most recent completed jobs compared with a new question


def question_similarity(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' stemmed content terms, 0..1."""
    return jaccard(set(terms(a)), set(terms(b)))


def _scope(values: list[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(values)


def same_scope(a: Job, b: Job) -> bool:
    """The same corpora and the same providers (None, "all of them", only matches None)."""
    return _scope(a.corpora) == _scope(b.corpora) and _scope(a.providers) == _scope(b.providers)


@dataclass(frozen=True)
class Candidate:
    job_id: str
    similarity: float


async def find_similar(session: AsyncSession, job: Job, *, max_age_s: float, min_similarity: float) -> Candidate | None:
    """The most similar (then the most recent) job of ``job``'s user that completed
    within ``max_age_s`` over the same corpora and providers, if any reaches
    ``min_similarity``."""
    cutoff = utcnow() - timedelta(seconds=max_age_s)
    rows = (await session.exec(
        select(Job)
        .where(Job.user_id == job.user_id, Job.status == JobStatus.COMPLETED, Job.id != job.id,
               col(Job.finished_at) >= cutoff)
        .order_by(col(Job.finished_at).desc())
        .limit(CANDIDATES)
    )).all()
    best: Candidate | None = None
    for row in rows:
        if not same_scope(row, job):
            continue
        similarity = question_similarity(job.question, row.question)
        if similarity >= min_similarity and (best is None or similarity > best.similarity):
            best = Candidate(row.id, similarity)
    return best


def covers(earlier: JobEnvelope, question: str, context: str | None = None) -> bool:
    """Whether the earlier job's research already answers ``question`` asked with
    ``context``: its checklist is fully satisfied, every content term of ``question``
    is in what it researched (its question, refined question, key terms and checklist),
    and the context is the same in content terms (a context changes the brief, the
    scope and so the report, even where the sources still serve: those are reused by
    planning afresh)."""
    plan = earlier.plan
    if plan is None or not plan.checklist or not earlier.claims:
        return False
    if set(terms(context or "")) != set(terms(earlier.request.context or "")):
        return False
    if any(item.status != CoverageStatus.SATISFIED for item in plan.checklist):
        return False
    researched = " ".join([earlier.request.question, plan.refined_question, *plan.key_terms,
                           *(item.description for item in plan.checklist)])
    return set(terms(question)) <= set(terms(researched))


async def reused_envelope(js: JetStreamContext, fresh: JobEnvelope, candidate: Candidate) -> JobEnvelope:
    """``fresh`` (a new job's first command) seeded from the candidate's final
    checkpoint; ``fresh`` unchanged, with a log line, when that checkpoint is missing,
    unreadable or not a finished one. A checkpoint that cannot be read for now raises
    (admission tries again)."""
    try:
        earlier = await checkpoints.latest(js, candidate.job_id)
    except PermanentError as exc:
        log.error("job %s: not reusing job %s: %s", fresh.job_id, candidate.job_id, exc)
        return fresh
    if earlier is None or earlier.stage != Stage.SYNTHESIZE or not earlier.sources:
        log.info("job %s: not reusing job %s: it has no final checkpoint with sources", fresh.job_id, candidate.job_id)
        return fresh
    covered = covers(earlier, fresh.request.question, fresh.request.context)
    reused = ReusedWork(
        job_id=candidate.job_id, similarity=round(candidate.similarity, 3), sources=len(earlier.sources),
        claims=len(earlier.claims), source_ids=[s.id for s in earlier.sources], covered=covered,
    )
    log.info("job %s reuses job %s (similarity %.2f): %d sources, %d claims%s", fresh.job_id, candidate.job_id,
             candidate.similarity, reused.sources, reused.claims, "; straight to synthesis" if covered else "")
    seeded = fresh.model_copy(update={
        "sources": earlier.sources, "scored_sources": earlier.scored_sources, "queries_run": earlier.queries_run,
        "claims": earlier.claims, "memory": earlier.memory, "reused": reused,
    })
    if covered:
        seeded = seeded.model_copy(update={
            "stage": Stage.SYNTHESIZE, "iteration": earlier.iteration, "plan": earlier.plan, "confidence": earlier.confidence,
            "knowledge_gaps": earlier.knowledge_gaps, "analysis_claims": earlier.analysis_claims,
        })
    # The new job's own first checkpoint: no stage has handed it on yet, and a resume of
    # it, or a later job reusing it, starts from here.
    await checkpoints.save(js, seeded)
    return seeded


async def follow_up_envelope(js: JetStreamContext, fresh: JobEnvelope, parent_job_id: str) -> JobEnvelope:
    """``fresh`` (a follow-up question's first command) seeded from its parent's final
    checkpoint as a reuse that never counts as covered: the follow-up plans afresh for
    its own question with the parent's sources, digests, verified claims (checked again
    on its first scoring pass), memory and searches, and the parent's refined question
    as what it builds on. A parent whose checkpoint is gone (it outlived
    RESEARCH_JOB_TTL_S) is logged as an error and the follow-up researches from nothing,
    its methodology saying that nothing was carried over. A checkpoint that cannot be
    read for now raises (admission tries again)."""
    try:
        parent = await checkpoints.latest(js, parent_job_id)
    except PermanentError as exc:
        log.error("job %s: the checkpoint of job %s, which it follows up, is unreadable: %s", fresh.job_id, parent_job_id, exc)
        parent = None
    similarity = round(question_similarity(fresh.request.question, parent.request.question), 3) if parent else 0.0
    if parent is None or parent.stage != Stage.SYNTHESIZE:
        log.error("job %s follows up job %s, which has no final checkpoint: it starts without that job's research",
                  fresh.job_id, parent_job_id)
        return fresh.model_copy(update={"reused": ReusedWork(job_id=parent_job_id, similarity=similarity, sources=0,
                                                             claims=0, follow_up=True)})
    reused = ReusedWork(
        job_id=parent_job_id, similarity=similarity, sources=len(parent.sources), claims=len(parent.claims),
        source_ids=[s.id for s in parent.sources], follow_up=True,
        question=parent.plan.refined_question if parent.plan is not None else parent.request.question,
    )
    log.info("job %s follows up job %s: %d sources, %d claims carried over", fresh.job_id, parent_job_id,
             reused.sources, reused.claims)
    seeded = fresh.model_copy(update={
        "sources": parent.sources, "scored_sources": parent.scored_sources, "queries_run": parent.queries_run,
        "claims": parent.claims, "memory": parent.memory, "reused": reused,
    })
    await checkpoints.save(js, seeded)  # the follow-up's own first checkpoint, as a reusing job's
    return seeded
