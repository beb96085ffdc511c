"""The scoring engine: source scores and claim scores (the job's confidence, which
synthesis reports too, is shared.research.claims.JobConfidenceCalculator).

The formulas are written out in docs/research-method.md ("Sources and their scores",
"Claim scores and job confidence"); every score this module returns lies in [0, 1].
Beyond the formulas, inputs they leave undefined are made well-defined: a domain
authority outside 0..100 and a non-finite relevance are brought into range, a
publication date in the future counts as published today, a naive datetime is read
as UTC, and claim indices that point at no source (or repeat) are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

from shared.research.claims import clamp, valid_indices
from shared.research.envelope import TIER_SCORES, Claim, ScoredSource, Source

RECENCY_DECAY_DAYS = 180.0
UNKNOWN_RECENCY = 0.5
SUPPORT_BONUS = 0.05
CONTRADICTION_PENALTY = 0.15

_SCORE_FIELDS = {"authority_score", "recency_score", "relevance_component",
                 "credibility_score", "composite_score"}


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class SourceScorer:
    """Four weighted dimensions (authority, recency, relevance, credibility), composite clamped to [0, 1]."""

    authority_weight = 0.25
    recency_weight = 0.20
    relevance_weight = 0.35
    credibility_weight = 0.20

    def authority(self, source: Source) -> float:
        return clamp(source.domain_authority / 100)

    def recency(self, source: Source, now: datetime) -> float:
        if source.published_at is None:
            return UNKNOWN_RECENCY
        days = (_aware(now) - _aware(source.published_at)).total_seconds() / 86_400
        return math.exp(-max(days, 0.0) / RECENCY_DECAY_DAYS)

    def relevance(self, source: Source) -> float:
        return clamp(source.relevance_score)

    def credibility(self, source: Source) -> float:
        return TIER_SCORES[source.credibility_tier]

    def score(self, source: Source, *, now: datetime) -> ScoredSource:
        da = self.authority(source)
        rec = self.recency(source, now)
        rel = self.relevance(source)
        cred = self.credibility(source)
        composite = clamp(
            da * self.authority_weight
            + rec * self.recency_weight
            + rel * self.relevance_weight
            + cred * self.credibility_weight
        )
        # Rescoring a ScoredSource replaces its scores rather than colliding with them.
        data = source.model_dump(by_alias=False, exclude=_SCORE_FIELDS)
        return ScoredSource.model_validate({
            **data,
            "authority_score": da,
            "recency_score": rec,
            "relevance_component": rel,
            "credibility_score": cred,
            "composite_score": composite,
        })

    def score_all(self, sources: Sequence[Source], *, now: datetime) -> list[ScoredSource]:
        return [self.score(s, now=now) for s in sources]


class ClaimScorer:
    """A claim's support strength (mean composite of its supporting sources), plus a bonus
    per supporting source, minus a penalty per contradicting one, clamped to [0, 1]."""

    def score(self, claim: Claim, scored_sources: Sequence[ScoredSource]) -> Claim:
        """The claim with its scores set and its indices restricted to real sources."""
        supporting = valid_indices(claim.supporting_indices, len(scored_sources))
        contradicting = valid_indices(claim.contradicting_indices, len(scored_sources))
        strength = (
            sum(scored_sources[i].composite_score for i in supporting) / len(supporting)
            if supporting else 0.0
        )
        confidence = clamp(
            min(strength + len(supporting) * SUPPORT_BONUS, 1.0)
            - len(contradicting) * CONTRADICTION_PENALTY
        )
        return claim.model_copy(update={
            "supporting_indices": supporting,
            "contradicting_indices": contradicting,
            "support_strength": strength,
            "contradiction_flag": len(contradicting) > 0,
            "confidence_score": confidence,
        })

    def score_all(self, claims: Sequence[Claim], scored_sources: Sequence[ScoredSource]) -> list[Claim]:
        return [self.score(c, scored_sources) for c in claims]
