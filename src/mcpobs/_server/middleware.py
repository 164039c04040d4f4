"""The server side: one SERVER span and one classification per inbound message.

`ServerMiddleware` takes the place of the SDK's built-in `OpenTelemetryMiddleware` at the
outermost position of each server's chain, so it sees every inbound request and
notification, including the ones the SDK refuses before any handler runs.

It runs a request's way from start to finish; the parts it asks live beside it: the request in
flight (`call.py`), where its span hangs (`span_parent.py`), what the span says beyond its labels
(`span_attributes.py`), and the served tool's contract (`tool_contract.py`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanKind

from mcpobs import semconv as S
from mcpobs._core import hooks as _hooks
from mcpobs._core import inventory as I
from mcpobs._core import outbound as _outbound
from mcpobs._core import outcome as _outcome
from mcpobs._core import runtime_context
from mcpobs._core import service_version as _service_version
from mcpobs._core import stop as _stop
from mcpobs._core import verdict as _verdict
from mcpobs._core.guard import report
from mcpobs._core.labels import LabelSets, Network, http_network, release_labels
from mcpobs._core.methods import ROUND_METHODS, TARGETED
from mcpobs._core.names import LISTINGS, ServerNames, bounded_version
from mcpobs._core.outcome import Classification
from mcpobs._core.patches import instrumentation_enabled
from mcpobs._core.telemetry import Telemetry, end_once
from mcpobs._server import cancellation as _cancellation
from mcpobs._server import catch_all as _catch_all
from mcpobs._server import exchange as _exchange
from mcpobs._server import identity as _identity
from mcpobs._server import rounds as _rounds
from mcpobs._server import sessions as _sessions
from mcpobs._server import state as _state
from mcpobs._server.call import Call
from mcpobs._server.span_attributes import ReplyAttributes, request_attributes
from mcpobs._server.span_parent import parent_and_links
from mcpobs._server.tool_contract import ToolContract


class ServerMiddleware:
    """A `ServerMiddleware` for one server: spans, outcome and metrics for each message.

    Its parts serve both SDK lines: on mcp 2.x the SDK calls it as the outermost middleware of
    the server's chain (`__call__`); on mcp 1.x, which has no chain, `_server/sdk1/dispatch.py`
    drives the same steps from where the lowlevel `Server` dispatches a request and where its
    responder answers: `_start` (the span, the request's state), `_finish` (the one
    classification, the span's end, the metrics), `stamped` (the verdict), `_leave`.
    `ctx` is the SDK's `ServerRequestContext` on 2.x and a view with the same names on 1.x.
    """

    def __init__(self, telemetry: Telemetry, server: Any) -> None:
        self.telemetry = telemetry
        self.names = ServerNames(server)
        constant = release_labels(server)
        # The end batch writes the labels' release: its own repeats only what they do not
        # already say (a release the label had to bound stays as stated).
        self._server_attrs = {
            k: v for k, v in _identity.server_attributes(server, telemetry).items() if constant.get(k) != v
        }
        self._peer = S.PEER not in telemetry.settings.omit_attributes
        """Who served and who called on every request span; else on the handshake spans only."""
        self._labels = LabelSets(
            S.SERVER_REQUESTS,
            errors_only=True,
            constant=constant,
            duration=S.SERVER_OPERATION_DURATION,
            known=self.names.known,  # the caches of registered names grow with the catalog
        )
        self.contract = ToolContract(telemetry, self.names, self._labels.constant)
        self.corpus = self.contract.corpus
        """The shapes of tool calls, when `record_shapes` asks for them."""
        self._after = ReplyAttributes(telemetry, self.names, self._labels.constant).by_method
        """What a successful reply adds to its span, by method."""
        _service_version.adopt(getattr(server, "version", None))  # the resource's, when mcpobs configured it
        self._excluded = telemetry.settings.excluded_methods
        self._request_hook = telemetry.settings.server_request_hook
        self._response_hook = telemetry.settings.server_response_hook
        self.replaced: Any = None
        """The middleware this one took the place of (the SDK's own), put back by `uninstrument()`."""
        self._verdict = telemetry.settings.send_verdict
        """Tell the client how a failed tool call was classified (`_core/verdict.py`)."""
        self._http: dict[object, Network | None] = {}
        """HTTP version -> its network labels (known versions only)."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        call = self._start(ctx)
        if call is None:
            if ctx.method == "tools/call":
                _hide_verdict_request(ctx)  # recorded or not, the server's code never sees mcpobs's key
            return await call_next(ctx)
        try:
            result = await call_next(ctx)
        except BaseException as exc:
            self._leave(call)
            self._finish(call, ctx, None, exc)
            raise
        self._leave(call)
        cls = self._finish(call, ctx, result, None)
        if cls is not _outcome.OK and cls is not None:  # the ok path pays one identity check
            return self.stamped(call, ctx, result, cls)
        return result

    def stamped(self, call: Call, ctx: Any, result: Any, cls: Classification) -> Any:
        """`result` with the verdict on `cls` in its `_meta` when one is sent (`_core/verdict.py`); else `result`.

        The one place the server decides whether to send it, for both lines (mcp 1.x stamps the
        typed result its responder is about to send): only when the client asked, on a failed call.
        """
        if not call.verdict_asked or not self._verdict:  # asked on a tools/call only (`_start`)
            return result
        try:
            if cls.outcome not in _verdict.FAILED:
                return result
            return _verdict.stamp(result, cls)
        except Exception as err:
            report("server verdict", err)
            return result

    # -- before -----------------------------------------------------------------------------

    def _start(self, ctx: Any) -> Call | None:
        if _state.internal() or not instrumentation_enabled():
            return None  # the SDK's own request, or inside `suppress_instrumentation()`
        try:
            call = self._open(ctx)
            # A stop that comes first ends it as `stopped` (`_core/stop.py`); `_finish` releases it.
            _stop.enter(call, lambda: self._stopped(call, ctx))
            return call
        except Exception as exc:
            report("server span start", exc)
            return None

    def _open(self, ctx: Any) -> Call:
        tel = self.telemetry
        names = self.names
        method = names.method(ctx.method)
        params = ctx.params
        target = None
        known = None
        target_attr = TARGETED.get(method)
        if target_attr is not None:
            raw = params.get("name") if params else None
            known = names.tool(raw) if target_attr == S.GEN_AI_TOOL_NAME else names.prompt(raw)
            if known != S.OTHER:
                target = known
        # Read and removed before anything else sees the request (`_core/verdict.py`).
        verdict_asked = method == "tools/call" and _verdict.asked(ctx)
        request = ctx.request
        if request is not None:  # Streamable HTTP
            _exchange.mark_reached(ctx.method)  # the HTTP boundary then leaves this request to us
            network = self._http_network(request)
            if method == "initialize":
                self._note_network(ctx, network)
        else:
            network = _state.transport()
            if ctx.request_id is not None:
                # In process the id is minted on this side; the client call waiting on it
                # (its span is still current here) records it with its outcome.
                waiting = _outbound.sending()
                if waiting is not None and waiting.request_id is None:
                    waiting.request_id = ctx.request_id
        version = bounded_version(ctx.protocol_version)
        labels_key = (method, version, target_attr, known, network)
        labels, later = self._labels.split(labels_key)  # `later` goes on at the end (`_end_span`)

        name = S.span_name(method, target)
        parent, links = parent_and_links(ctx, tel, name, labels)
        # The sampler sees what it needs to decide; the rest is built only for a span that records.
        if method in self._excluded:  # no span, the metrics still count it; the caller's trace goes on
            span: Span = NonRecordingSpan(trace.get_current_span(parent).get_span_context())
        else:
            span = tel.start_span(name, parent, SpanKind.SERVER, labels, links)
        if self._request_hook is not None and span.is_recording():
            _hooks.run("server_request_hook", self._request_hook, span, ctx)
        return Call(method, target, labels_key, span, ctx.session, later, verdict_asked)

    def _note_network(self, ctx: Any, network: Network | None) -> None:
        """The session's network labels, as its `initialize` request saw them (its duration's labels)."""
        _sessions.note_network(getattr(ctx.session, I.SESSION_CONNECTION.attribute), network)

    def _http_network(self, request: Any) -> Network | None:
        version = getattr(request, "scope", {}).get("http_version")
        found = self._http.get(version, False)
        if found is False:
            found = http_network(version)
            if len(self._http) < 8:  # the ASGI server's few spellings; anything else is not cached
                self._http[version] = found
        return found  # type: ignore[return-value]

    def _attributes(
        self, ctx: Any, method: str, target_attr: str | None, known: str | None, later: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Span attributes beyond those it started with (`later`: the labels it did not), for a recording span only."""
        return request_attributes(
            self.telemetry, ctx, method, target_attr, known, later, self._server_attrs, self._peer
        )

    # -- after ------------------------------------------------------------------------------

    def _leave(self, call: Call) -> None:
        try:  # not `guarded`: this runs on every request, and a try costs nothing
            _state.leave(call.state_token)  # type: ignore[arg-type]
            _state.served(call.session_key)
            runtime_context.detach(call.otel_token)
        except Exception as exc:
            report("server context detach", exc)

    def _finish(self, call: Call, ctx: Any, result: Any, exc: BaseException | None) -> Classification | None:
        """Classify, end the span, record the metrics: the span and the metrics each in their own
        `try`, so a trace pipeline that raises (a processor's `on_end`) costs no count, and a
        metric pipeline that raises costs no span. Returns the classification (None if it failed,
        or if a stop already recorded the call: `_stopped`)."""
        if not _stop.release(call):
            return None
        elapsed = time.perf_counter() - call.start
        try:
            attrs: dict[str, Any] | None = None
            if exc is None:
                if call.method in LISTINGS:  # the one check `learn` would make, without the call
                    self.names.learn(call.method, result)
                cls = _outcome.from_result(result, call.method, call.state.tool_failure)
                if cls is _outcome.PENDING_INPUT and call.method in ROUND_METHODS:
                    _rounds.note_pending(call.state, result)
                after = self._after.get(call.method)
                if after is not None:
                    attrs = after(call, ctx, result)
                if self._response_hook is not None and call.span.is_recording():
                    _hooks.run("server_response_hook", self._response_hook, call.span, result)
            else:
                in_handler = exc is call.state.exception  # the tool hook saw the handler raise it
                cls = _outcome.from_exception(
                    exc, call.method, _initialized(ctx), self._mistake(call, ctx.params), in_handler
                )
                if cls is _outcome.CANCELLED and _stop.stopping():
                    # the server's stop cancelled it (a grace ending, its lifespan's end), not the caller
                    cls = _outcome.STOPPED
                    _stop.flush_soon()  # exported even if the stop's own flushes ran already
                elif cls is _outcome.CANCELLED and (reason := self._cancel_reason(ctx)) is not None:
                    # the peer's text: an error message like any other (opt-in, through `redact`)
                    recorded = self.telemetry.privacy.message(reason, S.MAX_REASON_LENGTH)
                    attrs = {S.CANCEL_REASON: recorded} if recorded else None
                elif call.method == "prompts/get" and cls.rpc_code is None and cls.outcome is S.Outcome.SERVER_ERROR:
                    # MCPServer wraps what a prompt raised in a ValueError: its class says
                    # nothing, the code the SDK answers with is what the client got.
                    cls = _catch_all.answered(ctx.protocol_version)
            if ctx.request_id is None and self.names.is_request(ctx.method):
                cls = _outcome.NOT_A_REQUEST  # the SDK took it for a notification: nothing was answered
        except Exception as err:
            report("server classification", err)
            end_once(call.span)
            return None
        if self.corpus is not None and call.method == "tools/call" and call.names_target is not None:
            try:
                shapes = self.contract.shapes(call, ctx, result)
                if shapes:
                    attrs = {**attrs, **shapes} if attrs else shapes
            except Exception as err:
                report("tool call shapes", err)
        answered = ctx.request_id is not None and cls.outcome not in _UNANSWERED
        if answered and ctx.request is not None and self._after_reply(call, ctx, cls, exc, attrs):
            return cls
        self._conclude(call, ctx, cls, exc, attrs, elapsed)
        return cls

    def _after_reply(
        self, call: Call, ctx: Any, cls: Classification, exc: BaseException | None, attrs: dict[str, Any] | None
    ) -> bool:
        """End `call` once its answer is written (or is not), when the HTTP boundary can tell; True if it will.

        The handler's return is not the answer: a client gone before the SDK wrote it never got it,
        and the call is `cancelled` (`stopped` if the server's stop kept it back), `error.type`
        `reply_undelivered`, never `ok`. A stop coming meanwhile still ends it (`_core/stop.py`).
        What the span says beyond its outcome is read now, in the request's context.
        """
        if call.method in S.STREAM_METHODS:
            return False
        closing: list[dict[str, Any] | None] = [None]

        def end(ended: Classification, written: bool) -> None:
            elapsed = time.perf_counter() - call.start
            attrs = closing[0]
            try:
                self._close(call, ended, exc if written else None, dict(attrs) if attrs else None)
            except Exception as err:
                report("server span end", err)
                end_once(call.span)
            try:
                self._record(call, ended, elapsed, False)
            except Exception as err:
                report("server metrics", err)

        def settle(written: bool) -> None:
            if not _stop.release(call):
                return  # the stop ended it
            if written:
                end(cls, True)
            elif _stop.stopping():
                end(_outcome.UNDELIVERED_STOPPED, False)
                _stop.flush_soon()
            else:
                end(_outcome.UNDELIVERED, False)

        try:
            if not _exchange.after_reply(settle, ctx.request, ctx.request_id):
                return False
        except Exception as err:
            report("server reply", err)
            return False
        # `settle` runs only once this task yields: the attributes are read first, in this context.
        try:
            closing[0] = self._closing(call, ctx, attrs)
        except Exception as err:
            report("server span attributes", err)
        _stop.enter(call, lambda: end(_outcome.UNDELIVERED_STOPPED, False))
        return True

    def _conclude(
        self,
        call: Call,
        ctx: Any,
        cls: Classification,
        exc: BaseException | None,
        attrs: dict[str, Any] | None,
        elapsed: float,
    ) -> None:
        """End the span and record the metrics, each in its own `try` (see `_finish`)."""
        try:
            self._end_span(call, ctx, cls, exc, attrs)
        except Exception as err:
            report("server span end", err)
            end_once(call.span)
        try:
            # A message without an id is a notification, unless a request method came without one.
            notification = ctx.request_id is None and cls is not _outcome.NOT_A_REQUEST
            self._record(call, cls, elapsed, notification)
        except Exception as err:
            report("server metrics", err)

    def _stopped(self, call: Call, ctx: Any, cls: Classification = _outcome.STOPPED) -> None:
        """End `call` as `stopped`, on the stop's thread (`_core/stop.py`): the server will not let it
        finish (`cls`: `UNDELIVERED_STOPPED` once its handler returned, its answer not yet written)."""
        elapsed = time.perf_counter() - call.start
        try:
            self._end_span(call, ctx, cls, None, None)
        except Exception as err:
            report("server span end", err)
            end_once(call.span)
        try:
            self._record(call, cls, elapsed, ctx.request_id is None)
        except Exception as err:
            report("server metrics", err)

    def _cancel_reason(self, ctx: Any) -> str | None:
        """The reason the peer gave for cancelling the request, if it gave one (bounded)."""
        return _cancellation.reason(ctx)

    def _mistake(self, call: Call, params: Any) -> Classification | None:
        """What the caller got wrong that a handler may answer with a plain exception, if anything."""
        if call.method not in TARGETED:
            return None
        if call.names_target is None:
            return _outcome.UNKNOWN_TARGET if self.names.knows_catalog(call.method) else None
        arguments = cast("dict[str, object]", params).get("arguments") if isinstance(params, dict) else None
        if call.method == "prompts/get" and self.names.missing_prompt_arguments(call.names_target, arguments):
            return _outcome.BAD_ARGUMENTS
        return None

    def _end_span(
        self, call: Call, ctx: Any, cls: Classification, exc: BaseException | None, extra: dict[str, Any] | None
    ) -> None:
        self._close(call, cls, exc, self._closing(call, ctx, extra))

    def _closing(self, call: Call, ctx: Any, extra: dict[str, Any] | None) -> dict[str, Any] | None:
        """The span's attributes beyond its labels and outcome, read in the request's own context
        (a call ended later, once its answer is written, ends elsewhere); None for a span not recording."""
        span = call.span
        # Staleness is counted whether or not the span is sampled: metrics are never sampled.
        recording = span.is_recording()
        contract = (
            self.contract.attributes(call.names_target, ctx.meta, recording)
            if call.names_target is not None and call.method == "tools/call"
            else None
        )
        if not recording:
            return None
        # Everything beyond the labels goes on in one batch, at the end: each batch costs
        # the SDK a lock and a validation pass, and an unsampled span pays for none of it.
        _, _, target_attr, known, _ = call.labels_key
        attrs = self._attributes(ctx, call.method, target_attr, known, call.state.later)
        if contract:
            attrs.update(contract)
        state = call.state
        if state.progress_dropped:
            attrs[S.PROGRESS_DROPPED] = state.progress_dropped
        if state.round is not None:
            attrs[S.MRTR_ROUND] = state.round
        if state.input_methods is not None:
            attrs[S.MRTR_INPUT_METHODS] = state.input_methods
        if extra:
            attrs.update(extra)
        return attrs

    def _close(self, call: Call, cls: Classification, exc: BaseException | None, attrs: dict[str, Any] | None) -> None:
        """Write `cls` and `attrs` (from `_closing`) onto the span, and end it."""
        span = call.span
        if attrs is not None:
            # A bug's exception goes on the span; a tool's isError result has no message (its text is content).
            cause = (call.state.exception or exc) if cls.outcome is S.Outcome.SERVER_ERROR else None
            privacy = self.telemetry.privacy
            _outcome.write(span, cls, attrs, cause, privacy.description(cause), privacy)
        span.end()

    def _record(self, call: Call, cls: Classification, elapsed: float, notification: bool) -> None:
        tel = self.telemetry
        key = call.labels_key
        duration_labels, counted = self._labels.with_outcome(key, cls)
        if cls.outcome in S.LATENCY_OUTCOMES and call.method not in S.STREAM_METHODS:
            # The request's context, though detached by now: an exemplar (if the filter takes
            # one) then points at this request's span, never at an ambient one.
            tel.server_duration.record(elapsed, duration_labels, context=call.context)
        (tel.server_notifications if notification else tel.server_requests).add_shared(1, counted)


_UNANSWERED = frozenset({S.Outcome.CANCELLED, S.Outcome.STOPPED})
"""Nothing is written for these (nor for a request that came without an id): they end at once."""


def _hide_verdict_request(ctx: Any) -> None:
    try:
        _verdict.asked(ctx)
    except Exception as exc:
        report("server verdict request", exc)


def _initialized(ctx: Any) -> bool:
    connection = getattr(ctx.session, I.SESSION_CONNECTION.attribute, None)
    return bool(getattr(connection, "initialize_accepted", True))
