"""Which TrueType fonts the PDF export may embed.

fpdf2's built-in fonts cover Latin-1 only; a Unicode font found here lets the PDF keep
every character the font can draw. The font is the file RESEARCH_PDF_FONT names, or
the first of a few well-known system locations (DejaVu Sans as Debian's and Fedora's
packages install it, Arial Unicode on macOS, whatever fontconfig calls DejaVu Sans).
Bold, italic and monospace faces are looked for beside the regular file under the
usual names; a face that is missing is stood in for by the nearest one found.
Other fonts found (say a CJK font) serve as fallbacks for glyphs the main one lacks.

A file named explicitly that cannot be read as a font is warned about once, and the
export keeps to Latin-1 rather than silently using some other font.
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fontTools.ttLib import TTFont

__all__ = ["FontFiles", "find_fonts", "readable_font"]

log = logging.getLogger(__name__)

# Regular files of well-known Unicode fonts, most preferred first.
_SYSTEM_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",  # Debian/Ubuntu fonts-dejavu-core
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",  # Fedora dejavu-sans-fonts
    "/usr/share/fonts/TTF/DejaVuSans.ttf",  # Arch ttf-dejavu
    "/Library/Fonts/Arial Unicode.ttf",
    "/System/Library/Fonts/Supplemental/Arial Unicode.ttf",
)
# Wide-coverage fonts used only for glyphs the main font lacks (CJK above all).
_FALLBACK_FONTS = (
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",  # Debian fonts-droid-fallback
    "/usr/share/fonts/google-droid-sans-fonts/DroidSansFallbackFull.ttf",  # Fedora
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",  # Debian fonts-wqy-microhei
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",  # Debian fonts-wqy-zenhei
)
_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")  # what fpdf2's add_font takes and fontTools reads
_STYLE_NAMES = {
    "B": ("-Bold", " Bold"),
    "I": ("-Oblique", "-Italic", " Italic"),
    "BI": ("-BoldOblique", "-BoldItalic", " Bold Italic"),
}


@dataclass(frozen=True)
class FontFiles:
    """The files of one font family by style ("", "B", "I", "BI"); every style is set,
    to its own face when one was found and to the nearest other face otherwise."""

    faces: dict[str, Path]
    mono: Path | None  # a monospace face for code, when one sits beside the family
    fallbacks: tuple[Path, ...]  # other fonts for glyphs the family lacks

    @property
    def regular(self) -> Path:
        return self.faces[""]


@functools.lru_cache(maxsize=64)
def readable_font(path: Path) -> frozenset[int] | None:
    """The code points ``path`` draws, or None when it is not a font fpdf2 can embed
    (the reason is logged at debug level; callers decide whether it is worth a warning)."""
    if path.suffix.lower() not in _SUFFIXES:
        log.debug("%s: not a TrueType/OpenType file name (%s)", path, "/".join(_SUFFIXES))
        return None
    try:
        with TTFont(path, fontNumber=0, lazy=True) as font:
            cmap = font.getBestCmap()
            font["head"]  # noqa: B018 - a font without it cannot be embedded
    except Exception as exc:  # fontTools raises many kinds (TTLibError, struct.error, KeyError...)
        log.debug("%s is not a readable font: %s: %s", path, type(exc).__name__, exc)
        return None
    if not cmap:
        log.debug("%s has no Unicode character map", path)
        return None
    return frozenset(cmap)


def _sibling(regular: Path, names: tuple[str, ...]) -> Path | None:
    base = regular.stem.removesuffix("-Regular").removesuffix(" Regular")
    for name in names:
        for candidate in (regular.with_name(base + name + regular.suffix), regular.with_name(base + name + regular.suffix.upper())):
            if candidate.is_file() and readable_font(candidate) is not None:
                return candidate
    return None


def _family(regular: Path, fallbacks: tuple[Path, ...]) -> FontFiles:
    bold = _sibling(regular, _STYLE_NAMES["B"])
    italic = _sibling(regular, _STYLE_NAMES["I"])
    bold_italic = _sibling(regular, _STYLE_NAMES["BI"])
    faces = {"": regular, "B": bold or regular, "I": italic or regular, "BI": bold_italic or bold or italic or regular}
    mono = _sibling(regular, ("Mono", "Mono-Regular", " Mono"))
    return FontFiles(faces, mono, tuple(f for f in fallbacks if f != regular))


def _fc_match() -> Path | None:
    """What fontconfig answers for DejaVu Sans; it may substitute another family."""
    exe = shutil.which("fc-match")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "-f", "%{file}", "DejaVu Sans"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("fc-match failed: %s", exc)
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def _found(candidates: tuple[str, ...]) -> list[Path]:
    return [p for p in map(Path, candidates) if p.is_file() and readable_font(p) is not None]


@functools.lru_cache(maxsize=8)
def find_fonts(configured: str = "") -> FontFiles | None:
    """The fonts for a PDF export; None means Latin-1 core fonts. ``configured`` is
    RESEARCH_PDF_FONT: a file that is not a readable font is warned about (once per
    value, thanks to the cache) and gives None."""
    system = _found(_SYSTEM_FONTS)
    fallbacks = (*system, *_found(_FALLBACK_FONTS))
    if configured.strip():
        path = Path(configured.strip()).expanduser()
        if not path.is_file() or readable_font(path) is None:
            log.warning("RESEARCH_PDF_FONT=%s is not a readable TrueType/OpenType font file; "
                        "PDF exports use Latin-1 fonts (characters outside Latin-1 become '?')", configured)
            return None
        return _family(path, fallbacks)
    if system:
        return _family(system[0], fallbacks)
    matched = _fc_match()
    if matched is not None and matched.is_file() and readable_font(matched) is not None:
        return _family(matched, fallbacks)
    log.info("no Unicode font found (set RESEARCH_PDF_FONT to a .ttf file); PDF exports use Latin-1 fonts")
    return None
