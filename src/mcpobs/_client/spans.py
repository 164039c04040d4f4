"""Opening a client span: its name, its labels (computed once), its parent and its holder.

`open` makes the `ClientCall` that then owns the request's life (`calls`): a call opened in
a multi-round operation is claimed by it (`rounds`), a handshake inside `negotiate_auto` by
the negotiation (`negotiation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanKind

from mcpobs import semconv as S
from mcpobs._client import memory, negotiation
from mcpobs._client import rounds as _rounds
from mcpobs._client.calls import ClientCall, Recorder
from mcpobs._client.names import listed
from mcpobs._core.guard import report
from mcpobs._core.methods import KNOWN_METHODS, TARGETED, TASK_METHODS
from mcpobs._core.names import bounded_version
from mcpobs._core.telemetry import Telemetry

_HANDSHAKES = S.HANDSHAKE_METHODS
_ASKING = frozenset({"tools/call", "prompts/get"})
"""Methods whose failure the client's listing may place (`catalog.judge`): it keeps what they asked."""


def _arguments(request: Any) -> object:
    """The arguments a tools/call or prompts/get request carries (never recorded: only judged)."""
    params = getattr(request, "params", None)
    if type(params) is dict or isinstance(params, Mapping):
        return cast("Mapping[str, object]", params).get("arguments")
    return getattr(params, "arguments", None)


class ClientSpans:
    """Opens client calls, sharing one `Recorder` and one `ClientNames`."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self.recorder = Recorder(telemetry)
        self.names = self.recorder.names
        self.labels = self.recorder.labels
        self._excluded = telemetry.settings.excluded_methods
        self.request_hook = self.recorder.request_hook

    def open(
        self, session: Any, method: str, params: Mapping[str, Any] | None, version: object, request: Any = None
    ) -> ClientCall:
        tel = self.telemetry
        known = method if method in KNOWN_METHODS else S.OTHER
        remembered = memory.remembered(session)
        if version is None:
            version = getattr(session, "protocol_version", None)
            if version is None and remembered is not None:  # a session keeping no revision (mcp 1.x)
                version = remembered.negotiated
        version = bounded_version(version)
        target = bounded = raw = None
        target_attr = TARGETED.get(known)
        if target_attr is not None and params:
            raw = params.get("name")
            if raw is not None:
                bounded = self.names.bound(raw, *listed(session, known, remembered))
                target = None if bounded == S.OTHER else bounded
        network = remembered.network if remembered is not None else None
        labels_key = (known, version, target_attr if bounded is not None else None, bounded, network)
        labels, later = self.labels.split(labels_key)  # `later`: written with the outcome (`end_as`)
        attrs: dict[str, Any] = dict(labels)
        if remembered is not None and remembered.peer is not None:
            attrs.update(remembered.peer)  # the address the metric labels bound to `_OTHER`
        if raw is not None and target_attr is not None and raw != bounded:
            named = tel.privacy.name(raw)  # the name as sent, when the label had to bound it
            if named is not None:
                attrs[target_attr] = named
        if known == "resources/read" and params and isinstance(params.get("uri"), str):
            recorded = tel.privacy.uri(params["uri"])
            if recorded is not None:
                attrs[S.MCP_RESOURCE_URI] = recorded
        if remembered is not None and remembered.session_id is not None:
            attrs[S.MCP_SESSION_ID] = remembered.session_id  # a legacy HTTP session's (the labels say where)
        # Outside a multi-round-trip operation, or before its first round came back pending
        # (most calls), there is nothing to look up: the operation's `claim` asks if it must.
        op = _rounds.active()
        parent = links = task = None
        if op is not None and (anchor := op.anchor) is not None:
            op, parent = _rounds.next_round(op, anchor, session, method, attrs)
        if known in TASK_METHODS:  # sent in its task's trace, when this process submitted the task
            in_task, links, task = self.recorder.tasks.opening(known, params, attrs)
            if in_task is not None:
                parent = in_task
        if known in self._excluded:  # no span, the metrics still count it; the caller's trace goes on
            span: Span = NonRecordingSpan(trace.get_current_span(parent).get_span_context())
        else:
            span = tel.start_span(S.span_name(known, target), parent, SpanKind.CLIENT, attrs, links)
        call = ClientCall(self.recorder, session, method, span, labels_key)
        call.task = task
        if later:
            call.extra = dict(later)  # a copy: the call adds to its own
        if target is None and known == "tools/call" and isinstance(raw, str):
            call.unlisted = raw  # named at the end if the SDK lists the tools meanwhile (`_name_late`)
        if request is not None and self.request_hook is not None:
            call.requested(request)
        call.holder = op
        if known in _HANDSHAKES:
            memory.remember_handshake(session, span.get_span_context())
            call.holder = negotiation.holding(session)
        if raw is not None and known in _ASKING:
            # `call_tool` (most tool calls) passes no request and sets the arguments itself
            call.asked = (raw, None if request is None else _arguments(request))
        if known == "tools/list" and params:
            call.cursor = params.get("cursor")
        if known == "tools/call" and remembered is not None and (remembered.listing or remembered.catalog):
            call.fingerprints = memory.fingerprints(remembered, raw)  # this session's listing, else its server's
        return call

    def try_open(self, session: Any, method: str, version: object, request: Any) -> ClientCall | None:
        """`open` a span for a request that names no target (no params), reporting a failure."""
        try:
            return self.open(session, method, None, version, request)
        except Exception as exc:
            report("client span start", exc)
            return None
