"""mcp 1.x's `ClientSession`: one CLIENT span per request, and the trace context it sends.

Every request a 1.x session sends, over any transport, passes `BaseSession.send_request`; every
notification `send_notification`. Their wrappers here open the request's `ClientCall`
(`spans.ClientSpans.open`, as on 2.x) or take over the one `call_tool` / `initialize` opened a
step earlier (`ClientCall.awaiting_send`), and hand the SDK a copy of the request whose `_meta`
carries the call's trace context (`_client/sdk1/meta.py`): mcp 1.x injects none and makes no span of its own.

The call then owns its life as on 2.x (`calls.ClientCall`): its classification (1.x codes:
a timeout is `McpError` 408, a closed connection -32000, a cancel answered with code 0), the
server's verdict on a failed tool call (`_core/verdict.py`, read by `ClientCall.replied`), the
listing's judgement, the metrics. `ClientSession.call_tool` is wrapped by 2.x's own wrapper
(`seams.ClientSeams.call_tool`): it opens the call's span around the SDK's output-schema
validation and puts the listed schema's fingerprint (and a declared model) into `meta=`, which
1.x's `call_tool` takes too. So what a tools/call asks of the server and what its result is read
for (the verdict) is the same code on both lines: a change there applies to both.

What 1.x keeps nowhere, mcpobs remembers from the handshake: the revision negotiated (the
version label of every later call and of the session's duration) and the server's identity
(its release label). The request id a call goes out with is the session's next id, read just
before the SDK takes it; over Streamable HTTP the call is filed under it for the transport's
task, which reports the POST's status and failure (`_client/sdk1/transports.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from opentelemetry import context as otel_context

from mcpobs._client import bare, calls, classify, memory, release
from mcpobs._client.calls import ClientCall
from mcpobs._client.memory import InFlight
from mcpobs._client.sdk1 import meta as _meta
from mcpobs._client.sdk1 import tasks as _tasks
from mcpobs._client.sdk1 import transports as _transports
from mcpobs._client.seams import ClientSeams, holding
from mcpobs._core import inventory as I
from mcpobs._core import sdk
from mcpobs._core.guard import report
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs._core.privacy import Privacy
from mcpobs._core.telemetry import Telemetry
from mcpobs.semconv import NETWORK_PROTOCOL_NAME


def _params(root: Any) -> dict[str, Any] | None:
    """The params that name the request's target (name, uri) and the revision asked; never arguments."""
    params = getattr(root, "params", None)
    if params is None:
        return None
    if isinstance(params, Mapping):
        return dict(cast("Mapping[str, Any]", params))
    found: dict[str, Any] = {}
    for key in ("name", "uri", "protocolVersion", "cursor"):
        value = getattr(params, key, None)
        if value is not None:
            found[key] = value if isinstance(value, str) else str(value)  # a 1.x `uri` is an `AnyUrl`
    return found


def _on_http(call: ClientCall) -> bool:
    network = call.labels_key[4]
    return network is not None and network.labels.get(NETWORK_PROTOCOL_NAME) == "http"


