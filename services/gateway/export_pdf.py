"""The report as PDF, written with fpdf2 (pure Python, no system libraries).

With a Unicode TrueType font (RESEARCH_PDF_FONT, or one found on the system: see
pdf_fonts.py) the text is written as it is; a character neither that font nor a
fallback font can draw goes the Latin-1 way below and is counted in the note.

Without one, fpdf2's built-in fonts cover Latin-1 only, so text is brought into Latin-1
first: typographic punctuation becomes its ASCII look-alike (the report's quotation
marks “…” become "…", its dagger † for a sentence checked by code only, and the legend
that explains it, become *), accented letters outside Latin-1 lose their accent, and any
other character (CJK, emoji) becomes "?". A note at the top says how many were replaced;
the HTML and DOCX exports keep every character.
"""

from __future__ import annotations

import logging
import unicodedata
from pathlib import Path

from fpdf import FPDF

from services.gateway.pdf_fonts import FontFiles, find_fonts, readable_font
from services.gateway.report_markdown import Block, Run, source_anchor

__all__ = ["latin1", "to_pdf"]

log = logging.getLogger(__name__)

_LOOKALIKES = str.maketrans({
    "\u2014": "-", "\u2013": "-", "\u2012": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
    "\u2026": "...", "\u2022": "*", "\u2020": "*", "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u200b": "",
    "\u0141": "L", "\u0142": "l", "\u0110": "D", "\u0111": "d", "\u0152": "OE", "\u0153": "oe", "\u0131": "i",
    "\u2192": "->", "\u2190": "<-", "\u2264": "<=", "\u2265": ">=", "\u2248": "~", "\u2260": "!=",
})
_HEADING_SIZE = {1: 18, 2: 14, 3: 12}
_BODY = 10.5
_LINE = 5.2
_SANS, _MONO = "report-sans", "report-mono"  # fpdf2 family names of the embedded fonts
_broken: set[Path] = set()  # fonts fpdf2 failed to embed: warned about once, then not tried again


def latin1(text: str) -> tuple[str, int]:
    """``text`` in Latin-1 characters and the number of characters that had to become "?"."""
    out: list[str] = []
    replaced = 0
    for ch in text.translate(_LOOKALIKES):
        if ord(ch) < 256:
            out.append(ch if ch.isprintable() or ch == "\n" else " ")
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        if base and all(ord(c) < 256 for c in base):
            out.append(base)
        else:
            out.append("?")
            replaced += 1
    return "".join(out), replaced


