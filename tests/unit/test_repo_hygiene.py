"""The repository explains itself.

Nobody reading the repo has the documents the project was first specified from, so no
tracked source, doc or config file may send a reader to them: the method is written
down in docs/research-method.md and the architecture in docs/architecture.md. And the
links of those docs must lead somewhere.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKED_SUFFIXES = (".py", ".md", ".toml", ".yml", ".yaml")

# Spelled in pieces so that this file does not match itself.
FORBIDDEN = (
    re.compile("seed" + r"\s+" + "00", re.IGNORECASE),
    re.compile(re.escape("DESIGN" + ".md")),
)

# Files allowed to keep a reference for now (path -> why). Keep this empty: an entry is
# a debt, named here so that it is visible.
KNOWN_EXCEPTIONS: dict[str, str] = {}

_LINK = re.compile(r"(?<!!)\[(?:[^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def tracked_files() -> list[Path]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / p for p in out.decode().split("\0") if p]


def _outside_fences(text: str) -> list[str]:
    """The lines of a markdown text that are not inside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup and punctuation dropped, lower case,
    spaces as hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for line in _outside_fences(markdown):
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``doc`` whose file (or heading anchor) does not exist."""
    text = doc.read_text(encoding="utf-8")
    problems: list[str] = []
    for line in _outside_fences(text):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # http:, https:, mailto: ... are not files of the repo
            path_part, _, anchor = target.partition("#")
            dest = (doc.parent / path_part).resolve() if path_part else doc
            if not dest.exists():
                problems.append(f"{target}: {dest.relative_to(root) if dest.is_relative_to(root) else dest} does not exist")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
                problems.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    return problems


def test_no_file_points_outside_the_repo() -> None:
    offenders: list[str] = []
    for path in tracked_files():
        if path.suffix not in CHECKED_SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(ROOT).as_posix()
        if rel in KNOWN_EXCEPTIONS:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if any(p.search(line) for p in FORBIDDEN):
                offenders.append(f"{rel}:{n}: {line.strip()[:100]}")
    assert not offenders, (
        "these lines refer to documents outside the repo; say it in their own words or point to "
        "docs/architecture.md / docs/research-method.md:\n" + "\n".join(offenders)
    )


def test_the_docs_exist_and_the_readme_links_them() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in ("docs/architecture.md", "docs/research-method.md"):
        assert (ROOT / doc).is_file(), doc
        assert f"]({doc})" in readme, f"README.md does not link {doc}"


@pytest.mark.parametrize("doc", sorted(p.name for p in (ROOT / "docs").glob("*.md")))
def test_doc_links_resolve(doc: str) -> None:
    assert broken_links(ROOT / "docs" / doc) == []


def test_the_link_check_sees_a_broken_link(tmp_path: Path) -> None:
    """The checker itself: a missing file and a missing anchor are reported, a good
    link, an external link and a link inside a code fence are not."""
    (tmp_path / "other.md").write_text("# Real heading\n\n## `Code` and more!\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "[ok](other.md) [ok](other.md#real-heading) [ok](other.md#code-and-more) [web](https://example.org/x)\n"
        "[gone](missing.md) [bad anchor](other.md#nope) [self](#local)\n"
        "```\n[in a fence](nowhere.md)\n```\n# Local\n"
    )
    problems = broken_links(doc, tmp_path)
    assert [p.split(":")[0] for p in problems] == ["missing.md", "other.md#nope"]
