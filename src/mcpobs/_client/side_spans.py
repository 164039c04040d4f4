"""Spans beside the `ClientSession` request path.

- The SDK's own `MCP send` span (`otel_span` in `JSONRPCDispatcher.send_raw_request`) is
  swapped for a pass-through while mcpobs's span is current, so the SDK injects mcpobs's
  context and there is one span per request.
- A request the dispatcher sends outside `ClientSession` (a server's own request to its
  client before 2026-07-28, or a raw dispatcher call) is a CLIENT span on the sender.
- The client answering the server (`dispatch_input_request`): INTERNAL under the anchor in a
  multi-round-trip operation, or a SERVER span (with `mcp.server.operation.duration`, as the
  receiver of a request records it) parented by what the exchange proves (`asked_in`).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import INVALID_SPAN, Link, NonRecordingSpan, Span, SpanKind

from mcpobs import semconv as S
from mcpobs._client import calls, classify, memory
from mcpobs._client import rounds as _rounds
from mcpobs._core import outcome as _outcome
from mcpobs._core import propagation as _propagation
from mcpobs._core.config import Settings
from mcpobs._core.guard import guarded, report
from mcpobs._core.labels import LabelSets
from mcpobs._core.methods import KNOWN_METHODS
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs._core.privacy import Privacy
from mcpobs._core.telemetry import Telemetry
from mcpobs.semconv import Outcome


class _NotRecording:
    """A context manager yielding `INVALID_SPAN`: cheaper than a generator on every request."""

    __slots__ = ()

    def __enter__(self) -> Span:
        return INVALID_SPAN

    def __exit__(self, *exc_info: object) -> bool:
        return False


_NOT_RECORDING = _NotRecording()


"""What a server's own request to its client shares with the request it is serving."""


