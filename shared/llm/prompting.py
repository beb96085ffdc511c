"""Untrusted text inside prompts.

Every prompt in the project puts sources, quotes, claims and the user's own words
inside delimited blocks (``<source>…</source>``) and tells the model that nothing
inside a block is an instruction. That promise holds only if the data cannot close
its own block: a document containing ``</SOURCE>`` or ``< / source >`` must not end
the block early and smuggle the rest out as instructions. So every tag-like sequence
that closes *any* block (whatever its case, spacing or name) is defused by replacing
its ``<`` with the entity ``&lt;``. The model still reads the text; no tag survives.
"""

from __future__ import annotations

import re

__all__ = ["block", "defuse", "attribute"]

# "<" then optional spaces, "/", optional spaces, a tag-ish name: a closing tag in
# any case and spacing. Opening tags are defused too, so data cannot open a block
# that a careless reader might take for the prompt's own.
_TAG = re.compile(r"<(?=\s*/?\s*[A-Za-z_][\w:.-]*\s*/?\s*>?)")


def defuse(text: str) -> str:
    """``text`` with every tag-like ``<`` written as ``&lt;``."""
    return _TAG.sub("&lt;", text)


def attribute(text: str) -> str:
    """``text`` safe inside a double-quoted attribute of a block's opening tag."""
    return defuse(" ".join(text.split())).replace('"', "'")


def block(tag: str, text: str | None, **attributes: str) -> str:
    """``text`` inside ``<tag …>…</tag>``, or "" when there is no text.
    Attribute values are made safe with :func:`attribute`."""
    if text is None or not text.strip():
        return ""
    attrs = "".join(f' {name}="{attribute(value)}"' for name, value in attributes.items())
    return f"<{tag}{attrs}>\n{defuse(text.strip())}\n</{tag}>"
