"""What every framework's test checks, whichever venv it runs in.

A framework is driven through its own API (no model) by an adapter: `adapter(target, calls)`
makes each call in `calls` (a tool name and its arguments) against `target` (a URL for
Streamable HTTP, or `StdioServerParameters`) and returns what the host saw for each: the
framework's returned object, or the exception it raised.

`http_table` and `stdio_table` run the five calls of `CALLS` against an instrumented server
and check one CLIENT span per call that reached the wire, the server's span its child, named
alike, with the client's (outcome, boundary) equal to the server's. A framework that refuses a
call itself (dspy checks arguments against the listed schema; mcp-haystack looks a tool's name
up on the server before it will build the tool) sends nothing for it: no span on either side.

`host_views` runs the five calls over HTTP with mcpobs on neither side, on the server only and on
both, and returns what the host held each time, serialized: it must be the same (invisible to the
host; a failed call's result is where a server's verdict would show).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path
from typing import Any

from opentelemetry.trace import SpanKind
from transports import read_spans, serve_http, stdio_params

from mcpobs import semconv as S

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("ok", "get_order_status", {"order_id": "O-1873"}),
    ("tool error", "get_order_status", {"order_id": "O-7144"}),
    ("crash", "quote_refund", {"order_id": "O-1873", "amount_cents": -5}),
    ("unknown tool", "shop__get_order_status", {"order_id": "O-1873"}),
    ("bad arguments", "quote_refund", {"order_id": "O-1873", "amount_cents": "many"}),
]
EXPECTED = {
    "ok": ("ok", None),
    "tool error": ("tool_error", "handler"),
    "crash": ("server_error", "handler"),
    "unknown tool": ("client_error", "discovery"),
    "bad arguments": ("client_error", "arguments"),
}
STALE = {"shop__get_order_status": "get_order_status"}
"""A name the server does not have, and the listed tool a stale listing knew it as: a framework
whose tools are built from a listing calls it through a tool built from that entry, renamed."""

SERVERS = ["mcpserver", "fastmcp"]

Adapter = Callable[[Any, list[tuple[str, dict[str, Any]]]], Awaitable[list[Any]]]

TABLES = Path(os.environ["MCPOBS_FRAMEWORK_TABLES"]) if os.environ.get("MCPOBS_FRAMEWORK_TABLES") else None
"""Where to append each run's outcome table (JSON lines), for the closing note."""


def listed_as(listed: dict[str, Any], name: str) -> Any:
    """The listing entry a framework builds its tool for `name` from (see `STALE`), or None."""
    return listed.get(name) or listed.get(STALE.get(name, ""))


def server(kind: str) -> Any:
    if kind == "fastmcp":
        from fastmcp_shop import create_server

        return create_server()
    from shop import create_server

    return create_server()


def _app(kind: str, instance: Any) -> Any:
    return instance.http_app() if kind == "fastmcp" else instance.streamable_http_app()


def _stdio_env(kind: str) -> dict[str, str]:
    return {"MCPOBS_TEST_SERVER": "fastmcp"} if kind == "fastmcp" else {}


def _verdict(attrs: Any) -> tuple[Any, Any]:
    return attrs[S.OUTCOME], attrs.get(S.FAILURE_BOUNDARY)


def _record(framework: str, kind: str, transport: str, client: list[Any], served: list[Any]) -> None:
    if TABLES is not None:
        with TABLES.open("a") as f:
            row = {
                "framework": framework,
                "server": kind,
                "transport": transport,
                "client": client,
                "server_side": served,
            }
            f.write(json.dumps(row) + "\n")


def _client_calls(telemetry: Any) -> list[Any]:
    return sorted(
        (s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and s.name.startswith("tools/call")),
        key=lambda s: s.start_time,
    )


def _sent(refuses: Collection[str]) -> list[str]:
    sent = [label for label, _, _ in CALLS if label not in refuses]
    assert len(sent) + len(refuses) == len(CALLS), f"unknown labels in {refuses}"
    return sent


