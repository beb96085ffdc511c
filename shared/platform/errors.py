"""The project's error hierarchy. Vendors' exceptions are translated into these where
the vendor is called; handlers decide ack/nack/term from the type, never the text."""

from __future__ import annotations


class ResearchError(Exception):
    """Base of every error this project raises on purpose."""


class TransientError(ResearchError):
    """Worth retrying later: a timeout, a 429, a server that is restarting."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class PermanentError(ResearchError):
    """Retrying cannot help: bad input, a refused key, a malformed envelope.
    The job fails with this message as its reason."""


class JobCancelled(ResearchError):
    """The job was cancelled while a stage worked on it; the work is abandoned."""


class ConfigurationError(PermanentError):
    """A setting is missing or invalid."""
