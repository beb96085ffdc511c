"""The report as DOCX, written with python-docx: Word headings, paragraphs, lists and
quotes; each citation ``[n]`` is an internal hyperlink to a bookmark on Sources entry
``n``, and source URLs are external hyperlinks. python-docx has no call for either,
so both are built from their WordprocessingML elements."""

from __future__ import annotations

import io
import re

from docx import Document
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor
from docx.text.paragraph import Paragraph

from services.gateway.report_markdown import Block, Run, source_anchor

__all__ = ["to_docx"]

# Characters XML 1.0 cannot hold (lxml refuses them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_STYLES = {"bullet": "List Bullet", "ordered": "List Number", "quote": "Quote"}
_LINK_COLOR = RGBColor(0x0B, 0x57, 0xD0)


def _bookmark_name(n: int) -> str:
    return source_anchor(n).replace("-", "_")  # Word bookmark names take no hyphen


def _add_run(paragraph: Paragraph, run: Run) -> None:
    text = _NOT_XML.sub(" ", run.text)
    if run.cite is None and not run.href:
        r = paragraph.add_run(text)
        r.bold, r.italic = run.bold or None, run.italic or None
        if run.code:
            r.font.name = "Courier New"
        return
    link = OxmlElement("w:hyperlink")
    if run.cite is not None:
        link.set(qn("w:anchor"), _bookmark_name(run.cite))
    else:
        rel = paragraph.part.relate_to(run.href, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
        link.set(qn("r:id"), rel)
    r = paragraph.add_run(text)  # formatted by python-docx, then moved into the link
    r.font.color.rgb = _LINK_COLOR
    r.bold, r.italic = run.bold or None, run.italic or None
    if run.cite is None:
        r.font.underline = True
    link.append(r._r)
    paragraph._p.append(link)


def _bookmark(paragraph: Paragraph, n: int) -> None:
    start = OxmlElement("w:bookmarkStart")
    start.set(qn("w:id"), str(n))
    start.set(qn("w:name"), _bookmark_name(n))
    end = OxmlElement("w:bookmarkEnd")
    end.set(qn("w:id"), str(n))
    paragraph._p.insert(1 if paragraph._p.pPr is not None else 0, start)
    paragraph._p.append(end)


def _paragraph(doc: Document, block: Block) -> Paragraph:  # type: ignore[valid-type]
    if block.kind == "heading":
        return doc.add_heading("", level=min(block.level, 9))
    if block.kind == "code":
        p = doc.add_paragraph()
        p.paragraph_format.left_indent = Pt(18)
        return p
    style = _STYLES.get(block.kind)
    if block.kind in ("bullet", "ordered") and block.level > 1:
        style += f" {min(block.level, 3)}"
    return doc.add_paragraph(style=style)


def to_docx(report: list[Block]) -> bytes:
    doc = Document()
    for block in report:
        if block.kind == "rule":
            doc.add_paragraph("\u2014" * 12)
            continue
        paragraph = _paragraph(doc, block)
        for run in block.runs:
            _add_run(paragraph, run)
        if block.anchor is not None:
            _bookmark(paragraph, block.anchor)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
