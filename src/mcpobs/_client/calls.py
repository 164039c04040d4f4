"""One outbound request, which owns its life: opened, replied or failed, ended and counted.

A request passes several seams of the SDK's client (`ClientSession.call_tool`, then
`send_request`, then the dispatcher's `send_raw_request` and its `otel_span`). The first
seam that sees it opens a `ClientCall` (`spans.ClientSpans.open`) and makes it current
(`enter`); the seams below read it with `current()` or `sending()` instead of opening a span
of their own. That is the whole hand-off: one contextvar holding the call, and the call's own
span as the current OpenTelemetry span.

The call is told what happened (`replied` or `failed`) and then `end`s itself: one
classification, written onto its span and counted once. A call opened inside a multi-round
operation or a connection's negotiation is claimed by that `Holder`, which may keep its span
open when it would end (an operation's anchor, a `server/discover` probe) and end it later
with the outcome it settles on (`end_as`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, NamedTuple, Protocol, cast

from opentelemetry.trace import Span

from mcpobs import semconv as S
from mcpobs._client import catalog, catalog_size, classify, memory, release
from mcpobs._client.names import ClientNames, listed
from mcpobs._client.tasks import ClientTasks, Handle
from mcpobs._core import hooks as _hooks
from mcpobs._core import outbound as _outbound
from mcpobs._core import outcome as _outcome
from mcpobs._core import runtime_context, sdk
from mcpobs._core import stop as _stop
from mcpobs._core import verdict as _verdict
from mcpobs._core.guard import report
from mcpobs._core.labels import LabelSets
from mcpobs._core.methods import input_methods
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import Classification
from mcpobs._core.telemetry import Telemetry, end_once

_JUDGED = frozenset({S.Boundary.HANDLER, S.Boundary.ARGUMENTS})
"""Where an error reply's code puts a failure the listing may place better (an unknown prompt
answered with -32602 or -32603)."""


class Outbound(NamedTuple):
    """What a client request hook gets for a request the SDK sends without a request object."""

    method: str
    params: Any = None


class Holder(Protocol):
    """What claims a call for longer than its own request: an operation, a negotiation."""

    def annotate(self, call: ClientCall, result: Any, attrs: dict[str, Any]) -> None:
        """Add to the attributes a successful reply writes (the handshake's fallback flag)."""
        ...

    def claim(self, call: ClientCall, exc: BaseException | None) -> bool:
        """The call would end now: True when the holder keeps it and ends it later."""
        ...


class Recorder:
    """What every client call shares to record itself: the telemetry, the label sets, the hooks."""

    __slots__ = ("contract", "labels", "names", "peer", "request_hook", "response_hook", "tasks", "telemetry")

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self.labels = LabelSets(S.CLIENT_REQUESTS, errors_only=False, duration=S.CLIENT_OPERATION_DURATION)
        self.names = ClientNames()
        """The tool and prompt names calls may use in span names and labels (`names.ClientNames`)."""
        self.request_hook: Callable[..., Any] | None = telemetry.settings.client_request_hook
        self.response_hook: Callable[..., Any] | None = telemetry.settings.client_response_hook
        omitted = telemetry.settings.omit_attributes
        self.peer = S.PEER not in omitted
        """Write the answering and the catalog's releases on every call span (else on the handshake's only)."""
        self.contract = S.CONTRACT not in omitted
        """Write the fingerprints this client holds on its tools/call spans (they are sent to the server either way)."""
        self.tasks = ClientTasks(telemetry)
        """The tasks this process submitted, for their later requests (`tasks.ClientTasks`)."""


_NOTIFICATIONS = "notifications/"


class ClientCall:
    """One outbound request (or notification) and its span."""

    __slots__ = (
        "asked",
        "awaiting_send",
        "cls",
        "context",
        "cursor",
        "description",
        "elapsed",
        "extra",
        "failure",
        "fingerprints",
        "holder",
        "http_status",
        "labels_key",
        "method",
        "recorder",
        "request_id",
        "server_stopped",
        "session",
        "span",
        "start",
        "task",
        "unlisted",
        "verdict_asked",
    )

    def __init__(self, recorder: Recorder, session: Any, method: str, span: Span, labels_key: tuple[Any, ...]) -> None:
        self.recorder = recorder
        self.session = session
        self.method = method
        self.span = span
        self.context = runtime_context.in_span(span)
        self.labels_key = labels_key
        self.start = time.perf_counter()
        self.elapsed: float | None = None
        self.cls: Classification | None = None
        """How the request ended, once it has (None while it is in flight)."""
        self.request_id: object = None
        """The id the request went out with (in process: the one the receiving side minted),
        written on the span with the outcome: one attribute batch, not two."""
        self.description: str | None = None
        """The span status description when it failed: the JSON-RPC error's or the exception's message."""
        self.awaiting_send = False
        """True while `ClientSession.call_tool` holds the span and its `send_request` has not taken it."""
        self.holder: Holder | None = None
        """The operation or negotiation this call belongs to, if any."""
        self.fingerprints: tuple[str, str] | None = None
        """The (schema, contract) fingerprints of the tool as this session last listed it (tools/call only)."""
        self.http_status: int | None = None
        """The HTTP error status (>= 400) the request's POST got, over Streamable HTTP."""
        self.failure: BaseException | None = None
        """What the transport raised while sending the request (no connection, its auth flow)."""
        self.server_stopped = False
        """Its HTTP error said the server's stop cut it short (`S.HEADER_STOPPED`): `stopped`, not a 500."""
        self.extra: dict[str, Any] | None = None
        """Attributes written with the outcome: the labels the span did not start with, and what the
        reply told (the release that answered, the model)."""
        self.unlisted: str | None = None
        """The tool name sent before the session listed it (tools/call only): see `_name_late`."""
        self.asked: tuple[object, object] | None = None
        """(name, arguments) a tools/call or prompts/get asked for: what a failure is judged by."""
        self.cursor: object = None
        """The cursor a tools/list asked with: which listing its page continues."""
        self.verdict_asked = False
        """mcpobs asked the server for its verdict on this tools/call: taken out of the result (`_core/verdict.py`)."""
        self.task: tuple[str, Handle | None] | None = None
        """A tasks/* request's task: its id hash, and its handle when this process submitted it."""
        # A stop of this process that does not wait for it ends it as `stopped` (`_core/stop.py`).
        _stop.enter(self, self._host_stopped)

    # -- what happened ------------------------------------------------------------------------

    def requested(self, request: Any) -> None:
        """The user's `client_request_hook`, for a span that records."""
        hook = self.recorder.request_hook
        if hook is not None and self.span.is_recording():
            _hooks.run("client_request_hook", hook, self.span, request)

    def replied(self, result: Any) -> Any:
        """The request was answered; the span may stay open (e.g. while `call_tool` validates).

        Returns the result for the host: the same, or without the verdict mcpobs asked for.
        """
        span = self.span
        try:  # not `guarded`: this runs on every request, and a try costs nothing
            self.elapsed = time.perf_counter() - self.start
            self.cls = cls = classify.from_result(result)
            self._answered(result)
            if cls is classify.TOOL_ERROR:  # the wire cannot say which: the server's verdict, or the listing's
                verdict = None
                if self.verdict_asked:
                    verdict, result = _verdict.take(result)
                self.cls = self._judged(cls, verdict)
            elif cls is _outcome.PENDING_INPUT and span.is_recording():
                span.set_attribute(S.MRTR_INPUT_METHODS, input_methods(result.input_requests))
            elif self.task is not None or (self.method == "tools/call" and type(result) is not sdk.CallToolResult):
                self._tasked(result)  # a task's request, or a tools/call a server may have answered with a task
            elif self.method == "tools/list":
                memory.remember_listing(self.session, result)
                if span.is_recording():
                    sized = catalog_size.listed(
                        self.session, result, self.cursor, self.recorder.telemetry.catalog_tokens
                    )
                    self.extra = {**self.extra, **sized} if self.extra else sized
            elif self.method == "prompts/list":
                memory.remember_prompts(self.session, result)
            elif self.method in S.HANDSHAKE_METHODS and span.is_recording():
                span.set_attributes(self._handshake(result))
        except Exception as err:
            report("client classification", err)
        hook = self.recorder.response_hook
        if hook is not None and span.is_recording():
            _hooks.run("client_response_hook", hook, span, result)
        return result

    def failed(self, exc: BaseException) -> None:
        """The request raised: no reply, or an error reply the SDK raised as `MCPError`."""
        try:
            self.elapsed = time.perf_counter() - self.start
            self.cls = cls = self._stopped(classify.from_exception(exc, self.http_status, self.failure))
            self.description = self.recorder.telemetry.privacy.description(self.failure or exc)
            self._answered(None)
            if self.asked is not None and cls.rpc_code is not None and cls.boundary in _JUDGED:
                self.cls = self._judged(cls, None)
        except Exception as err:
            report("client classification", err)

    def _tasked(self, result: Any) -> None:
        """What a reply says of a task: a submission's id hash and status, a poll's status and outcome."""
        tasks, task = self.recorder.tasks, self.task
        if task is not None:
            attrs = tasks.replied(task, result, self.context)
        else:
            asked = self.asked[0] if self.asked is not None else None
            attrs = tasks.submitted(result, self.span.get_span_context(), self.labels_key[3], asked)
        if attrs:
            self.extra = {**self.extra, **attrs} if self.extra else attrs

    def _judged(self, replied: Classification, verdict: Classification | None) -> Classification:
        """A failure the reply cannot place: the server's verdict, else what the listing proves, else `replied`."""
        if verdict is not None:
            source = S.OutcomeSource.SERVER
        else:
            asked = self.asked
            if asked is None:
                return replied
            remembered = memory.remembered(self.session)
            verdict = catalog.judge(
                remembered.catalog if remembered is not None else None, self.method, asked[0], asked[1], replied
            )
            if verdict is None:
                return replied
            source = S.OutcomeSource.LISTING
        extra = self.extra
        if extra is None:
            extra = self.extra = {}
        extra[S.OUTCOME_SOURCE] = source.value
        return verdict

    def _answered(self, result: Any) -> None:
        """The release that answered (`result` None: none did), in the labels and on the span."""
        self.labels_key, extra = release.answered(
            self.session,
            self.method,
            self.labels_key,
            self.span,
            result,
            self.recorder.telemetry.privacy,
            self.recorder.peer or self.method in S.HANDSHAKE_METHODS,
        )
        if extra is not None:
            if self.extra is None:
                self.extra = extra
            else:
                self.extra.update(extra)

    def reclassify(self, cls: Classification, exc: BaseException) -> None:
        """What the SDK did after the reply changed the outcome (an output that failed validation)."""
        self.cls = cls
        self.description = self.recorder.telemetry.privacy.description(exc)

    def _handshake(self, result: Any) -> dict[str, Any]:
        """What a successful handshake tells: the revision settled on (initialize), who answered (the
        session's server, kept here when `omit_attributes` leaves it off each call), and what its holder adds."""
        attrs: dict[str, Any] = {}
        if self.method == "initialize":
            attrs[S.SESSION_NEGOTIATED_VERSION] = bounded_version(getattr(result, sdk.PROTOCOL_VERSION, None))
        info: Any = getattr(result, sdk.SERVER_INFO, None)
        meta = getattr(result, "meta", None)
        if info is None and isinstance(meta, dict):  # a 2026-07-28 server's stamp on its results
            info = cast("dict[str, Any]", meta).get(S.META_SERVER_INFO)
        if info is not None:
            name = self.recorder.telemetry.privacy.name  # the server's own words
            for attribute, field in ((S.SERVER_NAME, "name"), (S.SERVER_VERSION, "version")):
                value: object = (
                    cast("dict[str, object]", info).get(field) if isinstance(info, dict) else getattr(info, field, None)
                )
                if value is not None and (recorded := name(value)) is not None:
                    attrs[attribute] = recorded
        if self.holder is not None:
            self.holder.annotate(self, result, attrs)
        return attrs

    # -- the end ------------------------------------------------------------------------------

    def end(self, exc: BaseException | None = None, end_time: int | None = None) -> None:
        """End and count the call, unless its holder claims it (it then ends it later), or a stop did."""
        try:
            if self.cls is None:  # the request never ran (e.g. call_tool failed before sending)
                self.elapsed = time.perf_counter() - self.start
                failure = self.failure
                cls = classify.from_exception(exc, self.http_status, failure) if exc is not None else _outcome.OK
                self.cls = self._stopped(cls)
                self.description = self.recorder.telemetry.privacy.description(failure or exc)
            cls = self.cls
            if self.unlisted is not None:
                self._name_late()
            holder = self.holder
            if holder is not None and holder.claim(self, exc):
                return
            if not _stop.release(self):
                return  # the process's stop recorded it already (`_host_stopped`)
        except Exception as err:
            report("client span end", err)
            end_once(self.span)
            return
        # The span and the metrics each in their own `try`: a trace pipeline that raises
        # costs no count, and a metric pipeline that raises costs no span.
        try:
            self._end_span(cls, exc, end_time)
        except Exception as err:
            report("client span end", err)
            end_once(self.span)
        try:
            self.count(cls)
        except Exception as err:
            report("client metrics", err)

    def _name_late(self) -> None:
        """A tool called before the session listed tools: named if the SDK listed it meanwhile.

        A successful `call_tool` lists the tools to validate its result, inside the call's span,
        so a host that never lists still gets its tools named; a failed call stays `_OTHER`.
        """
        name, self.unlisted = self.unlisted, None
        bounded = self.recorder.names.bound(name, *listed(self.session, "tools/call", memory.remembered(self.session)))
        if bounded == S.OTHER:
            return
        known, version, target_attr, _, network = self.labels_key
        self.labels_key = (known, version, target_attr, bounded, network)
        if self.span.is_recording():
            self.span.update_name(S.span_name(known, bounded))
            self.span.set_attribute(S.GEN_AI_TOOL_NAME, bounded)

    def end_as(self, cls: Classification, exc: BaseException | None, end_time: int | None = None) -> None:
        """Write `cls` onto the span and end it (a holder calls this for a call it kept), unless the
        process's stop ended it first."""
        if _stop.release(self):
            self._end_span(cls, exc, end_time)

    def _end_span(self, cls: Classification, exc: BaseException | None, end_time: int | None = None) -> None:
        span = self.span
        if span.is_recording():
            attrs: dict[str, Any] = self.extra or {}
            if self.request_id is not None:
                request_id = self.recorder.telemetry.privacy.identifier(self.request_id)
                if request_id is not None:
                    attrs[S.JSONRPC_REQUEST_ID] = request_id
            if self.http_status is not None:
                attrs[S.HTTP_RESPONSE_STATUS_CODE] = self.http_status
            if self.fingerprints is not None and self.recorder.contract:  # the server says whether it is stale
                attrs[S.TOOL_SCHEMA_FINGERPRINT], attrs[S.TOOL_CONTRACT_FINGERPRINT] = self.fingerprints
            # A local failure's exception goes on the span; a server's message stays out.
            if self.failure is not None and cls.error_type == type(self.failure).__qualname__:
                exc = self.failure
            local = exc if exc is not None and cls.error_type == type(exc).__qualname__ else None
            _outcome.write(span, cls, attrs, local, self.description, self.recorder.telemetry.privacy)
        span.end(end_time)

    def count(self, cls: Classification) -> None:
        """The call's point in the duration histogram (if a latency sample) and its count."""
        recorder = self.recorder
        tel = recorder.telemetry
        labels, counted = recorder.labels.with_outcome(self.labels_key, cls)
        if cls.outcome in S.LATENCY_OUTCOMES and cls.sample and self.elapsed is not None:
            # the span is no longer current here: hand it over so an exemplar points at this call
            tel.client_duration.record(self.elapsed, labels, context=self.context)
        notification = self.method.startswith(_NOTIFICATIONS)
        (tel.client_notifications if notification else tel.client_requests).add_shared(1, counted)

    def _stopped(self, cls: Classification) -> Classification:
        """`cls`, unless a stop decided it: the server's (its 500 said so), or this process's
        (a cancellation while it stops: its web server's grace over, its own handler unwinding;
        nobody gave up on the call)."""
        if self.server_stopped and cls.outcome is S.Outcome.SERVER_ERROR:
            return classify.CUT_SHORT
        if cls is _outcome.CANCELLED and _stop.stopping():
            return classify.HOST_STOPPED
        return cls

    def closed_under(self) -> None:
        """The server ended this request's stream without its answer, with nothing to resume from
        (mcp 1.x's client then waits for it forever): `stopped`, ended and counted now. What the
        host's call does later records nothing more."""
        if _stop.release(self):
            self.elapsed = time.perf_counter() - self.start
            self._end_now(classify.CUT_SHORT)

    def _host_stopped(self) -> None:
        """This process stops and will not wait for the answer: end and count the call as `stopped`."""
        self._end_now(classify.HOST_STOPPED)

    def _end_now(self, cls: classify.Classification) -> None:
        self.cls = cls
        try:
            self._end_span(cls, None)
        except Exception as err:
            report("client span end", err)
            end_once(self.span)
        self.count(cls)

    @property
    def in_flight(self) -> bool:
        """Sent and not yet answered."""
        return self.cls is None


_current = cast("ContextVar[ClientCall | None]", _outbound.current_call)


current = _current.get
"""The client request being sent in this context, if any (the contextvar's own `get`: no extra call)."""


def enter(call: ClientCall) -> tuple[object, object]:
    return _current.set(call), runtime_context.attach(call.context)


def leave(tokens: tuple[Any, Any]) -> None:
    try:  # not `guarded`: this runs on every request, and a try costs nothing
        runtime_context.detach(tokens[1])
        _current.reset(tokens[0])
    except Exception as exc:
        report("client context detach", exc)


async def run(call: ClientCall | None, wrapped: Any, args: Any, kwargs: Any) -> Any:
    """Send through `wrapped` with `call` current, and end it as the send ended (no call: just send)."""
    if call is None:
        return await wrapped(*args, **kwargs)
    tokens = enter(call)
    try:
        result = await wrapped(*args, **kwargs)
    except BaseException as exc:
        leave(tokens)
        call.failed(exc)
        call.end(exc)
        raise
    leave(tokens)
    result = call.replied(result)
    call.end()
    return result


sending = cast("Callable[[], ClientCall | None]", _outbound.sending)
"""The mcpobs client request being written in this context, if its span is current (`_core/outbound.py`)."""
