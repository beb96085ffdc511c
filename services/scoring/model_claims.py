"""Claims proposed by the model (or the offline engine) and kept only when they check out.

The model reads the sources' digests (summary and key points, as context) and their
evidence snippets, each with an id such as ``s3.e2`` (source 3 of the scored list,
its second snippet), and answers claims that cite snippet ids. It never writes
quotations: a kept claim's quotes are the snippets themselves. Code then disposes:

1. every snippet id the claim cites must exist;
2. every supporting snippet's quote verifies against the archived canonical text of
   its source (shared.verification.grounding.verify_quote: at its locator, relocated, or
   near-verbatim), and the citation carries the verified locator and the exact text;
3. the claim's sentence is grounded in those quotes (shared.verification.grounding.check_grounding:
   enough of its terms, and every number, year and name).

A claim failing any step (the checks are in :mod:`services.scoring.claim_checks`) is
rejected with the reason and its category (the grounding check's own, "quote" for a
quote that does not verify, "citation" for an unknown snippet or source, "form" for an
empty or overlong claim); the job goes on. A kept claim carries its level: "quoted"
when its sentence is its quote, else "supported". A snippet the model cites as
contradicting the claim counts only when its quote verifies and
shared.verification.meaning.contradicts finds that it states the opposite. Besides its
digest's snippets, every source offers the passages chosen from its whole canonical
text for the job's questions (:mod:`services.scoring.passages`); a source with neither
offers its excerpt's sentences, located in the canonical text through
``excerpt_start``. The offline engine (services/scoring/claims.py) answers when no
model is configured, when the token budget is spent, and for a batch whose model
answer is invalid; its claims, being quotes, pass the same check.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from services.scoring import prompts
from services.scoring.claim_batches import CLAIMS_MAX_TOKENS, packed_run
from services.scoring.claim_checks import (MODEL, OFFLINE, Snippet, Verifier, check_model_claims, source_label,
                                          verify_offline_claims)
from services.scoring.claims import extract_claims
from services.scoring.passages import PASSAGES_PER_SOURCE, Passage, passages_by_source
from services.scoring.schemas import ClaimsAnswer
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus, RejectedClaim, ScoredSource
from shared.platform.errors import PermanentError
from shared.llm.engine import JobLLM
from shared.llm.providers import LLMContextExceeded, LLMInvalidOutput
from shared.research.locators import locate
from shared.llm.prompting import block
from shared.research.text import is_statement, sentence_spans

log = logging.getLogger(__name__)

__all__ = [
    "MAX_CLAIMS_PER_CALL", "MAX_SNIPPETS_PER_SOURCE", "MAX_SOURCES_PER_CALL", "MODEL_PASSAGES_PER_SOURCE",
    "ClaimsOutcome",
    "batches",
    "build_snippets",
    "claims_prompt",
    "extract_verified_claims",
    "load_canonical_texts",
]

MAX_SOURCES_PER_CALL = 8  # sources (with their snippets) in one model call
MAX_SNIPPETS_PER_SOURCE = 8  # an excerpt can have many sentences; a digest has at most 5 snippets
# Passages a source offers the model: fewer than the offline engine reads (it reads a
# manual page for every question), so that a report costs what it did before.
MODEL_PASSAGES_PER_SOURCE = 6
MAX_CLAIMS_PER_CALL = 15  # claims read from one answer; the rest are ignored (and logged)
# Bounded as the claims are (services.scoring.claim_checks), for the envelope's size.
MAX_SNIPPET_CHARS = 400  # as the digest's evidence snippets; longer excerpt sentences are not offered
SUMMARY_MAX_CHARS = 1_500


def build_snippets(scored: Sequence[ScoredSource], passages: Mapping[int, Sequence[Passage]] | None = None, *,
                   per_source: int = MAX_SNIPPETS_PER_SOURCE) -> dict[str, Snippet]:
    """Every source's snippets by id, in source order: its digest's evidence snippets,
    then the passages chosen from its whole text for the job's questions; a source with
    neither offers its excerpt's statement sentences."""
    out: dict[str, Snippet] = {}
    passages = passages or {}
    for index, source in enumerate(scored):
        digest = [(e.text, e.locator) for e in source.digest.evidence_snippets] if source.digest is not None else []
        chosen = [(p.text, p.locator) for p in passages.get(index, ()) if p.text not in {text for text, _ in digest}]
        if digest or chosen:
            pieces = digest + chosen
        else:
            at = source.excerpt_start
            pieces = [(source.text[s:e], locate(at + s, at + e, source.page_starts) if at is not None else "")
                      for s, e in sentence_spans(source.text) if is_statement(source.text[s:e])]
        pieces = [(text, locator) for text, locator in pieces if len(text) <= MAX_SNIPPET_CHARS]
        for n, (text, locator) in enumerate(pieces[:per_source], start=1):
            snippet = Snippet(f"{source_label(index)}.e{n}", index, text, locator)
            out[snippet.id] = snippet
    return out


