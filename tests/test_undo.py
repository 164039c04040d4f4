"""uninstrument() undoes instrument(), and instrumenting twice changes nothing.

The undo test runs the same client's day in two fresh processes (tests/undo_scenario.py):
once never instrumented, once against servers, clients and apps built while instrumented
and used after `uninstrument()`. The SDK's own spans (names, kinds, attributes) and every
result must be the same, and nothing of mcpobs may be left but the documented pass-through.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import wrapt
from mcp.server.request_state import RequestStateBoundary
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import TRANSPORTS, run_calls

import mcpobs
from mcpobs._core.patches import Changes
from mcpobs._server.middleware import ServerMiddleware
from mcpobs._server.rounds import RoundCodec
from mcpobs._server.setup import ServerSetup
from mcpobs._server.subscriptions import ObservedSubscriptionBus
from mcpobs._server.transport import TransportBoundary

HERE = Path(__file__).parent


def _scenario(mode: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE / "undo_scenario.py"), mode], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_uninstrument_gives_back_the_sdks_own_spans_and_behaviour():
    never = _scenario("never")
    undone = _scenario("undone")
    assert undone["wrapped_while_instrumented"] >= 20  # the scan below does see wrappers
    assert undone["results"] == never["results"]
    assert len(never["spans"]) > 50
    assert undone["spans"] == never["spans"]  # names, kinds and attributes, as a multiset
    assert undone["mcpobs_spans_after_undo"] == 0
    # What cannot be swapped back is a pass-through (docs/configuration.md, "uninstrument()").
    assert undone["leftovers"] == ["asgi TransportBoundary (serving)"]
    assert never["leftovers"] == []


def _wrappers() -> dict[str, int]:
    """Every wrapt wrapper on an SDK function, with how many wrappers deep it is."""
    depths = {}
    for name, module in list(sys.modules.items()):
        if not (name == "mcp" or name.startswith("mcp.")):
            continue
        places = [(name, vars(module))]
        places += [
            (f"{name}.{k}", vars(v)) for k, v in vars(module).items() if isinstance(v, type) and v.__module__ == name
        ]
        for where, namespace in places:
            for attr, value in list(namespace.items()):
                depth = 0
                while isinstance(value, wrapt.FunctionWrapper):
                    depth += 1
                    value = value.__wrapped__
                if depth:
                    depths[f"{where}.{attr}"] = depth
    return depths


def _assert_set_up_once(server) -> None:
    chain = server.middleware
    assert sum(isinstance(m, ServerMiddleware) for m in chain) == 1
    (boundary,) = [m for m in chain if isinstance(m, RequestStateBoundary)]
    codec = boundary._security.codec
    assert isinstance(codec, RoundCodec) and not isinstance(codec.inner, RoundCodec)
    bus = server._subscriptions
    assert isinstance(bus, ObservedSubscriptionBus) and not isinstance(bus.bus, ObservedSubscriptionBus)
    app = server.streamable_http_app()
    assert sum(m.cls is TransportBoundary for m in app.user_middleware) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_instrumenting_twice_wraps_each_seam_once(mcpobs_telemetry, transport):
    mcpobs.instrument()
    mcpobs.MCPInstrumentor().instrument()  # the zero-code path, on top
    depths = _wrappers()
    assert len(depths) >= 20
    assert set(depths.values()) == {1}, {k: v for k, v in depths.items() if v > 1}
    server = create_server()
    _assert_set_up_once(server)

    async def calls(client):
        await client.call_tool("get_order_status", {"order_id": "O-1873"})

    await run_calls(transport, calls, server)
    name = "tools/call get_order_status"
    assert len(mcpobs_telemetry.spans_named(name, SpanKind.SERVER)) == 1
    assert len(mcpobs_telemetry.spans_named(name, SpanKind.CLIENT)) == 1


@pytest.mark.anyio
async def test_the_double_wrap_check_sees_a_double_wrap(mcpobs_telemetry):
    """The checks above fail when a seam really is wrapped twice (forced here, then undone)."""
    from mcpobs._client import seams as client_seams
    from mcpobs._core.config import Settings
    from mcpobs._core.telemetry import Telemetry

    telemetry = Telemetry(Settings(), mcpobs_telemetry.tracer_provider, mcpobs_telemetry.meter_provider)
    twice = Changes()
    twice.wrap(ServerSetup(telemetry, twice).patches() + client_seams.patches(telemetry))
    try:
        assert {v for v in _wrappers().values()} == {1, 2}
        with pytest.raises(AssertionError):
            _assert_set_up_once(create_server())

        async def calls(client):
            await client.call_tool("get_order_status", {"order_id": "O-1873"})

        await run_calls("auto", calls)
        assert len(mcpobs_telemetry.spans_named("tools/call get_order_status", SpanKind.CLIENT)) > 1
    finally:
        twice.undo()
    assert set(_wrappers().values()) == {1}
