"""mcp 1.x: a server's own request to its client (elicitation, sampling, roots, ping), as a CLIENT span.

On 1.x a server asks its client by a request of its own (`ServerSession.send_request`, which
`elicit_form`, `create_message`, `list_roots` and `send_ping` use), never by an `input_required`
result: there are no rounds, and the `tools/call` that asked is one request that ends `ok` when
the answer comes. The server records the question as 2.x records a server asking its client
at a handshake revision (`side_spans.py`): a CLIENT span named by the method, labelled with the
served request's revision and network and its session's id, classified as a client classifies
its calls, with `mcp.client.operation.duration`. The span's context goes in the request's
`_meta` (1.x sends none of its own), so the client's span answering it joins the trace.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanKind

from mcpobs import semconv as S
from mcpobs._client import classify
from mcpobs._core import inventory as I
from mcpobs._core import outcome as _outcome
from mcpobs._core import propagation as _propagation
from mcpobs._core.guard import guarded
from mcpobs._core.labels import LabelSets
from mcpobs._core.methods import KNOWN_METHODS
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import state as _state
from mcpobs._server.sdk1 import sessions as _sessions

"""What a server's own request to its client shares with the request it is serving."""


def patches(telemetry: Telemetry) -> list[Patch]:
    asked = LabelSets(S.CLIENT_REQUESTS, errors_only=False)

    async def send_request(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ServerSession.send_request(request, result_type, ...)`."""
        span = None
        token = None
        labels: dict[str, Any] = {}
        known = S.OTHER
        with guarded("server request to its client"):
            request = args[0] if args else kwargs["request"]
            root = getattr(request, "root", request)  # a bare request model too
            method = getattr(root, "method", None)
            known = method if method in KNOWN_METHODS else S.OTHER
            labels = _state.asked_labels()
            attrs: dict[str, Any] = {S.MCP_METHOD_NAME: known, **labels}
            session_id = _sessions.session_id(instance, telemetry.settings)
            if session_id is not None:  # a span attribute only, never a label
                attrs[S.MCP_SESSION_ID] = session_id
            request_id = getattr(instance, I.SERVER1_NEXT_REQUEST_ID.attribute, None)  # the id it goes out with
            if request_id is not None and (found := telemetry.privacy.identifier(request_id)) is not None:
                attrs[S.JSONRPC_REQUEST_ID] = found
            if known in telemetry.settings.excluded_methods:  # no span; the current trace goes on
                span = NonRecordingSpan(trace.get_current_span().get_span_context())
            else:
                span = telemetry.start_span(S.span_name(known), None, SpanKind.CLIENT, attrs)
            context = trace.set_span_in_context(span)
            carried = _carrying(request, context, telemetry.settings.send_baggage)
            if carried is not request:
                args, kwargs = ((carried, *args[1:]), kwargs) if args else (args, {**kwargs, "request": carried})
            token = otel_context.attach(context)
        if span is None:
            return await wrapped(*args, **kwargs)
        start = time.perf_counter()
        cls: Classification = _outcome.OK
        failure: BaseException | None = None
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            failure = exc
            cls = classify.from_exception(exc)
            raise
        finally:
            with guarded("server request to its client end"):
                if token is not None:
                    otel_context.detach(token)
                _end(telemetry, span, cls, failure)
                if labels and cls.outcome in S.LATENCY_OUTCOMES and cls.sample:
                    version = bounded_version(labels.get(S.MCP_PROTOCOL_VERSION))
                    duration_labels, _ = asked.with_outcome((known, version, None, None, None), cls)
                    telemetry.client_duration.record(
                        time.perf_counter() - start,
                        {**duration_labels, **labels},
                        context=trace.set_span_in_context(span),
                    )

    return [Patch.of(I.SERVER1_ASKS, send_request)]


def _carrying(request: Any, context: Any, baggage: bool) -> Any:
    """A copy of `request` whose params' `_meta` carries `context` (1.x sends no trace context itself)."""
    carrier: dict[str, Any] = {}
    _propagation.inject(carrier, context, baggage)
    if "traceparent" not in carrier:
        return request
    types: Any = importlib.import_module("mcp.types")  # 1.x's (the type checker reads 2.x's)
    root = getattr(request, "root", request)
    params = root.params
    if params is None:  # roots/list, ping: sent without params
        params = types.RequestParams()
    held: dict[str, Any] = params.meta.model_dump(by_alias=True, exclude_none=True) if params.meta is not None else {}
    meta = types.RequestParams.Meta(**{**held, **carrier})
    carried = root.model_copy(update={"params": params.model_copy(update={"meta": meta})})
    return type(request)(carried) if root is not request else carried


def _end(telemetry: Telemetry, span: Span, cls: Classification, failure: BaseException | None) -> None:
    if span.is_recording():
        privacy = telemetry.privacy
        local = failure if failure is not None and cls.error_type == type(failure).__qualname__ else None
        _outcome.write(span, cls, {}, local, privacy.description(failure), privacy)
    span.end()
