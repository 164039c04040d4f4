"""The server's half of the tool-call corpus: the shapes of each tools/call's arguments and result.

Counted on every call, sampled or not (the counts are the corpus's call counts); written on
the span only when it records. A span carries the shape ids always, and the whole shape with
its running count when the `ShapeBook` says so (first sighting, a power of two, an interval),
together with the tool's schemas once per schema per interval: the replay
(`mcpobs contract replay`) needs nothing but these spans.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core import shapes as _shapes
from mcpobs._core.bounded import put
from mcpobs._core.config import Settings
from mcpobs._core.contract import wire_tool
from mcpobs._core.privacy import Privacy
from mcpobs._core.shapes import ShapeBook

_MAX_TOOLS = 4096
"""Tool objects whose compiled shapes are kept; past it the oldest is forgotten, not all of them."""
_ID_LENGTH = 64
"""Characters of a client name or version in the book's key (the span bounds its own copy)."""


class _Tool:
    __slots__ = ("definition", "fingerprint", "input", "output", "reported_at", "tool")

    def __init__(self, tool: Any, fingerprint: str) -> None:
        wire = wire_tool(tool)
        self.tool = tool
        self.fingerprint = fingerprint
        self.input = _shapes.plan(wire.get("inputSchema"))
        self.output = _shapes.plan(wire.get("outputSchema"))
        self.definition = _shapes.dump({"input": wire.get("inputSchema"), "output": wire.get("outputSchema")})
        self.reported_at: float | None = None


class Corpus:
    """One server's shapes: `record` counts a call and returns what its span carries."""

    __slots__ = ("_known", "_privacy", "_settings", "_tools", "book")

    def __init__(
        self, settings: Settings, privacy: Privacy | None = None, known: Callable[[], int] | None = None
    ) -> None:
        self._settings = settings
        self._privacy = privacy if privacy is not None else Privacy(settings)
        """With `capture_content` on, the values shaped (for their unlisted keys) pass its `redact`."""
        self._known = known
        """How many tools the server registers: the compiled shapes kept grow to twice that."""
        self._tools: dict[int, _Tool] = {}
        self.book = ShapeBook()

    def _tool(self, tool: Any, fingerprint: str) -> _Tool:
        hit = self._tools.get(id(tool))
        if hit is not None and hit.tool is tool:
            return hit
        return put(self._tools, id(tool), _Tool(tool, fingerprint), _MAX_TOOLS, self._known)

    def record(
        self,
        name: str,
        tool: Any,
        fingerprint: str,
        session: Any,
        params: Any,
        result: Any,
        now: float,
        recording: bool,
    ) -> dict[str, Any] | None:
        compiled = self._tool(tool, fingerprint)
        info = getattr(getattr(session, "client_params", None), "client_info", None)
        client = (info.name[:_ID_LENGTH], info.version[:_ID_LENGTH]) if info is not None else (None, None)
        settings = self._settings
        free_keys = settings.capture_content
        arguments: object = cast("dict[str, object]", params).get("arguments") if type(params) is dict else None
        if free_keys and settings.redact is not None and arguments is not None:
            arguments = self._privacy.redacted(arguments)
        book = self.book
        limit = settings.max_attribute_length
        attrs: dict[str, Any] = {}
        full = False
        if arguments is not None:
            found = _shapes.shape(arguments, compiled.input, free_keys=free_keys)
            entry, report = book.note((name, fingerprint, "input", *client), found, now, recording)
            attrs[S.TOOL_ARGUMENTS_SHAPE_ID] = entry.id
            if report:
                if len(entry.definition) <= limit:  # a cut definition is no use: left out (max_attribute_length)
                    attrs[S.TOOL_ARGUMENTS_SHAPE_DEFINITION] = entry.definition
                attrs[S.TOOL_ARGUMENTS_SHAPE_COUNT] = entry.count
                full = True
        structured = _structured(result)
        if structured is not None and free_keys and settings.redact is not None:
            structured = self._privacy.redacted(structured)
        if structured is not None:
            found = _shapes.shape(structured, compiled.output, free_keys=free_keys)
            entry, report = book.note((name, fingerprint, "output", *client), found, now, recording)
            attrs[S.TOOL_RESULT_SHAPE_ID] = entry.id
            if report:
                if len(entry.definition) <= limit:
                    attrs[S.TOOL_RESULT_SHAPE_DEFINITION] = entry.definition
                attrs[S.TOOL_RESULT_SHAPE_COUNT] = entry.count
                full = True
        if not recording:
            return None
        if full:
            attrs[S.TOOL_SHAPE_RECORDER] = book.recorder
            if book.evicted:
                attrs[S.TOOL_SHAPES_EVICTED] = book.evicted
            if compiled.reported_at is None or now >= compiled.reported_at + _shapes.REPORT_INTERVAL:
                compiled.reported_at = now
                if len(compiled.definition) <= limit:
                    attrs[S.TOOL_SCHEMA_DEFINITION] = compiled.definition
        return attrs


def _structured(result: Any) -> Any:
    """The structured content of a successful result, as the wire carries it (None when there is none)."""
    if type(result) is dict or isinstance(result, Mapping):
        reply = cast("Mapping[str, Any]", result)
        if reply.get("isError"):
            return None
        return reply.get("structuredContent")
    if getattr(result, "is_error", False):
        return None
    return getattr(result, "structured_content", None)
