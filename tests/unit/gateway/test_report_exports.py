"""The report exports: self-contained HTML whose citations resolve to the Sources list,
a PDF with pages and internal links, a DOCX with Word headings and bookmarks; text
outside Latin-1 (and hostile text) never breaks a format."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path

import docx
import pypdf
import pytest

from services.gateway import export_pdf
from services.gateway.export_pdf import latin1
from services.gateway.pdf_fonts import find_fonts
from services.gateway.exports import MEDIA_TYPES, ReportFormat, export, to_html
from services.gateway.report_markdown import blocks

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

REPORT = """# How did Müller's lighthouse in 東京 change — and why?

Written offline.

## Executive summary

Automation replaced keepers **by 1990** [1][2]. An escaped \\[3\\] is not a citation; *emphasis* and `code`.

## Findings

- The first item cites [2].
- The second — with “quotes”, 東京 and an emoji 🚢.

1. Ordered one
2. Ordered two [1]

## Sources

[1] Lighthouse history <script>alert(1)</script> — https://example.org/a?x=1 (char:10-80)
> "Keepers were replaced by automation in 1990."

[2] Müller, 東京, — corpus://corpus/b.md
> "A quote with [javascript](javascript:alert(1))"
"""


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.tags: set[str] = set()
        self.srcs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"] or "")
        if a.get("src"):
            self.srcs.append(a["src"] or "")


def test_html_citations_link_to_anchors_in_the_sources_list_and_need_nothing_external() -> None:
    page = to_html(REPORT)
    links = _Links()
    links.feed(page)
    internal = [h for h in links.hrefs if h.startswith("#")]
    assert sorted(set(internal)) == ["#source-1", "#source-2"]
    assert all(h[1:] in links.ids for h in internal)  # every citation resolves
    assert re.search(r'<p id="source-1">.*Lighthouse history', page)
    assert "https://example.org/a?x=1" in links.hrefs  # the source's URL is a link
    # self-contained: inline CSS, no script, no stylesheet link, no image or font fetched
    assert "<style>" in page and not links.srcs and "script" not in links.tags and "link" not in links.tags
    assert "<script>" not in page and "&lt;script&gt;" in page  # source text is text
    assert not any(h.startswith("javascript:") for h in links.hrefs)
    # an escaped marker stays text, not a link to a source
    assert "[3]" in page and "#source-3" not in page
    assert "東京" in page and "Müller" in page


def test_pdf_has_pages_and_replaces_what_its_font_cannot_show() -> None:
    out = export(REPORT, ReportFormat.PDF, "r")
    assert out.content.startswith(b"%PDF") and out.media_type == "application/pdf"
    reader = pypdf.PdfReader(io.BytesIO(out.content))
    assert len(reader.pages) >= 1
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert "Executive summary" in text and "Müller" in text and "Sources" in text
    assert "shown as '?'" in text  # says that CJK and the emoji were replaced
    annots = [a.get_object() for page in reader.pages for a in page.get("/Annots") or []]
    assert any("/Dest" in a for a in annots), "citations are internal links"
    assert any(a.get("/A", {}).get("/URI") == "https://example.org/a?x=1" for a in annots)


def test_long_report_spans_several_pdf_pages() -> None:
    long = REPORT.replace("## Sources", "\n\n".join(f"Paragraph {i} says something [1]." for i in range(200)) + "\n\n## Sources")
    reader = pypdf.PdfReader(io.BytesIO(export(long, ReportFormat.PDF, "r").content))
    assert len(reader.pages) > 2


def test_latin1_keeps_latin1_maps_punctuation_and_counts_replacements() -> None:
    assert latin1("Müller — “x” …") == ('Müller - "x" ...', 0)
    assert latin1("Łódź") == ("Lódz", 0)  # letters outside Latin-1 lose their accent
    assert latin1("東京") == ("??", 2)


def test_docx_has_the_headings_lists_and_internal_citation_links() -> None:
    out = export(REPORT, ReportFormat.DOCX, "r")
    assert out.content[:2] == b"PK" and out.media_type == MEDIA_TYPES[ReportFormat.DOCX]
    document = docx.Document(io.BytesIO(out.content))
    headings = [(p.style.name, p.text) for p in document.paragraphs if p.style.name.startswith("Heading")]
    assert headings == [
        ("Heading 1", "How did Müller's lighthouse in 東京 change — and why?"),
        ("Heading 2", "Executive summary"), ("Heading 2", "Findings"), ("Heading 2", "Sources"),
    ]
    styles = [p.style.name for p in document.paragraphs]
    assert "List Bullet" in styles and "List Number" in styles and "Quote" in styles
    xml = document.element.xml
    assert 'w:anchor="source_1"' in xml and 'w:name="source_1"' in xml and 'w:name="source_2"' in xml
    assert any("Müller, 東京, —" in p.text for p in document.paragraphs)


@pytest.mark.parametrize("fmt", list(ReportFormat))
def test_every_format_takes_hostile_text(fmt: ReportFormat) -> None:
    nasty = "# T\x00itle \x07 \ud7ff\n\n[99] cites nothing listed; \u202e RTL \ufeff and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 [1]\n\n## Sources\n\n[1] x\n"
    out = export(nasty, fmt, "r")
    assert out.content and out.filename == f"r.{fmt.value}"


def test_blocks_mark_the_sources_entries_and_citations() -> None:
    parsed = blocks(REPORT)
    anchors = [b.anchor for b in parsed if b.anchor is not None]
    assert anchors == [1, 2]
    cited = [r.cite for b in parsed for r in b.runs if r.cite is not None]
    assert cited == [1, 2, 2, 1]


# The report's check levels are plain text: quotation marks around a source's words, a
# dagger after the citation of a sentence checked by code only, and its legend.
LEVELS_REPORT = """# Levels

