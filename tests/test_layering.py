"""The modules of `src/mcpobs` import one another without a circle, type-only imports included.

A circle hidden behind `if TYPE_CHECKING:` still ties two modules' designs together: the lower
one must say what it needs (a Protocol, a returned value) instead of naming the higher one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import mcpobs

_SRC = Path(mcpobs.__file__).parent.parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in (_SRC / "mcpobs").rglob("*.py"):
        name = ".".join(path.relative_to(_SRC).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                named.add(sub if sub in modules else base)
        elif isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
    return {other for other in named if other in modules and other != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_module_imports_itself_round_a_circle():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert len(graph) > 40, "the walk found the package's modules"
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


_LAYERS = {
    # a module of this package ... may not import one of these (type-only imports included)
    "mcpobs._core": ("mcpobs._server", "mcpobs._client", "mcpobs._hosts", "mcpobs._cli", "mcpobs._tasks"),
    # a task's telemetry (docs/architecture.md, "Where tasks go"): the sides and lines call in
    "mcpobs._tasks": ("mcpobs._server", "mcpobs._client", "mcpobs._hosts", "mcpobs._cli"),
    "mcpobs._server": ("mcpobs._client", "mcpobs._cli"),
    "mcpobs._hosts": ("mcpobs._client", "mcpobs._cli"),
    "mcpobs._client": ("mcpobs._hosts", "mcpobs._cli"),
    # _client may read _server's state: a server's own request to its client is labelled by the
    # request it serves (`_client/side_spans.py`).
}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_server_side_imports_nothing_of_the_client_side():
    """A server process need not load the client's code: what the server side reads of a client lives in `_core`."""
    modules = _modules()
    crossings = sorted(
        f"{name} imports {other}"
        for name, path in modules.items()
        for package, banned in _LAYERS.items()
        if _within(name, package)
        for other in _imports(name, path, modules)
        if any(_within(other, b) for b in banned)
    )
    assert crossings == []


def test_the_registry_imports_nothing_of_the_package():
    """`semconv.py` is the ground every module stands on: what it needs of an OpenTelemetry release
    is data that `_core/otel_releases.py` reads from it, never the other way round."""
    modules = _modules()
    assert _imports("mcpobs.semconv", modules["mcpobs.semconv"], modules) == set()


# -- SDK lines: each line's modules in its own folders, one per side (`_server/sdk1/`, `_client/sdk1/`,
# `_hosts/sdk1/`), so retiring a line is deleting them (scripts/check-without-sdk1).

_LINE_FOLDER = re.compile(r"sdk\d+")

_LINE_SEAMS = {"mcpobs._instrumentor": {"mcpobs._server.sdk1", "mcpobs._client.sdk1"}}
"""Where code outside a line's folders may reach into them: its entry, one per side (the hosts'
entry is reached from the line's server folder)."""


def _in_line(module: str) -> bool:
    return any(_LINE_FOLDER.fullmatch(part) for part in module.split("."))


def test_no_module_is_named_with_a_lines_digit_outside_that_lines_folder():
    """`dispatch1.py` beside `dispatch.py` hides which line a module serves: its folder says it instead."""
    misplaced = sorted(name for name in _modules() if not _in_line(name) and re.search(r"\d", name.rpartition(".")[2]))
    assert misplaced == []


def test_a_line_is_reached_from_outside_its_folders_through_one_seam_per_side():
    modules = _modules()
    reaching = sorted(
        f"{name} imports {other}"
        for name, path in modules.items()
        if not _in_line(name)
        for other in _imports(name, path, modules)
        if _in_line(other) and other not in _LINE_SEAMS.get(name, ())
    )
    assert reaching == []
