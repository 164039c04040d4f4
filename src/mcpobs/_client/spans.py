"""The life of one client span: opened with its labels, classified on reply, ended and counted.

`open` names the span and computes the metric labels once; `settle` classifies the reply
(the span may stay open, e.g. while `call_tool` validates the result); `finish` ends the
span and records the duration and the count, unless the request became the anchor of a
multi-round-trip operation, which `end_operation` ends later.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanKind, StatusCode

from mcpobs import semconv as S
from mcpobs._client import classify, memory, negotiation
from mcpobs._client import rounds as _rounds
from mcpobs._client.calls import ClientCall
from mcpobs._client.names import ClientNames, listed
from mcpobs._core import hooks as _hooks
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import report
from mcpobs._core.labels import LabelSets
from mcpobs._core.methods import KNOWN_METHODS, TARGETED, input_methods
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs._core.telemetry import Telemetry, end_once
from mcpobs.semconv import Outcome

_HANDSHAKES = frozenset({"initialize", "server/discover"})


class ClientSpans:
    """Opens, classifies and ends client spans, sharing one `Telemetry` and one `ClientNames`."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self.names = ClientNames()
        self.labels = LabelSets(S.CLIENT_REQUESTS, errors_only=False)
        self._excluded = telemetry.settings.excluded_methods
        self.request_hook = telemetry.settings.client_request_hook
        self._response_hook = telemetry.settings.client_response_hook

    def open(
        self, session: Any, method: str, params: Mapping[str, Any] | None, version: object, request: Any = None
    ) -> ClientCall:
        tel = self.telemetry
        known = method if method in KNOWN_METHODS else S.OTHER
        version = bounded_version(version if version is not None else getattr(session, "protocol_version", None))
        target = bounded = raw = None
        target_attr = TARGETED.get(known)
        remembered = memory.remembered(session)
        if target_attr is not None and params:
            raw = params.get("name")
            if raw is not None:
                bounded = self.names.bound(raw, listed(session, known, remembered))
                target = None if bounded == S.OTHER else bounded
        network = remembered.network if remembered is not None else None
        labels_key = (known, version, target_attr if bounded is not None else None, bounded, network)
        labels = self.labels.base(labels_key)
        attrs: dict[str, Any] = dict(labels)
        if raw is not None and target_attr is not None and raw != bounded:
            attrs[target_attr] = tel.bound(raw)  # the name as sent, when the label had to bound it
        if known == "resources/read" and params and isinstance(params.get("uri"), str):
            attrs[S.MCP_RESOURCE_URI] = tel.bound(params["uri"])
        if remembered is not None and remembered.session_id is not None:
            attrs[S.MCP_SESSION_ID] = remembered.session_id  # a legacy HTTP session's (the labels say where)
        # Outside a multi-round-trip operation (most calls) there is nothing to look up.
        op, parent = _rounds.next_round(session, method, attrs) if _rounds.active() else (None, None)
        if known in self._excluded:  # no span, the metrics still count it; the caller's trace goes on
            span: Span = NonRecordingSpan(trace.get_current_span(parent).get_span_context())
        else:
            span = tel.start_span(S.span_name(known, target), parent, SpanKind.CLIENT, attrs)
        call = ClientCall(session, method, span, labels_key)
        if target is None and known == "tools/call" and isinstance(raw, str):
            call.unlisted = raw  # named at the end if the SDK lists the tools meanwhile (`_name_late`)
        if request is not None and self.request_hook is not None:
            self.requested(call, request)
        call.op = op
        if known in _HANDSHAKES:
            memory.remember_handshake(session, span.get_span_context())
        if known == "tools/call" and remembered is not None and remembered.listing:
            call.fingerprint = memory.fingerprint(remembered, raw)
        return call

    def try_open(self, session: Any, method: str, version: object, request: Any) -> ClientCall | None:
        """`open` a span for a request that names no target (no params), reporting a failure."""
        try:
            return self.open(session, method, None, version, request)
        except Exception as exc:
            report("client span start", exc)
            return None

    def requested(self, call: ClientCall, request: Any) -> None:
        """The user's `client_request_hook`, for a span that records."""
        if self.request_hook is not None and call.span.is_recording():
            _hooks.run("client_request_hook", self.request_hook, call.span, request)

    def settle(self, call: ClientCall, result: Any, exc: BaseException | None) -> None:
        """Classify the request's reply; the span may stay open for `call_tool`."""
        try:  # not `guarded`: this runs on every request, and a try costs nothing
            call.elapsed = time.perf_counter() - call.start
            if exc is not None:
                call.cls = classify.from_exception(exc)
                call.description = _outcome.description(exc)
            else:
                call.cls = classify.from_result(result)
            if call.cls is _outcome.PENDING_INPUT and call.span.is_recording():
                call.span.set_attribute(S.MRTR_INPUT_METHODS, input_methods(result.input_requests))
            elif call.method == "tools/list" and exc is None:
                memory.remember_listing(call.session, result)
            elif call.method == "prompts/list" and exc is None:
                memory.remember_prompts(call.session, result)
            elif call.method == "initialize" and exc is None and call.span.is_recording():
                call.span.set_attributes(negotiation.handshake_attributes(call, result))
        except Exception as err:
            report("client classification", err)
        if exc is None and self._response_hook is not None and call.span.is_recording():
            _hooks.run("client_response_hook", self._response_hook, call.span, result)

    def finish(
        self, call: ClientCall, exc: BaseException | None = None, end_time: int | None = None, held: bool = False
    ) -> None:
        """End and count the call; `held`: a probe the negotiation kept open until now (`end_time`)."""
        try:
            if call.cls is None:  # the request never ran (e.g. call_tool failed before sending)
                call.elapsed = time.perf_counter() - call.start
                call.cls = classify.from_exception(exc) if exc is not None else _outcome.OK
                call.description = _outcome.description(exc)
            cls = call.cls
            if call.unlisted is not None:
                self._name_late(call)
            op = call.op
            in_operation = op is not None and (op.anchor is not None or cls.outcome is Outcome.PENDING_INPUT)
            if in_operation and _rounds.become_anchor(call, cls):
                self.record(call, cls)
                return  # the anchor stays open: the operation ends it
            if not held and call.method == "server/discover" and negotiation.hold(call, exc):
                return  # the negotiation ends it once it knows whether the client fell back
        except Exception as err:
            report("client span end", err)
            end_once(call.span)
            return
        # The span and the metrics each in their own `try`: a trace pipeline that raises
        # costs no count, and a metric pipeline that raises costs no span.
        try:
            self.end_span(call, cls, exc, end_time)
        except Exception as err:
            report("client span end", err)
            end_once(call.span)
        try:
            self.record(call, cls)
        except Exception as err:
            report("client metrics", err)

    def _name_late(self, call: ClientCall) -> None:
        """A tool called before the session listed tools: named if the SDK listed it meanwhile.

        A successful `call_tool` lists the tools to validate its result, inside the call's span,
        so a host that never lists still gets its tools named; a failed call stays `_OTHER`.
        """
        name, call.unlisted = call.unlisted, None
        bounded = self.names.bound(name, listed(call.session, "tools/call", None))
        if bounded == S.OTHER:
            return
        known, version, target_attr, _, network = call.labels_key
        call.labels_key = (known, version, target_attr, bounded, network)
        if call.span.is_recording():
            call.span.update_name(S.span_name(known, bounded))
            call.span.set_attribute(S.GEN_AI_TOOL_NAME, bounded)

    def end_span(
        self, call: ClientCall, cls: Classification, exc: BaseException | None, end_time: int | None = None
    ) -> None:
        span = call.span
        if span.is_recording():
            attrs: dict[str, Any] = {S.OUTCOME: cls.outcome.value}
            if call.request_id is not None:
                attrs[S.JSONRPC_REQUEST_ID] = self.telemetry.bound(call.request_id)
            if cls.error_type is not None:
                attrs[S.ERROR_TYPE] = cls.error_type
            if cls.rpc_code is not None:
                attrs[S.RPC_RESPONSE_STATUS_CODE] = str(cls.rpc_code)
            span.set_attributes(attrs)
            if cls.error_type is not None:  # on the client every failed request is an error
                if exc is not None and cls.error_type == type(exc).__qualname__:
                    span.record_exception(exc, self.telemetry.exception_attributes(exc))  # a local failure
                span.set_status(StatusCode.ERROR, call.description)
        span.end(end_time)

    def end_operation(self, op: _rounds.Operation, exc: BaseException | None) -> None:
        """The operation is over: its anchor takes the final outcome and ends."""
        anchor = op.anchor
        if anchor is None:
            return
        cls = op.last
        if exc is not None and (cls is None or cls.outcome is Outcome.PENDING_INPUT):
            cls = classify.from_exception(exc)  # e.g. an input the host refused, or rounds exhausted
            anchor.description = _outcome.description(exc)
        try:
            self.end_span(anchor, cls or _outcome.OK, exc)
        except Exception as err:
            report("client operation end", err)
            end_once(anchor.span)

    def record(self, call: ClientCall, cls: Classification) -> None:
        tel = self.telemetry
        labels, counted = self.labels.with_outcome(call.labels_key, cls)
        if cls.outcome in S.LATENCY_OUTCOMES and call.elapsed is not None:
            # the span is no longer current here: hand it over so an exemplar points at this call
            tel.client_duration.record(call.elapsed, labels, context=call.context)
        tel.client_requests.add(1, counted)
