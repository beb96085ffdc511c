"""Documents to canonical text: HTML, markdown, plain text and PDF.

The local index and the web fetcher both read documents through here, so a page
fetched from the web and the same page indexed from disk give the same canonical text
(:func:`shared.research.text.canonicalize`), title and publication date. A PDF keeps the offset
of each page in its text so locators can name the page a quote is on.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

from shared.platform.dates import parse_date
from shared.platform.errors import PermanentError
from shared.research.text import canonicalize

__all__ = [
    "SUPPORTED_SUFFIXES",
    "ParsedDocument",
    "PdfText",
    "html_to_text",
    "load_document",
    "parse_document",
    "pdf_to_text",
]

SUPPORTED_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".html", ".htm", ".pdf"})

_MARKDOWN = frozenset({".md", ".markdown"})
_HTML = frozenset({".html", ".htm"})
_PDF = frozenset({".pdf"})


# -- HTML to text ----------------------------------------------------------------

_DROPPED_TAGS = [
    "script", "style", "nav", "header", "footer", "aside", "noscript",
    "template", "iframe", "svg", "form", "button", "select", "object", "embed",
]  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCK_TAGS = frozenset(
    """address article blockquote body caption dd details dialog div dl dt fieldset
    figcaption figure h1 h2 h3 h4 h5 h6 hr html legend li main ol p pre section summary
    table tbody td tfoot th thead tr ul""".split()
)
_WS_RUN = re.compile(r"\s+")


def html_to_text(html: str) -> tuple[str | None, str]:
    """(title, text) of an HTML page: boilerplate dropped, one paragraph per block.

    Headings become markdown-style ``#`` lines so that the sentence splitter and the
    digest treat them as headings, exactly as in markdown documents.
    """
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = _clean_inline(title_node.text()) if title_node is not None else ""
    tree.strip_tags(_DROPPED_TAGS, recursive=True)
    root = tree.body or tree.root
    text = "\n\n".join(_blocks(root)) if root is not None else ""
    return (title or None), text


def _clean_inline(text: str) -> str:
    return _WS_RUN.sub(" ", text).strip()


def _blocks(root: LexborNode) -> Iterator[str]:
    """Paragraphs of ``root`` in document order (iterative: pages nest deeply)."""
    inline: list[str] = []

    def flush(prefix: str = "") -> Iterator[str]:
        para = _clean_inline("".join(inline))
        inline.clear()
        if para:
            yield prefix + para

    # ("enter", node) walks into a node; ("exit", tag) closes a block element.
    stack: list[tuple[str, LexborNode | str]] = [("enter", root)]
    while stack:
        action, item = stack.pop()
        if action == "exit":
            assert isinstance(item, str)
            level = _HEADINGS.get(item)
            yield from flush("#" * level + " " if level else "")
            continue
        assert isinstance(item, LexborNode)
        node = item
        if node.is_text_node:
            inline.append(node.text_content or "")
            continue
        if not node.is_element_node and not node.is_document_node:
            continue  # comments
        tag = (node.tag or "").lower()
        if tag == "br":
            inline.append(" ")
            continue
        if tag == "pre":
            yield from flush()
            # Keep the line structure of code; canonicalize() normalizes the rest.
            pre = node.text(deep=True).strip("\n")
            if pre.strip():
                yield pre
            continue
        if tag in _BLOCK_TAGS:
            yield from flush()
            stack.append(("exit", tag))
        children = list(node.iter(include_text=True))
        stack.extend(("enter", child) for child in reversed(children))
    yield from flush()


def _html_published_at(html: str) -> datetime | None:
    tree = LexborHTMLParser(html)
    for selector in (
        'meta[property="article:published_time"]',
        'meta[name="date"]',
        'meta[name="dc.date"]',
        "time[datetime]",
    ):
        node = tree.css_first(selector)
        if node is not None:
            value = node.attributes.get("content") or node.attributes.get("datetime")
            if parsed := _parse_date(value):
                return parsed
    return None


# -- PDF to text --------------------------------------------------------------------


@dataclass(frozen=True)
class PdfText:
    """A PDF's canonical text with the offset where each page starts in it.

    Page ``n`` (1-based) is ``text[page_starts[n-1]:page_starts[n]]`` (the last page runs
    to the end), the blank line that joins it to the next page included; a page without
    text adds no text. The join keeps the whole text canonical, not only each page.
    """

    title: str | None
    text: str
    page_starts: list[int]
    published_at: datetime | None = None


def pdf_to_text(data: bytes) -> PdfText:
    """Text of every page of a PDF with ``pypdf``, canonicalized once.

    Raises :class:`PermanentError` for a file pypdf cannot read, an encrypted file that
    does not open with the empty password, or one without any extractable text (a
    scanned PDF needs OCR, which this project does not do).
    """
    import pypdf  # imported here: text-only corpora and pages need no PDF reader

    # pypdf logs every repair it makes to a malformed file ("EOF marker not found") as
    # a warning; the outcome (text, or our error) is what the user needs to see.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PermanentError("the PDF is encrypted with a password")
        pages = [canonicalize(page.extract_text() or "") for page in reader.pages]
        meta = reader.metadata
        meta_title = meta.title if meta is not None else None
        created = _pdf_date(meta) if meta is not None else None
    except PermanentError:
        raise
    except Exception as exc:  # pypdf documents that broken files may raise any exception
        raise PermanentError(f"not a readable PDF ({type(exc).__name__}: {exc})") from exc
    parts: list[str] = []
    page_starts: list[int] = []
    offset = 0
    for page in pages:
        if page and parts:
            offset += 2  # the blank line between pages
        page_starts.append(offset)
        if page:
            parts.append(page)
            offset += len(page)
    text = "\n\n".join(parts)
    if not text:
        raise PermanentError("the PDF has no extractable text (scanned pages need OCR)")
    title = canonicalize(str(meta_title)) if meta_title else None
    return PdfText(title=title or None, text=text, page_starts=page_starts, published_at=created)


def _pdf_date(meta: object) -> datetime | None:
    """The PDF's creation date as aware UTC, None when absent or malformed."""
    from pypdf.errors import PyPdfError

    try:
        created = meta.creation_date  # type: ignore[attr-defined]
    except (ValueError, PyPdfError):  # a malformed date string, or a broken reference to it
        return None  # the date is optional
    if not isinstance(created, datetime):
        return None
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return created.astimezone(UTC)


