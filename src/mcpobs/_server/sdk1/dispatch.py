"""mcp 1.x: one SERVER span per request, driven from where the lowlevel `Server` dispatches it.

mcp 1.x has no middleware chain. Every request but `initialize` goes through
`Server._handle_request`, which runs the handler, turns what it raised into an error answer
and has the request's `RequestResponder` send the answer, all in one task. So:

- `Server._handle_request` is wrapped: a `Request1` view gives the request the names the 2.x
  middleware reads of the SDK's `ServerRequestContext` (method, params, id, `_meta`, the HTTP
  request, session, revision), and the server's `ServerObserver` (a `ServerMiddleware`: the
  same span, state, classification, span end and metrics as on 2.x) opens the request with
  `_start`;
- `RequestResponder.respond` is wrapped: the answer the SDK is about to send is classified
  once (`_finish`), and a failed tool call's answer gets the verdict (`stamped`), before it is
  sent (only when the client asked for it in the request's `_meta`, `_core/verdict.py`: the key
  is taken out of the request's `_meta` before the handler sees it, recorded or not). The SDK
  answers a handler's exception with code 0 and its text; the exception itself is noted as the
  SDK decides to answer it (`Pending.__bool__`: the SDK asks its `raise_exceptions` flag right
  there), so a crash is told from a protocol error by its class;
- `ServerSession._received_request` is wrapped for `initialize`, which 1.x answers there (it
  never reaches `_handle_request`), and for a request refused before `initialize`;
- a request the SDK refuses while parsing it (an unknown method, params that do not validate)
  reaches neither: `refusals.py` records it;
- a lowlevel `@server.call_tool()` handler flattens every failure into an `isError` result,
  noted first by `tool_failures.py`;
- a peer's `notifications/cancelled` cancels the request's responder, which answers at once;
  its reason is noted (`cancels.py`), and the span ends cancelled when the handler stops.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core import outcome as _outcome
from mcpobs._core import verdict as _verdict
from mcpobs._core.guard import guarded, report
from mcpobs._core.names import LISTINGS
from mcpobs._core.patches import Patch
from mcpobs._core.sdk import ProtocolError
from mcpobs._core.text import clean
from mcpobs._server import state as _state
from mcpobs._server import transport as _transport
from mcpobs._server.middleware import ServerMiddleware
from mcpobs._server.sdk1 import cancels as _cancels
from mcpobs._server.sdk1 import sessions as _sessions
from mcpobs._server.sdk1 import tasks as _tasks
from mcpobs._server.sdk1.refusals import INVALID_PARAMS
from mcpobs.semconv import Boundary

_UNSET: Any = object()


class Request1:
    """A 1.x request as `ServerMiddleware` reads a request: the names of 2.x's `ServerRequestContext`."""

    __slots__ = (
        "_params",
        "_req",
        "meta",
        "method",
        "protocol_version",
        "request",
        "request_id",
        "responder",
        "session",
    )

    def __init__(self, responder: Any, req: Any, session: Any) -> None:
        self.responder = responder
        self._req = req
        self.method: str = req.method
        self.request_id = responder.request_id
        meta = responder.request_meta
        # The keys beyond the SDK's own (`traceparent`, mcpobs's): what 2.x hands over as a dict.
        self.meta: dict[str, Any] | None = meta.__pydantic_extra__ if meta is not None else None
        # A Starlette `Request` over Streamable HTTP and SSE; None on stdio and in memory.
        self.request = getattr(responder.message_metadata, "request_context", None)
        self.session = session
        version = _sessions.negotiated(session)
        if version is None and self.request is not None:  # stateless HTTP: no handshake, the header says
            version = self.request.headers.get("mcp-protocol-version")
        self.protocol_version = version
        self._params: Any = _UNSET

    @property
    def params(self) -> dict[str, Any] | None:
        """The request's params as the wire carried them (a tool call's name and arguments without a dump)."""
        params = self._params
        if params is _UNSET:
            params = self._params = _wire_params(self._req)
        return params


def _wire_params(req: Any) -> dict[str, Any] | None:
    params = req.params
    if params is None:
        return None
    if req.method == "tools/call":
        found: dict[str, Any] = {"name": params.name}
        if params.arguments is not None:
            found["arguments"] = params.arguments
        return found
    return params.model_dump(by_alias=True, mode="json", exclude_none=True)


