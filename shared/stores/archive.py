"""The digest archive: canonical texts that digests and reports quote, kept for verification.

The digest stage archives the texts it digests; the synthesis stage archives every
other source that reaches it, so each source a report cites can be verified; the
gateway reads it back to verify a result's locators (:func:`check_snippet`).

A local file would do for one process, but every digest and synthesis process must
reach the archive, so it is the JetStream object store ``DIGEST_ARCHIVE_BUCKET``
(created with a max age of ``DIGEST_ARCHIVE_RETENTION_DAYS``), keyed by the text's
``sha256-<hex>``. A PDF's page map (each page's start offset) travels in the object's
description, so a page locator can be checked too. Reading checks the text against its hash.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from nats.js import JetStreamContext
from pydantic import BaseModel

from shared import subjects
from shared.stores.objects import READ_TIMEOUT_S, HashedTexts
from shared.research.envelope import Citation, DigestPayload, EvidenceSnippet
from shared.research.locators import page_of, parse_locator

__all__ = [
    "Archive",
    "ArchivedText",
    "SnippetCheck",
    "archive_key",
    "check_snippet",
    "passages_to_verify",
]

log = logging.getLogger(__name__)


def archive_key(source_text_hash: str) -> str:
    """The object name of a digest's ``source_text_hash`` (``sha256:<hex>`` or ``sha256-<hex>``)."""
    return source_text_hash.replace("sha256:", "sha256-", 1)


@dataclass(frozen=True)
class ArchivedText:
    key: str
    text: str
    page_starts: list[int] | None


class Archive:
    def __init__(self, js: JetStreamContext, *, read_timeout_s: float = READ_TIMEOUT_S) -> None:
        self._texts = HashedTexts(js, subjects.DIGEST_ARCHIVE_BUCKET, read_timeout_s=read_timeout_s)

    async def has(self, key: str) -> bool:
        return await self._texts.has(key)

    async def put(self, text: str, page_starts: Sequence[int] | None = None) -> str:
        """Archive ``text`` (idempotent); its key."""
        description = json.dumps({"page_starts": list(page_starts)}) if page_starts else None
        return await self._texts.put(text, description=description)

    async def get(self, key: str) -> ArchivedText | None:
        """The archived text, or None when it is not (or no longer) archived."""
        found = await self._texts.read(key)
        if found is None:
            return None
        text, description = found
        pages = None
        if description:
            try:
                pages = json.loads(description).get("page_starts")
            except (ValueError, AttributeError):
                log.warning("archived text %s has an unreadable page map", key)
        return ArchivedText(key, text, pages)


class SnippetCheck(BaseModel):
    text: str
    locator: str
    verified: bool
    reason: str | None = None  # why not, when not


def check_snippet(archived: ArchivedText | None, snippet: EvidenceSnippet) -> SnippetCheck:
    """Whether the snippet's locator points at exactly its text in the archived text
    (and, for a page locator, whether that page holds the passage's start)."""
    def result(ok: bool, reason: str | None = None) -> SnippetCheck:
        return SnippetCheck(text=snippet.text, locator=snippet.locator, verified=ok, reason=reason)

    if archived is None:
        return result(False, "archived text not found (never archived, or past its retention)")
    try:
        page, start, end = parse_locator(snippet.locator)
    except ValueError as exc:
        return result(False, str(exc))
    if end > len(archived.text):
        return result(False, f"locator ends at {end}, after the text's end ({len(archived.text)})")
    if archived.text[start:end] != snippet.text:
        return result(False, "the text at the locator differs from the snippet")
    if page is not None:
        if not archived.page_starts:
            return result(False, "page locator, but the archived text has no page map")
        if page_of(archived.page_starts, start) != page:
            return result(False, f"the passage starts on page {page_of(archived.page_starts, start)}, not {page}")
    return result(True)


def passages_to_verify(digest: DigestPayload | None, claims: list[dict], source_id: str) -> list[EvidenceSnippet]:
    """What a source's verification checks: its digest's evidence snippets and every
    passage of it that the job's claims quote (``claims`` as the result stores them),
    each once."""
    out: dict[tuple[str, str], EvidenceSnippet] = {}
    for snippet in digest.evidence_snippets if digest else []:
        out.setdefault((snippet.locator, snippet.text), snippet)
    for claim in claims:
        for raw in claim.get("citations") or []:
            citation = Citation.model_validate(raw)
            if citation.source_id == source_id:
                out.setdefault((citation.locator, citation.quote),
                               EvidenceSnippet(text=citation.quote, locator=citation.locator, relevance_score=0.0))
    return list(out.values())
