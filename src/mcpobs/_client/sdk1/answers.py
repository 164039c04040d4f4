"""mcp 1.x: the client answering its server (`elicitation/create`, `sampling/createMessage`, `roots/list`, `ping`).

A 1.x server asks its client by a request of its own, which the client's receive loop hands to
`ClientSession._received_request`: for that exchange the client is the server. Its span is a
SERVER span, parented by the trace context the request carries in `_meta`, else linked to the
session's handshake (`side_spans.asked_in`, as on 2.x), and it records
`mcp.server.operation.duration` as the receiver of a request does. The answer is read where the
SDK sends it (`ClientSession._send_response`): a host that cannot or will not answer (an
`ErrorData`, the SDK's default "not supported" too) is a `client_error` with its code.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanKind

from mcpobs import semconv as S
from mcpobs._client import memory
from mcpobs._client.sdk1.tasks import request_id
from mcpobs._client.side_spans import asked_in, close
from mcpobs._core import inventory as I
from mcpobs._core import outcome as _outcome
from mcpobs._core.guard import guarded
from mcpobs._core.labels import LabelSets
from mcpobs._core.methods import KNOWN_METHODS
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs.semconv import Outcome

_answer: ContextVar[list[object] | None] = ContextVar("mcpobs_client_answer", default=None)
"""While the client answers its server: the response it sent (filled by `sent`)."""


def patches(telemetry: Telemetry) -> list[Patch]:
    labels = LabelSets(S.SERVER_REQUESTS, errors_only=True)
    id_key = telemetry.settings.session_id_key

    async def received_request(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession._received_request`: one SERVER span for the server's request."""
        span = None
        token = box = key = None
        with guarded("client answer span"):
            responder = args[0] if args else kwargs.get("responder")
            method = responder.request.root.method
            known = method if method in KNOWN_METHODS else S.OTHER
            meta = responder.request_meta
            parent, links = asked_in(instance, meta.model_dump(exclude_none=True) if meta is not None else None)
            remembered = memory.remembered(instance)
            version = bounded_version(memory.version_of(instance, remembered))
            key = (known, version, None, None, remembered.answering if remembered is not None else None)
            attrs: dict[str, Any] = {S.MCP_METHOD_NAME: known, **labels.base(key)}
            attrs[S.JSONRPC_REQUEST_ID] = telemetry.bound(request_id(responder.request_id, id_key))
            if remembered is not None and remembered.session_id is not None:
                attrs[S.MCP_SESSION_ID] = remembered.session_id
            if known in telemetry.settings.excluded_methods:  # no span; the metric still counts it
                span = NonRecordingSpan(trace.get_current_span(parent).get_span_context())
            else:
                span = telemetry.tracer.start_span(
                    known, context=parent, kind=SpanKind.SERVER, attributes=attrs, links=links
                )
            token = otel_context.attach(trace.set_span_in_context(span))
            box = _answer.set([])
        if span is None:
            return await wrapped(*args, **kwargs)
        start = time.perf_counter()
        cls: Classification = _outcome.OK
        failure: BaseException | None = None
        try:
            result = await wrapped(*args, **kwargs)
            sent = _answer.get()
            code = getattr(sent[0], "code", None) if sent and type(sent[0]).__name__ == "ErrorData" else None
            if isinstance(code, int):  # the host cannot (or will not) answer what was asked
                cls = Classification(Outcome.CLIENT_ERROR, None, None, code)
            return result
        except BaseException as exc:
            failure = exc
            cls = _outcome.CANCELLED if _outcome.is_cancellation(exc) else _outcome.crash(exc)
            raise
        finally:
            if box is not None:
                _answer.reset(box)
            close(span, token, cls, failure, telemetry.privacy)
            if key is not None and cls.outcome in S.LATENCY_OUTCOMES:
                with guarded("client answer duration"):
                    duration_labels, _ = labels.with_outcome(key, cls)
                    telemetry.server_duration.record(time.perf_counter() - start, duration_labels)

    async def sent(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession._send_response`: what the client answered, for the span above."""
        box = _answer.get()
        if box is not None:
            box.append(kwargs.get("response", args[1] if len(args) > 1 else None))
        return await wrapped(*args, **kwargs)

    return [
        Patch.of(I.SESSION1_RECEIVED_REQUEST, received_request),
        Patch.of(I.SESSION1_SEND_RESPONSE, sent),
    ]
