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
import marshal
from collections.abc import Mapping, Sequence
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


class CatalogFingerprints:
    """`catalog_fingerprint` of one server's listings, paying only for the tools that changed.

    Each listing is a fresh wire dict per tool, so nothing can be cached by identity: a tool's
    contract fingerprint is kept under the exact bytes of its dict instead (`marshal`, about a
    fifth of a canonical encoding and hash). Those bytes tell `True` from `1` from `1.0`, which
    `==` would not, so a hit is the same JSON and the same fingerprint. An unchanged catalog
    also reuses the last catalog hash. Values are those of `catalog_fingerprint`, always.
    """

    __slots__ = ("_contracts", "_last")

    def __init__(self) -> None:
        self._contracts: dict[bytes, str] = {}
        self._last: tuple[list[str], str] | None = None

    def of(self, tools: Sequence[Mapping[str, Any]]) -> str:
        # Twice the listing, so a listing never evicts its own tools; a server states its catalog.
        bound = max(_MIN_LISTED, 2 * len(tools))
        contracts = [self._contract(tool, bound) for tool in tools]
        last = self._last
        if last is not None and last[0] == contracts:
            return last[1]
        found = _hash(contracts)
        self._last = (contracts, found)
        return found

    def _contract(self, tool: Mapping[str, Any], bound: int) -> str:
        try:
            # Version 2 writes no back-references: equal values give equal bytes whatever shares
            # them (version 4 marks objects by reference count, so a copy misses).
            key = marshal.dumps(cast("Any", tool), 2)
        except ValueError:  # what marshal cannot write exactly (a dict subclass, a value the JSON writes with str())
            return contract_fingerprint(tool)
        found = self._contracts.get(key)
        if found is None:
            found = put(self._contracts, key, contract_fingerprint(tool), bound)
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

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, str, str]] = {}

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
        put(self._cache, key, found, _MAX_TOOLS)  # tools come and go on a live server: never grow without bound
        return found[1], found[2]