class Session1Seams:
    """The 1.x `ClientSession` wrappers, sharing one `ClientSpans` with 2.x's `call_tool` wrapper."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.seams = ClientSeams(telemetry)
        self.spans = self.seams.spans
        self.baggage = telemetry.settings.send_baggage
        self.privacy = telemetry.privacy
        self.tasks = _tasks.ClientTasks(telemetry)

    async def send_request(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_request`: the span of one request, and its `_meta`."""
        request = args[0] if args else kwargs.get("request")
        call: ClientCall | None = None
        own = False
        method = None
        try:  # not `guarded`: this runs on every request, and a try costs nothing
            root = getattr(request, "root", request)  # fastmcp.Client also passes bare request models
            method = root.method
            if memory.remembered(instance) is None:
                _adopted(instance)
            held = calls.current()
            if held is not None and held.awaiting_send and held.session is instance and method == held.method:
                held.awaiting_send = False  # this request is the one `call_tool` / `initialize` opened the span for
                call = held
                if self.spans.request_hook is not None:
                    call.requested(root)
            else:
                params = _params(root)
                version = params.get("protocolVersion") if params and method == "initialize" else None
                parent = self.tasks.parent(method, root) if method in _tasks.METHODS else None
                if parent is None:
                    call = self.spans.open(instance, method, params, version, root)
                else:  # a tasks/* request for a task submitted here: in the task's trace
                    token = otel_context.attach(parent)
                    try:
                        call = self.spans.open(instance, method, params, version, root)
                    finally:
                        otel_context.detach(token)
                own = True
        except Exception as exc:
            report("client span start", exc)
        if call is None:
            return await wrapped(*args, **kwargs)
        filed = None
        try:
            args, kwargs, filed = self._stamped(call, instance, request, args, kwargs)
        except Exception as exc:
            report("client trace context", exc)
        tokens = calls.enter(call) if own else None
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            if tokens is not None:
                calls.leave(tokens)
            _unfile(filed, call)
            if filed is not None and filed.failure is not None and call.failure is None and is_cancellation(exc):
                call.failure = filed.failure  # sent on a transport already torn down (`_client/sdk1/transports.py`)
            call.failed(exc)
            if method == "tasks/result":
                try:
                    self.tasks.failed(call, method, root, exc)  # pyright: ignore[reportPossiblyUnboundVariable]
                except Exception as err:
                    report("client task result", err)
            if own:
                call.end(exc)
            raise
        if tokens is not None:
            calls.leave(tokens)
        _unfile(filed, call)
        try:  # before the reply is recorded: an `initialize` span then says which release answered
            _learned(instance, method, result, self.privacy)
        except Exception as exc:
            report("client handshake", exc)
        result = call.replied(result)
        if method == "tools/call" or method in _tasks.METHODS:
            try:
                self.tasks.replied(call, method, root, result)  # pyright: ignore[reportPossiblyUnboundVariable]
            except Exception as err:
                report("client task", err)
        if own:
            call.end()
        return result

    def _stamped(
        self, call: ClientCall, session: Any, request: Any, args: Any, kwargs: Any
    ) -> tuple[Any, Any, InFlight | None]:
        """The arguments with the request's copy carrying the trace context; the call filed by its id."""
        stamped = _meta.stamped(request, _meta.carrier(call.context, self.baggage))
        if stamped is not request:
            if args:
                args = (stamped, *args[1:])
            else:
                kwargs = {**kwargs, "request": stamped}
        filed = None
        request_id = getattr(session, I.SESSION1_REQUEST_ID.attribute, None)
        if isinstance(request_id, int):
            call.request_id = request_id
            if _on_http(call):  # the transport's task reports this request's POST (`_client/sdk1/transports.py`)
                remembered = memory.remembered(session)
                if remembered is not None:
                    filed = memory.in_flight(remembered)
                    filed[request_id] = call
        return args, kwargs, filed

    async def send_notification(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_notification`: notifications join the trace too."""
        call = None
        try:
            notification = args[0] if args else kwargs.get("notification")
            root = getattr(notification, "root", notification)
            call = self.spans.open(instance, root.method, None, None, root)
            stamped = _meta.stamped(notification, _meta.carrier(call.context, self.baggage))
            if stamped is not notification:
                if args:
                    args = (stamped, *args[1:])
                else:
                    kwargs = {**kwargs, "notification": stamped}
        except Exception as exc:
            report("client notification span", exc)
        return await calls.run(call, wrapped, args, kwargs)

    async def initialize(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.initialize`: its span also covers the SDK's version check.

        A server answering with a revision the client does not speak makes the SDK raise after
        the reply: the handshake failed at the `version` boundary, not an ok `initialize`.
        """
        call = None
        try:
            from mcp.types import LATEST_PROTOCOL_VERSION

            if memory.remembered(instance) is None:
                _adopted(instance)
            call = self.spans.open(instance, "initialize", None, LATEST_PROTOCOL_VERSION)
        except Exception as exc:
            report("client initialize span", exc)
        if call is None:
            return await wrapped(*args, **kwargs)
        result = await holding(call, classify.unsupported_version, classify.UNSUPPORTED_VERSION, wrapped, args, kwargs)
        call.end()
        return result


def _adopted(session: Any) -> None:
    """A session no transport was noted for in its own task: the transport serving its stream, if any."""
    transport = _transports.carrying(session)
    url = getattr(transport, "url", None)
    if isinstance(url, str):
        bare.adopt(session, url, memory.connection_network(url, by_url=True), transport)


def _unfile(filed: InFlight | None, call: ClientCall) -> None:
    if filed is not None and filed.get(call.request_id) is call:
        del filed[call.request_id]


def _learned(session: Any, method: object, result: Any, privacy: Privacy) -> None:
    """What a reply tells that a 1.x session keeps nowhere: the handshake's revision and server, a listing's release."""
    if method == "initialize":
        memory.remember_version(session, getattr(result, sdk.PROTOCOL_VERSION, None))
        release.remember_server(session, getattr(result, sdk.SERVER_INFO, None))
    elif method == "tools/list":
        release.listed(session, result, privacy)


def patches(telemetry: Telemetry) -> list[Patch]:
    """The 1.x `ClientSession`'s seams."""
    seams = Session1Seams(telemetry)
    return [
        Patch.of(I.SESSION1_SEND_REQUEST, seams.send_request),
        Patch.of(I.SESSION1_SEND_NOTIFICATION, seams.send_notification),
        Patch.of(I.SESSION1_CALL_TOOL, seams.seams.call_tool),
        Patch.of(I.SESSION1_INITIALIZE, seams.initialize),
        Patch.of(I.SESSION1_INIT, bare.session_init, setup=True),
        Patch.of(I.SESSION1_ENTER, bare.session_enter),
        Patch.of(I.SESSION1_EXIT, bare.session_exit(telemetry)),
    ]
