"""Who called, and what they found: client identity on spans and one log line per session.

Most "the tool call returns an error" reports are decided before any handler runs (a
client too old, a tool not offered). A session that describes itself (client, version,
tools offered, capabilities) turns such a report into a diagnosis, and a server answering
with no tools says so plainly (`tools=0`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core.sdk import CLIENT_INFO as _CLIENT_INFO
from mcpobs._core.telemetry import Telemetry
from mcpobs._core.text import clean

session_logger = logging.getLogger("mcpobs.session")


def server_attributes(server: Any, telemetry: Telemetry) -> dict[str, Any]:
    """What the server calls itself (length-bounded); an unset name or version is left out, not recorded empty."""
    described = {S.SERVER_NAME: getattr(server, "name", None), S.SERVER_VERSION: getattr(server, "version", None)}
    return {k: telemetry.bound(v) for k, v in described.items() if v}


def peer_attributes(peer: Any, telemetry: Telemetry, attrs: dict[str, Any]) -> None:
    """The caller's address and port over HTTP, from the ASGI scope's `client` (host, port)."""
    if peer:
        attrs[S.CLIENT_ADDRESS] = telemetry.bound(peer[0])
        if isinstance(peer[1], int):
            attrs[S.CLIENT_PORT] = peer[1]


def client_attributes(session: Any, telemetry: Telemetry, attrs: dict[str, Any]) -> None:
    """Client name and version (length-bounded; span attributes only, never metric labels)."""
    params = session.client_params
    info = getattr(params, _CLIENT_INFO) if params is not None else None
    if info is not None:
        attrs[S.CLIENT_NAME] = telemetry.bound(info.name)
        attrs[S.CLIENT_VERSION] = telemetry.bound(info.version)


def user_attribute(telemetry: Telemetry, attrs: dict[str, Any]) -> None:
    """The verified token's subject, only when the user opted in (`record_user=True`)."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    if token is not None:
        attrs[S.USER_ID] = telemetry.bound(token.subject or token.client_id)


def describe_session(ctx: Any, result: Any, offered: Mapping[str, int | None], telemetry: Telemetry) -> dict[str, Any]:
    """Attributes for a server/discover or initialize span, and the session's log line."""
    params: Mapping[str, Any] = ctx.params or {}
    client: object = params.get("clientInfo") if ctx.method == "initialize" else None
    if isinstance(client, Mapping):
        client = cast("Mapping[str, Any]", client)
    else:
        sent = ctx.session.client_params
        info = getattr(sent, _CLIENT_INFO) if sent is not None else None
        client = {"name": info.name, "version": info.version} if info is not None else {}
    result = cast("Mapping[str, Any]", result) if isinstance(result, Mapping) else {}
    declared: Iterable[str] = result.get("capabilities") or {}
    capabilities = [telemetry.bound(c) for c in sorted(declared)[:_MAX_LISTED]]
    requested = params.get("protocolVersion") if ctx.method == "initialize" else ctx.protocol_version
    negotiated = result.get("protocolVersion") or ctx.protocol_version
    attrs: dict[str, Any] = {
        S.SESSION_REQUESTED_VERSION: telemetry.bound(requested or ""),
        S.SESSION_CAPABILITIES: capabilities,
    }
    for kind, count in offered.items():
        if count is not None:
            attrs[S.SESSION_OFFERED[kind]] = count
    if client:
        attrs[S.CLIENT_NAME] = telemetry.bound(client.get("name", ""))
        attrs[S.CLIENT_VERSION] = telemetry.bound(client.get("version", ""))
    counts = " ".join(f"{kind}={'?' if n is None else n}" for kind, n in offered.items())
    session_logger.info(
        "mcp session client=%s/%s protocol=%s requested=%s %s capabilities=%s",
        _field(attrs.get(S.CLIENT_NAME, "?")),
        _field(attrs.get(S.CLIENT_VERSION, "?")),
        _field(negotiated),
        _field(requested),
        counts,
        [_field(c) for c in capabilities],
    )
    return attrs


_MAX_LISTED = 16
"""Capabilities named on a session's span and line (the specs define fewer than a dozen)."""


def _field(value: object, limit: int = S.MAX_NAME_LENGTH) -> str:
    """One value of the session line: whatever the client sent, a short valid string."""
    return clean(value, limit)
