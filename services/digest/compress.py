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
from services.digest.parts import MIN_PART_CHARS, merge_drafts, split_text
from shared.llm.budget import estimate_tokens
from shared.llm.context import chars_in, fixed_texts
from shared.llm.providers import LLMContextExceeded, LLMInvalidOutput
from shared.llm.prompting import block
from shared.research.text import hash_label, sentence_spans, short_hash

log = logging.getLogger(__name__)

SUMMARY_SENTENCES = 3
DIGEST_MAX_TOKENS = 2048  # the answer's allowance: a summary, key points and a few quotes
PROMPT_VERSION = short_hash(prompts.DIGEST_SYSTEM + prompts.DIGEST_PROMPT)


@dataclass(frozen=True)
class DigestLimits:
    max_snippets: int = 5
    max_chars: int = 400
    include_evidence: bool = True
    model_max_chars: int = 100_000
    max_parts: int = 4  # a source longer than one call's window: digested in at most this many parts

    @classmethod
    def of(cls, settings: Any) -> DigestLimits:
        return cls(
            max_snippets=settings.digest_max_evidence_snippets, max_chars=settings.digest_evidence_max_chars,
            include_evidence=settings.digest_include_evidence, model_max_chars=settings.digest_model_max_chars,
            max_parts=getattr(settings, "digest_max_parts", 4),
        )


@dataclass(frozen=True)
class Compressed:
    payload: DigestPayload
    engine: str  # "offline", or the model's label
    dropped_quotes: int = 0  # model quotes that could not be located
    parts: int = 1  # model calls the text was read in (its context window's doing)
    unread_chars: int = 0  # characters after what the model read (DIGEST_MODEL_MAX_CHARS, DIGEST_MAX_PARTS)


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


def user_prompt(text: str, *, source: Source, question: str, focus: list[str], limits: DigestLimits,
                span: tuple[int, int] | None = None, parts: int = 1) -> str:
    """The prompt for ``text`` (the whole, up to DIGEST_MODEL_MAX_CHARS), or for its
    ``span``, one of ``parts`` the text is read in (:mod:`services.digest.parts`)."""
    start, end = span or (0, min(len(text), limits.model_max_chars))
    note = prompts.PART_NOTE.format(n="the first" if start == 0 else "a later", parts=parts) if parts > 1 else ""
    return prompts.DIGEST_PROMPT.format(
        question=block("question", question),
        focus=block("focus", "\n".join(f"- {f}" for f in focus) or "-"),
        source=block("source", text[start:end], id=source.id, title=source.title),
        cut_note=note + (prompts.CUT_NOTE if end < len(text) else ""),
    )


async def _plan_parts(llm: Any, text: str, system: str, **about: Any) -> list[tuple[int, int]]:
    """The spans of ``text`` the model reads, one call each: the whole (up to
    DIGEST_MODEL_MAX_CHARS) when it fits the context window with the rest of the prompt
    and room for the answer, else parts that each do; [] when the window is too small."""
    limits: DigestLimits = about["limits"]
    whole = min(len(text), limits.model_max_chars)
    fixed = fixed_texts(DigestDraft, system=system, tool_name=prompts.DIGEST_TOOL)
    window = llm.engine.window
    if await window.fits(*fixed, user_prompt(text, **about), max_tokens=DIGEST_MAX_TOKENS):
        return [(0, whole)]
    shell = estimate_tokens(*fixed, user_prompt(".", span=(0, 1), parts=2, **about))
    size = chars_in(await window.room(DIGEST_MAX_TOKENS) - shell)
    while size >= MIN_PART_CHARS:
        spans = split_text(text[:whole], size, most=limits.max_parts)
        prompts_ = [user_prompt(text, span=sp, parts=max(2, len(spans)), **about) for sp in spans]
        if all([await window.fits(*fixed, p, max_tokens=DIGEST_MAX_TOKENS) for p in prompts_]):
            return spans
        size = int(size * 0.85)  # defused markup and attribute text made a part longer than counted
    return []


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
    system = system_prompt(limits)
    about: dict[str, Any] = {"source": source, "question": question, "focus": focus, "limits": limits}
    assumed = await llm.engine.window.tokens()
    spans, drafts, refused = await _read(llm, text, system, offline_draft, about)
    if refused and await llm.engine.window.tokens() < assumed:
        # The server refused for length and said (or showed) its window is smaller than
        # assumed: the text is planned again, once, in parts that fit the window learnt.
        spans, drafts, refused = await _read(llm, text, system, offline_draft, about)
    if not spans:
        log.warning("digest of %s: the model's context window leaves too little room for the text (LLM_CONTEXT_TOKENS); "
                    "using the offline digest", source.id)
        return Compressed(offline, "offline")
    unread = len(text) - spans[-1][1]
    if any(d is offline_draft for d in drafts):  # the job's token budget is spent
        return Compressed(offline, "offline")
    usable = [d for d in drafts if d is not None]
    if not usable:
        log.warning("digest of %s: no usable model answer; using the offline digest", source.id)
        return Compressed(offline, "offline")
    draft = usable[0] if len(spans) == 1 else merge_drafts(usable)
    payload, dropped = finalize(draft, text, question=question, focus=focus, text_key=source.text_hash, limits=limits)
    return Compressed(payload, llm.label, dropped, parts=len(spans), unread_chars=unread)


async def _read(llm: Any, text: str, system: str, offline_draft: DigestDraft,
                about: dict[str, Any]) -> tuple[list[tuple[int, int]], list[DigestDraft | None], bool]:
    """(the spans read, one call each, their drafts, None where unusable, whether the
    server refused any as too long); no spans when the window is too small for any text."""
    spans = await _plan_parts(llm, text, system, **about)
    source: Source = about["source"]
    unread = len(text) - spans[-1][1] if spans else 0
    if len(spans) > 1:
        log.info("digest of %s: %d characters read in %d parts to fit the context window%s", source.id,
                 spans[-1][1], len(spans), f"; the last {unread} not read (DIGEST_MAX_PARTS)" if unread else "")
    refused = False

    async def part(span: tuple[int, int]) -> DigestDraft | None:
        nonlocal refused
        try:
            return await llm.structured(
                DigestDraft, system=system, tool_name=prompts.DIGEST_TOOL, offline=lambda: offline_draft,
                prompt=user_prompt(text, span=span, parts=len(spans), **about), max_tokens=DIGEST_MAX_TOKENS,
            )
        except LLMInvalidOutput as exc:  # an unusable answer, or a prompt the server refused as too long
            refused = refused or isinstance(exc, LLMContextExceeded)
            log.warning("digest of %s (characters %d-%d): the model's answer was unusable (%s)", source.id, *span, exc)
            return None

    drafts = await asyncio.gather(*(part(span) for span in spans))
    return spans, list(drafts), refused


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