def batches(snippets: Mapping[str, Snippet], *, size: int = MAX_SOURCES_PER_CALL) -> list[list[int]]:
    """Source indices that have snippets, in groups of at most ``size``."""
    indices = list(dict.fromkeys(s.source_index for s in snippets.values()))
    return [indices[i:i + size] for i in range(0, len(indices), size)]


def claims_prompt(question: str, checklist: Sequence[ChecklistItem], scored: Sequence[ScoredSource],
                  snippets: Mapping[str, Snippet], batch: Sequence[int]) -> str:
    parts: list[str] = []
    for index in batch:
        source = scored[index]
        label = source_label(index)
        if source.digest is not None:
            context = source.digest.summary[:SUMMARY_MAX_CHARS]
            if source.digest.key_points:
                context += "\nKey points:\n" + "\n".join(f"- {p}" for p in source.digest.key_points)
            parts.append(block("source", context, id=label, title=source.title))
        parts.extend(block("snippet", s.text, id=s.id) for s in snippets.values() if s.source_index == index)
    return prompts.CLAIMS_PROMPT.format(
        question=block("question", question),
        checklist=block("checklist", "\n".join(f"{item.id}: {item.description}" for item in checklist)),
        sources="\n".join(p for p in parts if p),
    )


# -- the archived texts --------------------------------------------------------------


async def load_canonical_texts(get: Callable[[str], Awaitable[str]], keys: Sequence[str]) -> dict[str, str | None]:
    """The canonical texts by key (``get`` is TextStore.get), read concurrently, once
    per key. A text missing or corrupt in the store maps to None (its claims are then
    rejected with that reason); a store that does not answer raises, so the stage retries."""
    unique = list(dict.fromkeys(keys))

    async def one(key: str) -> str | None:
        try:
            return await get(key)
        except PermanentError as exc:
            log.warning("canonical text %s unavailable, claims citing it will be rejected: %s", key, exc)
            return None

    return dict(zip(unique, await asyncio.gather(*(one(k) for k in unique)), strict=True))


# -- the whole step ----------------------------------------------------------------------


@dataclass
class ClaimsOutcome:
    claims: list[Claim]  # verified, unscored
    rejected: list[RejectedClaim]
    notes: list[str] = field(default_factory=list)
    engine: str = OFFLINE  # "model", "offline" or "model+offline"


def _offline_for(question: str, sub_questions: Sequence[str], checklist: Sequence[ChecklistItem],
                 scored: Sequence[ScoredSource], batch: Sequence[int],
                 passages: Mapping[int, Sequence[Passage]]) -> list[Claim]:
    """The offline engine over a subset of the sources, indices mapped back to the whole list."""
    subset = [scored[i] for i in batch]
    claims = extract_claims(question, sub_questions, checklist, subset,
                            passages={j: passages[i] for j, i in enumerate(batch) if i in passages})
    return [c.model_copy(update={
        "supporting_indices": [batch[i] for i in c.supporting_indices],
        "contradicting_indices": [batch[i] for i in c.contradicting_indices],
    }) for c in claims]


@dataclass
class _Extraction:
    """One step's model extraction: what every batch call needs."""

    question: str
    sub_questions: Sequence[str]
    checklist: Sequence[ChecklistItem]
    scored: Sequence[ScoredSource]
    llm: JobLLM
    verifier: Verifier
    iteration: int
    passages: Mapping[int, Sequence[Passage]]
    snippets: dict[str, Snippet]

    async def offline_for(self, batch: list[int]) -> list[Claim]:
        return await asyncio.to_thread(_offline_for, self.question, self.sub_questions, self.checklist, self.scored,
                                       batch, self.passages)

    async def batch(self, batch: list[int]) -> tuple[list[Claim], list[Claim], list[RejectedClaim], str | None]:
        """(model claims, offline claims, rejected, why this batch went offline)."""
        answered_offline = False

        def offline() -> ClaimsAnswer:
            nonlocal answered_offline
            answered_offline = True
            return ClaimsAnswer(claims=[])

        try:
            answer = await self.llm.structured(
                ClaimsAnswer, system=prompts.CLAIMS_SYSTEM,
                prompt=claims_prompt(self.question, self.checklist, self.scored, self.snippets, batch),
                tool_name=prompts.CLAIMS_TOOL, offline=offline, max_tokens=CLAIMS_MAX_TOKENS,
            )
        except LLMInvalidOutput as exc:
            if isinstance(exc, LLMContextExceeded) and len(batch) > 1:
                raise  # packed_run asks again in two halves
            log.warning("claims answer for sources %s unusable (%s): offline engine for them",
                        ", ".join(source_label(i) for i in batch), exc)
            return [], await self.offline_for(batch), [], "model output invalid"
        if answered_offline:
            return [], await self.offline_for(batch), [], "token budget spent"
        drafts = answer.claims
        if len(drafts) > MAX_CLAIMS_PER_CALL:
            log.warning("claims answer has %d claims; reading the first %d", len(drafts), MAX_CLAIMS_PER_CALL)
            drafts = drafts[:MAX_CLAIMS_PER_CALL]
        shown = {i for i, s in self.snippets.items() if s.source_index in set(batch)}
        item_ids = [item.id for item in self.checklist]
        kept, rejected = await asyncio.to_thread(
            check_model_claims, drafts, self.snippets, self.verifier, item_ids, iteration=self.iteration, allowed=shown)
        return kept, [], rejected, None


