"""Caller-controlled strings never make names or metric series unbounded."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import send_raw

from mcpobs import semconv as S

pytestmark = pytest.mark.anyio


async def test_ten_thousand_bogus_tools_and_methods_make_two_span_names(mcpobs_telemetry):
    async with Client(create_server()) as client:
        for i in range(5_000):
            await client.call_tool(f"no_such_tool_{i}", {})
            with pytest.raises(MCPError):
                await send_raw(client, f"bogus/method_{i}", {})
    names = {s.name for s in mcpobs_telemetry.spans() if s.kind is SpanKind.SERVER}
    assert names - {"server/discover", "tools/list"} == {"tools/call", S.OTHER}
    tool_labels = {p.attributes.get(S.GEN_AI_TOOL_NAME) for p in mcpobs_telemetry.points(S.SERVER_REQUESTS.name)}
    assert tool_labels <= {None, S.OTHER}
    method_labels = {p.attributes[S.MCP_METHOD_NAME] for p in mcpobs_telemetry.points(S.SERVER_REQUESTS.name)}
    assert method_labels <= {"server/discover", "tools/call", "tools/list", S.OTHER}
    assert len(mcpobs_telemetry.points(S.SERVER_OPERATION_DURATION.name)) <= 4


async def test_attribute_values_are_cut_to_the_configured_bound(mcpobs_telemetry):
    huge = "x" * 100_000
    async with Client(create_server()) as client:
        result = await client.call_tool(huge, {})
    assert result.is_error
    # Client and server alike: the span is named without the name, which it carries cut to the bound.
    calls = [s for s in mcpobs_telemetry.spans() if s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"]
    assert {s.name for s in calls} == {"tools/call"} and len(calls) == 2
    for span in calls:
        assert len(span.attributes[S.GEN_AI_TOOL_NAME]) == S.DEFAULT_MAX_ATTRIBUTE_LENGTH
    for s in mcpobs_telemetry.spans():
        for value in s.attributes.values():
            assert not isinstance(value, str) or len(value) <= S.DEFAULT_MAX_ATTRIBUTE_LENGTH
    # A client learns names it has not listed, but never one longer than a tool name may be.
    for metric in (S.CLIENT_REQUESTS, S.CLIENT_OPERATION_DURATION, S.SERVER_REQUESTS):
        labels = {p.attributes.get(S.GEN_AI_TOOL_NAME) for p in mcpobs_telemetry.points(metric.name)}
        assert all(label is None or len(label) <= S.MAX_NAME_LENGTH for label in labels), metric.name


async def test_the_bound_is_configurable():
    import mcpobs
    from mcpobs.testing import capture

    telemetry = capture(max_attribute_length=16)
    try:
        async with Client(create_server()) as client:
            await client.call_tool("a-very-long-unknown-tool-name", {})
        spans = [s for s in telemetry.spans() if s.name == "tools/call"]
        assert {s.kind for s in spans} == {SpanKind.CLIENT, SpanKind.SERVER}
        assert all(s.attributes[S.GEN_AI_TOOL_NAME] == "a-very-long-unkn" for s in spans)
    finally:
        mcpobs.uninstrument()


async def test_non_string_names_and_versions_are_bounded(mcpobs_telemetry):
    async with Client(create_server(), mode="legacy") as client:
        with pytest.raises(MCPError):
            await send_raw(client, "tools/call", {"name": {"nested": ["x"] * 100}, "arguments": {}})
    (span,) = mcpobs_telemetry.spans_named("tools/call", SpanKind.SERVER)
    assert span.attributes[S.OUTCOME] == "client_error"
    for point in mcpobs_telemetry.points(S.SERVER_REQUESTS.name):
        assert point.attributes.get(S.GEN_AI_TOOL_NAME) in (None, S.OTHER)


async def test_the_release_bound_starts_afresh_with_each_instrumentation():
    """16 client versions per process and label; the 17th is `_OTHER` until `uninstrument()`
    (the next instrumentation's series are new ones: a test suite, a re-configured host)."""
    from mcp_types import Implementation

    import mcpobs
    from mcpobs.testing import capture

    async def versions_counted(captured, versions: list[str]) -> set[object]:
        server = create_server()
        for version in versions:
            async with Client(server, client_info=Implementation(name="host", version=version)) as client:
                await client.list_tools()
        return {p.attributes.get(S.CLIENT_VERSION) for p in captured.points(S.CLIENT_REQUESTS.name)}

    try:
        first = capture()
        filled = [f"1.{i}.0" for i in range(S.MAX_RELEASES + 1)]
        assert await versions_counted(first, filled) == {*filled[: S.MAX_RELEASES], S.OTHER}
        mcpobs.uninstrument()
        again = capture()
        assert await versions_counted(again, ["9.9.9"]) == {"9.9.9"}
    finally:
        mcpobs.uninstrument()
