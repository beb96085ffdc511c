"""The project's own library: envelope and event models, subject names, settings,
text primitives, the error hierarchy, server launchers and the stage runner."""

from shared.envelope import (
    Claim,
    CredibilityTier,
    DigestPayload,
    EvidenceSnippet,
    JobEnvelope,
    Plan,
    ResearchRequest,
    RetrievalMethod,
    ScoredSource,
    Source,
)
from shared.errors import JobCancelled, PermanentError, ResearchError, TransientError
from shared.events import JobStatus
from shared.subjects import Stage

__all__ = [
    "Claim",
    "CredibilityTier",
    "DigestPayload",
    "EvidenceSnippet",
    "JobCancelled",
    "JobEnvelope",
    "JobStatus",
    "PermanentError",
    "Plan",
    "ResearchError",
    "ResearchRequest",
    "RetrievalMethod",
    "ScoredSource",
    "Source",
    "Stage",
    "TransientError",
]
