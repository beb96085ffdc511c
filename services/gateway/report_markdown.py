"""The report's markdown parsed once for every export format.

markdown-it-py with raw HTML off, so text from sources stays text. A citation ``[n]``
becomes a ``citation`` token that links to the entry ``[n]`` of the Sources list
(whose paragraph carries the anchor ``source-n``); an escaped ``\\[n\\]`` stays plain
text. For PDF and DOCX the parse is flattened into blocks (heading, paragraph, list
item, quote, code) of formatted runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

__all__ = ["SOURCES_HEADING", "Block", "Run", "blocks", "source_anchor", "to_markdown_it"]

_CITATION = re.compile(r"\[(\d{1,4})\]")
# Links made only from http(s) URLs in the Sources list; anything else stays text.
_URL = re.compile(r"https?://[^\s<>()\"']+[^\s<>()\"'.,;:!?]")
SOURCES_HEADING = "Sources"


def source_anchor(n: int) -> str:
    return f"source-{n}"


# -- parsing ---------------------------------------------------------------------


def _citation_rule(state: StateInline, silent: bool) -> bool:
    m = _CITATION.match(state.src, state.pos)
    if m is None:
        return False
    if not silent:
        token = state.push("citation", "a", 0)
        token.meta = {"n": int(m.group(1))}
        token.content = m.group(0)
    state.pos = m.end()
    return True


def _link_tokens(text: str) -> list[Token]:
    """``text`` as text tokens with each http(s) URL in it a link."""
    out: list[Token] = []
    last = 0
    for m in _URL.finditer(text):
        if m.start() > last:
            out.append(_text(text[last:m.start()]))
        out += [Token("link_open", "a", 1, attrs={"href": m.group(0)}), _text(m.group(0)), Token("link_close", "a", -1)]
        last = m.end()
    if last < len(text):
        out.append(_text(text[last:]))
    return out


def _text(content: str) -> Token:
    return Token("text", "", 0, content=content)


def _mark_sources(state: Any) -> None:
    """In the Sources list, an entry's leading ``[n]`` is the target citations link
    to (its paragraph gets the anchor), and its URLs become links."""
    in_sources = False
    tokens = state.tokens
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            in_sources = tokens[i + 1].content.strip() == SOURCES_HEADING
        elif in_sources and token.type == "inline" and token.children:
            first = token.children[0]
            if first.type == "citation" and tokens[i - 1].type == "paragraph_open":
                first.meta["anchor"] = True
                tokens[i - 1].attrSet("id", source_anchor(first.meta["n"]))
            children: list[Token] = []
            for child in token.children:
                children += _link_tokens(child.content) if child.type == "text" else [child]
            token.children = children


def to_markdown_it() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.inline.ruler.before("link", "citation", _citation_rule)
    md.core.ruler.push("mark_sources", _mark_sources)
    md.add_render_rule("citation", _render_citation)
    return md


def _render_citation(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    n = token.meta["n"]
    if token.meta.get("anchor"):
        return f'<span class="source-number">[{n}]</span>'
    return f'<a class="citation" href="#{source_anchor(n)}">[{n}]</a>'


# -- blocks, for PDF and DOCX ----------------------------------------------------


@dataclass
class Run:
    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    cite: int | None = None  # links to the Sources entry n
    href: str | None = None


@dataclass
class Block:
    kind: str  # heading, paragraph, bullet, ordered, quote, code, rule
    runs: list[Run] = field(default_factory=list)
    level: int = 0  # heading level; list depth
    number: int = 0  # an ordered list item's number
    anchor: int | None = None  # this block is Sources entry n


def _runs(children: list[Token]) -> tuple[list[Run], int | None]:
    runs: list[Run] = []
    bold = italic = 0
    href: str | None = None
    anchor: int | None = None
    for child in children:
        t = child.type
        if t in ("strong_open", "strong_close"):
            bold += 1 if t == "strong_open" else -1
        elif t in ("em_open", "em_close"):
            italic += 1 if t == "em_open" else -1
        elif t == "link_open":
            href = str(child.attrGet("href") or "") or None
        elif t == "link_close":
            href = None
        elif t == "citation":
            if child.meta.get("anchor"):
                anchor = child.meta["n"]
                runs.append(Run(child.content, bold=True))
            else:
                runs.append(Run(child.content, cite=child.meta["n"]))
        elif t in ("softbreak", "hardbreak"):
            runs.append(Run(" " if t == "softbreak" else "\n"))
        elif t in ("text", "code_inline", "image"):
            runs.append(Run(child.content, bold=bold > 0, italic=italic > 0, code=t == "code_inline", href=href))
    return runs, anchor


def blocks(report: str) -> list[Block]:
    """The report as a flat list of blocks with formatted runs."""
    tokens = to_markdown_it().parse(report)
    out: list[Block] = []
    lists: list[list[Any]] = []  # [kind, next number] per open list
    quote = 0
    heading = 0
    for token in tokens:
        t = token.type
        if t in ("bullet_list_open", "ordered_list_open"):
            start = int(token.attrGet("start") or 1)
            lists.append(["bullet" if t == "bullet_list_open" else "ordered", start])
        elif t in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif t in ("blockquote_open", "blockquote_close"):
            quote += 1 if t == "blockquote_open" else -1
        elif t == "heading_open":
            heading = int(token.tag[1])
        elif t == "heading_close":
            heading = 0
        elif t in ("fence", "code_block"):
            out.append(Block("code", [Run(token.content.rstrip("\n"), code=True)]))
        elif t == "hr":
            out.append(Block("rule"))
        elif t == "inline":
            runs, anchor = _runs(token.children or [])
            out.append(_block(runs, anchor, heading, lists, quote))
    return out


def _block(runs: list[Run], anchor: int | None, heading: int, lists: list[list[Any]], quote: int) -> Block:
    if heading:
        return Block("heading", runs, level=heading)
    if lists:
        kind, number = lists[-1]
        lists[-1][1] = number + 1
        return Block(kind, runs, level=len(lists), number=number, anchor=anchor)
    return Block("quote" if quote else "paragraph", runs, anchor=anchor)
