"""The corpus listing reads what the retrieval service's indexer writes, and says why
when it cannot."""

from __future__ import annotations

from pathlib import Path

from services.retrieval.index import MANIFEST as INDEX_MANIFEST
from services.retrieval.index import index_corpus
from shared.research.corpora import MANIFEST, read_corpora
from tests.conftest import FIXTURE_CORPUS


def test_an_indexed_corpus_is_listed_with_its_counts(tmp_path: Path) -> None:
    assert MANIFEST == INDEX_MANIFEST
    stats = index_corpus(FIXTURE_CORPUS, name="docs", corpora_dir=tmp_path)
    (info,) = read_corpora(tmp_path)
    assert (info.name, info.documents, info.chunks, info.problem) == ("docs", stats.files_indexed, stats.chunks, None)
    assert info.indexed_at is not None


def test_no_directory_no_corpora_and_a_broken_manifest_is_named(tmp_path: Path, caplog) -> None:  # noqa: ANN001
    assert read_corpora(tmp_path / "missing") == []
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / MANIFEST).write_text("{not json", encoding="utf-8")
    (tmp_path / "not-indexed").mkdir()  # no manifest: an index being built, or a stray folder
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / MANIFEST).write_text("{}", encoding="utf-8")
    (tmp_path / "listed").mkdir()
    (tmp_path / "listed" / MANIFEST).write_text('{"documents": 4, "chunks": "many"}', encoding="utf-8")
    broken, listed = read_corpora(tmp_path)
    assert broken.name == "broken" and broken.documents is None and "unreadable index manifest" in broken.problem
    assert "broken" in caplog.text
    assert (listed.name, listed.documents, listed.chunks, listed.problem) == ("listed", 4, None, None)
