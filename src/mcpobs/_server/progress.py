"""Progress: one short child span per `report_progress()` call, capped per operation.

A span is exported only when it ends, so a ten-second tool is invisible for ten seconds.
Each progress report becomes a child of the running request's span that ends at once:
the backend shows the tool's progress while the tool still runs.

A report from a plain `threading.Thread` of the call (through `run_coroutine_threadsafe`,
which runs it with that thread's empty context) is found to be its call's by the per-request
session it is made on (`state.of_session`).

A runaway loop must not flood the backend: after `max_progress_spans` reports in one
operation the rest are counted, not recorded. The cap announces itself: an event on the
request's span at the first dropped report, and `mcpobs.progress.dropped` (written by the
middleware from `RequestState.progress_dropped`) when the request ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.trace import SpanKind, set_span_in_context

from mcpobs import semconv as S
from mcpobs._core import guard as _guard
from mcpobs._core import inventory as I
from mcpobs._core.bounded import put
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import state as _state
from mcpobs._tasks.task import Leg

_ASKED = tuple(seam.attribute for seam in (I.JSONRPC_PROGRESS_TOKEN, I.MODERN_PROGRESS_TOKEN, I.DIRECT_ON_PROGRESS))


_asked_on: dict[type[Any], str | None] = {}
"""Dispatch context class -> which of `_ASKED` it carries (None: none). Found once per class:
`getattr` of an absent name builds and drops an AttributeError, several per request otherwise."""


def _requested(session: Any) -> bool:
    """Whether the caller asked for progress: a token on the wire, or a callback in memory."""
    outbound = _state.dispatch_context(session)
    kind: type[Any] = outbound.__class__
    try:
        name = _asked_on[kind]
    except KeyError:
        name = _asked_on[kind] = next((n for n in _ASKED if hasattr(outbound, n)), None)
    return name is not None and getattr(outbound, name, None) is not None


_MAX_LABELS = 4096
_labels: dict[tuple[str, str | None], Mapping[str, Any]] = {}
"""(method, tool) -> the labels of its progress counts: one shared dict per pair, never mutated,
so `Tally.add_shared` finds its series by identity instead of hashing the labels per report."""


def _labels_of(state: _state.RequestState) -> Mapping[str, Any]:
    """The labels of `state`'s progress counts, found once per request."""
    key = (state.method, state.tool)
    labels = _labels.get(key)
    if labels is None:
        made = {S.MCP_METHOD_NAME: state.method}
        if state.method == "tools/call":
            made[S.GEN_AI_TOOL_NAME] = S.bounded_target(state.tool) if state.tool else S.OTHER
        labels = put(_labels, key, made, _MAX_LABELS)
    state.progress_labels = labels
    return labels


def report(telemetry: Telemetry, session: Any, progress: Any, total: Any, message: Any) -> None:
    state = _state.current()
    parent = None
    if state is None:
        # No request in this context: a plain thread of the call (`run_coroutine_threadsafe`
        # runs the report in a task with that thread's empty context), or no request at all.
        state = _state.of_session(session)
        if state is None:
            return
        parent = set_span_in_context(state.span)
    labels = state.progress_labels or _labels_of(state)
    telemetry.progress_reports.add_shared(1, labels)
    if state.progress_spans >= telemetry.settings.max_progress_spans:
        state.progress_dropped += 1
        if state.progress_dropped == 1:
            state.span.add_event(S.EVENT_PROGRESS_CAP_REACHED)
            telemetry.progress_capped.add_shared(1, labels)
        return
    state.progress_spans += 1
    if not state.span.is_recording():
        return
    requested = state.progress_requested
    if requested is None:  # the caller's token (or callback) is the request's: read it once
        requested = state.progress_requested = _requested(session)
    attrs = _attributes(telemetry, progress, total, message)
    attrs[S.PROGRESS_REQUESTED] = requested
    # The current span is the request's (the middleware attached it; child tasks and
    # worker threads inherit it), unless the tool opened its own span around the report.
    telemetry.tracer.start_span(S.PROGRESS_SPAN, context=parent, kind=SpanKind.INTERNAL, attributes=attrs).end()


def _attributes(telemetry: Telemetry, progress: Any, total: Any, message: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {S.PROGRESS_VALUE: float(progress)}
    if total is not None:
        attrs[S.PROGRESS_TOTAL] = float(total)
        if total:
            attrs[S.PROGRESS_PERCENTAGE] = float(progress) / float(total) * 100.0
    if message is not None and (recorded := telemetry.privacy.progress(message)) is not None:
        attrs[S.PROGRESS_MESSAGE] = recorded  # content a tool wrote: through `redact`, or left out
    return attrs


def report_in_leg(telemetry: Telemetry, leg: Leg, progress: Any, total: Any, message: Any) -> None:
    """A progress report in a task's leg (a worker: no request there): a child of the leg's
    `process` span, capped per leg as per request. SEP-2663 sends no progress notification (the
    client reads it as the task's `statusMessage`), so `mcpobs.progress.requested` is left out."""
    key = ("tools/call", leg.run.tool)
    labels = _labels.get(key) or put(
        _labels, key, {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: leg.run.tool}, _MAX_LABELS
    )
    telemetry.progress_reports.add_shared(1, labels)
    if not leg.progress_recorded(telemetry.settings.max_progress_spans):
        if leg.progress_dropped == 1:
            leg.span.add_event(S.EVENT_PROGRESS_CAP_REACHED)
            telemetry.progress_capped.add_shared(1, labels)
        return
    if leg.span.is_recording():
        attrs = _attributes(telemetry, progress, total, message)
        parent = set_span_in_context(leg.span)
        telemetry.tracer.start_span(S.PROGRESS_SPAN, context=parent, kind=SpanKind.INTERNAL, attributes=attrs).end()


def patches(telemetry: Telemetry) -> list[Patch]:
    def report_progress(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        # Not a coroutine of its own: it records as `report_progress(...)` is called (the tool
        # awaits it at once, in the same task) and hands back the SDK's own coroutine, one
        # coroutine and one frame fewer per report. A plain `try`: no guard object per report.
        try:
            report(telemetry, instance, *(args if len(args) == 3 and not kwargs else arguments(*args, **kwargs)))
        except Exception as exc:
            _guard.report("progress span", exc)
        return wrapped(*args, **kwargs)

    return [Patch.of(I.REPORT_PROGRESS, report_progress)]


def arguments(progress: Any, total: Any = None, message: Any = None) -> tuple[Any, Any, Any]:
    return progress, total, message
