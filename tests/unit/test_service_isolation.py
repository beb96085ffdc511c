"""The house's import rules, read from the code with ``ast``.

- Each service stands alone: no module of ``services/X`` imports ``services/Y``, and
  the library in ``shared/`` imports no service. What two services need lives in
  ``shared/``. The command line (``services/cli/``) is the exception: starting services
  is its job.
- ``shared/`` is layered (its ``__init__`` draws the stack): each of its packages and
  top-level modules imports only what ``LAYERS`` allows it.
- No module of the repository (services, shared, bench, tests) takes part in an import
  circle, whether the imports run at load time or inside a function.
- Each name has one home: a name taken from a module of ``shared`` or ``services`` is
  taken from the module that defines it, not from one that imports it from elsewhere.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
SHARED = ROOT / "shared"

# What each part of shared/ may import from shared/, bottom layer first.
LAYERS: dict[str, set[str]] = {
    "platform": set(),
    "subjects": set(),
    "research": {"platform", "subjects"},
    "llm": {"platform", "research"},
    "verification": {"platform", "research", "llm"},
    "settings": {"platform", "research", "llm", "verification"},
    "stores": {"platform", "subjects", "research"},
    "runtime": {"platform", "subjects", "research", "llm", "verification", "settings", "stores"},
}


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
        if len(path.relative_to(SERVICES).parts) > 1 and path.relative_to(SERVICES).parts[0] != "cli"
    ]


def layer_of(path: Path) -> str:
    """The part of shared/ a module belongs to: its package, or its own name at the top."""
    rel = path.relative_to(SHARED)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def shared_parts_imported(path: Path) -> set[str]:
    """The parts of shared/ (packages or top-level modules) that ``path`` imports."""
    parts = set()
    for name in imported_modules(path):
        bits = name.split(".")
        if bits[0] == "shared" and len(bits) > 1 and (bits[1] in LAYERS):
            parts.add(bits[1])
    return parts


def test_every_service_is_found() -> None:
    found = {own for own, _ in service_modules()}
    assert {"gateway", "decomposition", "retrieval", "digest", "scoring", "synthesis"} <= found


@pytest.mark.parametrize(("own", "path"), service_modules(), ids=lambda v: str(v))
def test_service_imports_no_other_service(own: str, path: Path) -> None:
    assert not foreign_services(path, own), f"{path.relative_to(SERVICES)} imports another service"


@pytest.mark.parametrize("path", sorted(SHARED.rglob("*.py")), ids=lambda p: str(p.relative_to(SHARED)))
def test_the_library_imports_no_service(path: Path) -> None:
    assert not [n for n in imported_modules(path) if n.split(".")[0] == "services"]


def test_every_part_of_the_library_has_a_layer() -> None:
    parts = {layer_of(path) for path in SHARED.rglob("*.py") if path.name != "__init__.py" or path.parent != SHARED}
    assert parts == set(LAYERS), f"unplaced: {parts - set(LAYERS)}; gone: {set(LAYERS) - parts}"
    loose = [p for p in SHARED.glob("*.py") if p.name != "__init__.py"]
    assert len(loose) <= 12, f"{len(loose)} modules loose at the top of shared/"


@pytest.mark.parametrize("path", sorted(p for p in SHARED.rglob("*.py") if p.parent != SHARED or p.name != "__init__.py"),
                         ids=lambda p: str(p.relative_to(SHARED)))
def test_the_library_imports_only_downward(path: Path) -> None:
    own = layer_of(path)
    upward = shared_parts_imported(path) - LAYERS[own] - {own}
    assert not upward, f"shared/{path.relative_to(SHARED)} ({own}) imports {sorted(upward)}"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def import_graph(roots: list[Path]) -> dict[str, set[str]]:
    """Module -> the repository modules it imports (``from a import b`` counts as
    ``a.b`` when that is a module, else as ``a``)."""
    paths = {module_name(p): p for root in roots for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges = set()
        for imported in imported_modules(path):
            if imported in paths and imported != name:
                edges.add(imported)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles_anywhere() -> None:
    graph = import_graph([ROOT / d for d in ("services", "shared", "bench", "tests")])
    assert not circles(graph)


def top_level_names(path: Path) -> tuple[set[str], set[str]]:
    """The names a module defines at its top level, and the names it imports there."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return defined, imported


def borrowed_names(path: Path) -> list[str]:
    """``module.name`` for each name ``path`` imports from a project module that does not
    define it but imports it itself."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
            continue
        source = ROOT.joinpath(*node.module.split(".")).with_suffix(".py")
        if node.module.split(".")[0] not in ("shared", "services") or not source.exists():
            continue
        defined, imported = top_level_names(source)
        out.extend(f"{node.module}.{alias.name}" for alias in node.names
                   if alias.name in imported and alias.name not in defined)
    return out


@pytest.mark.parametrize("path", sorted(p for d in ("services", "shared", "bench", "tests")
                                        for p in (ROOT / d).rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_names_are_imported_from_their_home(path: Path) -> None:
    assert not borrowed_names(path), f"{path.relative_to(ROOT)} imports names their module only re-exports"


def test_the_checks_see_what_they_guard(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from services.digest.archive import Archive\nimport services.scoring.engine\n"
                      "from services import retrieval\nfrom services.gateway import db\n"
                      "from shared.runtime.stage import StageRunner\nfrom shared import subjects\n")
    assert foreign_services(module, "gateway") == {"digest", "scoring", "retrieval"}
    assert shared_parts_imported(module) == {"runtime", "subjects"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    borrowing = tmp_path / "b.py"
    borrowing.write_text("from shared.runtime.stage import StageRunner, MSG_ID\n")
    assert borrowed_names(borrowing) == ["shared.runtime.stage.MSG_ID"]
