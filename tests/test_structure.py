"""The package's shape, read from its source: layers import downwards only.

Every `import` statement counts — at module level, inside functions (lazy) and under
`TYPE_CHECKING` — because a lazy import still ties two modules together: the day one of them
is imported first, the circle closes. `scaffolds/` and `plugins/` are read as the
`orchestra.scaffolds` / `orchestra.plugins` packages they are installed as.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Installed package name -> source folder (pyproject's `package-dir`).
PACKAGE_DIRS = {"orchestra": REPO / "orchestra"}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The known module `name` denotes: itself, else its closest known parent package."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path) -> Iterator[tuple[str, int, list[str]]]:
    """(imported module, line, imported names) for every import statement in the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name)
                if target is not None:
                    yield target, node.lineno, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                target = _resolve(f"{prefix}.{alias.name}")
                if target is not None and target != _resolve(prefix):
                    yield target, node.lineno, []  # `from pkg import submodule`
                elif (owner := _resolve(prefix)) is not None:
                    yield owner, node.lineno, [alias.name]


def _graph() -> dict[str, dict[str, list[tuple[int, list[str]]]]]:
    graph: dict[str, dict[str, list[tuple[int, list[str]]]]] = {m: {} for m in MODULES}
    for module, path in MODULES.items():
        for target, line, names in _imports(module, path):
            if target != module:
                graph[module].setdefault(target, []).append((line, names))
    return graph


GRAPH = _graph()


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def _in_are(module: str) -> bool:
    return module == "orchestra.are" or module.startswith("orchestra.are.")


def test_the_graph_is_read():
    """The parser sees real edges (guards the other tests against reading nothing)."""
    assert "orchestra.session" in GRAPH["orchestra.agent"]
    assert "orchestra.are.loading" in GRAPH["orchestra.session"]
    assert "orchestra.hookspecs" in GRAPH["orchestra.plugins.clock"]


def test_no_import_cycle():
    assert _cycles() == []


def test_the_are_door_stands_below_everything_that_uses_it():
    """`orchestra/are/` imports only orchestra modules that do not import `orchestra/are/` themselves."""
    users_of_are = {m for m, targets in GRAPH.items() if not _in_are(m) and any(_in_are(t) for t in targets)}
    wrong = sorted(
        f"{MODULES[m].relative_to(REPO)}:{line} imports {t}, which imports orchestra.are"
        for m, targets in GRAPH.items()
        if _in_are(m)
        for t, sites in targets.items()
        if t in users_of_are
        for line, _ in sites
    )
    assert wrong == []


def test_plugins_use_no_private_name_of_the_core():
    wrong = sorted(
        f"{MODULES[m].relative_to(REPO)}:{line} imports {name} from {t}"
        for m, targets in GRAPH.items()
        if m.startswith("orchestra.plugins.")
        for t, sites in targets.items()
        if not t.startswith("orchestra.plugins")
        for line, names in sites
        for name in names
        if name.startswith("_")
    )
    assert wrong == []
