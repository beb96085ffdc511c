"""Every benchmark module imports: a bench whose imports broke (a name moved) is found
here, not the next time someone runs it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "__init__"))
def test_the_bench_module_imports(name: str) -> None:
    module = importlib.import_module(f"bench.{name}")
    assert module.__doc__, f"bench/{name}.py says what it measures"
