"""The package's module-level imports form a tree (no module imports, directly or not, one that imports it)."""

from __future__ import annotations

import ast
from pathlib import Path

import csvm_stats

ROOT = Path(csvm_stats.__file__).resolve().parent


def module_graph() -> dict[str, set[str]]:
    """Module -> the package modules its top-level statements import (``from pkg import mod`` counts mod)."""
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = ("csvm_stats",) + path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("csvm_stats"):
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    graph[name].add(target if target in modules else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (depth-first search), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_module_level_imports_have_no_cycle():
    graph = module_graph()
    assert len(graph) > 50 and "csvm_stats.optimization.engine" in graph["csvm_stats.multiclass.engine"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
