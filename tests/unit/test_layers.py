"""The import graph of focuscrawl: no cycles, and arrows one way (core <- adapters).

Imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "focuscrawl"
#: framework-free: no Scrapy, no Twisted, no adapter module
CORE = ("focuscrawl.core",)
#: rooms without Scrapy, and the only focuscrawl rooms each may import (besides itself): the
#: core takes its options' declared defaults from focuscrawl.config (no Scrapy either)
ROOMS = {
    "focuscrawl.core": ("focuscrawl.config",),
    "focuscrawl.evaluation": ("focuscrawl.core",),
    "focuscrawl.demo": ("focuscrawl.core",),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _runtime_imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            node.body = []  # type: ignore[assignment]
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def imports() -> dict[str, set[str]]:
    """module -> the modules it imports (focuscrawl's, plus top-level package names)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                out.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)  # from pkg import mod
        graph[name] = out
    known = set(graph)
    return {m: {i for i in targets if i in known and i != m} | {i.split(".")[0] for i in targets}
            for m, targets in graph.items()}


def test_no_import_cycles():
    graph = {m: {t for t in ts if t.startswith("focuscrawl")} for m, ts in imports().items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_core_imports_no_framework_and_no_adapter():
    bad = []
    for module, targets in imports().items():
        if not module.startswith(CORE):
            continue
        for target in targets:
            if target in ("scrapy", "twisted") or (
                    target.startswith("focuscrawl.") and not target.startswith(CORE)
                    and target != "focuscrawl.config"):
                bad.append(f"{module} -> {target}")
    assert bad == []


def test_rooms_without_scrapy_import_only_what_they_may():
    """The core, the evaluation and the demo web stand without the Scrapy seam; the seam
    (the top level, middlewares, commands, distributed) imports them, never the reverse."""
    bad = []
    for module, targets in imports().items():
        room = next((r for r in ROOMS if module == r or module.startswith(r + ".")), None)
        if room is None:
            continue
        allowed = (room, *ROOMS[room])
        for target in targets:
            if target in ("scrapy", "twisted") or (
                    target.startswith("focuscrawl.")
                    and not any(target == a or target.startswith(a + ".") for a in allowed)):
                bad.append(f"{module} -> {target}")
    assert bad == []

def test_middlewares_and_scheduler_do_not_import_each_other():
    graph = imports()
    bad = [f"{m} -> {t}" for m, ts in graph.items() for t in ts
           if (m.startswith("focuscrawl.seam.middlewares") and t == "focuscrawl.seam.scheduler")
           or (m == "focuscrawl.seam.scheduler" and t.startswith("focuscrawl.seam.middlewares"))]
    assert bad == []