# -- documents -------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FM_LINE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")
_MD_H1 = re.compile(r"^# +(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    text: str  # canonical
    published_at: datetime | None
    page_starts: list[int] | None = None  # PDF only


def parse_document(data: bytes, *, suffix: str, stem: str) -> ParsedDocument:
    """The canonical text and metadata of a file's bytes, by its suffix.

    Title: front-matter ``title:``, else the first ``# `` heading, else the HTML
    ``<title>`` or PDF title, else the file stem. Raises :class:`PermanentError` for an
    unsupported type or an unreadable PDF.
    """
    suffix = suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise PermanentError(f"unsupported file type {suffix or '(none)'!r}: {stem}{suffix}")
    if suffix in _PDF:
        pdf = pdf_to_text(data)
        return ParsedDocument(
            title=canonicalize(pdf.title or stem),
            text=pdf.text,
            published_at=pdf.published_at,
            page_starts=pdf.page_starts,
        )
    raw = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    raw = raw.replace("\r\n", "\n").replace("\r", "\n")

    meta: dict[str, str] = {}
    html_title: str | None = None
    published_at: datetime | None = None
    if suffix in _HTML:
        html_title, body = html_to_text(raw)
        published_at = _html_published_at(raw)
    else:
        body = raw
        if suffix in _MARKDOWN:
            meta, body = _split_front_matter(raw)
            published_at = _parse_date(meta.get("date"))

    text = canonicalize(body)
    title = meta.get("title") or _first_heading(text) or html_title or stem
    return ParsedDocument(title=canonicalize(title), text=text, published_at=published_at)


def load_document(path: Path) -> tuple[str, str, datetime | None]:
    """(title, canonical_text, published_at) of a supported file (see :func:`parse_document`)."""
    path = Path(path)
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise PermanentError(f"unsupported file type {path.suffix.lower() or '(none)'!r}: {path.name}")
    doc = parse_document(path.read_bytes(), suffix=path.suffix, stem=path.stem)
    return doc.title, doc.text, doc.published_at


def _split_front_matter(raw: str) -> tuple[dict[str, str], str]:
    m = _FRONT_MATTER.match(raw)
    if not m:
        return {}, raw
    meta: dict[str, str] = {}
    for line in (m.group(1) or "").splitlines():
        fm = _FM_LINE.match(line)
        if fm and fm.group(1).lower() not in meta:
            meta[fm.group(1).lower()] = _unquote(fm.group(2))
    return meta, raw[m.end() :]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _first_heading(text: str) -> str | None:
    m = _MD_H1.search(text)
    return m.group(1).strip() if m else None


def _parse_date(value: str | None) -> datetime | None:
    """A metadata date (front matter may quote it) as an aware UTC datetime; None when it is not one."""
    return parse_date(_unquote(value.strip())) if value else None
