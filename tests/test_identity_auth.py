"""The verified token's subject is personal data: recorded only when the user opts in."""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from opentelemetry.trace import SpanKind
from transports import serve_http

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


class StaticVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        if token != "staff-token":
            return None
        return AccessToken(token=token, client_id="support-desk", scopes=[], subject="staff-42")


def authenticated_server() -> MCPServer:
    server = MCPServer(
        "shop",
        auth=AuthSettings(issuer_url="https://auth.shop.invalid", resource_server_url="http://127.0.0.1/mcp"),
        token_verifier=StaticVerifier(),
    )

    @server.tool()
    def whoami() -> str:
        return "a member of staff"

    return server


@pytest.mark.parametrize("record_user", [False, True])
async def test_the_subject_is_recorded_only_when_opted_in(record_user):
    telemetry = capture(record_user=record_user)
    try:
        server = authenticated_server()
        with serve_http(server.streamable_http_app()) as base_url:
            headers = {"Authorization": "Bearer staff-token"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(base_url + "/mcp", http_client=http)) as client,
            ):
                assert not (await client.call_tool("whoami", {})).is_error
    finally:
        mcpobs.uninstrument()
    (span,) = telemetry.spans_named("tools/call whoami", SpanKind.SERVER)
    if record_user:
        assert span.attributes[S.USER_ID] == "staff-42"
    else:
        assert S.USER_ID not in span.attributes
    everything = str([dict(s.attributes) for s in telemetry.spans()])
    assert "staff-token" not in everything  # the token itself, never
