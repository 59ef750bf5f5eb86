"""The modules of csvm_stats import each other as a tree: no cycle, even through an
import inside a function or under TYPE_CHECKING (a hidden cycle is still a cycle).

The top-level ``csvm_stats/__init__.py`` imports the public classes (and
thereby registers the multiclass form); it is the root and is left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "csvm_stats"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _targets(node: ast.AST) -> list[str]:
    """The csvm_stats modules one import statement loads (``from a import b`` loads a.b when that is a module)."""
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return []


def _imports(path: Path, *, nested_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text())
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] if nested_only else [tree]
    return {target for scope in scopes for node in ast.walk(scope) for target in _targets(node)
            if target in MODULES and target != "csvm_stats"}


def _assert_no_cycle(graph: dict[str, set[str]], starts: list[str]) -> None:
    """Depth-first from each start: fail naming the first cycle met."""
    state: dict[str, str] = {}

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", f"import cycle: {' -> '.join((*trail, module))}"
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            visit(target, (*trail, module))
        state[module] = "done"

    for module in starts:
        visit(module, ())


def test_package_import_graph_has_no_cycle():
    graph = {name: _imports(path) - {name} for name, path in MODULES.items() if name != "csvm_stats"}
    _assert_no_cycle(graph, sorted(graph))


def test_multiclass_modules_import_each_other_at_module_level():
    """Inside csvm_stats.multiclass no module imports another inside a function."""
    nested = {name: sorted(t for t in _imports(path, nested_only=True) if t.startswith("csvm_stats.multiclass"))
              for name, path in MODULES.items() if name.startswith("csvm_stats.multiclass.")}
    assert not any(nested.values()), {k: v for k, v in nested.items() if v}


def test_the_package_root_is_in_no_module_level_cycle():
    """The root left out above, checked here on module-level imports: a module that imports the root (for the
    version, say) while the root imports it back, directly or not, makes a cycle."""
    graph = {name: {target for node in ast.parse(path.read_text()).body for target in _targets(node)
                    if target in MODULES and target != name}
             for name, path in MODULES.items()}
    _assert_no_cycle(graph, ["csvm_stats"])
