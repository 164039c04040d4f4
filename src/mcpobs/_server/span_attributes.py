"""What a request's SERVER span says beyond its labels: of the request, and of a successful reply.

Written in the one batch at the span's end (`ServerMiddleware._end_span`), and only for a span
that records: an unsampled request pays for none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core import content as _content
from mcpobs._core.contract import CatalogFingerprints
from mcpobs._core.methods import URI_METHODS
from mcpobs._core.model import received as _received_model
from mcpobs._core.names import ServerNames, bounded_version
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import identity as _identity
from mcpobs._server import sessions as _sessions
from mcpobs._server.call import Call
from mcpobs._server.catalog_size import CatalogSize


def request_attributes(
    telemetry: Telemetry,
    ctx: Any,
    method: str,
    target_attr: str | None,
    known: str | None,
    later: Mapping[str, Any],
    server_attrs: Mapping[str, Any],
    peer_everywhere: bool,
) -> dict[str, Any]:
    """The request's attributes: `later` (the labels the span did not start with), the server's
    release (`server_attrs`), the request's id, target, content, peer, session and user.

    `peer_everywhere`: who served and who called on every request span; else on the handshake's only.
    """
    tel = telemetry
    params = ctx.params
    peer = peer_everywhere or method in S.HANDSHAKE_METHODS
    if peer:
        attrs: dict[str, Any] = {**later, **server_attrs}
    else:  # the metrics keep the release
        attrs = {k: v for k, v in later.items() if k != S.SERVER_VERSION}
    privacy = tel.privacy
    if ctx.request_id is not None and (request_id := privacy.identifier(ctx.request_id)) is not None:
        attrs[S.JSONRPC_REQUEST_ID] = request_id  # a string id is the caller's text
    if target_attr is not None:
        raw = params.get("name") if params else None
        # the raw name on the span helps find a mangled name; one that is not a string is a value, not a name
        if raw is not None and raw != known and (named := privacy.name(raw)) is not None:
            attrs[target_attr] = named
        if method == "tools/call" and tel.settings.capture_content:
            captured = _content.arguments(params, privacy)
            if captured is not None:
                attrs[S.GEN_AI_TOOL_CALL_ARGUMENTS] = captured
    elif method in URI_METHODS and params:
        uri = params.get("uri")
        if uri is not None and (recorded := privacy.uri(uri)) is not None:
            attrs[S.MCP_RESOURCE_URI] = recorded
    request = ctx.request
    if request is not None:
        _identity.peer_attributes(getattr(request, "client", None), tel, attrs)
    session_id = _sessions.session_id(ctx.session, tel.settings)
    if session_id is not None:
        attrs[S.MCP_SESSION_ID] = session_id
    if peer:
        _identity.client_attributes(ctx.session, tel, attrs)
    _received_model(ctx.meta, attrs, privacy)
    if tel.settings.record_user:
        _identity.user_attribute(tel, attrs)
    return attrs


After = Callable[[Call, Any, Any], "dict[str, Any] | None"]
"""What a successful reply adds to its span: (call, ctx, result) -> attributes, or None."""


class ReplyAttributes:
    """What a successful reply adds to its span, by method (`by_method`)."""

    def __init__(self, telemetry: Telemetry, names: ServerNames, releases: Mapping[str, Any]) -> None:
        self.telemetry = telemetry
        self.names = names
        self.catalogs = CatalogFingerprints()
        self.catalog_size = CatalogSize(telemetry, releases)
        self.by_method: dict[str, After] = {
            "tools/call": self.tools_call,
            "tools/list": self.tools_list,
            "server/discover": self.session,
            "initialize": self.session,
        }

    def tools_call(self, call: Call, ctx: Any, result: Any) -> dict[str, Any] | None:
        if not self.telemetry.settings.capture_content or not call.span.is_recording():
            return None
        captured = _content.result(result, self.telemetry.privacy)
        return {S.GEN_AI_TOOL_CALL_RESULT: captured} if captured is not None else None

    def tools_list(self, call: Call, ctx: Any, result: Any) -> dict[str, Any] | None:
        if not isinstance(result, dict):
            return None
        reply = cast("dict[str, object]", result)
        tools = reply.get("tools")
        if not isinstance(tools, list):  # the size metric is set unsampled too
            return None
        listed = cast("list[Mapping[str, Any]]", tools)
        fingerprint = self.catalogs.of(listed)
        attrs: dict[str, Any] = {S.CATALOG_FINGERPRINT: fingerprint}
        attrs.update(self.catalog_size.listed(fingerprint, listed, ctx.params, reply))
        if isinstance(ttl := reply.get("ttlMs"), int):
            attrs[S.CATALOG_TTL_MS] = ttl
        if isinstance(scope := reply.get("cacheScope"), str):
            attrs[S.CATALOG_CACHE_SCOPE] = self.telemetry.bound(scope)
        return attrs

    def session(self, call: Call, ctx: Any, result: Any) -> dict[str, Any] | None:
        """Logged for every session, sampled or not: it is the one record of what a client found."""
        if hasattr(result, "model_dump"):  # a framework's typed result (FastMCP's), not the wire dict
            result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        reply = cast("dict[str, object]", result) if isinstance(result, dict) else None
        capabilities = reply.get("capabilities") if reply is not None else None
        offered = self.names.offered_counts(
            cast("dict[str, object]", capabilities) if isinstance(capabilities, dict) else {}
        )
        attrs = _identity.describe_session(ctx, result, offered, self.telemetry)
        negotiated = reply.get("protocolVersion") if reply is not None else None
        if call.method == "initialize" and isinstance(negotiated, str):
            # The connection still held its default version when the span opened: the reply says which it is.
            version = bounded_version(negotiated)
            call.labels_key = (call.labels_key[0], version, *call.labels_key[2:])
            attrs[S.MCP_PROTOCOL_VERSION] = version
        return attrs
