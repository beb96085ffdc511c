"""Each service stands alone: no module of ``services/X`` imports ``services/Y``,
and the library in ``shared/`` imports no service.

What two services need lives in ``shared/``. The CLI and the supervisor are the
exception: starting services is their job.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"


def imported_modules(path: Path) -> list[str]:
    """Every absolute module name ``path`` imports, including ``from a import b``
    as ``a.b`` (``b`` may be a submodule)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def foreign_services(path: Path, own: str) -> set[str]:
    """The other services ``path`` (a module of service ``own``) imports."""
    out = set()
    for name in imported_modules(path):
        parts = name.split(".")
        if parts[0] == "services" and len(parts) > 1 and parts[1] != own:
            out.add(parts[1])
    return out


def service_modules() -> list[tuple[str, Path]]:
    return [
        (path.relative_to(SERVICES).parts[0], path)
        for path in sorted(SERVICES.rglob("*.py"))
        # services/cli.py and services/supervisor.py sit at the top: they start services
        if len(path.relative_to(SERVICES).parts) > 1
    ]


def test_every_service_is_found() -> None:
    found = {own for own, _ in service_modules()}
    assert {"gateway", "decomposition", "retrieval", "digest", "scoring", "synthesis"} <= found


@pytest.mark.parametrize(("own", "path"), service_modules(), ids=lambda v: str(v))
def test_service_imports_no_other_service(own: str, path: Path) -> None:
    assert not foreign_services(path, own), f"{path.relative_to(SERVICES)} imports another service"


@pytest.mark.parametrize("path", sorted((ROOT / "shared").rglob("*.py")), ids=lambda p: p.name)
def test_the_library_imports_no_service(path: Path) -> None:
    assert not [n for n in imported_modules(path) if n.split(".")[0] == "services"]


def test_the_check_sees_cross_service_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from services.digest.archive import Archive\nimport services.scoring.engine\n"
                      "from services import retrieval\nfrom services.gateway import db\n")
    assert foreign_services(module, "gateway") == {"digest", "scoring", "retrieval"}
