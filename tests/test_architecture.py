"""The package's shape: folders in the order data flows, no import cycle, no private name borrowed.

The imports are read from the source (``ast``), not by importing, so an import inside a
function counts as much as one at the top; an import under ``if TYPE_CHECKING:`` does not (it
never runs). See docs/architecture.md for the stages and what each may import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mas_eval"

#: The stages, lowest first: a module may import its own stage and those before it.
#: The root modules (errors, constraints, presets, formatting, ...) are shared basics, below every stage.
STAGES = ("data", "storage", "ingest", "metrics", "simulation", "scoring", "stats", "plots", "report", "cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _runtime_nodes(tree: ast.Module) -> list[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:``."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            hidden.update(id(inner) for branch in node.body for inner in ast.walk(branch))
    return [node for node in ast.walk(tree) if id(node) not in hidden]


def _imports(modules: dict[str, Path]) -> dict[str, list[tuple[str, str | None]]]:
    """Module -> (imported module, imported name or None) for every runtime ``mas_eval`` import."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    for name, path in modules.items():
        edges = found.setdefault(name, [])
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mas_eval":
                edges.extend((node.module, alias.name) for alias in node.names)
            elif isinstance(node, ast.Import):
                edges.extend((alias.name, None) for alias in node.names if alias.name.split(".")[0] == "mas_eval")
    return found


def _targets(modules: dict[str, Path], imported: str, name: str | None) -> list[str]:
    """The modules an import runs: ``from pkg import sub`` runs ``sub`` (and ``pkg``'s ``__init__``,
    which is not counted: a package importing its own submodules is how packages work)."""
    if name is not None and f"{imported}.{name}" in modules:
        return [f"{imported}.{name}"]
    return [imported] if imported in modules else []


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        module: {target for imported, name in edges for target in _targets(modules, imported, name)} - {module}
        for module, edges in _imports(modules).items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _private_imports() -> list[str]:
    """Imports of a private name from another module, or of a private module from outside its package."""
    modules = _modules()
    found = []
    for module, edges in _imports(modules).items():
        for imported, name in edges:
            if name is not None and _is_private(name) and f"{imported}.{name}" not in modules:
                found.append(f"{module} imports {name} from {imported}")
            parts = [*imported.split("."), *([name] if f"{imported}.{name}" in modules else [])]
            for at, part in enumerate(parts):
                owner = ".".join(parts[:at])
                if _is_private(part) and module != owner and not module.startswith(owner + "."):
                    found.append(f"{module} imports private module {'.'.join(parts[: at + 1])}")
    return sorted(set(found))


def _stage(module: str) -> int:
    """The position of ``module``'s stage in :data:`STAGES`; -1 for a shared basic at the root."""
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else -1


def test_the_package_has_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_no_module_imports_another_modules_private_names() -> None:
    assert _private_imports() == []


def test_imports_run_down_the_stages_only() -> None:
    # The package's __init__ is the public surface: it may reach every stage.
    upward = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if module != "mas_eval"
        for target in targets
        if target != "mas_eval" and _stage(target) > _stage(module)
    ]
    assert upward == []


def test_the_root_holds_the_stages_and_shared_basics_only() -> None:
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert folders == sorted(STAGES)
    basics = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert basics == ["__init__", "_lazy", "_version", "constraints", "errors", "escaping", "formatting", "presets"]


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    # The checks above pass on a clean package; this shows they could fail.
    assert _cycles(graph) == expected
