"""Who called, and what they found: client identity on spans and one log line per session.

Most "the tool call returns an error" reports are decided before any handler runs (a
client too old, a tool not offered). A session that describes itself (client, version,
tools offered, capabilities) turns such a report into a diagnosis, and a server answering
with no tools says so plainly (`tools=0`).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from collections.abc import Iterable, Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core.sdk import CLIENT_INFO as _CLIENT_INFO
from mcpobs._core.telemetry import Telemetry
from mcpobs._core.text import for_log

session_logger = logging.getLogger("mcpobs.session")


def server_attributes(server: Any, telemetry: Telemetry) -> dict[str, Any]:
    """What the server calls itself (length-bounded); an unset name or version is left out, not recorded empty."""
    described = {S.SERVER_NAME: getattr(server, "name", None), S.SERVER_VERSION: getattr(server, "version", None)}
    return {k: telemetry.bound(v) for k, v in described.items() if v}


def peer_attributes(peer: Any, telemetry: Telemetry, attrs: dict[str, Any]) -> None:
    """The caller's address and port over HTTP, from the ASGI scope's `client` (host, port).

    Through the privacy step: an address is personal data. Behind a proxy it is whatever a
    forwarding header said (an ASGI server's proxy-headers option copies `X-Forwarded-For` or
    `Forwarded` into the scope), so it is recorded only when it is one valid IP address, in
    its canonical form; anything else (4,096 characters, a list, a name) is left out."""
    if peer:
        host = _address(peer[0])
        address = telemetry.privacy.identifier(host) if host is not None else None
        if address is not None:
            attrs[S.CLIENT_ADDRESS] = address
        if isinstance(peer[1], int):
            attrs[S.CLIENT_PORT] = peer[1]


def _address(host: object) -> str | None:
    """`host` as one IP address (`::1`, `[::1]`, `fe80::1%eth0` included), or None."""
    if type(host) is not str or not 0 < len(host) <= _MAX_ADDRESS:
        return None
    return _parsed(host)


@functools.lru_cache(maxsize=1024)  # a server's callers repeat; parsing is the cost of every HTTP request
def _parsed(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host[1:-1] if host.startswith("[") and host.endswith("]") else host))
    except ValueError:
        return None


_MAX_ADDRESS = 64
"""Characters of an address as the scope may hold it (the longest IPv6 with a zone is under 64)."""


def client_attributes(session: Any, telemetry: Telemetry, attrs: dict[str, Any]) -> None:
    """Client name and version (the client's words: through the privacy step; span attributes only)."""
    params = session.client_params
    info = getattr(params, _CLIENT_INFO) if params is not None else None
    if info is not None:
        name = telemetry.privacy.name  # every server span: no helper call in between
        if (recorded := name(info.name)) is not None:
            attrs[S.CLIENT_NAME] = recorded
        if (recorded := name(info.version)) is not None:
            attrs[S.CLIENT_VERSION] = recorded


def _named(attrs: dict[str, Any], telemetry: Telemetry, attribute: str, value: object) -> None:
    recorded = telemetry.privacy.name(value)
    if recorded is not None:
        attrs[attribute] = recorded


def user_attribute(telemetry: Telemetry, attrs: dict[str, Any]) -> None:
    """The verified token's subject, only when the user opted in (`record_user=True`)."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    if token is not None:
        _named(attrs, telemetry, S.USER_ID, token.subject or token.client_id)


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
    # The revision the client asked for is its own text (at initialize, any string it likes).
    requested: object = params.get("protocolVersion") if ctx.method == "initialize" else ctx.protocol_version
    negotiated = result.get("protocolVersion") or ctx.protocol_version
    attrs: dict[str, Any] = {S.SESSION_CAPABILITIES: capabilities}
    _named(attrs, telemetry, S.SESSION_REQUESTED_VERSION, requested or "")
    for kind, count in offered.items():
        if count is not None:
            attrs[S.SESSION_OFFERED[kind]] = count
    if client:
        _named(attrs, telemetry, S.CLIENT_NAME, client.get("name", ""))
        _named(attrs, telemetry, S.CLIENT_VERSION, client.get("version", ""))
    if session_logger.isEnabledFor(logging.INFO):
        # The line says what the span says (the values through the privacy step), each field on one
        # line and bounded (`text.for_log`): a client cannot forge a line or fill the log.
        counts = " ".join(f"{kind}={'?' if n is None else n}" for kind, n in offered.items())
        session_logger.info(
            "mcp session client=%s/%s protocol=%s requested=%s %s capabilities=%s",
            for_log(attrs.get(S.CLIENT_NAME, "?")),
            for_log(attrs.get(S.CLIENT_VERSION, "?")),
            for_log(negotiated),
            for_log(attrs.get(S.SESSION_REQUESTED_VERSION, "?")),
            counts,
            [for_log(c) for c in capabilities],
        )
    return attrs


_MAX_LISTED = 16
"""Capabilities named on a session's span and line (the specs define fewer than a dozen)."""
