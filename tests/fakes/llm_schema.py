"""Schema-driven answer synthesis for the fake LLM servers.

Builds a minimal instance of a JSON schema (the subset pydantic emits) whose strings
are phrases made of the prompt's content words, so a fake can answer a forced tool
call with a valid input without per-call scripting. JSON-schema `pattern` and
`multipleOf` are not honoured.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["prompt_words", "synthesize"]


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]{2,}")
_TAG = re.compile(r"<[^>]{1,80}>")
_STOP = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "what",
        "which",
        "when",
        "where",
        "who",
        "whom",
        "how",
        "why",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "not",
        "but",
        "its",
        "their",
        "them",
        "they",
        "you",
        "your",
        "our",
        "about",
        "over",
        "under",
        "between",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "than",
        "then",
        "also",
        "only",
        "each",
        "any",
        "all",
    }
)
_FALLBACK_WORDS = ("fake", "model", "answer")
_MAX_DEPTH = 8


def prompt_words(text: str) -> list[str]:
    """Content words of `text`, delimiter tags removed, in order of first appearance."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(_TAG.sub(" ", text)):
        if w.lower() not in _STOP:
            seen.setdefault(w, None)
    return list(seen) or list(_FALLBACK_WORDS)


class _Synth:
    """Builds a minimal instance of a JSON schema (the subset pydantic emits)."""

    def __init__(self, root: dict[str, Any], words: list[str]) -> None:
        self.root = root
        self.words = words
        self.cursor = 0
        self.strings: set[str] = set()

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in schema and seen < 32:
            ref = schema["$ref"]
            if not ref.startswith("#/"):
                raise ValueError(f"unsupported $ref {ref!r}")
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **rest}
            seen += 1
        return schema

    def phrase(self, n_words: int = 4) -> str:
        n = len(self.words)
        chosen = [self.words[(self.cursor + i) % n] for i in range(min(n_words, n))]
        self.cursor = (self.cursor + 1) % n
        text = " ".join(chosen)
        # Array items must differ (uniqueItems, and callers that dedupe).
        base, k = text, 2
        while text in self.strings:
            text = f"{base} {k}"
            k += 1
        self.strings.add(text)
        return text

    def value(self, schema: Any, depth: int = 0) -> Any:
        if not isinstance(schema, dict):
            return None  # `true` schema: anything goes
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [self.resolve(o) for o in schema[key] if isinstance(o, dict)]
                non_null = [o for o in options if o.get("type") != "null"]
                return self.value((non_null or options or [{}])[0], depth)
        if "allOf" in schema:
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return self.value(merged, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = (
                "object"
                if "properties" in schema
                else "array"
                if "items" in schema
                else "string"
            )
        return getattr(self, f"_{kind}", self._string)(schema, depth)

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        if depth >= _MAX_DEPTH:
            props = {k: v for k, v in props.items() if k in required}
        out = {name: self.value(sub, depth + 1) for name, sub in props.items()}
        extra = schema.get("additionalProperties")
        if not props and isinstance(extra, dict) and depth < _MAX_DEPTH:
            out[self.words[self.cursor % len(self.words)]] = self.value(
                extra, depth + 1
            )
        return out

    def _array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        lo = int(schema.get("minItems", 0))
        hi = int(schema.get("maxItems", 3))
        n = max(lo, min(2, hi)) if depth < _MAX_DEPTH else lo
        prefix = schema.get("prefixItems", [])
        items = [self.value(prefix[i], depth + 1) for i in range(min(n, len(prefix)))]
        items += [
            self.value(schema.get("items", {}), depth + 1)
            for _ in range(n - len(items))
        ]
        return items

    def _string(self, schema: dict[str, Any], depth: int) -> str:
        fmt = schema.get("format")
        if fmt == "date-time":
            return "2024-01-01T00:00:00Z"
        if fmt == "date":
            return "2024-01-01"
        if fmt in ("uri", "url"):
            return f"https://example.org/{self.phrase(1).replace(' ', '-')}"
        if fmt == "email":
            return "someone@example.org"
        if fmt == "uuid":
            return "00000000-0000-4000-8000-000000000000"
        text = self.phrase()
        lo = int(schema.get("minLength", 0))
        while len(text) < lo:
            text = f"{text} {self.phrase()}"
        hi = schema.get("maxLength")
        return text[: int(hi)] if hi is not None else text

    @staticmethod
    def _bounds(
        schema: dict[str, Any], step: float
    ) -> tuple[float | None, float | None]:
        lo = schema.get("minimum")
        if lo is None and "exclusiveMinimum" in schema:
            lo = schema["exclusiveMinimum"] + step
        hi = schema.get("maximum")
        if hi is None and "exclusiveMaximum" in schema:
            hi = schema["exclusiveMaximum"] - step
        return lo, hi

    def _integer(self, schema: dict[str, Any], depth: int) -> int:
        lo, hi = self._bounds(schema, 1)
        value = math.ceil(lo) if lo is not None else 1
        return min(value, math.floor(hi)) if hi is not None else value

    def _number(self, schema: dict[str, Any], depth: int) -> float:
        lo, hi = self._bounds(schema, 1e-6)
        if lo is not None and hi is not None:
            return (lo + hi) / 2
        if lo is not None:
            return lo + 0.5
        if hi is not None:
            return hi - 0.5
        return 0.5

    def _boolean(self, schema: dict[str, Any], depth: int) -> bool:
        return True

    def _null(self, schema: dict[str, Any], depth: int) -> None:
        return None


def synthesize(schema: dict[str, Any], words: Iterable[str] | str = ()) -> Any:
    """A minimal instance of `schema` whose strings are phrases of `words` (or of the
    content words of a text). Respects $ref/$defs, anyOf/oneOf/allOf, enum/const,
    required, minItems/maxItems (1-3 items unless forced otherwise), min/maxLength,
    minimum/maximum and common string formats."""
    word_list = (
        prompt_words(words)
        if isinstance(words, str)
        else list(words) or list(_FALLBACK_WORDS)
    )
    return _Synth(schema, word_list).value(schema)
