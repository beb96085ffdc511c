"""Text the gateway accepts from users and writes to PostgreSQL.

PostgreSQL refuses NUL in text and JSONB, and asyncpg cannot encode an unpaired UTF-16
surrogate: either one in a request is rejected with a 4xx that names it, and anything
written from an event is cleaned first, so that one odd character cannot make a job
impossible to persist.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["clean", "clean_json", "is_blank", "text_problem"]

# Categories that print nothing: controls, format characters (zero-width space, BOM,
# joiners, bidi marks), separators, combining marks with no base, unassigned, private.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})
# Letters by category that render as blank space (Hangul fillers, braille blank, ...).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def _is_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udfff"


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored, or None."""
    if "\x00" in value:
        return "must not contain NUL (\\u0000) characters"
    if any(_is_surrogate(ch) for ch in value):
        return "must not contain unpaired surrogate characters (\\ud800-\\udfff)"
    return None


def is_blank(value: str) -> bool:
    """True when nothing in ``value`` would be visible: whitespace, zero-width and
    format characters only."""
    return all(ch.isspace() or ch in _BLANK_LETTERS or unicodedata.category(ch) in _INVISIBLE_CATEGORIES for ch in value)


def clean(value: str) -> str:
    """Drop NUL and replace unpaired surrogates with U+FFFD."""
    if "\x00" in value:
        value = value.replace("\x00", "")
    if any(_is_surrogate(ch) for ch in value):
        value = "".join("\ufffd" if _is_surrogate(ch) else ch for ch in value)
    return value


def clean_json(value: Any) -> Any:
    """:func:`clean` applied to every string (keys too) of a JSON-like value."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k: clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value
