"""The modules of csvm_stats.multiclass import each other as a tree (no cycle, no import inside a function)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "csvm_stats" / "multiclass"
PREFIX = "csvm_stats.multiclass."


def _imports(path: Path) -> tuple[set[str], list[str]]:
    """Multiclass modules ``path`` imports anywhere (also under TYPE_CHECKING), and those imported inside functions."""
    tree = ast.parse(path.read_text())
    found, nested = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            found.add(node.module[len(PREFIX):])
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        nested += [n.module for n in ast.walk(function)
                   if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith(PREFIX)]
    return found, nested


def test_multiclass_import_graph_is_a_tree():
    graph, nested = {}, {}
    for path in PACKAGE.glob("*.py"):
        graph[path.stem], nested[path.stem] = _imports(path)
    assert not any(nested.values()), f"imports inside functions (hidden cycles): { {k: v for k, v in nested.items() if v} }"
    state: dict[str, str] = {}

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", f"import cycle: {' -> '.join((*trail, module))}"
        state[module] = "open"
        for target in graph.get(module, ()):
            visit(target, (*trail, module))
        state[module] = "done"

    for module in graph:
        visit(module, ())
