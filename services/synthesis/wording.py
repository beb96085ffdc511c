"""Text as the report shows it: citation markers, escaping, plain prose, counts.

Any ``[n]`` the report did not compute is escaped (``\\[n\\]``) or, in a model's
prose, removed, so nothing but a computed citation reads as one; :func:`plain` strips
links, tags, emphasis and heading marks from model text (sentences and the plan's
wording) so that none of it renders as markup or a live link.
"""

from __future__ import annotations

import re

__all__ = ["CLOSE_QUOTE", "FIXED_LINE_START", "LEVEL_MARK", "OPEN_QUOTE", "citation_numbers", "escape", "pct", "plain", "plan_text", "plural", "query_text", "strip_markers", "unquoted"]

_CITATION = re.compile(r"(?<!\\)\[(\d+)\]")
_BRACKETED_NUMBER = re.compile(r"\[(\d+)\]")
# A marker a model may write itself: [3], [3, 4], [3-5], [3][4], [^3], [S3], [src_3].
_MODEL_MARKER = re.compile(r"\s*\[\^?\s*(?:src_|S)?\d+(?:\s*[,;–-]\s*(?:src_|S)?\d+)*\s*\]", re.IGNORECASE)


def citation_numbers(markdown: str) -> set[int]:
    """Every citation number used in ``markdown`` (escaped ``\\[n\\]`` excluded)."""
    return {int(m.group(1)) for m in _CITATION.finditer(markdown)}


def escape(text: str) -> str:
    """``text`` on one line with every ``[n]`` escaped."""
    return _BRACKETED_NUMBER.sub(r"\\[\1\\]", " ".join(text.split()))


_BLOCK_START = re.compile(r"^(?:[#>|]|\s)+")
LEVEL_MARK = "\u2020"  # †: after the citation of a sentence checked by code only
OPEN_QUOTE, CLOSE_QUOTE = "\u201c", "\u201d"  # “ ”: around a source's own words
_WRAPPING_QUOTES = (('"', '"'), (OPEN_QUOTE, CLOSE_QUOTE), ("\u2018", "\u2019"), ("'", "'"))


def strip_markers(text: str) -> str:
    """Prose with the citation markers its writer put in removed (ours are added from
    claim ids), anything else that looks like one escaped, no dagger (only the
    renderer marks a level), and no leading heading, quote or table mark (a sentence
    can never become a heading of its own)."""
    return _BLOCK_START.sub("", escape(_MODEL_MARKER.sub("", text).replace(LEVEL_MARK, "")))


def unquoted(text: str) -> str:
    """``text`` without quotation marks around the whole of it (the renderer decides
    what is shown as a quote)."""
    t = text.strip()
    for open_, close in _WRAPPING_QUOTES:
        inner = t[len(open_):-len(close)]
        if len(t) > 2 and t.startswith(open_) and t.endswith(close) and open_ not in inner and close not in inner:
            return inner.strip()
    return t


_MD_LINK = re.compile(r"!?\[([^\[\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^<>\s]*)>", re.IGNORECASE)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_EMPHASIS = re.compile(r"\*\*|__|`+")
_LEADING_MARKS = re.compile(r"^(?:(?:#{1,6}(?=\s|$)|>)\s*)+")


def plain(text: str) -> str:
    """Model wording as plain text on one line: ``[text](url)`` (and images) become
    their text, ``<url>`` its address, HTML tags and comments go, as do ``**``,
    ``__`` and backticks, and a leading heading (``#``) or quote (``>``) mark. Used for
    the plan's wording (refined question, checklist items, queries, council reasons)
    and by the writer on model sentences. ``[n]`` is left for :func:`escape`."""
    t = _HTML_COMMENT.sub(" ", text)
    t = _MD_LINK.sub(lambda m: m.group(1), t)
    t = _AUTOLINK.sub(r"\1", t)
    t = _HTML_TAG.sub("", t)
    t = _EMPHASIS.sub("", t)
    return _LEADING_MARKS.sub("", " ".join(t.split()))


def pct(value: float) -> str:
    return f"{round(value * 100)}%"


_PLURALS = {"query": "queries"}


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {_PLURALS.get(noun, noun + 's')}"


def plan_text(text: str) -> str:
    """The plan's wording (a checklist item) as shown: plain, on one line, escaped."""
    return escape(plain(text))


def query_text(query: str) -> str:
    """A query as shown inside backticks: plain, escaped, no backtick."""
    return escape(plain(query)).replace("`", "")


FIXED_LINE_START = "Verified Findings, contradictions, unknowns, confidence,"  # the methodology's last line
