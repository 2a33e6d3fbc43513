"""The package's shape, read from its source with ``ast`` (nothing is imported): stages that
import only the stages below them, no import cycle, no module too long to read in one sitting.

Every import counts: at module level, inside a function, and under ``TYPE_CHECKING``; an
import deferred into a function still ties the two modules together.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "assistant"
MAX_LINES = 400

# Lowest first: a module may import its own layer and the layers before it, never one after.
LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"assistant.errors", "assistant.types", "assistant.config", "assistant.resources",
              "assistant._env", "assistant.server_errors"}),
    ("text", {"assistant.text"}),
    ("ingest", {"assistant.ingest"}),
    ("index", {"assistant.index"}),
    ("retrieve", {"assistant.retrieve"}),
    ("models", {"assistant.models"}),
    ("answer", {"assistant.answer"}),
    # the public door: the package's lazy re-exports, Assistant and ask, its LangChain face
    ("api", {"assistant", "assistant.api", "assistant.langchain"}),
    ("apps", {"assistant.chat", "assistant.eval", "assistant.serve"}),
    ("cli", {"assistant.cli", "assistant.__main__"}),
]

# The one mutual import, and why it is not a cycle to remove: AssistantRetriever is a pydantic
# model with an ``assistant: Assistant`` field (it needs the class when defined), and
# Assistant.as_retriever() builds one; the reverse edge is deferred so that importing
# assistant.api does not load LangChain's retriever stack (about 1.5 s).
DEFERRED = {("assistant.api", "assistant.langchain")}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from assistant.answer import prompts`` imports the module assistant.answer.prompts
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                       for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def layer_of(name: str) -> int:
    """The index in LAYERS of the longest prefix that names ``name``'s layer."""
    best, length = None, -1
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (name == member or name.startswith(member + ".")) and len(member) > length:
                best, length = index, len(member)
    assert best is not None, f"{name} belongs to no layer: add it to LAYERS in {__file__}"
    return best


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_the_graph_sees_the_package() -> None:
    edges = graph()
    assert "assistant.answer.chain" in edges["assistant.api"]
    assert "assistant.text.sentences" in edges["assistant.ingest.corpus"]
    assert len(edges) > 40


def test_no_import_cycle() -> None:
    edges = graph()
    for source, target in DEFERRED:
        edges[source].discard(target)
    assert cycles(edges) == []


def test_the_deferred_import_is_still_deferred() -> None:
    """api -> langchain stays inside the function that needs it (not at module level)."""
    for source, target in DEFERRED:
        path = modules()[source]
        top = ast.parse(path.read_text(encoding="utf-8")).body
        named = {a.name if isinstance(n, ast.Import) else f"{n.module}"
                 for n in top if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}
        assert target not in named


def test_lower_layers_never_import_upper_ones() -> None:
    upward = [
        f"{source} ({LAYERS[layer_of(source)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for source, targets in graph().items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(source) and (source, target) not in DEFERRED
    ]
    assert upward == []


def test_no_module_over_400_lines() -> None:
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"split these into modules of at most {MAX_LINES} lines: {long}"
