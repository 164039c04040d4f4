"""The 1.x client tests' servers: real ones, in process, over HTTP and SSE on loopback, and over stdio.

- `shop()`: the seeds' shop as a FastMCP 1 server (`mcp.server.fastmcp`), on the installed 1.x SDK.
  Its own telemetry is not what these tests check: they read the CLIENT spans.
- `server23_http` / `server23_stdio`: the shop on mcp 2.3 (`tests/shop.py`, or FastMCP 4's with
  `kind="fastmcp"`), instrumented, in a subprocess of the main venv (`.venv`), writing its spans
  as JSON lines: the other side of a cross-line trace.
- `stdio1`: the FastMCP 1 shop over stdio in a subprocess of this venv (`clients_stdio1.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.stdio import StdioServerParameters
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from opentelemetry.trace import SpanKind

from mcpobs._cli.serving import serve as serve_http

HERE = Path(__file__).parent
TESTS = HERE.parent
ROOT = TESTS.parent
MAIN_PYTHON = ROOT / ".venv" / "bin" / "python"
ORDERS = {"O-1873": "delivered", "O-2001": "shipped"}

# The calls whose outcomes both sides must agree on (as tests/frameworks), and what each is.
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("ok", "get_order_status", {"order_id": "O-1873"}),
    ("tool error", "get_order_status", {"order_id": "O-7144"}),
    ("crash", "quote_refund", {"order_id": "O-1873", "amount_cents": -5}),
    ("unknown tool", "shop__get_order_status", {"order_id": "O-1873"}),
    ("bad arguments", "quote_refund", {"order_id": "O-1873", "amount_cents": "many"}),
]
EXPECTED = [
    ("ok", None),
    ("tool_error", "handler"),
    ("server_error", "handler"),
    ("client_error", "discovery"),
    ("client_error", "arguments"),
]


def shop(name: str = "shop", **options: Any) -> FastMCP:
    """The shop as a FastMCP 1 server: every outcome a client can meet."""
    mcp = FastMCP(name, **options)

    @mcp.tool()
    def get_order_status(order_id: str) -> dict[str, str]:
        """Look up one order's status."""
        if order_id not in ORDERS:
            raise ToolError(f"Unknown order {order_id}; call find_orders first.")
        return {"order_id": order_id, "status": ORDERS[order_id]}

    @mcp.tool()
    def quote_refund(order_id: str, amount_cents: int) -> str:
        """Quote a refund; crashes on a bug for negative amounts."""
        if amount_cents < 0:
            raise RuntimeError("refund ledger corrupted")
        return f"refund of {amount_cents} for {order_id}"

    @mcp.tool()
    async def slow_export(ctx: Context, rows: int = 3) -> str:  # type: ignore[type-arg]
        """A long-running export that reports progress."""
        for i in range(rows):
            await ctx.report_progress(i + 1, rows, f"exported {i + 1}/{rows}")
        return "done"

    @mcp.tool()
    async def wait_for_stock(sku: str) -> str:
        """Blocks until restocked (never, in tests): a call for clients to give up on."""
        await anyio.sleep(60)
        return f"{sku} in stock"

    @mcp.prompt()
    def refund_reply(customer: str) -> str:
        """A reply to a refund request."""
        return f"Dear {customer}, your refund is on its way."

    @mcp.resource("shop://catalog")
    def catalog() -> str:
        """The catalog."""
        return "widgets, gadgets"

    return mcp


def client_spans(telemetry: Any, name: str | None = None) -> list[Any]:
    """The CLIENT spans captured (named `name`), in the order they started."""
    spans = [s for s in telemetry.spans() if s.kind is SpanKind.CLIENT and (name is None or s.name == name)]
    return sorted(spans, key=lambda s: s.start_time)


def outcome_of(attributes: Any) -> tuple[Any, Any]:
    return attributes.get("mcpobs.outcome"), attributes.get("mcpobs.failure.boundary")


# -- 1.x servers in subprocesses ---------------------------------------------------------------


