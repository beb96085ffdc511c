"""What every web-page test needs: Playwright for Python and Debian's ``chromium``
(nothing is downloaded). A test module that imports this one is skipped, saying how to
install them, when either is missing; the ``browser`` fixture (conftest) launches it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is missing: pip install -e '.[test]'")
expect = playwright_api.expect

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).is_file():
    pytest.skip(
        f"no Chromium at {CHROMIUM}: install it with `apt-get install chromium` to run the web page tests",
        allow_module_level=True,
    )


@contextmanager
def launched() -> Iterator[playwright_api.Browser]:
    """Chromium under Playwright, closed afterwards."""
    with playwright_api.sync_playwright() as p:
        # Chromium refuses its sandbox to root (CI containers run as root).
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        b = p.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            yield b
        finally:
            b.close()
