"""Code told apart from prose that names things written in code's characters."""

from __future__ import annotations

import pytest

from services.scoring.codelike import looks_like_code


@pytest.mark.parametrize("text", [
    "tup: tuple[*Ts] # Syntax error",
    ">>> def f(a, b, c): pass ...",
    "x = [1, 2, 3]; y = {a: b}",
    "t = threading.Thread(target=f); t.start() # threads {x: [y]}.",
])
def test_code_is_code(text: str) -> None:
    assert looks_like_code(text)


@pytest.mark.parametrize("text", [
    "Patterns read from $GIT_DIR/info/exclude.",
    "The area where a pair of conflicting changes happened is marked with markers <<<<<<<, =======, and >>>>>>>.",
    "An object which controls the environment seen in a with statement by defining __enter__() and __exit__() methods.",
    "The keys can be any object with __hash__() and __eq__() methods.",
    "Threads run in one process.",
])
def test_prose_naming_files_methods_and_markers_is_prose(text: str) -> None:
    assert not looks_like_code(text)