> Written by a model from the job's checked claims (1 sentence removed): 1 quoted, 1 checked by code only (\u2020).

## Executive summary

\u201cKeepers were replaced by automation in 1990.\u201d [1] Automation came late [2]\u2020

*\u2020 Checked by code only: the sentence passed the deterministic checks against the quotes of the claims it cites, but no verifier model judged that those quotes entail it.*

## Sources

[1] A \u2014 https://example.org/a (char:0-40)
> \u201cKeepers were replaced by automation in 1990.\u201d

[2] B \u2014 https://example.org/b (char:0-20)
> \u201cAutomation came late.\u201d
"""


def test_level_marks_survive_every_format() -> None:
    assert export(LEVELS_REPORT, ReportFormat.MD, "r").content.decode() == LEVELS_REPORT
    page = to_html(LEVELS_REPORT)
    assert "\u201cKeepers were replaced by automation in 1990.\u201d" in page
    assert re.search(r'href="#source-2"[^>]*>\[2\]</a>\u2020', page)  # the dagger stays after its citation
    assert "\u2020 Checked by code only" in page
    document = docx.Document(io.BytesIO(export(LEVELS_REPORT, ReportFormat.DOCX, "r").content))
    text = "\n".join(p.text for p in document.paragraphs)
    assert "\u201cKeepers were replaced by automation in 1990.\u201d [1]" in text and "[2]\u2020" in text
    assert "\u2020 Checked by code only" in text
    cited = [r.cite for b in blocks(LEVELS_REPORT) for r in b.runs if r.cite is not None]
    assert cited == [1, 2]  # the dagger takes nothing from the citation


def test_level_marks_in_a_latin1_pdf_become_look_alikes_not_question_marks() -> None:
    assert latin1("\u201cQuoted.\u201d [1] Checked [2]\u2020") == ('"Quoted." [1] Checked [2]*', 0)
    reader = pypdf.PdfReader(io.BytesIO(export_pdf._render(blocks(LEVELS_REPORT), None)))
    text = " ".join(" ".join(page.extract_text() for page in reader.pages).split())
    assert '"Keepers were replaced by automation in 1990."' in text
    assert "[2]*" in text and "* Checked by code only" in text
    assert "?" not in text and "shown as" not in text  # nothing was replaced


@pytest.mark.skipif(not DEJAVU.is_file(), reason="DejaVu Sans is missing: apt-get install fonts-dejavu-core")
def test_level_marks_in_a_unicode_pdf_stay_as_they_are() -> None:
    fonts = find_fonts(str(DEJAVU))
    assert fonts is not None
    reader = pypdf.PdfReader(io.BytesIO(export_pdf._render(blocks(LEVELS_REPORT), fonts)))
    text = " ".join(" ".join(page.extract_text() for page in reader.pages).split())
    assert "\u201cKeepers were replaced by automation in 1990.\u201d" in text
    assert "\u2020" in text and "Checked by code only" in text