class SideSpans:
    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self.labels = LabelSets(S.SERVER_REQUESTS, errors_only=True)
        self.asked = LabelSets(S.CLIENT_REQUESTS, errors_only=False)

    def otel_span(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Replaces the SDK's `MCP send` span in `JSONRPCDispatcher.send_raw_request`."""
        call = calls.sending()
        if call is not None:
            # mcpobs's span is current: the SDK injects it. Keep the request id (written with
            # the outcome); hand the SDK a non-recording span so its own error attributes do
            # not overwrite ours.
            try:
                attributes: Mapping[str, Any] = kwargs.get("attributes") or {}
                call.request_id = attributes.get(S.JSONRPC_REQUEST_ID)
            except Exception as exc:
                report("client request id", exc)
            return _NOT_RECORDING
        return self._outbound_span(kwargs)

    @contextmanager
    def _outbound_span(self, kwargs: Any) -> Generator[Span, None, None]:
        span = None
        token = None
        known = S.OTHER
        labels: dict[str, Any] = {}
        with guarded("outbound request span"):
            attributes: Mapping[str, Any] = kwargs.get("attributes") or {}
            method = attributes.get(S.MCP_METHOD_NAME)
            known = method if method in KNOWN_METHODS else S.OTHER
            attrs: dict[str, Any] = {S.MCP_METHOD_NAME: known}
            labels, session = _serving(self.telemetry.settings)
            attrs.update(labels)
            if session is not None:  # a span attribute only: never a label of the duration below
                attrs[S.MCP_SESSION_ID] = session
            request_id = attributes.get(S.JSONRPC_REQUEST_ID)
            if request_id is not None and (found := self.telemetry.privacy.identifier(request_id)) is not None:
                attrs[S.JSONRPC_REQUEST_ID] = found
            if known in self.telemetry.settings.excluded_methods:  # no span; the current trace goes on
                span = NonRecordingSpan(trace.get_current_span().get_span_context())
            else:
                span = self.telemetry.tracer.start_span(S.span_name(known), kind=SpanKind.CLIENT, attributes=attrs)
            token = otel_context.attach(trace.set_span_in_context(span))
        if span is None:
            yield INVALID_SPAN
            return
        start = time.perf_counter()
        cls = _outcome.OK
        failure: BaseException | None = None
        try:
            yield span  # the SDK sets error.type and rpc.response.status_code on a JSON-RPC error reply
            recorded: Mapping[str, Any] = getattr(span, "attributes", None) or {}
            code = recorded.get(S.RPC_RESPONSE_STATUS_CODE)
            if code is not None:
                cls = classify.from_code(int(code))
        except BaseException as exc:
            failure = exc
            cls = classify.from_exception(exc)
            raise
        finally:
            close(span, token, cls, failure, self.telemetry.privacy)
            if labels and cls.outcome in S.LATENCY_OUTCOMES and cls.sample:  # a server asking, not a raw call
                with guarded("outbound request duration"):  # the sender of a request records its duration
                    version = bounded_version(labels.get(S.MCP_PROTOCOL_VERSION))
                    duration_labels, _ = self.asked.with_outcome((known, version, None, None, None), cls)
                    self.telemetry.client_duration.record(
                        time.perf_counter() - start,
                        {**duration_labels, **labels},
                        context=trace.set_span_in_context(span),
                    )

    async def dispatch_input_request(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.dispatch_input_request`: the client answering the server.

        In a multi-round-trip operation the answer is local work between rounds (INTERNAL,
        under the call's span). At revisions before 2026-07-28 the server sent a request of
        its own: the client is its SERVER (see `asked_in`), and records the server duration.
        """
        span = None
        token = None
        key = None
        with guarded("input request span"):
            request = args[1] if len(args) > 1 else kwargs.get("request")
            method = getattr(request, "method", None)
            known = method if method in KNOWN_METHODS else S.OTHER
            attrs: dict[str, Any] = {S.MCP_METHOD_NAME: known}
            links = None
            parent = _rounds.anchor_parent()
            if parent is not None:
                kind = SpanKind.INTERNAL
            else:
                ctx = args[0] if args else kwargs.get("ctx")
                kind = SpanKind.SERVER
                parent, links = asked_in(instance, getattr(ctx, "meta", None))
                request_id = getattr(ctx, "request_id", None)
                if request_id is not None and (found := self.telemetry.privacy.identifier(request_id)) is not None:
                    attrs[S.JSONRPC_REQUEST_ID] = found  # the server chose it: a string id is its text
                version = bounded_version(getattr(instance, "protocol_version", None))
                remembered = memory.remembered(instance)
                key = (known, version, None, None, remembered.answering if remembered is not None else None)
                attrs.update(self.labels.base(key))
                if remembered is not None and remembered.session_id is not None:
                    attrs[S.MCP_SESSION_ID] = remembered.session_id
            if known in self.telemetry.settings.excluded_methods:  # no span; the metric still counts it
                span = NonRecordingSpan(trace.get_current_span(parent).get_span_context())
            else:
                span = self.telemetry.tracer.start_span(known, context=parent, kind=kind, attributes=attrs, links=links)
            token = otel_context.attach(trace.set_span_in_context(span))
        if span is None:
            return await wrapped(*args, **kwargs)
        start = time.perf_counter()
        cls = _outcome.OK
        failure: BaseException | None = None
        try:
            result = await wrapped(*args, **kwargs)
            code = getattr(result, "code", None) if type(result).__name__ == "ErrorData" else None
            if isinstance(code, int):  # the host cannot (or will not) answer what was asked
                cls = Classification(Outcome.CLIENT_ERROR, None, None, code)
            return result
        except BaseException as exc:
            failure = exc
            cls = _outcome.CANCELLED if _outcome.is_cancellation(exc) else _outcome.crash(exc)
            raise
        finally:
            close(span, token, cls, failure, self.telemetry.privacy)
            if key is not None and cls.outcome in S.LATENCY_OUTCOMES:
                with guarded("input request duration"):
                    labels, _ = self.labels.with_outcome(key, cls)
                    self.telemetry.server_duration.record(time.perf_counter() - start, labels)


def _serving(settings: Settings) -> tuple[dict[str, Any], str | None]:
    """A server asking its client while serving a request: that request's version, network and session.

    The version and network are the labels the request's SERVER span takes at its end, for a
    span that records (`RequestState.later`); the session id, which that span gets then too, from
    the connection the SDK is sending on (`sessions.asking_session_id`), by the rule the SERVER
    span's uses. No labels for a request sent outside any served request, and no session for a
    raw dispatcher call (no session is known there).
    """
    from mcpobs._server import sessions as _sessions
    from mcpobs._server import state as _state

    session = _sessions.asking_session_id(settings)
    return _state.asked_labels(), session


def asked_in(session: Any, meta: Any) -> tuple[Context, list[Link] | None]:
    """The parent of a request the server sent its client, by what the exchange proves.

    - the request carries trace context in `_meta`: that context;
    - it came on the response stream of a request of ours still in flight (Streamable HTTP
      answers a POST with a stream on which the server may ask first): that request's span;
    - otherwise (the server's standalone stream, or stdio, where one pipe carries everything):
      a trace of its own, linked to the session's handshake. The context current there is
      whatever span opened the stream (a long-finished `notifications/initialized`), which
      has no part in why the server asked.
    """
    parent = _propagation.extract(meta)
    if parent is not None:
        return parent, None
    call = calls.current()
    if call is not None and call.session is session and not call.method.startswith("notifications/") and call.in_flight:
        return call.context, None
    remembered = memory.remembered(session)
    handshake = remembered.handshake if remembered is not None else None
    return Context(), [Link(handshake)] if handshake is not None else None


def close(span: Span, token: object, cls: Classification, failure: BaseException | None, privacy: Privacy) -> None:
    with guarded("side span end"):
        otel_context.detach(token)  # type: ignore[arg-type]
        if span.is_recording():
            local = failure if failure is not None and cls.error_type == type(failure).__qualname__ else None
            _outcome.write(span, cls, {}, local, privacy.description(failure), privacy)
        span.end()
