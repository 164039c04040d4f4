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
from collections.abc import Mapping, Sequence
from typing import Any, cast

from mcpobs._core.bounded import put

_LENGTH = 16
_MAX_TOOLS = 4096
"""Tool objects whose fingerprints are remembered; past it the oldest is forgotten."""


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
