"""Compression of one source: the model path and the offline extractive engine.

The model is asked, with the source inside a delimited block, for a summary, key points
and verbatim evidence (``record_digest``); the offline engine's digest is its
``offline=`` answer (used when no model is configured or the job's token budget is
spent) and its fallback when the model's answer does not validate. A model quote goes
through :func:`shared.research.relocate.locate`: relocated into the canonical text or
dropped, so every emitted locator verifies whichever engine answered.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from services.digest import prompts
from services.digest.evidence import KEY_POINTS, build_digest, cut_end, verify_snippet
from shared.research.locators import format_locator
from shared.research.relocate import locate
from services.digest.schemas import DigestDraft, DraftEvidence
from shared.research.envelope import DigestPayload, EvidenceSnippet, Source
from shared.llm.providers import LLMInvalidOutput
from shared.llm.prompting import block
from shared.research.text import hash_label, sentence_spans, short_hash

log = logging.getLogger(__name__)

SUMMARY_SENTENCES = 3
PROMPT_VERSION = short_hash(prompts.DIGEST_SYSTEM + prompts.DIGEST_PROMPT)


@dataclass(frozen=True)
class DigestLimits:
    max_snippets: int = 5
    max_chars: int = 400
    include_evidence: bool = True
    model_max_chars: int = 100_000

    @classmethod
    def of(cls, settings: Any) -> DigestLimits:
        return cls(
            max_snippets=settings.digest_max_evidence_snippets, max_chars=settings.digest_evidence_max_chars,
            include_evidence=settings.digest_include_evidence, model_max_chars=settings.digest_model_max_chars,
        )


@dataclass(frozen=True)
class Compressed:
    payload: DigestPayload
    engine: str  # "offline", or the model's label
    dropped_quotes: int = 0  # model quotes that could not be located


def offline_digest(text: str, *, question: str, focus: list[str], text_key: str, limits: DigestLimits) -> DigestPayload:
    return build_digest(
        text, query=question, focus=focus, source_text_hash=text_key,
        max_snippets=limits.max_snippets if limits.include_evidence else 0,
        max_chars=limits.max_chars, summary_sentences=SUMMARY_SENTENCES,
    )


def draft_of(payload: DigestPayload) -> DigestDraft:
    return DigestDraft(
        summary=payload.summary, key_points=list(payload.key_points),
        evidence=[DraftEvidence(text=s.text, relevance=s.relevance_score) for s in payload.evidence_snippets],
    )


def system_prompt(limits: DigestLimits) -> str:
    return prompts.DIGEST_SYSTEM.format(
        summary_sentences=SUMMARY_SENTENCES, key_points=KEY_POINTS,
        max_snippets=limits.max_snippets if limits.include_evidence else 0, max_chars=limits.max_chars,
    )


def user_prompt(text: str, *, source: Source, question: str, focus: list[str], limits: DigestLimits) -> str:
    cut = len(text) > limits.model_max_chars
    return prompts.DIGEST_PROMPT.format(
        question=block("question", question),
        focus=block("focus", "\n".join(f"- {f}" for f in focus) or "-"),
        source=block("source", text[: limits.model_max_chars], id=source.id, title=source.title),
        cut_note=prompts.CUT_NOTE if cut else "",
    )


async def compress(llm: Any, text: str, *, source: Source, question: str, focus: list[str], limits: DigestLimits) -> Compressed:
    """The digest of ``text`` (the canonical text of ``source``). ``llm`` is the
    stage's job-bound client (``ctx.llm``); None or an offline one means the offline
    engine answers."""
    offline = await asyncio.to_thread(
        offline_digest, text, question=question, focus=focus, text_key=source.text_hash, limits=limits,
    )
    if llm is None or llm.offline:
        return Compressed(offline, "offline")
    offline_draft = draft_of(offline)
    try:
        draft = await llm.structured(
            DigestDraft,
            system=system_prompt(limits),
            prompt=user_prompt(text, source=source, question=question, focus=focus, limits=limits),
            tool_name=prompts.DIGEST_TOOL,
            offline=lambda: offline_draft,
        )
    except LLMInvalidOutput as exc:
        log.warning("digest of %s: the model's answer was unusable (%s); using the offline digest", source.id, exc)
        return Compressed(offline, "offline")
    if draft is offline_draft:  # the job's token budget is spent
        return Compressed(offline, "offline")
    payload, dropped = finalize(draft, text, question=question, focus=focus, text_key=source.text_hash, limits=limits)
    return Compressed(payload, llm.label, dropped)


def finalize(draft: DigestDraft, text: str, *, question: str, focus: list[str], text_key: str,
             limits: DigestLimits) -> tuple[DigestPayload, int]:
    """The payload of a model's draft: quotes relocated into ``text`` (or dropped),
    cut to ``max_chars`` at a word boundary, deduplicated, verified."""
    spans = sentence_spans(text)
    snippets: list[EvidenceSnippet] = []
    seen: set[str] = set()
    dropped = 0
    wanted = limits.max_snippets if limits.include_evidence else 0
    for ev in sorted(draft.evidence, key=lambda e: -e.relevance):
        if len(snippets) >= wanted:
            break
        found = locate(text, ev.text, spans=spans)
        if found is None:
            dropped += 1
            continue
        start, end, _how = found
        end = cut_end(text, start, end, limits.max_chars)
        snippet = EvidenceSnippet(text=text[start:end], locator=format_locator(start, end), relevance_score=round(ev.relevance, 4))
        if snippet.text in seen or not snippet.text.strip() or not verify_snippet(text, snippet):
            continue
        seen.add(snippet.text)
        snippets.append(snippet)
    summary = draft.summary.strip()
    key_points = list(dict.fromkeys(kp.strip() for kp in draft.key_points if kp.strip()))[:KEY_POINTS]
    digest_chars = len(summary) + sum(map(len, key_points)) + sum(len(s.text) for s in snippets)
    payload = DigestPayload(
        query_hash=short_hash(question),
        summary=summary,
        key_points=key_points,
        evidence_snippets=snippets,
        original_chars=len(text),
        digest_chars=digest_chars,
        compression_ratio=round(digest_chars / len(text), 4) if text else 0.0,
        source_text_hash=hash_label(text_key),
    )
    return payload, dropped
