"""The client seams: which SDK functions mcpobs wraps, and what each wrapper does.

`ClientSession.send_request` and `send_discover` carry every request the SDK's client sends,
whatever the transport, so a span opened there is current while the SDK writes the request.
`ClientSession.call_tool` opens the span a step earlier, so the SDK's output-schema
validation (and the `tools/list` it may issue) land on the call's span; its `send_request`
then takes that span over (`ClientCall.awaiting_send`) instead of opening another.
`Client.call_tool` / `get_prompt` / `read_resource` drive multi-round-trip operations.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mcpobs import semconv as S
from mcpobs._client import bare, calls, classify, http, lifetime, memory, negotiation, release, wire
from mcpobs._client import rounds as _rounds
from mcpobs._client.calls import ClientCall, Outbound
from mcpobs._client.classify import Classification
from mcpobs._client.listen import ListenStream
from mcpobs._client.side_spans import SideSpans
from mcpobs._client.spans import ClientSpans
from mcpobs._core import content as _content
from mcpobs._core import inventory as I
from mcpobs._core import model as _model
from mcpobs._core import propagation as _propagation
from mcpobs._core.guard import guarded, report
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry


class ClientSeams:
    """The wrappers, sharing one `ClientSpans`."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.spans = ClientSpans(telemetry)
        self.telemetry = telemetry

    async def send_request(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_request`: the span for one request."""
        held = calls.current()
        if (
            held is not None
            and held.awaiting_send
            and held.session is instance
            and wire.method_of(args, kwargs) == held.method
        ):
            held.awaiting_send = False  # this request is the one `call_tool` opened the span for
            if self.spans.request_hook is not None:
                held.requested(args[0] if args else kwargs.get("request"))
            try:
                result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                held.failed(exc)
                raise
            return held.replied(result)
        call = None
        try:  # one guard, not `guarded` around `try_open`'s own: this runs on every request
            request = args[0] if args else kwargs.get("request")
            params = wire.params_of(request)
            version = params.get("protocolVersion") if params and request.method == "initialize" else None
            call = self.spans.open(instance, request.method, params, version, request)
        except Exception as exc:
            report("client span start", exc)
        return await calls.run(call, wrapped, args, kwargs)

    async def send_discover(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_discover`, which bypasses `send_request`."""
        version = args[0] if args else kwargs.get("version")
        call = self.spans.try_open(instance, "server/discover", version, Outbound("server/discover"))
        return await calls.run(call, wrapped, args, kwargs)

    async def send_notification(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.send_notification`: notifications join the trace too."""
        call = None
        try:
            notification = args[0] if args else kwargs.get("notification")
            call = self.spans.open(instance, notification.method, None, None, notification)
        except Exception as exc:
            report("client notification span", exc)
        return await calls.run(call, wrapped, args, kwargs)

    async def call_tool(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.call_tool`: its span also covers output-schema validation.

        The schema fingerprint of the tool as this session listed it rides in the request's
        `_meta` (through `call_tool`'s own `meta` argument; the caller's keys win).
        """
        call = None
        try:  # not `guarded`: this runs on every tool call, and a try costs nothing
            name = args[0] if args else kwargs.get("name")
            call = self.spans.open(instance, "tools/call", {"name": name}, None)
            call.asked = (name, args[1] if len(args) > 1 else kwargs.get("arguments"))
            fingerprints = call.fingerprints
            kwargs, call.verdict_asked = wire.tool_call_meta(kwargs, fingerprints[0] if fingerprints else None)
            kwargs = _model.with_meta(kwargs)
            if self.telemetry.settings.capture_content and call.span.is_recording():
                captured = _content.sent_arguments(call.asked[1], self.telemetry.privacy)
                if captured is not None:
                    call.span.set_attribute(S.GEN_AI_TOOL_CALL_ARGUMENTS, captured)
        except Exception as exc:
            report("client call_tool span", exc)
        if call is None:
            return await wrapped(*args, **kwargs)
        # `holding` inlined: one coroutine frame fewer on every tool call
        call.awaiting_send = True
        tokens = calls.enter(call)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            calls.leave(tokens)
            if classify.failed_validation(call.cls, exc):
                call.reclassify(classify.OUTPUT_VALIDATION, exc)
            call.end(exc)
            raise
        calls.leave(tokens)
        if self.telemetry.settings.capture_content and call.span.is_recording():
            with guarded("client tool result"):
                captured = _content.received_result(result, self.telemetry.privacy)
                if captured is not None:
                    call.span.set_attribute(S.GEN_AI_TOOL_CALL_RESULT, captured)
        call.end()
        return result

    async def initialize(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession.initialize`: its span also covers the SDK's version check.

        A server answering with a revision the client does not speak makes the SDK raise after
        the reply: the handshake failed at the `version` boundary, not an ok `initialize`.
        """
        if getattr(instance, I.SESSION_INITIALIZED.attribute, None) is not None:
            return await wrapped(*args, **kwargs)  # already initialized: nothing is sent
        call = None
        try:
            from mcp.client.session import LATEST_HANDSHAKE_VERSION

            call = self.spans.open(instance, "initialize", None, LATEST_HANDSHAKE_VERSION)
        except Exception as exc:
            report("client initialize span", exc)
        if call is None:
            return await wrapped(*args, **kwargs)
        result = await holding(call, classify.unsupported_version, classify.UNSUPPORTED_VERSION, wrapped, args, kwargs)
        call.end()
        return result

    def operation(self, method: str) -> Any:
        """Wraps `Client.call_tool` / `get_prompt` / `read_resource`: the rounds they drive."""

        async def drive(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            op = _rounds.Operation(method, instance)
            token = _rounds.start(op)
            try:
                result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                _rounds.stop(token)
                op.end(exc)
                raise
            _rounds.stop(token)
            if op.anchor is not None:  # most calls take one round: nothing to end
                op.end(None)
            return result

        return drive

    def listen(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Client.listen`, which bypasses `send_request`: one span for the stream."""
        stream = wrapped(*args, **kwargs)
        try:
            return ListenStream(self.spans, instance.session, stream)
        except Exception as exc:
            report("listen span", exc)
            return stream

    def jsonrpc_send(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `JSONRPCDispatcher.send_raw_request`: over HTTP, `traceparent` rides as a header too.

        Not a coroutine: it changes the arguments and hands back the SDK's own coroutine, so no
        frame of mcpobs's sits in the await chain while the request waits for its reply.
        """
        try:  # not `guarded`: this runs on every request, and a try costs nothing
            call = calls.sending()
            if call is not None:
                args, kwargs = wire.with_trace_header(call, args, kwargs)
        except Exception as exc:
            report("trace context header", exc)
        return wrapped(*args, **kwargs)

    def notify(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `JSONRPCDispatcher.notify`: `notifications/cancelled` carries the request's trace.

        A plain function handing back the SDK's coroutine, not a coroutine of its own: every
        notification a server sends (each progress report over JSON-RPC) passes here.
        """
        try:
            call = calls.sending()
            if call is not None:
                args, kwargs = wire.with_meta(args, kwargs, wire.trace_meta(self.telemetry.settings.send_baggage))
        except Exception as exc:
            report("notification trace context", exc)
        return wrapped(*args, **kwargs)

    async def build_session(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Client._build_session`: learn where the session's server is, and its transport; its start."""
        start = time.perf_counter()
        token = http.start_building()
        try:
            session = await wrapped(*args, **kwargs)
        finally:
            built = http.finish_building(token)
        with guarded("client connection attributes"):
            lifetime.began(session, start)
            server = instance.server
            if not isinstance(server, str):  # a Client built on a transport object: HTTP, stdio, or else
                server = http.url_of(built) or http.stdio_of(built) or server
            by_url = isinstance(server, str) and server is not instance.server
            http.own(built, memory.remember_connection(session, server, by_url=by_url))
        return session


async def holding(
    call: ClientCall,
    raised_after_reply: Callable[[Classification | None, BaseException], bool],
    instead: Classification,
    wrapped: Any,
    args: Any,
    kwargs: Any,
) -> Any:
    """`wrapped` with `call` current, for its own `send_request` to take over; ends `call` if it raises.

    An exception the SDK raises after an ok reply (`raised_after_reply`) is the call's failure
    (`instead`): an output that fails its schema, a revision the client does not speak.
    """
    call.awaiting_send = True
    tokens = calls.enter(call)
    try:
        result = await wrapped(*args, **kwargs)
    except BaseException as exc:
        calls.leave(tokens)
        if raised_after_reply(call.cls, exc):
            call.reclassify(instead, exc)
        call.end(exc)
        raise
    calls.leave(tokens)
    return result


def patches(telemetry: Telemetry) -> list[Patch]:
    """The client-side seams."""
    seams = ClientSeams(telemetry)
    side = SideSpans(telemetry)
    return [
        Patch.of(I.SESSION_SEND_REQUEST, seams.send_request),
        Patch.of(I.SESSION_SEND_DISCOVER, seams.send_discover),
        Patch.of(I.SESSION_SEND_NOTIFICATION, seams.send_notification),
        Patch.of(I.SESSION_CALL_TOOL, seams.call_tool),
        Patch.of(I.SESSION_INITIALIZE, seams.initialize),
        Patch.of(I.SESSION_INPUT_REQUEST, side.dispatch_input_request),
        Patch.of(I.CLIENT_BUILD_SESSION, seams.build_session, setup=True),
        Patch.of(I.CLIENT_LISTEN, seams.listen),
        Patch.of(I.CLIENT_NEGOTIATE, negotiation.negotiate_auto),
        Patch.of(I.CLIENT_CALL_TOOL, seams.operation("tools/call")),
        Patch.of(I.CLIENT_GET_PROMPT, seams.operation("prompts/get")),
        Patch.of(I.CLIENT_READ_RESOURCE, seams.operation("resources/read")),
        Patch.of(I.SDK_SEND_SPAN, side.otel_span),
        *([] if telemetry.settings.send_baggage else [Patch.of(I.SDK_INJECT, _propagation.without_baggage)]),
        Patch.of(I.DISPATCHER_SEND, seams.jsonrpc_send),
        Patch.of(I.DISPATCHER_NOTIFY, seams.notify),
        *http.patches(telemetry.settings),
        *bare.patches(telemetry),
        *lifetime.patches(telemetry),
        *release.patches(telemetry.privacy),
    ]
