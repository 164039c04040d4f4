"""The client side: one CLIENT span per outbound request, joined to the server's trace.

`ClientSession.send_request` and `send_discover` carry every request the SDK's client
sends, whatever the transport, so a span opened there is current while the SDK writes the
request. On the JSON-RPC transports (stdio, legacy in-memory, Streamable HTTP) the SDK injects
`traceparent` itself; its own `MCP send` span is swapped for a pass-through so the injected
context is mcpobs's span and there is one span per request. In process (`DirectDispatcher`)
the server's handler runs in the caller's own context, under the call's span, so nothing
needs to be carried.

`ClientSession.call_tool` validates a result against the tool's cached output schema after
the request returns; it opens the call's span so that failure lands on it, and the
`tools/list` the validation may issue nests under it. A tools/call also carries, in `_meta`,
the schema fingerprint of the listing the session holds, so an mcpobs server can flag a
client calling against a schema it no longer serves.

`Client.call_tool` / `get_prompt` / `read_resource` may take several rounds (SEP-2322): the
rounds and the client's answers nest under the call's span. `Client.listen` gets a span for
the stream. A request the dispatcher sends outside `ClientSession` (a server's own request
to its client before 2026-07-28) is a CLIENT span on the sender, and the client's answer a
SERVER span under it.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from mcp.client.extension import UnexpectedClaimedResult
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import methods as _methods
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind, StatusCode

from mcpobs import semconv as S
from mcpobs._core import outcome as _outcome
from mcpobs._core import propagation as _propagation
from mcpobs._core.guard import guarded, report
from mcpobs._core.labels import LabelSets
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs.semconv import Outcome

_KNOWN_METHODS = (
    frozenset(_methods.SPEC_CLIENT_METHODS)
    | frozenset(_methods.SPEC_CLIENT_NOTIFICATION_METHODS)
    | frozenset(method for method, _version in _methods.SERVER_REQUESTS)  # a server's requests to its client
)
_TARGETED = {"tools/call": S.GEN_AI_TOOL_NAME, "prompts/get": S.GEN_AI_PROMPT_NAME}
_REQUEST_TIMEOUT = -32001  # the SDK's code for a request whose read timeout elapsed
_CALLER_MISTAKES = S.CALLER_MISTAKE_CODES | {
    S.HEADER_MISMATCH,
    S.MISSING_CLIENT_CAPABILITY,
    S.UNSUPPORTED_PROTOCOL_VERSION,
}

OUTPUT_VALIDATION = Classification(Outcome.SERVER_ERROR, None, S.OUTPUT_VALIDATION)
TIMED_OUT = Classification(Outcome.CANCELLED, None, S.TIMEOUT, _REQUEST_TIMEOUT)
TOOL_ERROR = Classification(Outcome.TOOL_ERROR, None, S.TOOL_ERROR)


class _Call:
    """One outbound request (or notification) and its span."""

    __slots__ = (
        "cls",
        "context",
        "elapsed",
        "fingerprint",
        "labels_key",
        "method",
        "op",
        "owner",
        "session",
        "span",
        "start",
    )

    def __init__(self, session: Any, method: str, span: Span, labels_key: tuple[Any, ...]) -> None:
        self.session = session
        self.method = method
        self.span = span
        self.context = trace.set_span_in_context(span)
        self.labels_key = labels_key
        self.start = time.perf_counter()
        self.elapsed: float | None = None
        self.cls: Classification | None = None
        self.owner = False
        """True while `ClientSession.call_tool` holds the span and the request has not claimed it."""
        self.op: _Operation | None = None
        self.fingerprint: str | None = None
        """The schema fingerprint of the tool as this session last listed it (tools/call only)."""


class _Operation:
    """One `Client.call_tool` / `get_prompt` / `read_resource`, which may take several rounds.

    The first round that comes back `input_required` becomes the anchor: its span stays open
    until the operation ends and takes the final outcome; the inputs the client supplies and
    the later rounds nest under it, so a slow human answer shows as such.
    """

    __slots__ = ("anchor", "last", "method", "rounds", "session")

    def __init__(self, method: str, session: Any) -> None:
        self.method = method
        self.session = session
        self.anchor: _Call | None = None
        self.rounds = 1
        self.last: Classification | None = None


_current: ContextVar[_Call | None] = ContextVar("mcpobs_client_call", default=None)
"""The client request being sent in this context; read by the injection hooks."""

_operation: ContextVar[_Operation | None] = ContextVar("mcpobs_client_operation", default=None)
"""The multi-round-trip operation the `Client` is driving in this context."""

_connections: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
"""Per `ClientSession`: server.address/port and network.transport, learned from `Client`."""

_listings: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
"""Per `ClientSession`: tool name -> the tool as last listed, replaced by its schema
fingerprint the first time it is called (most listed tools are never called)."""
_MAX_LISTED = 4096


class ClientNames:
    """Bounds the tool and prompt names a client puts in span names and metric labels.

    A client sends whatever name its host (or a model) chose. Once the session has listed
    the server's tools, only listed tools are named; before that (and for prompts) the first
    `MAX_LEARNED_NAMES` distinct names of at most `MAX_NAME_LENGTH` characters are kept; the
    rest become `_OTHER`.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def bound(self, name: object, listed: Mapping[str, Any] | None = None) -> str:
        if not isinstance(name, str):
            return S.OTHER
        if listed:
            return name if name in listed else S.OTHER
        if len(name) > S.MAX_NAME_LENGTH:
            return S.OTHER
        if name in self._seen:
            return name
        if len(self._seen) < S.MAX_LEARNED_NAMES:
            self._seen.add(name)
            return name
        return S.OTHER


