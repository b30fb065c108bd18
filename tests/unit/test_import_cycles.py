"""No import cycles between deskpilot's modules.

Every import counts — at module level, inside functions and under ``TYPE_CHECKING`` — because a
cycle hidden in a function is still two modules that need each other. ``import a.b`` and
``from a import b`` (``b`` a module) depend on ``a.b`` only, not on the package ``a``, so a
package's ``__init__`` that re-exports its own modules is not a cycle.
"""

from __future__ import annotations

import ast

from tests import sources


def import_graph() -> dict[str, set[str]]:
    """Each deskpilot module → the deskpilot modules it imports (the source is read once per
    run: tests/sources.py)."""
    files = sources.by_name()
    graph: dict[str, set[str]] = {}
    for name, source in files.items():
        package = name if source.is_package else name.rpartition(".")[0]
        wanted: set[str] = set()
        for node in source.imports:
            if isinstance(node, ast.Import):
                wanted.update(alias.name for alias in node.names)
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    wanted.add(sub if sub in files else base)
        graph[name] = {m for m in wanted if m in files and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per strongly connected group."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                found.append([*path[path.index(dep) :], dep])
            elif dep not in state:
                visit(dep)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return found


def test_the_graph_sees_the_imports_it_should() -> None:
    graph = import_graph()
    assert "deskpilot.desktop.atspi.tree" in graph["deskpilot.desktop.atspi.frames"]
    assert "deskpilot.sandbox" in graph["deskpilot"]  # from deskpilot.sandbox import Sandbox
    assert "deskpilot._procfs" in graph["deskpilot.sandbox.processes"]  # from deskpilot import …
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_module_imports_one_that_imports_it_back() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" → ".join(c) for c in found)
