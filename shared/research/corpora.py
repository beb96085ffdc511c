"""The local corpora as their indexes describe them, read without the index code.

The retrieval service builds ``<corpora_dir>/<name>/`` with a ``manifest.json`` naming
the live index generation and counting its documents and chunks; that manifest is the
published part of a corpus. Other processes (the gateway's corpus listing) read only
it, so they need neither the search libraries nor the retrieval service's modules.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel

__all__ = ["MANIFEST", "CorpusInfo", "read_corpora"]

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"  # the file the retrieval service swaps in when an index goes live
_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


class CorpusInfo(BaseModel):
    """One indexed corpus: its name (what a request's ``corpora`` lists) and its size."""

    name: str
    documents: int | None = None
    chunks: int | None = None
    indexed_at: datetime | None = None
    problem: str | None = None  # why the counts are missing: the manifest could not be read


def _info(name: str, manifest: Path) -> CorpusInfo:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return CorpusInfo(
            name=name,
            documents=data.get("documents") if isinstance(data.get("documents"), int) else None,
            chunks=data.get("chunks") if isinstance(data.get("chunks"), int) else None,
            indexed_at=data.get("created_at"),
        )
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        problem = f"unreadable index manifest: {type(exc).__name__}: {exc}"[:300]
        log.warning("corpus %s: %s", name, problem)
        return CorpusInfo(name=name, problem=problem)


def read_corpora(corpora_dir: Path) -> list[CorpusInfo]:
    """Every corpus with a live index under ``corpora_dir``, by name; none when the
    directory does not exist (nothing was indexed on this machine)."""
    corpora_dir = Path(corpora_dir)
    if not corpora_dir.is_dir():
        return []
    return [
        _info(entry.name, entry / MANIFEST)
        for entry in sorted(corpora_dir.iterdir(), key=lambda e: e.name)
        if _NAME.fullmatch(entry.name) and (entry / MANIFEST).is_file()
    ]
