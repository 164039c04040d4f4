"""The shared test helpers: real servers over each transport, and the spans they leave.

Serve a real server over Streamable HTTP on loopback (`serve_http`) or over stdio in a
subprocess (`stdio_params`); `connected` gives a `Client` over any in-process transport.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters
from opentelemetry.trace import SpanKind

from mcpobs._cli.serving import serve as serve_http

HERE = Path(__file__).parent

TRANSPORTS = ["auto", "legacy", "http"]
"""In memory (the direct dispatcher), in memory over JSON-RPC (2025-11-25), Streamable HTTP on loopback."""


RAW_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def raw_session(http: Any, url: str) -> dict[str, str]:
    """Open a legacy (2025-11-25) Streamable HTTP session by hand; returns the headers to send in it."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    reply = http.post(url, json=init, headers=RAW_HEADERS)
    session = {**RAW_HEADERS, "mcp-session-id": reply.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


def stdio_params(spans_file: Path, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """Launch tests/stdio_server.py, which writes its finished spans to `spans_file`."""
    return StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "stdio_server.py"), str(spans_file), *args],
        env={**os.environ, **(env or {})},
    )


def read_spans(spans_file: Path) -> list[dict[str, Any]]:
    """Spans the stdio server wrote, one JSON object per line."""
    if not spans_file.exists():
        return []
    return [json.loads(line) for line in spans_file.read_text().splitlines() if line.strip()]


async def send_raw(client: Any, method: str, params: dict[str, Any] | None) -> Any:
    """Send a request the SDK's typed client never would (an unknown method, malformed params)."""
    data: dict[str, Any] = {"method": method, "params": dict(params or {})}
    opts: dict[str, Any] = {}
    client.session._stamp(data, opts)
    return await client.session._dispatcher.send_raw_request(data["method"], data.get("params"), opts)


def client_for(transport: str, server: Any, base_url: str | None = None) -> Any:
    """A `Client` for one of the in-process transports: auto, legacy or http."""
    from mcp import Client

    if transport == "http":
        assert base_url is not None
        return Client(base_url + "/mcp")
    return Client(server, mode=transport)


async def eventually(find: Any, timeout: float = 5.0) -> Any:
    """Poll `find` until it returns something truthy: a server ends its span a moment after a client gives up."""
    import anyio

    deadline = time.monotonic() + timeout
    while True:
        found = find()
        if found or time.monotonic() > deadline:
            return found
        await anyio.sleep(0.02)


@asynccontextmanager
async def connected(transport: str, server: Any, **client_kwargs: Any) -> AsyncIterator[Any]:
    """A `Client` for `server` over `transport` (one of TRANSPORTS, or `http-legacy`), serving it if needed."""
    from mcp import Client

    with ExitStack() as stack:
        if transport in ("http", "http-legacy"):
            url = stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp"
            mode = "legacy" if transport == "http-legacy" else "auto"
            client = Client(url, mode=mode, **client_kwargs)
        else:
            client = Client(server, mode=transport, **client_kwargs)
        async with client:
            yield client


async def run_calls(transport: str, calls: Callable[[Any], Awaitable[None]], server: Any = None) -> None:
    """Run `calls(client)` against `server` (the shop by default) over `transport`."""
    if server is None:
        from shop import create_server

        server = create_server()
    async with connected(transport, server) as client:
        await calls(client)


def server_spans(telemetry: Any, name: str | None = None) -> list[Any]:
    """The SERVER spans captured, all of them or those named `name`."""
    spans = telemetry.spans() if name is None else telemetry.spans_named(name)
    return [s for s in spans if s.kind is SpanKind.SERVER]


def client_spans(telemetry: Any, name: str) -> list[Any]:
    return telemetry.spans_named(name, SpanKind.CLIENT)