class ServerObserver(ServerMiddleware):
    """`ServerMiddleware`'s logic for one 1.x server, driven by the dispatch seams below."""

    def __init__(self, telemetry: Any, server: Any) -> None:
        super().__init__(telemetry, server)
        self.reads_results = telemetry.settings.capture_content or self.corpus is not None
        """A tool call's result is read (captured, or its shapes counted): handed over in its wire shape."""

    def _note_network(self, ctx: Any, network: Any) -> None:
        """A 1.x session's labels come from its transport when its run starts (`_server/sdk1/sessions.py`)."""

    def _cancel_reason(self, ctx: Any) -> str | None:
        return _cancels.reason(ctx.responder)

    def named_late(self, call: Any, ctx: Any) -> None:
        """A lowlevel server's tool named by its first call: the handler lists the server's tools itself
        (into the cache its names come from) after the span opened. The span and labels take the name."""
        params = ctx.params
        known = self.names.tool(params.get("name") if params else None)
        if known != S.OTHER:
            call.names_target = known
            call.state.tool = known
            method, version, target_attr, _, network = call.labels_key
            call.labels_key = (method, version, target_attr, known, network)
            call.span.update_name(S.span_name(method, known))

    def _attributes(
        self, ctx: Any, method: str, target_attr: str | None, known: str | None, later: Mapping[str, Any]
    ) -> dict[str, Any]:
        attrs = super()._attributes(ctx, method, target_attr, known, later)
        serving = _sessions.current()
        if serving is not None and (serving.session is None or serving.session is ctx.session):
            if serving.raw_id is None and ctx.request is not None:  # SSE: the session's id is in the POST's query
                raw = ctx.request.query_params.get("session_id")
                serving.raw_id = clean(raw, S.MAX_NAME_LENGTH) if raw else None
            session_id = serving.session_id(self.telemetry.settings)
            if session_id is not None:
                attrs[S.MCP_SESSION_ID] = session_id
        return attrs


def _serving_this_request(call: Any, responder: Any) -> None:
    """A 1.x session serves many requests at once: the request is found by its responder, not its
    session (`state.of_session`). Re-keyed in the same synchronous step `_start` registered it in."""
    _state.served(call.session_key)
    call.session_key = _state.serving(responder, call.state)


class Pending:
    """One request between `_start` and its answer."""

    __slots__ = ("call", "done", "exception", "observer", "raise_exceptions", "responder", "view")

    def __init__(self, observer: ServerObserver, call: Any, view: Request1, raise_exceptions: Any) -> None:
        _serving_this_request(call, view.responder)
        self.observer = observer
        self.call = call
        self.view = view
        self.responder = view.responder
        self.raise_exceptions = raise_exceptions
        self.exception: BaseException | None = None
        self.done = False

    def __bool__(self) -> bool:
        """Handed to `_handle_request` as its `raise_exceptions` flag: the SDK asks it only as it
        catches a handler's plain exception, which is noted here; the answer is the caller's own."""
        self.exception = sys.exc_info()[1]
        return bool(self.raise_exceptions)

    def answer(self, response: Any) -> Any:
        """Classify the answer about to be sent, end the span, record the metrics; the answer to send."""
        self.done = True
        observer, call, view = self.observer, self.call, self.view
        if call.names_target is None and call.method == "tools/call":
            observer.named_late(call, view)
        result = getattr(response, "root", _UNSET)
        if result is _UNSET:  # `ErrorData`: the handler raised, or the SDK refused the request
            exc = self.exception
            if (
                exc is None
            ):  # the handler raised a protocol error (1.x's `McpError(ErrorData)`): its answer is all of it
                exc = cast(Any, ProtocolError)(response)
            observer._finish(call, view, None, exc)  # pyright: ignore[reportPrivateUsage]
            return response
        if call.method == "tools/call" and type(result).__name__ == "CreateTaskResult":
            with guarded("task submission"):  # a submission: its task's id, hashed
                _tasks.submitted(call, result, observer.telemetry)
        elif call.method in _tasks.TASK_METHODS:
            with guarded("task request"):
                _tasks.answered(call, view.params, result, observer.telemetry)
        # The names a lowlevel server lists and the catalog are read from the wire shape, and so are
        # a tool call's captured result and shapes (opt-in): the typed result is what is sent.
        wire = result
        if call.method in LISTINGS or (call.method == "tools/call" and observer.reads_results):
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        cls = observer._finish(call, view, wire, None)  # pyright: ignore[reportPrivateUsage]
        if cls is not _outcome.OK and cls is not None:
            stamped = observer.stamped(call, view, result, cls)
            if stamped is not result:
                return type(response)(stamped)
        return response

    def unanswered(self, exc: BaseException | None) -> None:
        """The handler stopped without the SDK answering through `respond`: cancelled by the peer (the
        SDK answered "Request cancelled" itself), or its transport closed."""
        self.done = True
        if self.call.names_target is None and self.call.method == "tools/call":
            self.observer.named_late(self.call, self.view)
        if exc is None:
            import anyio

            exc = anyio.get_cancelled_exc_class()()
        self.observer._finish(self.call, self.view, None, exc)  # pyright: ignore[reportPrivateUsage]


_pending: ContextVar[Pending | None] = ContextVar("mcpobs_pending1", default=None)


def pending_call() -> Pending | None:
    """The request this context serves, between its start and its answer (None outside one)."""
    return _pending.get()


