"""What mcpobs adds to the client's outgoing messages, and what it reads from the SDK's requests.

Over HTTP `traceparent` also rides as a header, so the server's transport boundary can put a
request it refuses in the caller's trace; a notification (`notifications/cancelled`) carries
the trace context in `_meta`; a tools/call asks for the server's verdict and carries the schema fingerprint of the
listing the session holds. The caller's own keys always win.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._client.calls import ClientCall
from mcpobs._core import propagation as _propagation


def trace_meta(baggage: bool = False) -> dict[str, Any]:
    """The current trace context as `_meta` entries (`baggage`: the host's baggage too)."""
    meta: dict[str, Any] = {}
    _propagation.inject(meta, baggage=baggage)
    return meta


def with_meta(args: Any, kwargs: Any, extra: Mapping[str, Any]) -> tuple[Any, Any]:
    """`send_raw_request`/`notify` arguments with `extra` added to the params' `_meta`."""
    params = args[1] if len(args) > 1 else kwargs.get("params")
    if not extra or (params is not None and not isinstance(params, Mapping)):
        return args, kwargs
    out: dict[str, Any] = dict(cast("Mapping[str, Any]", params or {}))
    out["_meta"] = {**extra, **(out.get("_meta") or {})}
    if len(args) > 1:
        return (args[0], out, *args[2:]), kwargs
    return args, {**kwargs, "params": out}


def tool_call_meta(kwargs: Any, fingerprint: str | None) -> tuple[Any, bool]:
    """`ClientSession.call_tool` keyword arguments asking for the server's verdict (and with the
    schema fingerprint of the listing held, if any) in `meta`; the caller's own keys win.

    Also whether the verdict is asked by mcpobs: not when the caller's `meta` names the key
    itself (then the verdict is the caller's to read, and left in the result).
    """
    held: Mapping[str, Any] | None = kwargs.get("meta")
    ours: dict[str, Any] = {S.META_VERDICT_WANTED: S.VERDICT_VERSION}
    if fingerprint is not None:
        ours[S.META_SCHEMA_FINGERPRINT] = fingerprint
    if held:
        ours.update(held)
    return {**kwargs, "meta": ours}, not held or S.META_VERDICT_WANTED not in held


def with_trace_header(call: ClientCall, args: Any, kwargs: Any) -> tuple[Any, Any]:
    """`send_raw_request` arguments with `traceparent` in the HTTP headers, for an HTTP session."""
    network = call.labels_key[4]  # the session's network labels, found when the call opened
    if network is None or network.labels.get(S.NETWORK_PROTOCOL_NAME) != "http":
        return args, kwargs
    opts = args[2] if len(args) > 2 else kwargs.get("opts")
    opts = dict(opts or {})
    headers = dict(opts.get("headers") or {})
    _propagation.inject(headers, baggage=call.recorder.telemetry.settings.send_baggage)
    opts["headers"] = headers
    if len(args) > 2:
        return (*args[:2], opts, *args[3:]), kwargs
    return args, {**kwargs, "opts": opts}


def method_of(args: Any, kwargs: Any) -> str | None:
    request = args[0] if args else kwargs.get("request")
    return getattr(request, "method", None)


def params_of(request: Any) -> dict[str, Any] | None:
    """The request's params that name its target; the rest (arguments) is private."""
    params = getattr(request, "params", None)
    if params is None:
        return None
    if isinstance(params, Mapping):
        return dict(cast("Mapping[str, Any]", params))
    found: dict[str, Any] = {}
    for field, key in (
        ("name", "name"),
        ("uri", "uri"),
        ("protocol_version", "protocolVersion"),
        ("cursor", "cursor"),
        ("task_id", "taskId"),  # tasks/*: which task (its hash only is ever recorded)
    ):
        value = getattr(params, field, None)
        if value is not None:
            found[key] = value
    return found
