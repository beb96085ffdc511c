"""The web-page tests' shared fixture: one Chromium per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from tests.browser.chromium import launched  # noqa: PLC0415 - skips the module without Playwright or Chromium

    with launched() as b:
        yield b