async def http_table(
    telemetry: Any, framework: str, adapter: Adapter, kind: str, refuses: Collection[str] = ()
) -> list[Any]:
    """The five calls over Streamable HTTP; returns what the host saw."""
    with serve_http(_app(kind, server(kind))) as base:
        port = int(base.rsplit(":", 1)[1])
        seen = await adapter(base + "/mcp", [(name, args) for _, name, args in CALLS])
    calls = _client_calls(telemetry)
    sent = _sent(refuses)
    assert len(calls) == len(sent), [c.name for c in calls]  # one CLIENT span per call sent, none doubled
    where = {
        S.SERVER_ADDRESS: "127.0.0.1",
        S.SERVER_PORT: port,
        S.NETWORK_TRANSPORT: "tcp",
        S.NETWORK_PROTOCOL_NAME: "http",
        S.NETWORK_PROTOCOL_VERSION: "1.1",
        S.MCP_METHOD_NAME: "tools/call",
    }
    for span in calls:
        assert {k: span.attributes.get(k) for k in where} == where, span.name
        assert span.attributes.get(S.MCP_PROTOCOL_VERSION), span.name
    served = {
        s.parent.span_id: s
        for s in telemetry.spans()
        if s.kind is SpanKind.SERVER and s.name.startswith("tools/call") and s.parent is not None
    }
    all_served = [s for s in telemetry.spans() if s.kind is SpanKind.SERVER and s.name.startswith("tools/call")]
    assert len(all_served) == len(sent), "the calls the framework refused itself reached no server"
    pairs = [(c, served.get(c.context.span_id)) for c in calls]
    assert all(s is not None for _, s in pairs), "each server span is its client span's child"
    assert [c.name for c, _ in pairs] == [s.name for _, s in pairs if s is not None]
    client_table = [_verdict(c.attributes) for c, _ in pairs]
    server_table = [_verdict(s.attributes) for _, s in pairs if s is not None]
    _record(framework, kind, "http", client_table, server_table)
    assert server_table == [EXPECTED[label] for label in sent]
    assert client_table == server_table
    return seen


async def stdio_table(
    telemetry: Any, framework: str, adapter: Adapter, kind: str, tmp_path: Path, refuses: Collection[str] = ()
) -> list[Any]:
    """The five calls over stdio (the server a subprocess writing its spans to a file)."""
    spans_file = tmp_path / "spans.jsonl"
    seen = await adapter(stdio_params(spans_file, env=_stdio_env(kind)), [(name, args) for _, name, args in CALLS])
    calls = _client_calls(telemetry)
    sent = _sent(refuses)
    assert len(calls) == len(sent), [c.name for c in calls]
    for span in calls:
        assert span.attributes.get(S.NETWORK_TRANSPORT) == "pipe", span.name
        assert span.attributes.get(S.MCP_PROTOCOL_VERSION), span.name
    all_served = [s for s in read_spans(spans_file) if s["kind"] == "SERVER" and s["name"].startswith("tools/call")]
    assert len(all_served) == len(sent), "the calls the framework refused itself reached no server"
    served = {s["parent_id"]: s for s in all_served}
    pairs = [(c, served.get(f"{c.context.span_id:016x}")) for c in calls]
    assert all(s is not None for _, s in pairs), "each server span is its client span's child"
    assert [c.name for c, _ in pairs] == [s["name"] for _, s in pairs if s is not None]
    client_table = [_verdict(c.attributes) for c, _ in pairs]
    server_table = [_verdict(s["attributes"]) for _, s in pairs if s is not None]
    _record(framework, kind, "stdio", client_table, server_table)
    assert server_table == [EXPECTED[label] for label in sent]
    assert client_table == server_table
    return seen


def serialized(seen: Any) -> Any:
    """What the host holds, as JSON: a pydantic model or dataclass dumped, anything else as JSON would write it."""
    if isinstance(seen, BaseException):
        return {"raised": type(seen).__qualname__, "message": str(seen)}
    if hasattr(seen, "model_dump"):  # which fields were set too: `_meta` unset is not `_meta: {}`
        return {
            "all": seen.model_dump(mode="json", by_alias=True),
            "set": seen.model_dump(mode="json", by_alias=True, exclude_unset=True),
        }
    if dataclasses.is_dataclass(seen) and not isinstance(seen, type):
        return json.loads(json.dumps(dataclasses.asdict(seen), default=repr))
    return json.loads(json.dumps(seen, default=repr))


SIDES: dict[str, dict[str, Any] | None] = {"neither": None, "server only": {"clients": False}, "both": {}}
"""Where mcpobs runs (`capture` options; None: not at all)."""


async def host_views(adapter: Adapter, kind: str) -> dict[str, list[Any]]:
    """What the host held for each of the five calls over HTTP, by `SIDES` (the server made after
    (un)instrumenting, so it is instrumented exactly when its side is)."""
    import mcpobs
    from mcpobs.testing import capture

    views: dict[str, list[Any]] = {}
    for side, options in SIDES.items():
        mcpobs.uninstrument()
        captured = capture(**options) if options is not None else None
        try:
            with serve_http(_app(kind, server(kind))) as base:
                seen = await adapter(base + "/mcp", [(name, arguments) for _, name, arguments in CALLS])
        finally:
            mcpobs.uninstrument()
        if side == "both":
            assert captured is not None and _client_calls(captured), "the client side was instrumented"
        views[side] = [serialized(each) for each in seen]
    return views


def outcomes(seen: list[Any]) -> list[str]:
    """What the host saw, by kind: `result`, `error` (an is_error result), or the exception's class."""
    kinds = []
    for each in seen:
        if isinstance(each, BaseException):
            kinds.append(type(each).__name__)
        else:
            kinds.append("error" if getattr(each, "is_error", getattr(each, "isError", False)) else "result")
    return kinds