def name_tool_late() -> None:
    """The tool call in flight here takes its tool's name, if its server has listed it since the call began
    (a lowlevel server's handler lists its tools before running the tool: progress is labelled by it)."""
    pending = _pending.get()
    if pending is not None and pending.call.names_target is None and pending.call.method == "tools/call":
        pending.observer.named_late(pending.call, pending.view)


def patches(observer_for: Callable[[Any], ServerObserver]) -> list[Patch]:
    """The dispatch seams; `observer_for(server)` is the server's `ServerObserver` (made on first use)."""
    from mcpobs._core import inventory as I

    def observer_of(server: Any) -> ServerObserver:
        serving = _sessions.current()
        if serving is not None and serving.server is server and serving.observer is not None:
            return serving.observer
        return observer_for(server)

    async def handle_request(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Server._handle_request(message, req, session, lifespan_context, raise_exceptions)`."""
        pending = None
        try:
            message, req, session, lifespan_context, raise_exceptions = _arguments(*args, **kwargs)
            observer = observer_of(instance)
            view = Request1(message, req, session)
            call = observer._start(view)  # pyright: ignore[reportPrivateUsage]
            if call is not None:
                pending = Pending(observer, call, view, raise_exceptions)
            elif view.method == "tools/call":  # recorded or not, the server's code never sees mcpobs's key
                _verdict.asked(view)
        except Exception as exc:
            report("server request start", exc)
        if pending is None:
            return await wrapped(*args, **kwargs)
        token = _pending.set(pending)
        try:
            return await wrapped(message, req, session, lifespan_context, pending)  # pyright: ignore[reportPossiblyUnboundVariable]
        except BaseException as exc:
            if not pending.done:  # 1.30 re-raises a transport close's cancellation; `raise_exceptions` re-raises
                with guarded("server request end"):
                    pending.unanswered(exc)
            raise
        finally:
            _pending.reset(token)
            pending.observer._leave(pending.call)  # pyright: ignore[reportPrivateUsage]
            if not pending.done:
                with guarded("server request end"):
                    pending.unanswered(None)

    def respond(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `RequestResponder.respond(response)`: the request's answer, classified before it is sent."""
        pending = _pending.get()
        if pending is None or pending.responder is not instance or pending.done:
            return wrapped(*args, **kwargs)
        try:
            response = pending.answer(args[0] if args else kwargs["response"])
        except Exception as exc:
            report("server request end", exc)
            return wrapped(*args, **kwargs)
        return wrapped(response)

    def received_request(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ServerSession._received_request(responder)`: `initialize`, answered here on 1.x."""
        try:
            responder = args[0] if args else kwargs["responder"]
            req = responder.request.root
            if req.method == "initialize":
                return _initialize(wrapped, instance, responder, req, args, kwargs)
            if req.method != "ping" and instance.client_params is None and not _initialized(instance):
                return _refused_before_initialize(wrapped, responder, req, args, kwargs)
        except Exception as exc:
            report("server initialize", exc)
        return wrapped(*args, **kwargs)

    async def _initialize(wrapped: Any, session: Any, responder: Any, req: Any, args: Any, kwargs: Any) -> Any:
        serving = _sessions.current()
        pending = None
        with guarded("server initialize start"):
            if serving is not None:
                serving.session = session
                observer = serving.observer or observer_for(serving.server)
                view = Request1(responder, req, session)
                call = observer._start(view)  # pyright: ignore[reportPrivateUsage]
                if call is not None:
                    pending = Pending(observer, call, view, False)
        if pending is None:
            return await wrapped(*args, **kwargs)
        token = _pending.set(pending)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            _pending.reset(token)
            pending.observer._leave(pending.call)  # pyright: ignore[reportPrivateUsage]
            if not pending.done:
                with guarded("server initialize end"):
                    pending.unanswered(sys.exc_info()[1])

    async def _refused_before_initialize(wrapped: Any, responder: Any, req: Any, args: Any, kwargs: Any) -> Any:
        try:
            return await wrapped(*args, **kwargs)
        except RuntimeError:  # "Received request before initialization was complete": answered -32602
            with guarded("request before initialize"):
                meta = responder.request_meta
                extra = meta.__pydantic_extra__ if meta is not None else None
                _transport.refused_in_session(req.method, extra, INVALID_PARAMS, Boundary.HANDSHAKE)
            raise

    return [
        Patch.of(I.SERVER1_HANDLE_REQUEST, handle_request),
        Patch.of(I.SERVER1_RESPOND, respond),
        Patch.of(I.SERVER1_RECEIVED_REQUEST, received_request),
    ]


def _arguments(
    message: Any, req: Any, session: Any, lifespan_context: Any, raise_exceptions: Any = False
) -> tuple[Any, Any, Any, Any, Any]:
    return message, req, session, lifespan_context, raise_exceptions


def _initialized(session: Any) -> bool:
    from mcpobs._core import inventory as I

    state = getattr(session, I.SERVER1_INITIALIZATION_STATE.attribute, None)
    return getattr(state, "name", None) == "Initialized"
