"""A `Client` subclass that enters its own way still has its session's duration.

fast-agent-mcp's modern mode subclasses `mcp.Client` and overrides `__aenter__` without calling
it: it builds the session with `_build_session`, sends one `server/discover`, adopts the result
and publishes `_session` and `_exit_stack` itself (leaving is `Client.__aexit__`'s). `_Forced`
below has that shape. Its session must record one `mcp.client.session.duration` sample with the
labels a plain `Client`'s carries, over HTTP and over stdio.
"""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp_types import DiscoverResult
from mcp_types.version import LATEST_MODERN_VERSION
from shop import create_server
from transports import serve_http, stdio_params

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


class _Forced(Client):
    """Enters with one `server/discover` at the newest revision, never through `Client.__aenter__`."""

    async def __aenter__(self) -> _Forced:
        if self._entered:
            raise RuntimeError("already entered")
        self._entered = True
        async with AsyncExitStack() as stack:
            session = await stack.enter_async_context(await self._build_session(stack))
            session.adopt(DiscoverResult.model_validate(await session.send_discover(LATEST_MODERN_VERSION)))
            self._session = session
            self._exit_stack = stack.pop_all()
            return self


def _durations(telemetry: Any) -> list[tuple[dict[str, Any], float]]:
    """Each `mcp.client.session.duration` sample: its labels and its value (a one-sample point's sum)."""
    data = telemetry.reader.get_metrics_data()
    found = []
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == S.CLIENT_SESSION_DURATION.name:
                    found += [(dict(p.attributes), p.sum) for p in metric.data.data_points if p.count == 1]
    return found


@pytest.mark.parametrize("client_class", [Client, _Forced], ids=["Client", "subclass"])
async def test_a_client_subclass_that_enters_its_own_way_has_a_session_duration_over_http(
    mcpobs_telemetry, client_class
):
    with serve_http(create_server().streamable_http_app()) as base:
        port = int(base.rsplit(":", 1)[1])
        started = time.perf_counter()
        async with client_class(base + "/mcp", mode=LATEST_MODERN_VERSION) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
            await anyio.sleep(0.05)  # the session lives at least this long
        lived = time.perf_counter() - started
    ((labels, seconds),) = _durations(mcpobs_telemetry)
    assert labels == {
        S.MCP_PROTOCOL_VERSION: LATEST_MODERN_VERSION,
        S.SERVER_ADDRESS: "127.0.0.1",
        S.SERVER_PORT: port,
        S.NETWORK_TRANSPORT: "tcp",
        S.NETWORK_PROTOCOL_NAME: "http",
        S.NETWORK_PROTOCOL_VERSION: "1.1",
    }
    assert 0.05 <= seconds <= lived


async def test_a_client_subclass_that_enters_its_own_way_has_a_session_duration_over_stdio(
    mcpobs_telemetry, tmp_path: Path
):
    async with _Forced(stdio_client(stdio_params(tmp_path / "spans.jsonl")), mode=LATEST_MODERN_VERSION) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    ((labels, _),) = _durations(mcpobs_telemetry)
    assert labels == {S.MCP_PROTOCOL_VERSION: LATEST_MODERN_VERSION, S.NETWORK_TRANSPORT: "pipe"}


async def test_a_client_subclass_that_fails_to_enter_records_no_session(mcpobs_telemetry):
    """As for a `Client` whose handshake fails: no session was published, so none is recorded."""

    class _Refused(_Forced):
        async def __aenter__(self) -> _Refused:
            async with AsyncExitStack() as stack:
                await stack.enter_async_context(await self._build_session(stack))
            raise ConnectionError("refused by the host")  # after unwinding, as fast-agent's does

    with serve_http(create_server().streamable_http_app()) as base, pytest.raises(ConnectionError):
        async with _Refused(base + "/mcp", mode=LATEST_MODERN_VERSION):
            pass
    assert _durations(mcpobs_telemetry) == []
