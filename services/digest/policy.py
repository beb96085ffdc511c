"""Which sources get digested (the digest policy, quality ranking and selection).

A source carries no quality field, so quality is defined here from what every
source carries:

    quality_score = 0.4 * tier_score + 0.3 * domain_authority / 100 + 0.3 * relevance_score

with the source scorer's credibility tier scores (PRIMARY_SOURCE 1.0, AUTHORITATIVE 0.85,
SECONDARY 0.65, UNVERIFIED 0.3, FLAGGED 0). HIGH is a score of at least 0.7, MEDIUM at
least 0.45, anything lower LOW; a FLAGGED source is always LOW. Credibility weighs most
because compressing an unreliable page spends model calls on text scoring will
discount anyway; relevance is in because a digest is query-conditioned.

Examples: a local document (AUTHORITATIVE, authority 70) is MEDIUM at any relevance
and HIGH from relevance 0.5; a blog (UNVERIFIED, authority 30) at relevance 0.5 is LOW.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from shared.research.envelope import TIER_SCORES, CredibilityTier, Source
from shared.research.events import DigestSkipReason

HIGH_AT = 0.7
MEDIUM_AT = 0.45


class Quality(IntEnum):
    LOW = 0
    MEDIUM = 1
    HIGH = 2


def quality_score(source: Source) -> float:
    relevance = min(1.0, max(0.0, source.relevance_score))
    authority = min(100, max(0, source.domain_authority)) / 100
    return round(0.4 * TIER_SCORES[source.credibility_tier] + 0.3 * authority + 0.3 * relevance, 6)


def quality(source: Source) -> Quality:
    if source.credibility_tier == CredibilityTier.FLAGGED:
        return Quality.LOW
    score = quality_score(source)
    if score >= HIGH_AT:
        return Quality.HIGH
    if score >= MEDIUM_AT:
        return Quality.MEDIUM
    return Quality.LOW


def ineligible_reason(source: Source, *, policy: str, min_chars: int) -> DigestSkipReason | None:
    """Why ``source`` may not be digested under ``policy``; None when it may."""
    if policy == "off":
        return DigestSkipReason.POLICY_OFF
    if source.text_chars <= 0:
        return DigestSkipReason.NO_TEXT
    if policy == "always":
        return None
    if source.text_chars <= min_chars:
        return DigestSkipReason.TOO_SHORT
    if quality(source) == Quality.LOW:
        return DigestSkipReason.LOW_QUALITY
    return None


@dataclass(frozen=True)
class Selection:
    chosen: list[Source]  # best first
    skipped: list[tuple[Source, DigestSkipReason]]


def select(sources: Iterable[Source], *, policy: str, min_chars: int, max_sources: int) -> Selection:
    """Rank the eligible sources by quality (level, then score, which includes
    relevance) and keep the ``max_sources`` best; every other source gets a reason."""
    eligible: list[Source] = []
    skipped: list[tuple[Source, DigestSkipReason]] = []
    for source in sources:
        reason = ineligible_reason(source, policy=policy, min_chars=min_chars)
        if reason is None:
            eligible.append(source)
        else:
            skipped.append((source, reason))
    ranked = sorted(eligible, key=lambda s: (-quality(s), -quality_score(s), s.id))
    skipped += [(s, DigestSkipReason.OVER_LIMIT) for s in ranked[max_sources:]]
    return Selection(chosen=ranked[:max_sources], skipped=skipped)
