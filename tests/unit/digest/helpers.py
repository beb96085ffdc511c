from __future__ import annotations

import uuid

from shared.research.envelope import CredibilityTier, RetrievalMethod, Source
from shared.research.text import text_hash


def make_source(text: str = "", *, chars: int | None = None, tier: CredibilityTier = CredibilityTier.AUTHORITATIVE,
                authority: int = 70, relevance: float = 0.8, sid: str | None = None,
                page_starts: list[int] | None = None) -> Source:
    return Source(
        id=sid or "src-" + uuid.uuid4().hex[:12], text=text[:2000], url=f"https://example.org/{uuid.uuid4().hex[:6]}",
        title="A document", relevance_score=relevance, credibility_tier=tier, domain_authority=authority,
        retrieval_method=RetrievalMethod.WEB, text_hash=text_hash(text),
        text_chars=len(text) if chars is None else chars, page_starts=page_starts,
    )
