"""The package's import graph: no cycles, layers in order, adapters on the public API only.

The graph is read from the source (ast), so it sees every import: at module level, deferred into
a function, and under ``TYPE_CHECKING``. ``lint-imports`` (import-linter, run by .ci/run) checks
the same layers contract from pyproject.toml; this test keeps the rule in the test suite too, with
messages that name the modules.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "citeverify_core"
#: The LlamaIndex adapter's packages are portions of LlamaIndex's `llama_index` namespace.
LLAMA_INDEX = ROOT / "llamaindex_citeverify" / "llama_index"
ADAPTERS = {
    "langchain_citeverify": ROOT / "langchain_citeverify",
    "llama_index.postprocessor.citeverify": LLAMA_INDEX / "postprocessor" / "citeverify",
    "llama_index.evaluation.citeverify": LLAMA_INDEX / "evaluation" / "citeverify",
}

#: Top to bottom: a module may import its own layer's modules and those of lower layers. Names in
#: one tuple are independent siblings (neither imports the other).
LAYERS: list[tuple[str, ...]] = [
    ("cli",),
    ("client",),
    ("service", "batch"),
    ("references",),
    ("engine",),
    ("lookups",),
    ("policy",),
    ("text",),
    ("errors", "sync"),
]

#: Type-only imports that point upward, each with its reason. Nothing else may.
TYPE_ONLY_UPWARD = {
    # CitationUnverifiedError carries the VerificationResult that was blocked; the error tree is
    # the bottom layer, so the result's type is named for the type checker only.
    ("citeverify_core.errors", "citeverify_core.engine.results"),
}

#: What the adapters may import from the core: its packages' public surfaces.
PUBLIC = {
    "citeverify_core",
    "citeverify_core.engine",
    "citeverify_core.policy",
    "citeverify_core.references",
}


def _modules(root: Path, package: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        if "tests" in path.relative_to(root).parts:
            continue
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, type-only) for every import of a module of ours in ``path``."""
    tree = ast.parse(path.read_text("utf-8"))
    is_package = path.name == "__init__.py"
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(n) for child in node.body for n in ast.walk(child))
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            # "from pkg import module" imports the module; "from pkg import name", the package.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        for imported in targets:
            # The longest module of ours that the name is in ("pkg.mod.Name" -> "pkg.mod").
            module = imported
            while module and module not in known:
                module = module.rpartition(".")[0]
            if module and module != name:
                yield module, node.lineno, id(node) in type_only


def _graph() -> dict[str, dict[str, tuple[int, bool]]]:
    known = _modules(CORE, "citeverify_core")
    graph: dict[str, dict[str, tuple[int, bool]]] = {}
    for name, path in known.items():
        edges = graph.setdefault(name, {})
        for target, line, type_only in _imports(name, path, known):
            if type_only and (name, target) in TYPE_ONLY_UPWARD:
                continue  # the one named exception, never run
            edges.setdefault(target, (line, type_only))
    return graph


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package root: the public surface, outside the layers
    for index, names in enumerate(LAYERS):
        if parts[1] in names:
            return index
    return None


def _cycle(graph: dict[str, dict[str, tuple[int, bool]]]) -> list[str] | None:
    """One cycle of the graph, as a list of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in graph.get(node, {}):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return None

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_type_only_exception_is_type_only() -> None:
    # The exception above stays an exception: if errors.py imported the results at run time,
    # the layers would be broken for real.
    known = _modules(CORE, "citeverify_core")
    for module, target in TYPE_ONLY_UPWARD:
        kinds = {t for found, _, t in _imports(module, known[module], known) if found == target}
        assert kinds == {True}, (module, target, kinds)


def test_no_import_cycles_not_even_deferred_or_type_only() -> None:
    graph = _graph()
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_one() -> None:
    # The check above must be able to fail: a two-module loop and a longer one.
    assert _cycle({"a": {"b": (1, False)}, "b": {"a": (1, False)}}) == ["a", "b", "a"]
    loop = {"a": {"b": (1, False)}, "b": {"c": (1, False)}, "c": {"a": (1, False)}, "d": {}}
    assert _cycle(loop) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": (1, False)}, "b": {}}) is None


def test_layers_import_only_downward() -> None:
    upward = []
    for module, edges in _graph().items():
        mine = _layer(module)
        for target, (line, _type_only) in edges.items():
            theirs = _layer(target)
            if mine is None or theirs is None:
                continue
            same_package = module.split(".")[1] == target.split(".")[1]
            if theirs < mine or (theirs == mine and not same_package):
                upward.append(f"{module}:{line} imports {target}")
    assert not upward, "imports against the layers:\n" + "\n".join(sorted(upward))


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_adapters_use_only_the_public_api(adapter: str) -> None:
    root = ADAPTERS[adapter]
    private = []
    for path in sorted(root.rglob("*.py")):
        if "tests" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("citeverify_core") and name not in PUBLIC:
                    private.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert not private, "\n".join(private)
