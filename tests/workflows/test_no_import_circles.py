"""No import circle among the workflow packages, type-only imports included: a workflow's parts
take what they need (a narrow protocol, the session, the records), never the workflow module."""

from __future__ import annotations

import ast
from pathlib import Path

import fixloop

WORKFLOWS = Path(fixloop.__file__).parent / "workflows"


def _module(path: Path) -> str:
    parts = path.relative_to(WORKFLOWS.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module(path): path for path in WORKFLOWS.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            # A package's __init__ re-exports its parts; an import of the package is not an
            # import of every part, so only modules named exactly count.
            graph[name] |= {t for t in targets if t in modules and t != name and t in graph}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_workflow_packages_have_no_import_circle() -> None:
    graph = {
        name: {t for t in targets if not _is_package_init(t)} for name, targets in _graph().items()
    }
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def _is_package_init(name: str) -> bool:
    return (WORKFLOWS.parent.parent / Path(*name.split(".")) / "__init__.py").is_file()


def test_the_check_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