def stdio1(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """The FastMCP 1 shop over stdio, on this venv's SDK (`clients_stdio1.py`)."""
    return StdioServerParameters(
        command=sys.executable, args=[str(HERE / "clients_stdio1.py"), *args], env={**os.environ, **(env or {})}
    )


# -- the 2.3 side (the main venv) ---------------------------------------------------------------


def main_python() -> str:
    """The main venv's Python (mcp 2.3): the other line's server runs there."""
    if not MAIN_PYTHON.exists():
        pytest.fail(
            f"{MAIN_PYTHON} is missing: the cross-line tests run the mcp 2.3 server in the main venv. "
            "Create it first (scripts/test does; or: source scripts/_venv.sh)."
        )
    return str(MAIN_PYTHON)


def _env(kind: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = str(TESTS)
    if kind != "mcpserver":
        env["MCPOBS_TEST_SERVER"] = kind
    return env


def server23_stdio(spans_file: Path, kind: str = "mcpserver") -> StdioServerParameters:
    """The instrumented 2.3 shop over stdio (`tests/stdio_server.py`), writing its spans to `spans_file`."""
    return StdioServerParameters(
        command=main_python(), args=[str(TESTS / "stdio_server.py"), str(spans_file)], env=_env(kind)
    )


@contextmanager
def server23_http(spans_file: Path, kind: str = "mcpserver") -> Iterator[str]:
    """The instrumented 2.3 shop over Streamable HTTP on loopback (`clients_server23.py`): its base URL."""
    process = subprocess.Popen(
        [main_python(), str(HERE / "clients_server23.py"), str(spans_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(kind),
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.isdigit():
            process.kill()
            _, err = process.communicate(timeout=10)
            raise RuntimeError(f"the 2.3 server did not start: {line!r} {err[-2000:]}")
        yield f"http://127.0.0.1:{line}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def read_spans(spans_file: Path) -> list[dict[str, Any]]:
    """The spans a subprocess server wrote, one JSON object per line."""
    if not spans_file.exists():
        return []
    return [json.loads(line) for line in spans_file.read_text().splitlines() if line.strip()]


def server_spans(spans_file: Path, prefix: str, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The SERVER spans named `prefix...` the subprocess wrote, once there are `count` of them.

    A server ends its span a moment after its reply is on the wire: poll for it.
    """
    deadline = time.monotonic() + timeout
    while True:
        found = [s for s in read_spans(spans_file) if s["kind"] == "SERVER" and s["name"].startswith(prefix)]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


# -- a ClientSession over each 1.x transport ------------------------------------------------------

TRANSPORTS = ["memory", "http", "http-deprecated", "sse", "stdio"]
"""In memory (`create_connected_server_and_client_session`), Streamable HTTP (`streamable_http_client`
and the deprecated `streamablehttp_client`) and SSE on loopback, stdio in a subprocess."""


@asynccontextmanager
async def session(transport: str, server: Any = None, **session_kwargs: Any) -> AsyncIterator[Any]:
    """An initialized `ClientSession` on `server` (the FastMCP 1 shop by default) over `transport`.

    The transport functions are the SDK's own, reached the way a host reaches them (imported by
    name before `instrument()` ran, as frameworks do).
    """
    from mcp import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client, streamablehttp_client
    from mcp.shared import memory

    if server is None and transport != "stdio":
        server = shop()
    async with AsyncExitStack() as stack:
        if transport == "memory":
            yield await stack.enter_async_context(
                memory.create_connected_server_and_client_session(server, **session_kwargs)
            )
            return
        if transport in ("http", "http-deprecated"):
            base = stack.enter_context(serve_http(server.streamable_http_app()))
            opened = streamable_http_client if transport == "http" else streamablehttp_client
            read, write, _ = await stack.enter_async_context(opened(base + "/mcp"))
        elif transport == "sse":
            base = stack.enter_context(serve_http(server.sse_app()))
            read, write = await stack.enter_async_context(sse_client(base + "/sse"))
        else:
            read, write = await stack.enter_async_context(stdio_client(server or stdio1()))
        client = await stack.enter_async_context(ClientSession(read, write, **session_kwargs))
        await client.initialize()
        yield client


# -- what a 1.x server received ---------------------------------------------------------------------


@contextmanager
def received_meta() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Every (method, `_meta`) an in-process 1.x server receives, requests and notifications, in order.

    Observed by wrapping the 1.x server's own entry points for the block (requests at
    `ServerSession._received_request`, notifications at `_received_notification`).
    """
    import wrapt
    from mcp.server.session import ServerSession
    from opentelemetry.instrumentation.utils import unwrap

    seen: list[tuple[str, dict[str, Any]]] = []

    def meta_dict(meta: Any) -> dict[str, Any]:
        return meta.model_dump(by_alias=True, exclude_none=True) if meta is not None else {}

    async def on_request(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        responder = args[0]
        seen.append((responder.request.root.method, meta_dict(responder.request_meta)))
        return await wrapped(*args, **kwargs)

    async def on_notification(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        root = args[0].root
        seen.append((root.method, meta_dict(getattr(root.params, "meta", None) if root.params else None)))
        return await wrapped(*args, **kwargs)

    wrapt.wrap_function_wrapper(ServerSession, "_received_request", on_request)
    wrapt.wrap_function_wrapper(ServerSession, "_received_notification", on_notification)
    try:
        yield seen
    finally:
        unwrap(ServerSession, "_received_notification")
        unwrap(ServerSession, "_received_request")


def recording_headers(app: Any, seen: list[dict[str, str]]) -> Any:
    """`app` that first notes each HTTP request's method, path and headers in `seen`."""

    async def recorded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            seen.append({":method": scope["method"], ":path": scope["path"], **headers})
        await app(scope, receive, send)

    return recorded


def traceparent_of(span: Any) -> str:
    c = span.context
    return f"00-{c.trace_id:032x}-{c.span_id:016x}-{c.trace_flags:02x}"
