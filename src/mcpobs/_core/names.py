"""Bounded names: only what a server registers may reach a span name or a metric label.

A caller can send any tool name, method or protocol version; each of those becomes
`semconv.OTHER` unless the server knows it. For an `MCPServer` the tool and prompt
managers answer; a lowlevel `Server` has no registry, so its names are learned (up to a
bound) from its own tools/list and prompts/list results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from mcpobs import semconv
from mcpobs._core import sdk
from mcpobs._core.methods import REQUEST_METHODS, SPEC_METHODS

_Wire = Mapping[str, object]  # a JSON object read off the wire
_KNOWN_VERSIONS = sdk.KNOWN_PROTOCOL_VERSIONS

Lookup = Callable[[str], object]


_RECOUNT = 256
"""`ServerNames.known` counts the registry afresh once per this many asks."""

LISTINGS = frozenset({"tools/list", "prompts/list"})
"""The results `ServerNames.learn` reads a lowlevel server's names from."""


def bounded_version(version: object) -> str:
    return version if isinstance(version, str) and version in _KNOWN_VERSIONS else semconv.OTHER


class ServerNames:
    """The names one server registers. Lookups are live, so a tool added later counts."""

    __slots__ = (
        "_known",
        "_known_asks",
        "_learned_prompts",
        "_learned_tools",
        "_listed",
        "_server",
        "learns_listed",
        "offered",
        "prompt_lookup",
        "tool_lookup",
    )

    def __init__(self, server: Any) -> None:
        self._server = server
        self.tool_lookup: Lookup | None = None
        self.prompt_lookup: Lookup | None = None
        self.offered: Callable[[], dict[str, int]] | None = None
        """How many tools, prompts and resources the server offers (a framework's registry)."""
        self.learns_listed = False
        """Also learn from listings what the lookups miss (a framework whose mounted or proxied
        servers' names are not in its own registry: FastMCP)."""
        self._learned_tools: dict[str, Mapping[str, Any]] = {}
        self._learned_prompts: dict[str, Mapping[str, Any]] = {}
        self._listed: set[str] = set()
        """The listing methods whose whole result (no `nextCursor`) a lowlevel server has returned."""
        self._known = 0
        self._known_asks = 0

    def method(self, method: object) -> str:
        if not isinstance(method, str):
            return semconv.OTHER
        if method in SPEC_METHODS:
            return method
        server = self._server
        if server.get_request_handler(method) is not None or server.get_notification_handler(method) is not None:
            return method
        return semconv.OTHER

    def is_request(self, method: object) -> bool:
        """A method the server answers as a request (so a message without an id is malformed)."""
        if not isinstance(method, str):
            return False
        return method in REQUEST_METHODS or self._server.get_request_handler(method) is not None

    def knows_catalog(self, method: str) -> bool:
        """Whether a name missing from the server's tools (or prompts) is known to be unknown.

        An `MCPServer` always knows; a lowlevel server once it has listed them in full.
        """
        if method == "tools/call":
            return self.tool_lookup is not None or "tools/list" in self._listed
        if method == "prompts/get":
            return self.prompt_lookup is not None or "prompts/list" in self._listed
        return False

    def missing_prompt_arguments(self, name: str, arguments: object) -> bool:
        """A registered prompt was asked for without an argument it declares required."""
        prompt = self.prompt_lookup(name) if self.prompt_lookup is not None else self._learned_prompts.get(name)
        declared: object = (
            cast(_Wire, prompt).get("arguments") if isinstance(prompt, Mapping) else getattr(prompt, "arguments", None)
        )
        given: _Wire = cast(_Wire, arguments) if isinstance(arguments, Mapping) else {}
        for argument in cast("Iterable[object]", declared or ()):
            required: object = (
                cast(_Wire, argument).get("required")
                if isinstance(argument, Mapping)
                else getattr(argument, "required", None)
            )
            declared_name: object = (
                cast(_Wire, argument).get("name") if isinstance(argument, Mapping) else getattr(argument, "name", None)
            )
            if required and declared_name not in given:
                return True
        return False

    def tool(self, name: object) -> str:
        if not isinstance(name, str):
            return semconv.OTHER
        if self.tool_lookup is not None:
            if self.tool_lookup(name) is not None:
                return name
            if not self.learns_listed:
                return semconv.OTHER
        return name if name in self._learned_tools else semconv.OTHER

    def tool_object(self, name: str) -> object | None:
        """The registered tool (an MCPServer tool, or the wire dict a lowlevel server listed)."""
        if self.tool_lookup is not None:
            found = self.tool_lookup(name)
            if found is not None or not self.learns_listed:
                return found
        return self._learned_tools.get(name)

    def prompt(self, name: object) -> str:
        if not isinstance(name, str):
            return semconv.OTHER
        if self.prompt_lookup is not None:
            if self.prompt_lookup(name) is not None:
                return name
            if not self.learns_listed:
                return semconv.OTHER
        return name if name in self._learned_prompts else semconv.OTHER

    def known(self) -> int:
        """How many tools and prompts this server registers or has listed (the caches' scale).

        Counted afresh on every `_RECOUNT`th ask: a framework's count copies its registry, and
        the caches ask on each first-time miss, so a catalog far past their floor filling them
        would pay a copy of the catalog per tool. A count a few asks stale only evicts early.
        """
        if self._known_asks % _RECOUNT == 0:
            counts = self.offered() if self.offered is not None else {}
            registered = (counts.get("tools") or 0) + (counts.get("prompts") or 0)
            self._known = registered + len(self._learned_tools) + len(self._learned_prompts)
        self._known_asks += 1
        return self._known

    def offered_counts(self, capabilities: Mapping[str, Any]) -> dict[str, int | None]:
        """Counts for the session line; a capability the server did not declare counts 0."""
        counts: dict[str, int | None] = dict.fromkeys(("tools", "prompts", "resources"))
        if self.offered is not None:
            counts.update(self.offered())
        elif self._learned_tools:
            counts["tools"] = len(self._learned_tools)
        for kind in counts:
            if kind not in capabilities:
                counts[kind] = 0
        return counts

    def learn(self, method: str, result: object) -> None:
        """Remember the names a lowlevel server lists, so its spans can use them."""
        if method == "tools/list" and (self.tool_lookup is None or self.learns_listed):
            _learn(self._learned_tools, result, "tools")
        elif method == "prompts/list" and (self.prompt_lookup is None or self.learns_listed):
            _learn(self._learned_prompts, result, "prompts")
        else:
            return
        if isinstance(result, Mapping) and not cast(_Wire, result).get("nextCursor"):
            self._listed.add(method)


def _learn(names: dict[str, Mapping[str, Any]], result: object, key: str) -> None:
    if not isinstance(result, Mapping):
        return
    for item in cast("Iterable[object]", cast(_Wire, result).get(key) or ()):
        if not isinstance(item, Mapping):
            continue
        entry = cast("Mapping[str, Any]", item)
        name = entry.get("name")
        if isinstance(name, str) and (name in names or len(names) < semconv.MAX_LEARNED_NAMES):
            names[name] = entry
