"""The MCP Inspector drives a FastMCP 4 server: the same outcome table as the MCPServer shop's.

A client nobody here wrote (tests/interop/test_inspector_drives_server.py drives the MCPServer
shop the same way), over Streamable HTTP to FastMCP's own `http_app()` on loopback.
"""

from __future__ import annotations

import pytest
from fastmcp_shop import create_server
from opentelemetry.trace import SpanKind, StatusCode
from peers import inspector
from test_inspector_drives_server import counted, outcome_of, tool_call
from transports import serve_http

from mcpobs import semconv as S

pytestmark = pytest.mark.interop


def test_fastmcp_tool_outcomes_over_http(mcpobs_telemetry):
    with serve_http(create_server().http_app()) as base:
        url = base + "/mcp"
        assert inspector([url], *tool_call("get_order_status", "order_id=O-1873"))["isError"] is False
        assert inspector([url], *tool_call("get_order_status", "order_id=O-404"))["isError"] is True
        assert inspector([url], *tool_call("quote_refund", "order_id=O-1", "amount_cents=-5"))["isError"] is True
        assert inspector([url], *tool_call("quote_refund", "order_id=O-1", "amount_cents=lots"))["isError"] is True
    calls = [s for s in mcpobs_telemetry.spans() if s.name.startswith("tools/call")]
    assert all(s.kind is SpanKind.SERVER for s in calls)
    assert [outcome_of(s) for s in calls] == [  # as for the MCPServer shop, row for row
        ("tools/call get_order_status", "ok", None, None, StatusCode.UNSET),
        ("tools/call get_order_status", "tool_error", "handler", "tool_error", StatusCode.ERROR),
        ("tools/call quote_refund", "server_error", "handler", "tool_error", StatusCode.ERROR),
        ("tools/call quote_refund", "client_error", "arguments", None, StatusCode.UNSET),
    ]
    for span in calls:
        assert span.attributes[S.NETWORK_TRANSPORT] == "tcp"
        assert span.attributes[S.CLIENT_NAME] == "inspector-cli"
    tool = {S.MCP_METHOD_NAME: "tools/call"}
    assert counted(mcpobs_telemetry, **tool, **{S.OUTCOME: "server_error", S.ERROR_TYPE: "tool_error"}) == 1
    assert counted(mcpobs_telemetry, **tool, **{S.OUTCOME: "client_error", S.FAILURE_BOUNDARY: "arguments"}) == 1
    assert len(mcpobs_telemetry.spans_named("initialize", SpanKind.SERVER)) == 4  # one session per run
