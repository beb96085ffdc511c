"""The report as PDF, written with fpdf2 (pure Python, no system libraries).

fpdf2's built-in fonts cover Latin-1 only and no Unicode font ships with it, so text
is brought into Latin-1 first: typographic punctuation becomes its ASCII look-alike,
accented letters outside Latin-1 lose their accent, and any other character (CJK,
emoji) becomes "?". A note at the top says how many were replaced; the HTML and DOCX
exports keep every character.
"""

from __future__ import annotations

import unicodedata

from fpdf import FPDF

from services.gateway.report_markdown import Block, Run, source_anchor

__all__ = ["latin1", "to_pdf"]

_LOOKALIKES = str.maketrans({
    "\u2014": "-", "\u2013": "-", "\u2012": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
    "\u2026": "...", "\u2022": "*", "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u200b": "",
    "\u0141": "L", "\u0142": "l", "\u0110": "D", "\u0111": "d", "\u0152": "OE", "\u0153": "oe", "\u0131": "i",
    "\u2192": "->", "\u2190": "<-", "\u2264": "<=", "\u2265": ">=", "\u2248": "~", "\u2260": "!=",
})
_HEADING_SIZE = {1: 18, 2: 14, 3: 12}
_BODY = 10.5
_LINE = 5.2


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
    def __init__(self, anchors: set[int]) -> None:
        self.pdf = FPDF(format="A4")
        self.pdf.set_auto_page_break(True, margin=15)
        self.pdf.set_margins(18, 16, 18)
        self.anchors = anchors  # named destinations, so citations may link ahead of their target
        self.replaced = 0

    def text(self, value: str) -> str:
        out, replaced = latin1(value)
        self.replaced += replaced
        return out

    def runs(self, runs: list[Run], size: float, style: str = "") -> None:
        pdf = self.pdf
        for run in runs:
            font_style = style + ("B" if run.bold and "B" not in style else "") + ("I" if run.italic and "I" not in style else "")
            pdf.set_font("courier" if run.code else "helvetica", font_style, size)
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
            pdf.set_font("helvetica", "", _BODY)
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
        self.pdf.set_font("helvetica", "I", 7.5)
        self.pdf.set_text_color(110, 110, 110)
        self.pdf.cell(text=f"{self.replaced} characters outside this PDF's Latin-1 font are shown as '?'; "
                           "the HTML and DOCX exports keep them.")


def to_pdf(report: list[Block]) -> bytes:
    writer = _Writer({b.anchor for b in report if b.anchor is not None})
    writer.pdf.add_page()
    for block in report:
        writer.block(block)
    writer.note()
    return bytes(writer.pdf.output())
