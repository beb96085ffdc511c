"""A corpus folder's symbolic links: only links to regular files inside the folder
are indexed; links out, dangling links and links to folders are skipped with a reason."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from services.retrieval.index import index_corpus
from services.retrieval.search import LocalSearcher

ROOT = Path(__file__).resolve().parents[3]


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    secret_dir = tmp_path / "elsewhere"
    secret_dir.mkdir()
    secret = secret_dir / "secret.txt"
    secret.write_text("SECRETMARKER the root password is hunter2 on every lighthouse host.\n")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "keep.md").write_text("# Lighthouses\n\nLighthouse keepers trimmed the wicks every night.\n")
    os.symlink(secret, docs / "passwd.txt")  # a file outside the folder
    os.symlink(secret_dir, docs / "outside-dir")  # a folder outside
    os.symlink(docs / "missing.md", docs / "dangling.md")  # nothing there
    os.symlink(docs / "keep.md", docs / "sub" / "alias.md")  # inside: fine
    os.symlink("../sub", docs / "sub" / "loop")  # a folder link inside: not walked into
    return docs, secret


def test_links_out_of_the_folder_are_skipped_with_a_reason_and_never_searchable(tmp_path: Path) -> None:
    docs, _ = _corpus(tmp_path)
    stats = index_corpus(docs, name="links", corpora_dir=tmp_path / "corpora")
    skipped = dict(stats.skipped)
    assert skipped["passwd.txt"] == "link to a file outside the indexed folder"
    assert skipped["outside-dir"] == "link to a file outside the indexed folder"
    assert skipped["dangling.md"].startswith("dangling link to ")
    assert "not followed" in skipped["sub/loop"]
    assert stats.files_indexed == 2  # keep.md and the inside link sub/alias.md

    searcher = LocalSearcher(tmp_path / "corpora")
    assert all("SECRETMARKER" not in h.text for h in searcher.search("SECRETMARKER hunter2 password", corpora=["links"]))
    assert {h.doc_relpath for h in searcher.search("lighthouse keepers wicks", corpora=["links"])} == {"keep.md", "sub/alias.md"}


def test_a_file_replaced_by_a_link_out_leaves_the_index_on_reindex(tmp_path: Path) -> None:
    docs, secret = _corpus(tmp_path)
    (docs / "notes.txt").write_text("Harmless notes about fog signals and foghorns.\n")
    first = index_corpus(docs, name="swap", corpora_dir=tmp_path / "corpora")
    assert "notes.txt" not in dict(first.skipped)
    (docs / "notes.txt").unlink()
    os.symlink(secret, docs / "notes.txt")
    second = index_corpus(docs, name="swap", corpora_dir=tmp_path / "corpora")
    assert dict(second.skipped)["notes.txt"] == "link to a file outside the indexed folder"
    assert second.removed == 1
    hits = LocalSearcher(tmp_path / "corpora").search("SECRETMARKER hunter2", corpora=["swap"])
    assert all("SECRETMARKER" not in h.text for h in hits)


def test_the_cli_prints_each_skipped_link_with_its_reason(tmp_path: Path) -> None:
    docs, _ = _corpus(tmp_path)
    env = {**os.environ, "RESEARCH_DATA_DIR": str(tmp_path / "data")}
    r = subprocess.run(
        [sys.executable, "-m", "services.cli", "index", str(docs), "--name", "clilinks"],
        env=env, capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "skipped passwd.txt: link to a file outside the indexed folder" in r.stderr
    assert "skipped dangling.md: dangling link to" in r.stderr
