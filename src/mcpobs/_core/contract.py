"""Tool contract fingerprints: which schema a call was made against, and which one served it.

A schema fingerprint hashes exactly what a client validates against: the canonical JSON of
the tool's input and output schemas as `tools/list` sends them (key order and whitespace do
not matter; annotation keywords such as the `title` pydantic writes are kept, because the
client's validator sees them too). A contract fingerprint adds what steers a model's choice:
name, title, description and annotations. A reworded description moves only the second.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from mcpobs._core.bounded import put

_LENGTH = 16
_MAX_TOOLS = 4096
"""Tool objects whose fingerprints are remembered; past it the oldest is forgotten."""
_MIN_LISTED = 1024
"""Listed tools whose contract fingerprints `CatalogFingerprints` keeps, at least."""


def _canonical(value: Any) -> bytes:
    # surrogatepass: a listing may carry a lone surrogate (valid JSON); it still hashes, and stably.
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.encode("utf-8", "surrogatepass")


def _hash(value: Any) -> str:
    return hashlib.sha256(_canonical(value)).hexdigest()[:_LENGTH]


def _hash_fingerprints(fingerprints: list[str]) -> str:
    """`_hash` of a list of fingerprints: hex needs no escaping, so the canonical JSON is a join."""
    if not fingerprints:
        return _hash(fingerprints)
    text = '["' + '","'.join(fingerprints) + '"]'
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:_LENGTH]


def schema_fingerprint(input_schema: Any, output_schema: Any) -> str:
    return _hash({"input": input_schema, "output": output_schema})


def contract_fingerprint(tool: Mapping[str, Any]) -> str:
    """`tool` in wire shape (camelCase keys), as in a tools/list result."""
    return _hash(
        {
            "name": tool.get("name"),
            "title": tool.get("title"),
            "description": tool.get("description"),
            "annotations": tool.get("annotations"),
            "schema": schema_fingerprint(tool.get("inputSchema"), tool.get("outputSchema")),
        }
    )


def catalog_fingerprint(tools: Sequence[Mapping[str, Any]]) -> str:
    """Order counts: a reordered list changes the prompt a model is shown."""
    return _hash([contract_fingerprint(t) for t in tools])


class _Exact:
    """A number as JSON writes it: equal only to the same type and the same text.

    `1 == 1.0 == True` and `0.0 == -0.0` in Python, but a client's validator sees different
    schemas. Held on the left of `==`, so the comparison is this one's.
    """

    __slots__ = ("text", "type")

    def __init__(self, value: object) -> None:
        self.type = type(value)
        self.text = repr(value)

    def __eq__(self, other: object) -> bool:
        return type(other) is self.type and repr(other) == self.text

    __hash__ = None  # pyright: ignore[reportAssignmentType]


_NUMBERS = (bool, int, float)


def _snapshot(value: Any) -> Any:
    """A copy of a JSON value that `==` tells apart from any other JSON value (`_Exact` numbers).

    Strings and None are shared (immutable, and `==` on them is already exact); containers are
    our own, so a listing mutated in place later is still compared with what was hashed.
    Raises TypeError on anything but JSON's types: that tool is hashed every time instead.
    """
    # No typing.cast here: it is a call per node. type(), not __class__: a proxy may claim to be a dict.
    kind: type[Any] = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict:
        copy: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(type(key).__name__)
            copy[key] = item if type(item) is str else _snapshot(item)  # most leaves: no call
        return copy
    if kind is list:
        return [item if type(item) is str else _snapshot(item) for item in value]
    if value is None or kind is str:
        return value
    if kind in _NUMBERS:
        return _Exact(value)
    raise TypeError(kind.__name__)


class CatalogFingerprints:
    """`catalog_fingerprint` of one server's listings, paying only for the tools that changed.

    Each listing is a fresh wire dict per tool, so identity cannot tell a tool unchanged. Each
    tool's contract fingerprint is kept beside a copy of its wire dict, under its name; the
    next listing's dict is compared with that copy by `==` (in C, mostly on shared strings),
    its numbers by type and text (`_Exact`), so a hit is the same JSON and the same fingerprint.
    A tool dict that is not plain JSON is hashed every time. An unchanged catalog also reuses
    the last catalog hash. Values are those of `catalog_fingerprint`, always.

    A registry version (add/remove tool) would be cheaper still, but cannot see a schema dict
    mutated in place, which the SDK lists as it is: the comparison is the exact part.
    """

    __slots__ = ("_contracts", "_last")

    def __init__(self) -> None:
        self._contracts: dict[str, tuple[Any, str]] = {}
        """Tool name -> (snapshot of its last wire dict, its contract fingerprint)."""
        self._last: tuple[list[str], str] | None = None

    def of(self, tools: Sequence[Mapping[str, Any]]) -> str:
        # Twice the listing, so a listing never evicts its own tools; a server states its catalog.
        bound = max(_MIN_LISTED, 2 * len(tools))
        contracts = [self._contract(tool, bound) for tool in tools]
        last = self._last
        if last is not None and last[0] == contracts:
            return last[1]
        found = _hash_fingerprints(contracts)
        self._last = (contracts, found)
        return found

    def _contract(self, tool: Mapping[str, Any], bound: int) -> str:
        name: object = tool.get("name")
        if type(name) is not str or type(tool) is not dict:  # not plain JSON: hashed every time
            return contract_fingerprint(tool)
        kept = self._contracts.get(name)
        if kept is not None and kept[0] == tool:  # the snapshot on the left: its `_Exact` decides
            return kept[1]
        found = contract_fingerprint(cast("Mapping[str, Any]", tool))
        try:
            snapshot = _snapshot(tool)
        except (TypeError, RecursionError):  # a value JSON writes with str(): hashed every time, as before
            return found
        if kept is not None:
            del self._contracts[name]  # put back as the newest
        put(self._contracts, name, (snapshot, found), bound)
        return found


def wire_tool(tool: Any) -> dict[str, Any]:
    """A tool in wire shape, from an MCPServer tool, an `mcp_types.Tool`, or a dict."""
    if isinstance(tool, Mapping):
        return dict(cast("Mapping[str, Any]", tool))
    if hasattr(tool, "parameters"):  # mcpserver's internal Tool
        annotations = tool.annotations
        return {
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "inputSchema": tool.parameters,
            "outputSchema": tool.output_schema,
            "annotations": annotations.model_dump(by_alias=True, exclude_none=True) if annotations else None,
        }
    dumped = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    return {k: dumped.get(k) for k in ("name", "title", "description", "inputSchema", "outputSchema", "annotations")}


class FingerprintCache:
    """Fingerprints of tool objects, computed once per object (a swapped tool is a new object)."""

    __slots__ = ("_cache", "_known")

    def __init__(self, known: Callable[[], int] | None = None) -> None:
        self._cache: dict[int, tuple[Any, str, str]] = {}
        self._known = known
        """How many tools the server registers: the cache holds at least twice that."""

    def of(self, tool: Any) -> tuple[str, str]:
        """(schema fingerprint, contract fingerprint) of one tool."""
        key = id(tool)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is tool:
            return hit[1], hit[2]
        wire = wire_tool(tool)
        found = (
            tool,
            schema_fingerprint(wire.get("inputSchema"), wire.get("outputSchema")),
            contract_fingerprint(wire),
        )
        put(self._cache, key, found, _MAX_TOOLS, self._known)  # tools come and go: bounded by the catalog
        return found[1], found[2]


exact_copy = _snapshot
"""A copy of a JSON value that `==` (held on the left) tells apart from any other JSON value."""
