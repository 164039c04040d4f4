"""Spans beside the `ClientSession` request path.

- The SDK's own `MCP send` span (`otel_span` in `JSONRPCDispatcher.send_raw_request`) is
  swapped for a pass-through while mcpobs's span is current, so the SDK injects mcpobs's
  context and there is one span per request.
- A request the dispatcher sends outside `ClientSession` (a server's own request to its
  client before 2026-07-28, or a raw dispatcher call) is a CLIENT span on the sender.
- The client answering the server (`dispatch_input_request`): INTERNAL under the anchor in a
  multi-round-trip operation, or a SERVER span under the server's CLIENT span.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind, StatusCode

from mcpobs import semconv as S
from mcpobs._client import calls, classify
from mcpobs._client import rounds as _rounds
from mcpobs._core import outcome as _outcome
from mcpobs._core import propagation as _propagation
from mcpobs._core.guard import guarded
from mcpobs._core.methods import KNOWN_METHODS
from mcpobs._core.telemetry import Telemetry
from mcpobs.semconv import Outcome


class SideSpans:
    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry

    def otel_span(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Replaces the SDK's `MCP send` span in `JSONRPCDispatcher.send_raw_request`."""
        return self._sdk_span(args, kwargs)

    @contextmanager
    def _sdk_span(self, args: Any, kwargs: Any) -> Iterator[Span]:
        call = calls.current()
        if call is not None and trace.get_current_span() is call.span:
            # mcpobs's span is current: the SDK injects it. Keep the request id; yield a
            # non-recording span so the SDK's own error attributes do not overwrite ours.
            with guarded("client request id"):
                request_id = (kwargs.get("attributes") or {}).get(S.JSONRPC_REQUEST_ID)
                if request_id is not None and call.span.is_recording():
                    call.span.set_attribute(S.JSONRPC_REQUEST_ID, self.telemetry.bound(request_id))
            yield INVALID_SPAN
            return
        with self._outbound_span(kwargs) as span:
            yield span

    @contextmanager
    def _outbound_span(self, kwargs: Any) -> Iterator[Span]:
        span = None
        token = None
        with guarded("outbound request span"):
            attributes = kwargs.get("attributes") or {}
            method = attributes.get(S.MCP_METHOD_NAME)
            known = method if method in KNOWN_METHODS else S.OTHER
            attrs: dict[str, Any] = {S.MCP_METHOD_NAME: known}
            request_id = attributes.get(S.JSONRPC_REQUEST_ID)
            if request_id is not None:
                attrs[S.JSONRPC_REQUEST_ID] = self.telemetry.bound(request_id)
            span = self.telemetry.tracer.start_span(S.span_name(known), kind=SpanKind.CLIENT, attributes=attrs)
            token = otel_context.attach(trace.set_span_in_context(span))
        if span is None:
            yield INVALID_SPAN
            return
        outcome = Outcome.OK
        try:
            yield span  # the SDK sets error.type and rpc.response.status_code on a JSON-RPC error reply
            code = (getattr(span, "attributes", None) or {}).get(S.RPC_RESPONSE_STATUS_CODE)
            if code is not None:
                outcome = classify.from_code(int(code)).outcome
        except BaseException as exc:
            outcome = _failed(span, exc)
            raise
        finally:
            _close(span, token, outcome)

    async def dispatch_input_request(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.dispatch_input_request`: the client answering the server.

        In a multi-round-trip operation the answer is local work between rounds (INTERNAL,
        under the call's span). At revisions before 2026-07-28 the server sent a request of
        its own, and the client is its SERVER, parented on the server's CLIENT span.
        """
        span = None
        token = None
        with guarded("input request span"):
            request = args[1] if len(args) > 1 else kwargs.get("request")
            method = getattr(request, "method", None)
            known = method if method in KNOWN_METHODS else S.OTHER
            attrs: dict[str, Any] = {S.MCP_METHOD_NAME: known}
            parent = _rounds.anchor_parent()
            if parent is not None:
                kind = SpanKind.INTERNAL
            else:
                ctx = args[0] if args else kwargs.get("ctx")
                kind, parent = SpanKind.SERVER, _propagation.extract(getattr(ctx, "meta", None))
                request_id = getattr(ctx, "request_id", None)
                if request_id is not None:
                    attrs[S.JSONRPC_REQUEST_ID] = self.telemetry.bound(request_id)
            span = self.telemetry.tracer.start_span(known, context=parent, kind=kind, attributes=attrs)
            token = otel_context.attach(trace.set_span_in_context(span))
        if span is None:
            return await wrapped(*args, **kwargs)
        outcome = Outcome.OK
        try:
            result = await wrapped(*args, **kwargs)
            code = getattr(result, "code", None) if type(result).__name__ == "ErrorData" else None
            if isinstance(code, int):  # the host cannot (or will not) answer what was asked
                outcome = Outcome.CLIENT_ERROR
                with guarded("input request span error"):
                    span.set_attribute(S.RPC_RESPONSE_STATUS_CODE, str(code))
            return result
        except BaseException as exc:
            outcome = _failed(span, exc)
            raise
        finally:
            _close(span, token, outcome)


def _failed(span: Span, exc: BaseException) -> Outcome:
    """The outcome of a side span that raised."""
    if _outcome.is_cancellation(exc):
        return Outcome.CANCELLED
    with guarded("side span error"):
        span.set_attribute(S.ERROR_TYPE, type(exc).__qualname__)
        span.set_status(StatusCode.ERROR, type(exc).__qualname__)
    return Outcome.SERVER_ERROR


def _close(span: Span, token: object, outcome: Outcome) -> None:
    with guarded("side span end"):
        otel_context.detach(token)  # type: ignore[arg-type]
        span.set_attribute(S.OUTCOME, outcome.value)
        span.end()