async def extract_verified_claims(
    question: str,
    sub_questions: Sequence[str],
    checklist: Sequence[ChecklistItem],
    scored: Sequence[ScoredSource],
    llm: JobLLM,
    verifier: Verifier,
    *,
    iteration: int,
) -> ClaimsOutcome:
    """Claims for the job's current sources (see the module doc)."""
    # Extraction and the quote checks are CPU work over whole canonical texts: they run in
    # a thread so the event loop keeps sending the command's heartbeats (a loop blocked
    # past the ack wait would have JetStream hand the command to another process).
    # Every pass extracts its claims afresh, so the items already answered are asked too
    # (after the open ones): their passages must not vanish with the claims they gave.
    open_items = [i.description for i in checklist if i.status is not CoverageStatus.SATISFIED]
    asked = [question, *sub_questions, *open_items,
             *(i.description for i in checklist if i.status is CoverageStatus.SATISFIED)]
    # (the model is offered fewer: each passage it reads is tokens of the job's budget)
    limit = PASSAGES_PER_SOURCE if llm.offline else MODEL_PASSAGES_PER_SOURCE
    passages = await asyncio.to_thread(passages_by_source, scored, verifier.texts, asked, limit=limit)
    if llm.offline:
        def offline_all() -> tuple[list[Claim], list[RejectedClaim]]:
            return verify_offline_claims(extract_claims(question, sub_questions, checklist, scored, passages=passages),
                                         verifier, iteration=iteration)
        kept, rejected = await asyncio.to_thread(offline_all)
        return ClaimsOutcome(kept, rejected)
    step = _Extraction(question, sub_questions, checklist, scored, llm, verifier, iteration, passages,
                       build_snippets(scored, passages))
    groups, results = await packed_run(llm, batches(step.snippets), step.snippets, lambda b: claims_prompt(
        question, checklist, scored, step.snippets, b), step.batch, most=MAX_SOURCES_PER_CALL)
    return await _combine(groups, results, verifier, iteration=iteration)


async def _combine(groups: Sequence[list[int]],
                   results: Sequence[tuple[list[Claim], list[Claim], list[RejectedClaim], str | None]],
                   verifier: Verifier, *, iteration: int) -> ClaimsOutcome:
    """The batches' answers as one outcome: the offline claims of batches that went
    offline are verified like any, and a note says which and why."""
    model_claims: list[Claim] = []
    offline_claims: list[Claim] = []
    rejected: list[RejectedClaim] = []
    offline_sources = 0
    why: list[str] = []
    for batch, (kept, fallback, refused, reason) in zip(groups, results, strict=True):
        model_claims.extend(kept)
        rejected.extend(refused)
        if reason is not None:
            offline_claims.extend(fallback)
            offline_sources += len(batch)
            why.append(reason)
    checked, refused = await asyncio.to_thread(verify_offline_claims, offline_claims, verifier, iteration=iteration)
    rejected.extend(refused)
    notes: list[str] = []
    total = sum(len(b) for b in groups)
    if offline_sources:
        scope = "" if offline_sources == total else f" for {offline_sources} of {total} sources"
        notes.append(f"claims: offline{scope} ({', '.join(dict.fromkeys(why))})")
    engine = MODEL if not offline_sources else OFFLINE if offline_sources == total else f"{MODEL}+{OFFLINE}"
    return ClaimsOutcome(_dedupe(model_claims + checked), rejected, notes, engine)


def _dedupe(claims: Sequence[Claim]) -> list[Claim]:
    """One claim per sentence (case and spacing aside): batches may state the same fact;
    the first keeps its place and gains the others' sources and citations."""
    out: dict[str, Claim] = {}
    for claim in claims:
        key = " ".join(claim.text.casefold().split())
        if key not in out:
            out[key] = claim
            continue
        first = out[key]
        support = sorted(set(first.supporting_indices) | set(claim.supporting_indices))
        seen = {(c.source_id, c.locator) for c in first.citations}
        out[key] = first.model_copy(update={
            "supporting_indices": support,
            "contradicting_indices": sorted((set(first.contradicting_indices) | set(claim.contradicting_indices)) - set(support)),
            "citations": [*first.citations, *(c for c in claim.citations if (c.source_id, c.locator) not in seen)],
            "checklist_item_ids": list(dict.fromkeys([*first.checklist_item_ids, *claim.checklist_item_ids])),
        })
    return list(out.values())
