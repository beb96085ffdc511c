"""Code or markup run into a sentence, told apart from prose that names things.

A sentence of a manual often names what is written in code's characters: a method
(``__enter__()``), a file (``$GIT_DIR/info/exclude``), a setting (``core.excludesFile``),
the markers a tool writes (``<<<<<<<``). Such a name is one word of the sentence, and
the sentence is prose ("Patterns read from $GIT_DIR/info/exclude."). Code is a
sentence whose characters are too often neither letters, digits, spaces nor ordinary
punctuation once its names are read as words ("tup: tuple[*Ts] # Syntax error",
">>> def f(a, b): pass ...").
"""

from __future__ import annotations

import re

__all__ = ["looks_like_code"]

PLAIN_SHARE = 0.93  # of a sentence's characters, once its names are words, for it to be prose
_ORDINARY = frozenset(".,;:'’\"“”()-?!")
# A name: one whitespace-delimited token of letters, digits and the characters names are
# made of (_ . - / @, a leading $, a trailing "()"), ending where a word would; or one
# character repeated five times or more (a marker such as "=======").
_NAME = re.compile(r"(?<!\S)\$?[\w.\-/@]*[^\W_][\w.\-/@]*(?:\(\))?(?=[\s,.;:!?)]|$)|(\S)\1{4,}")


def looks_like_code(text: str) -> bool:
    """Whether ``text`` is code or markup rather than a sentence (see the module doc)."""
    prose = _NAME.sub("x", text)
    plain = sum(ch.isalnum() or ch.isspace() or ch in _ORDINARY for ch in prose)
    return plain < PLAIN_SHARE * len(prose)