class ClientHooks:
    """The wrappers, sharing one `Telemetry` and one `ClientNames`."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self.names = ClientNames()
        self.labels = LabelSets(S.CLIENT_REQUESTS, errors_only=False)

    # -- opening ----------------------------------------------------------------------------

    def _open(self, session: Any, method: str, params: Mapping[str, Any] | None, version: object) -> _Call:
        tel = self.telemetry
        known = method if method in _KNOWN_METHODS else S.OTHER
        version = bounded_version(version if version is not None else getattr(session, "protocol_version", None))
        target = bounded = raw = None
        target_attr = _TARGETED.get(known)
        if target_attr is not None and params:
            raw = params.get("name")
            if raw is not None:
                listed = getattr(session, "_tool_output_schemas", None) if known == "tools/call" else None
                bounded = self.names.bound(raw, listed if isinstance(listed, Mapping) else None)
                target = None if bounded == S.OTHER else bounded
        connection = _connections.get(session)
        transport = connection.get(S.NETWORK_TRANSPORT) if connection else None
        labels_key = (known, version, target_attr if bounded is not None else None, bounded, transport)
        labels = self.labels.base(labels_key)
        attrs: dict[str, Any] = dict(labels)
        if raw is not None and target_attr is not None and raw != bounded:
            attrs[target_attr] = tel.bound(raw)  # the name as sent, when the label had to bound it
        if known == "tools/call":
            attrs[S.GEN_AI_OPERATION_NAME] = S.EXECUTE_TOOL
        elif known == "resources/read" and params and isinstance(params.get("uri"), str):
            attrs[S.MCP_RESOURCE_URI] = tel.bound(params["uri"])
        if connection:
            attrs.update(connection)
        op = _operation.get()
        parent = None
        if op is not None and (op.method != method or op.session is not session):
            op = None  # e.g. the tools/list output validation issues: not a round
        elif op is not None and op.anchor is not None:
            op.rounds += 1
            attrs[S.MRTR_ROUND] = op.rounds
            parent = trace.set_span_in_context(op.anchor.span)
        span = tel.tracer.start_span(S.span_name(known, target), context=parent, kind=SpanKind.CLIENT, attributes=attrs)
        call = _Call(session, method, span, labels_key)
        call.op = op
        if known == "tools/call" and params:
            call.fingerprint = _fingerprint(session, params.get("name"))
        return call

    def _try_open(self, session: Any, method: str, params: Any, version: object = None) -> _Call | None:
        try:
            return self._open(session, method, params if isinstance(params, Mapping) else None, version)
        except Exception as exc:
            report("client span start", exc)
            return None

    # -- closing ----------------------------------------------------------------------------

    def _settle(self, call: _Call, result: Any, exc: BaseException | None) -> None:
        """Classify the request's reply; the span may stay open for `call_tool`."""
        with guarded("client classification"):
            call.elapsed = time.perf_counter() - call.start
            call.cls = _from_exception(exc) if exc is not None else _from_result(call.method, result)
            if call.cls is _outcome.PENDING_INPUT and call.span.is_recording():
                call.span.set_attribute(S.MRTR_INPUT_METHODS, _input_methods(result))
            elif call.method == "tools/list" and exc is None:
                _remember_listing(call.session, result)

    def _finish(self, call: _Call, exc: BaseException | None = None) -> None:
        try:
            if call.cls is None:  # the request never ran (e.g. call_tool failed before sending)
                call.elapsed = time.perf_counter() - call.start
                call.cls = _from_exception(exc) if exc is not None else _outcome.OK
            cls = call.cls
            if call.op is not None and self._round_done(call, cls):
                return  # the anchor stays open: the operation ends it
            self._end_span(call, cls, exc)
            self._record(call, cls)
        except Exception as err:
            report("client span end", err)
            with guarded("client span end (fallback)"):
                call.span.end()

    def _end_span(self, call: _Call, cls: Classification, exc: BaseException | None) -> None:
        span = call.span
        if span.is_recording():
            attrs: dict[str, Any] = {S.OUTCOME: cls.outcome.value}
            if cls.error_type is not None:
                attrs[S.ERROR_TYPE] = cls.error_type
            if cls.rpc_code is not None:
                attrs[S.RPC_RESPONSE_STATUS_CODE] = str(cls.rpc_code)
            span.set_attributes(attrs)
            if cls.error_type is not None:  # on the client every failed request is an error
                if exc is not None and cls.error_type == type(exc).__qualname__:
                    span.record_exception(exc)  # a local failure; server messages stay out
                span.set_status(StatusCode.ERROR, cls.error_type)
        span.end()

    def _round_done(self, call: _Call, cls: Classification) -> bool:
        """Note a round's outcome on its operation; True when this round became the anchor."""
        op = call.op
        assert op is not None
        op.last = cls
        if op.anchor is None and cls.outcome is Outcome.PENDING_INPUT:
            op.anchor = call
            if call.span.is_recording():
                call.span.set_attributes({S.MRTR_ROUND: 1, S.OUTCOME: cls.outcome.value})
            self._record(call, cls)
            return True
        return False

    def _end_operation(self, op: _Operation, exc: BaseException | None) -> None:
        """The operation is over: its anchor takes the final outcome and ends."""
        anchor = op.anchor
        if anchor is None:
            return
        cls = op.last
        if exc is not None and (cls is None or cls.outcome is Outcome.PENDING_INPUT):
            cls = _from_exception(exc)  # e.g. an input the host refused, or rounds exhausted
        try:
            self._end_span(anchor, cls or _outcome.OK, exc)
        except Exception as err:
            report("client operation end", err)
            with guarded("client operation end (fallback)"):
                anchor.span.end()

    def _record(self, call: _Call, cls: Classification) -> None:
        tel = self.telemetry
        key = call.labels_key
        labels, counted = self.labels.with_outcome(key, cls)
        if cls.outcome in S.LATENCY_OUTCOMES and call.elapsed is not None:
            # the span is no longer current here: hand it over so an exemplar points at this call
            tel.client_duration.record(call.elapsed, labels, context=call.context)
        tel.client_requests.add(1, counted)

    # -- the seams --------------------------------------------------------------------------

    async def send_request(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_request`: the span for one request."""
        held = _current.get()
        if held is not None and held.owner and held.session is instance and _method_of(args, kwargs) == held.method:
            held.owner = False  # this request is the one `call_tool` opened the span for
            try:
                result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                self._settle(held, None, exc)
                raise
            self._settle(held, result, None)
            return result
        call = None
        with guarded("client span start"):
            request = args[0] if args else kwargs.get("request")
            params = _params_of(request)
            version = params.get("protocolVersion") if params and request.method == "initialize" else None
            call = self._try_open(instance, request.method, params, version)
        return await self._run(call, wrapped, args, kwargs)

    async def send_discover(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_discover`, which bypasses `send_request`."""
        version = args[0] if args else kwargs.get("version")
        call = self._try_open(instance, "server/discover", None, version)
        return await self._run(call, wrapped, args, kwargs)

    async def send_notification(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_notification`: notifications join the trace too."""
        call = None
        with guarded("client notification span"):
            notification = args[0] if args else kwargs.get("notification")
            call = self._try_open(instance, notification.method, None)
        return await self._run(call, wrapped, args, kwargs)

    async def _run(self, call: _Call | None, wrapped: Any, args: Any, kwargs: Any) -> Any:
        if call is None:
            return await wrapped(*args, **kwargs)
        tokens = _enter(call)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            _leave(tokens)
            self._settle(call, None, exc)
            self._finish(call, exc)
            raise
        _leave(tokens)
        self._settle(call, result, None)
        self._finish(call)
        return result

    async def call_tool(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.call_tool`: its span also covers output-schema validation.

        The schema fingerprint of the tool as this session listed it rides in the request's
        `_meta` (through `call_tool`'s own `meta` argument; the caller's keys win).
        """
        call = None
        with guarded("client call_tool span"):
            name = args[0] if args else kwargs.get("name")
            call = self._try_open(instance, "tools/call", {"name": name})
            if call is not None and call.fingerprint is not None:
                kwargs = {**kwargs, "meta": {S.META_SCHEMA_FINGERPRINT: call.fingerprint, **(kwargs.get("meta") or {})}}
        if call is None:
            return await wrapped(*args, **kwargs)
        call.owner = True
        tokens = _enter(call)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            _leave(tokens)
            if _failed_validation(call, exc):
                call.cls = OUTPUT_VALIDATION
            self._finish(call, exc)
            raise
        _leave(tokens)
        self._finish(call)
        return result

    def operation(self, method: str) -> Any:
        """Wraps `Client.call_tool` / `get_prompt` / `read_resource`: the rounds they drive."""

        async def drive(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            op = _Operation(method, _session_of(instance))
            token = _operation.set(op)
            try:
                result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                _operation.reset(token)
                self._end_operation(op, exc)
                raise
            _operation.reset(token)
            self._end_operation(op, None)
            return result

        return drive

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
            known = method if method in _KNOWN_METHODS else S.OTHER
            op = _operation.get()
            attrs: dict[str, Any] = {S.MCP_METHOD_NAME: known}
            if op is not None and op.anchor is not None:
                kind, parent = SpanKind.INTERNAL, trace.set_span_in_context(op.anchor.span)
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

    def listen(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Client.listen`, which bypasses `send_request`: one span for the stream."""
        stream = wrapped(*args, **kwargs)
        try:
            return _ListenStream(self, instance.session, stream)
        except Exception as exc:
            report("listen span", exc)
            return stream

    def otel_span(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Replaces the SDK's `MCP send` span in `JSONRPCDispatcher.send_raw_request`."""
        return self._sdk_span(wrapped, args, kwargs)

    @contextmanager
    def _sdk_span(self, wrapped: Any, args: Any, kwargs: Any) -> Iterator[Span]:
        call = _current.get()
        if call is not None and trace.get_current_span() is call.span:
            # mcpobs's span is current: the SDK injects it. Keep the request id; yield a
            # non-recording span so the SDK's own error attributes do not overwrite ours.
            with guarded("client request id"):
                request_id = (kwargs.get("attributes") or {}).get(S.JSONRPC_REQUEST_ID)
                if request_id is not None and call.span.is_recording():
                    call.span.set_attribute(S.JSONRPC_REQUEST_ID, self.telemetry.bound(request_id))
            yield INVALID_SPAN
            return
        # A request sent outside `ClientSession` (a server's request to its client at
        # revisions before 2026-07-28, or a raw dispatcher call): the sender is the CLIENT.
        with self._outbound_span(args, kwargs) as span:
            yield span

    @contextmanager
    def _outbound_span(self, args: Any, kwargs: Any) -> Iterator[Span]:
        span = None
        token = None
        with guarded("outbound request span"):
            attributes = kwargs.get("attributes") or {}
            method = attributes.get(S.MCP_METHOD_NAME)
            known = method if method in _KNOWN_METHODS else S.OTHER
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
                outcome = _from_code(int(code)).outcome
        except BaseException as exc:
            outcome = _failed(span, exc)
            raise
        finally:
            _close(span, token, outcome)

    async def jsonrpc_send(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `JSONRPCDispatcher.send_raw_request`: over HTTP, `traceparent` rides as a header too.

        The trace context in `_meta` is only read once a request reaches the server; the header
        lets the server's transport boundary put a request it refuses in the caller's trace.
        """
        with guarded("trace context header"):
            call = _sending()
            if call is not None:
                args, kwargs = _with_trace_header(call, args, kwargs)
        return await wrapped(*args, **kwargs)

    async def notify(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `JSONRPCDispatcher.notify`: `notifications/cancelled` carries the request's trace."""
        with guarded("notification trace context"):
            call = _sending()
            if call is not None:
                args, kwargs = _with_meta(args, kwargs, _trace_meta())
        return await wrapped(*args, **kwargs)

    async def build_session(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Client._build_session`: learn where the session's server is."""
        return self._remember_connection(await wrapped(*args, **kwargs), instance)

    def _remember_connection(self, session: Any, client: Any) -> Any:
        with guarded("client connection attributes"):
            attrs = _connection_attributes(client.server)
            if attrs:
                _connections[session] = attrs
        return session


class _ListenStream:
    """`client.listen(...)` with a CLIENT span from the request until the stream closes.

    The span is current while the request is sent (so the server's `subscriptions/listen`
    span is its child) but not inside the `async with` body, which is the host's own code.
    """

    def __init__(self, hooks: ClientHooks, session: Any, stream: Any) -> None:
        self._hooks = hooks
        self._stream = stream
        self._call = hooks._try_open(session, "subscriptions/listen", None)

    async def __aenter__(self) -> Any:
        call = self._call
        if call is None:
            return await self._stream.__aenter__()
        tokens = _enter(call)
        try:
            subscription = await self._stream.__aenter__()
        except BaseException as exc:
            _leave(tokens)
            self._hooks._settle(call, None, exc)
            self._hooks._finish(call, exc)
            raise
        _leave(tokens)
        return subscription

    async def __aexit__(self, *exc_info: Any) -> Any:
        error: BaseException | None = None
        try:
            return await self._stream.__aexit__(*exc_info)
        except BaseException as exc:
            error = exc
            raise
        finally:
            if self._call is not None:
                self._close(error or exc_info[1])

    def _close(self, exc: BaseException | None) -> None:
        from mcp.client.subscriptions import SubscriptionLost
        from mcp.shared.exceptions import MCPError

        # The stream's own failures count; an exception from the host's code in the body does not.
        if exc is not None and not isinstance(exc, MCPError | SubscriptionLost) and not _outcome.is_cancellation(exc):
            exc = None
        self._hooks._settle(self._call, None, exc)  # type: ignore[arg-type]
        self._hooks._finish(self._call, exc)  # type: ignore[arg-type]


def _session_of(client: Any) -> Any:
    try:
        return client.session
    except Exception:  # not entered: the call itself will say so
        return None


def _failed(span: Span, exc: BaseException) -> Outcome:
    """The outcome of a side span (an answer to the server, an outbound request) that raised."""
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


def _enter(call: _Call) -> tuple[object, object]:
    return _current.set(call), otel_context.attach(call.context)


def _leave(tokens: tuple[Any, Any]) -> None:
    with guarded("client context detach"):
        otel_context.detach(tokens[1])
        _current.reset(tokens[0])


def _sending() -> _Call | None:
    """The mcpobs client request being written in this context, if its span is current.

    Contexts are copied into server handlers in process, so the contextvar alone could be a
    client call seen from inside the server; the current span tells them apart.
    """
    call = _current.get()
    return call if call is not None and trace.get_current_span() is call.span else None


def _trace_meta() -> dict[str, Any]:
    """The current trace context as `_meta` entries."""
    meta: dict[str, Any] = {}
    _propagation.inject(meta)
    return meta


def _failed_validation(call: _Call, exc: BaseException) -> bool:
    """`call_tool` raised after a successful reply: the SDK rejected the result against the
    tool's output schema (its only `RuntimeError` there besides the two ruled out here)."""
    return (
        isinstance(exc, RuntimeError)
        and not isinstance(exc, UnexpectedClaimedResult)
        and call.cls is not None
        and call.cls.outcome is Outcome.OK
    )


def _with_meta(args: Any, kwargs: Any, extra: Mapping[str, Any]) -> tuple[Any, Any]:
    """The call's arguments with `extra` added to the params' `_meta`; the caller's keys win."""
    params = args[1] if len(args) > 1 else kwargs.get("params")
    if not extra or (params is not None and not isinstance(params, Mapping)):
        return args, kwargs
    out = dict(params or {})
    out["_meta"] = {**extra, **(out.get("_meta") or {})}
    if len(args) > 1:
        return (args[0], out, *args[2:]), kwargs
    return args, {**kwargs, "params": out}


def _remember_listing(session: Any, result: Any) -> None:
    listing = _listings.get(session)
    if listing is None:
        listing = _listings[session] = {}
    for tool in getattr(result, "tools", None) or ():
        if len(listing) >= _MAX_LISTED and tool.name not in listing:
            break
        listing[tool.name] = tool


def _fingerprint(session: Any, name: object) -> str | None:
    listing = _listings.get(session)
    if not listing or not isinstance(name, str):
        return None
    held = listing.get(name)
    if held is None or isinstance(held, str):
        return held
    from mcpobs._core.contract import schema_fingerprint

    wire = held.model_dump(by_alias=True, mode="json", exclude_none=True)
    listing[name] = found = schema_fingerprint(wire.get("inputSchema"), wire.get("outputSchema"))
    return found


def _with_trace_header(call: _Call, args: Any, kwargs: Any) -> tuple[Any, Any]:
    connection = _connections.get(call.session)
    if not connection or connection.get(S.NETWORK_PROTOCOL_NAME) != "http":
        return args, kwargs
    opts = args[2] if len(args) > 2 else kwargs.get("opts")
    opts = dict(opts or {})
    headers = dict(opts.get("headers") or {})
    _propagation.inject(headers)
    opts["headers"] = headers
    if len(args) > 2:
        return (*args[:2], opts, *args[3:]), kwargs
    return args, {**kwargs, "opts": opts}


def _method_of(args: Any, kwargs: Any) -> str | None:
    request = args[0] if args else kwargs.get("request")
    return getattr(request, "method", None)


def _params_of(request: Any) -> dict[str, Any] | None:
    params = getattr(request, "params", None)
    if params is None:
        return None
    if isinstance(params, Mapping):
        return dict(params)
    # Only the fields that name the target; the rest (arguments) is private.
    found: dict[str, Any] = {}
    for field, key in (("name", "name"), ("uri", "uri"), ("protocol_version", "protocolVersion")):
        value = getattr(params, field, None)
        if value is not None:
            found[key] = value
    return found


def _connection_attributes(server: object) -> dict[str, Any]:
    from mcp.client.stdio import StdioServerParameters

    if isinstance(server, str):
        parts = urlsplit(server)
        attrs: dict[str, Any] = {S.NETWORK_TRANSPORT: "tcp", S.NETWORK_PROTOCOL_NAME: "http"}
        if parts.hostname:
            attrs[S.SERVER_ADDRESS] = parts.hostname
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        if port:
            attrs[S.SERVER_PORT] = port
        return attrs
    if isinstance(server, StdioServerParameters):
        return {S.NETWORK_TRANSPORT: "pipe"}
    return {}


def _from_result(method: str, result: object) -> Classification:
    if isinstance(result, InputRequiredResult):
        return _outcome.PENDING_INPUT
    if isinstance(result, CallToolResult) and result.is_error:
        return TOOL_ERROR
    return _outcome.OK


def _from_code(code: int) -> Classification:
    """A JSON-RPC error reply: an error on the client, whose outcome says whose mistake it was."""
    if code == _REQUEST_TIMEOUT:
        return TIMED_OUT
    outcome = Outcome.CLIENT_ERROR if code in _CALLER_MISTAKES else Outcome.SERVER_ERROR
    return Classification(outcome, None, str(code), code)


def _input_methods(result: Any) -> list[str]:
    """What a pending round asks the client for (`elicitation/create`, ...), bounded."""
    methods = {getattr(request, "method", None) for request in (result.input_requests or {}).values()}
    return sorted(m if m in _KNOWN_METHODS else S.OTHER for m in methods)


def _from_exception(exc: BaseException) -> Classification:
    from mcp.shared.exceptions import MCPError

    if _outcome.is_cancellation(exc):
        return _outcome.CANCELLED
    if isinstance(exc, MCPError):
        return _from_code(exc.error.code)
    if isinstance(exc, TimeoutError):
        return TIMED_OUT
    return Classification(Outcome.SERVER_ERROR, None, type(exc).__qualname__)


# -- the patches -----------------------------------------------------------------------------

_SESSION = "mcp.client.session"
_CLIENT = "mcp.client.client"
_JSONRPC = "mcp.shared.jsonrpc_dispatcher"


def patches(telemetry: Telemetry) -> list[Patch]:
    """The client-side seams."""
    hooks = ClientHooks(telemetry)
    return [
        Patch(_SESSION, "ClientSession.send_request", hooks.send_request),
        Patch(_SESSION, "ClientSession.send_discover", hooks.send_discover),
        Patch(_SESSION, "ClientSession.send_notification", hooks.send_notification),
        Patch(_SESSION, "ClientSession.call_tool", hooks.call_tool),
        Patch(_SESSION, "ClientSession.dispatch_input_request", hooks.dispatch_input_request),
        Patch(_CLIENT, "Client._build_session", hooks.build_session),
        Patch(_CLIENT, "Client.listen", hooks.listen),
        Patch(_CLIENT, "Client.call_tool", hooks.operation("tools/call")),
        Patch(_CLIENT, "Client.get_prompt", hooks.operation("prompts/get")),
        Patch(_CLIENT, "Client.read_resource", hooks.operation("resources/read")),
        Patch(_JSONRPC, "otel_span", hooks.otel_span),
        Patch(_JSONRPC, "JSONRPCDispatcher.send_raw_request", hooks.jsonrpc_send),
        Patch(_JSONRPC, "JSONRPCDispatcher.notify", hooks.notify),
    ]
