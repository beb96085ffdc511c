"""Deterministic meaning checks (being written): see check_meaning and contradicts."""

from __future__ import annotations

from collections.abc import Sequence


def contradicts(statement: str, other: str) -> str | None:
    """The reason (a category such as "negation", "comparative", "number") when
    ``other`` states the opposite of ``statement`` about the same subject; None when
    it does not (unrelated, or agreeing)."""
    raise NotImplementedError


def check_meaning(sentence: str, quotes: Sequence[str]) -> tuple[str, str] | None:
    """(category, detail) of the first way ``sentence`` says something its quotes do not."""
    raise NotImplementedError
