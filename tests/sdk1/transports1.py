"""The mcp 1.x line's server test helpers: a real 1.x `ClientSession` to a real server, over each transport.

In memory (`create_connected_server_and_client_session`), over Streamable HTTP and SSE on
loopback (a real uvicorn, `mcpobs._cli.serving.serve`), and over stdio in a subprocess
(`servers_stdio.py`, which writes its spans as JSON lines). The servers come from
`servers1.py`. Telemetry is captured with `clients=False`: these are the server's truths, and
what a 1.x client records is the client side's to test.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from opentelemetry.trace import SpanKind
from servers1 import http_app, lowlevel

import mcpobs
from mcpobs._cli.serving import serve
from mcpobs.testing import CapturedTelemetry, capture

HERE = Path(__file__).parent
IN_PROCESS = ["memory", "http", "sse"]
"""The transports a test serves on in its own process; stdio is a subprocess (`stdio_params`)."""


@pytest.fixture
def telemetry() -> Iterator[CapturedTelemetry]:
    """mcpobs instrumented (servers only) into in-memory exporters for one test."""
    captured = capture(clients=False)
    try:
        yield captured
    finally:
        mcpobs.uninstrument()
        captured.tracer_provider.shutdown()
        captured.meter_provider.shutdown()


@contextmanager
def served(server: Any, transport: str = "http") -> Iterator[str]:
    """`server` served on loopback over "http" (Streamable HTTP) or "sse"; yields the endpoint URL."""
    app, path = http_app(server, transport)
    with serve(app) as base_url:
        yield base_url + path


@asynccontextmanager
async def session_over(
    transport: str, server: Any, headers: dict[str, str] | None = None, **kwargs: Any
) -> AsyncIterator[ClientSession]:
    """An initialized 1.x `ClientSession` to `server` over "memory", "http" or "sse"."""
    if transport == "memory":
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(lowlevel(server), **kwargs) as session:
            yield session
        return
    with served(server, transport) as url:
        async with session_at(url, transport, headers, **kwargs) as session:
            yield session


@asynccontextmanager
async def session_at(
    url: str, transport: str, headers: dict[str, str] | None = None, **kwargs: Any
) -> AsyncIterator[ClientSession]:
    """An initialized 1.x `ClientSession` to the server at `url` ("http" or "sse")."""
    import httpx

    if transport == "http":
        from mcp.client.streamable_http import streamable_http_client

        async with (
            httpx.AsyncClient(headers=headers or {}, timeout=30) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write, **kwargs) as session,
        ):
            await session.initialize()
            yield session
        return
    from mcp.client.sse import sse_client

    async with sse_client(url, headers=headers) as (read, write), ClientSession(read, write, **kwargs) as session:
        await session.initialize()
        yield session


def stdio_params(host: str, spans_file: Path, **env: str) -> Any:
    """Launch `servers_stdio.py`: the shop on `host`, instrumented, writing its spans to `spans_file`."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "servers_stdio.py"), host, str(spans_file)],
        env={**os.environ, **env},
    )


@asynccontextmanager
async def session_on_stdio(host: str, spans_file: Path, **kwargs: Any) -> AsyncIterator[ClientSession]:
    from mcp.client.stdio import stdio_client

    async with stdio_client(stdio_params(host, spans_file)) as (read, write), ClientSession(read, write, **kwargs) as s:
        await s.initialize()
        yield s


def read_spans(spans_file: Path) -> list[dict[str, Any]]:
    """The spans a stdio server wrote, one JSON object per line."""
    if not spans_file.exists():
        return []
    found = []
    for line in spans_file.read_text().splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:  # the last line, half written as we read: the next poll has it whole
            continue
    return found


def server_spans(telemetry: CapturedTelemetry, name: str | None = None) -> list[Any]:
    spans = telemetry.spans() if name is None else telemetry.spans_named(name)
    return [s for s in spans if s.kind is SpanKind.SERVER]


async def eventually(find: Any, timeout: float = 5.0) -> Any:
    """Poll `find` until it returns something truthy: a server ends its span a moment after a client gives up."""
    import anyio

    deadline = time.monotonic() + timeout
    while True:
        found = find()
        if found or time.monotonic() > deadline:
            return found
        await anyio.sleep(0.02)
