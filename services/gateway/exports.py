"""The report as a file to keep: markdown, self-contained HTML, PDF or DOCX.

Every format comes from one parse of the report's markdown (report_markdown.py); a
citation ``[n]`` links to the entry ``[n]`` of the Sources list: an anchor in HTML,
an internal link in PDF and DOCX.
"""

from __future__ import annotations

import enum
import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from services.gateway.export_docx import to_docx
from services.gateway.export_pdf import to_pdf
from services.gateway.report_markdown import blocks, to_markdown_it

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = ["MEDIA_TYPES", "REPORT_RESPONSES", "Export", "ReportFormat", "export", "to_html"]


class ReportFormat(str, enum.Enum):
    MD = "md"
    HTML = "html"
    PDF = "pdf"
    DOCX = "docx"


MEDIA_TYPES = {
    ReportFormat.MD: "text/markdown; charset=utf-8",
    ReportFormat.HTML: "text/html; charset=utf-8",
    ReportFormat.PDF: "application/pdf",
    ReportFormat.DOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


# The OpenAPI description of the report route's 200 answer.
REPORT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The report as a file", "content": {t: {"schema": {"type": "string"}} for t in MEDIA_TYPES.values()}},
}


@dataclass(frozen=True)
class Export:
    content: bytes
    media_type: str
    filename: str

    @property
    def headers(self) -> dict[str, str]:
        """Markdown and HTML open in the browser, PDF and DOCX download. The HTML has
        no script and escapes every text; the policy forbids any besides."""
        shown = self.filename.endswith((".md", ".html"))
        headers = {"Content-Disposition": f'{"inline" if shown else "attachment"}; filename="{self.filename}"'}
        if self.filename.endswith(".html"):
            headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
        return headers


# -- HTML ------------------------------------------------------------------------

_CSS = """
body{font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#fff;margin:0}
main{max-width:46rem;margin:2rem auto;padding:0 1.2rem}
h1{font-size:1.7rem;line-height:1.25}h2{font-size:1.3rem;margin-top:2rem;border-bottom:1px solid #ddd}
a{color:#0b57d0}a.citation{text-decoration:none;font-size:.85em;vertical-align:super}
blockquote{margin:.3rem 0 .8rem 1rem;padding-left:.8rem;border-left:3px solid #ccc;color:#444}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;background:#f4f4f4}pre{padding:.6rem;overflow:auto}
p[id^="source-"]{scroll-margin-top:1rem}p[id^="source-"]:target{background:#fff3c4}
.source-number{font-weight:600}
@media print{a.citation{color:inherit}main{margin:0;max-width:none}}
"""


def _title(tokens: list[Token]) -> str:
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1":
            return tokens[i + 1].content.strip()
    return "Research report"


def to_html(report: str) -> str:
    """A standalone page: inline CSS, no script, no external asset."""
    md = to_markdown_it()
    tokens = md.parse(report)
    body = md.renderer.render(tokens, md.options, {})
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(_title(tokens))}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )


# -- dispatch --------------------------------------------------------------------


def export(report: str, fmt: ReportFormat, stem: str, *, pdf_font: str = "") -> Export:
    """The report in ``fmt``, named ``stem.<ext>``; ``pdf_font`` is RESEARCH_PDF_FONT."""
    if fmt is ReportFormat.MD:
        content = report.encode()
    elif fmt is ReportFormat.HTML:
        content = to_html(report).encode()
    elif fmt is ReportFormat.PDF:
        content = to_pdf(blocks(report), pdf_font)
    else:
        content = to_docx(blocks(report))
    return Export(content, MEDIA_TYPES[fmt], f"{stem}.{fmt.value}")