class _Writer:
    def __init__(self, anchors: set[int], fonts: FontFiles | None) -> None:
        self.pdf = FPDF(format="A4")
        self.pdf.set_auto_page_break(True, margin=15)
        self.pdf.set_margins(18, 16, 18)
        self.anchors = anchors  # named destinations, so citations may link ahead of their target
        self.replaced = 0
        self.fonts = fonts
        self.fallback_cover: frozenset[int] = frozenset()  # what the registered fallback fonts draw

    def add_fallbacks(self, report: list[Block]) -> None:
        """Registers the fallback fonts that draw some character of ``report`` the main
        font lacks (a CJK font is large: it is embedded only when needed)."""
        assert self.fonts is not None
        missing = {ord(ch) for b in report for r in b.runs for ch in r.text} - (readable_font(self.fonts.regular) or frozenset())
        names: list[str] = []
        for i, path in enumerate(self.fonts.fallbacks):
            cover = readable_font(path) or frozenset()
            if not missing & cover:
                continue
            names.append(f"report-fallback-{i}")
            self.pdf.add_font(names[-1], "", path)
            self.fallback_cover |= cover
            missing -= cover
        if names:
            # the fallbacks have one face, which stands in for bold and italic too
            self.pdf.set_fallback_fonts(names, exact_match=False)

    def font(self, style: str, size: float, *, code: bool = False) -> None:
        if self.fonts is None:
            self.pdf.set_font("courier" if code else "helvetica", style, size)
            return
        # Code keeps to the monospace face's regular style: its bold and italic files are
        # rarely installed, and one face embedded beats four.
        family, style = (_MONO, "") if code and self.fonts.mono else (_SANS, "".join(sorted(style)))
        if f"{family.lower()}{style}" not in self.pdf.fonts:  # fpdf2's font key
            path = self.fonts.mono if family == _MONO else self.fonts.faces[style]
            self.pdf.add_font(family, style, path)
        self.pdf.set_font(family, style, size)

    def text(self, value: str) -> str:
        if self.fonts is None:
            out, replaced = latin1(value)
            self.replaced += replaced
            return out
        drawn = self.pdf.current_font.cmap  # type: ignore[union-attr]
        chars: list[str] = []
        for ch in value:
            if ch != "\n" and not ch.isprintable():
                chars.append(" ")
            elif ch == "\n" or ord(ch) in drawn or ord(ch) in self.fallback_cover:
                chars.append(ch)
            else:  # no font here draws it: a look-alike or "?", as without a Unicode font
                out, replaced = latin1(ch)
                chars.append(out)
                self.replaced += replaced
        return "".join(chars)

    def runs(self, runs: list[Run], size: float, style: str = "") -> None:
        pdf = self.pdf
        for run in runs:
            font_style = style + ("B" if run.bold and "B" not in style else "") + ("I" if run.italic and "I" not in style else "")
            self.font(font_style, size, code=run.code)
            link: int | str = ""
            if run.cite is not None and run.cite in self.anchors:
                link = f"#{source_anchor(run.cite)}"
            elif run.href:
                link = run.href
            pdf.set_text_color(11, 87, 208) if link else pdf.set_text_color(29, 29, 31)
            pdf.write(_LINE if size <= _BODY else size * 0.5, self.text(run.text), link=link)
        pdf.set_text_color(29, 29, 31)
        pdf.ln()

    def block(self, block: Block) -> None:
        pdf = self.pdf
        if block.anchor is not None:
            pdf.set_link(name=source_anchor(block.anchor), y=pdf.get_y(), page=pdf.page)
        if block.kind == "heading":
            pdf.ln(3 if block.level > 1 else 0)
            self.runs(block.runs, _HEADING_SIZE.get(block.level, _BODY + 1), "B")
            pdf.ln(1.5)
            return
        if block.kind == "rule":
            pdf.line(pdf.l_margin, pdf.get_y() + 2, pdf.w - pdf.r_margin, pdf.get_y() + 2)
            pdf.ln(5)
            return
        indent = {"bullet": 5.0 * block.level, "ordered": 5.0 * block.level, "quote": 6.0, "code": 4.0}.get(block.kind, 0.0)
        left = pdf.l_margin
        pdf.set_left_margin(left + indent)
        pdf.set_x(left + indent)
        if block.kind in ("bullet", "ordered"):
            marker = "- " if block.kind == "bullet" else f"{block.number}. "
            self.font("", _BODY)
            pdf.write(_LINE, marker)
        self.runs(block.runs, _BODY - (1 if block.kind == "code" else 0), "I" if block.kind == "quote" else "")
        pdf.set_left_margin(left)
        pdf.ln(1.5)

    def note(self) -> None:
        """Said on the first page when characters were replaced."""
        if not self.replaced:
            return
        self.pdf.page = 1
        self.pdf.set_xy(self.pdf.l_margin, 6)
        self.font("I", 7.5)
        self.pdf.set_text_color(110, 110, 110)
        what = "outside this PDF's Latin-1 font" if self.fonts is None else "that no font of this PDF can draw"
        self.pdf.cell(text=f"{self.replaced} characters {what} are shown as '?'; the HTML and DOCX exports keep them.")


def _render(report: list[Block], fonts: FontFiles | None) -> bytes:
    writer = _Writer({b.anchor for b in report if b.anchor is not None}, fonts)
    if fonts is not None:
        writer.add_fallbacks(report)
    writer.pdf.add_page()
    for block in report:
        writer.block(block)
    writer.note()
    return bytes(writer.pdf.output())


def to_pdf(report: list[Block], font: str = "") -> bytes:
    """The report as PDF. ``font`` is RESEARCH_PDF_FONT: a TrueType file, or empty to
    look for a Unicode font on the system; none found means Latin-1 core fonts."""
    fonts = find_fonts(font)
    if fonts is None or fonts.regular in _broken:
        return _render(report, None)
    try:
        return _render(report, fonts)
    except Exception as exc:  # fpdf2 and fontTools raise many kinds for a font they cannot embed
        _broken.add(fonts.regular)
        log.warning("PDF export could not embed the font %s (%s: %s); this and later exports use Latin-1 fonts",
                    fonts.regular, type(exc).__name__, exc)
        return _render(report, None)
