"""Classify how a request ended, once, in one place.

The span status, `error.type`, the metrics and the failure boundary are all written from
the one `Classification` this module returns. The SDK turns unknown tools, bad arguments,
deliberate tool errors and crashes alike into `isError` results; the tool hook
(`_hosts.mcpserver.tool_call_hook`) records which it was before the SDK flattens it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
from opentelemetry.trace import Span, StatusCode
from pydantic import ValidationError

from mcpobs import semconv
from mcpobs._core import privacy as _privacy
from mcpobs._core.attributes import set_attributes
from mcpobs._core.methods import CALLER_MISTAKES, code_label
from mcpobs._core.privacy import Privacy
from mcpobs._core.sdk import IS_ERROR, ProtocolError, is_input_required
from mcpobs.semconv import Boundary, Outcome


@dataclass(frozen=True, slots=True)
class Classification:
    outcome: Outcome
    boundary: Boundary | None = None
    error_type: str | None = None
    rpc_code: int | None = None
    sample: bool = True
    """Whether a request so classified is a latency sample (with an outcome in `LATENCY_OUTCOMES`):
    False when no answer came (an outage, a timeout), whose duration says nothing of the server."""
    _hash: int = field(init=False, repr=False, compare=False)
    """Computed once: every request looks its label set up by its classification."""
    outcome_value: str = field(init=False, repr=False, compare=False)
    """`outcome.value`, read once: an enum's `.value` is two Python calls, and every span writes it."""

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_hash", hash((self.outcome, self.boundary, self.error_type, self.rpc_code, self.sample))
        )
        object.__setattr__(self, "outcome_value", self.outcome.value)

    def __hash__(self) -> int:
        return self._hash

    @property
    def is_error(self) -> bool:
        return self.outcome in semconv.ERROR_OUTCOMES


OK = Classification(Outcome.OK)
CANCELLED = Classification(Outcome.CANCELLED)
PENDING_INPUT = Classification(Outcome.PENDING_INPUT)
TOOL_ERROR = Classification(Outcome.TOOL_ERROR, Boundary.HANDLER, semconv.TOOL_ERROR)
UNKNOWN_TOOL = Classification(Outcome.CLIENT_ERROR, Boundary.DISCOVERY)
UNKNOWN_TARGET = UNKNOWN_TOOL
"""A tool or prompt the server does not serve."""
_UNKNOWN_TARGET_32602 = Classification(Outcome.CLIENT_ERROR, Boundary.DISCOVERY, None, -32602)
BAD_ARGUMENTS = Classification(Outcome.CLIENT_ERROR, Boundary.ARGUMENTS)
NOT_A_REQUEST = Classification(Outcome.CLIENT_ERROR, Boundary.TRANSPORT)
"""A request method sent without an id (`"id": null`): JSON-RPC's invalid request, left unanswered."""


ACCESS_REFUSED = Classification(Outcome.CLIENT_ERROR, Boundary.ACCESS)
"""The caller may not do this (a handler raised `PermissionError`): the caller's, never a server bug."""


def refuses_caller(exc: BaseException | None) -> bool:
    """A handler's own `PermissionError` refuses the caller; one the OS raised (it has an errno)
    refuses the server itself, which is a server bug."""
    return isinstance(exc, PermissionError) and exc.errno is None


STOPPED = Classification(Outcome.STOPPED, Boundary.HANDLER, semconv.SERVER_STOPPED, sample=False)
"""A request the server stopped while it ran (`_core/stop.py`): a server-side failure, not the
caller's cancellation, and no latency sample (its duration is the stop's, not the handler's)."""

UNDELIVERED = Classification(Outcome.CANCELLED, Boundary.TRANSPORT, semconv.REPLY_UNDELIVERED, sample=False)
"""A request whose handler finished but whose answer was never written: its client's connection
closed first. The caller went away (`cancelled`, out of the error ratio), but the work was done and
nobody was told: its own `error.type` (and so an ERROR status) says so."""

UNDELIVERED_STOPPED = Classification(Outcome.STOPPED, Boundary.TRANSPORT, semconv.REPLY_UNDELIVERED, sample=False)
"""A request whose handler finished but whose answer the server's stop kept from being written."""

TOOL_CRASH = Classification(Outcome.SERVER_ERROR, Boundary.HANDLER, semconv.TOOL_ERROR)
"""A tool that raised unexpectedly: a server error, but on the wire an `isError` result, so
`error.type` is `tool_error` as on the client; the exception's class is in the exception event."""


def description(exc: BaseException | None, privacy: Privacy = _privacy.DEFAULT) -> str | None:
    """A span status description, through the privacy step (`Privacy.description`).

    The JSON-RPC error's or the exception's message when error messages are opted in (through
    `redact`, bounded), else the exception's type: the message is whatever a caller, a tool or a
    peer wrote. Only for a failure that is a JSON-RPC error or an exception; a tool's `isError`
    result has no such message, and its text is content (opt-in only).
    """
    return privacy.description(exc)


def write(
    span: Span,
    cls: Classification,
    attrs: dict[str, Any],
    exception: BaseException | None = None,
    description: str | None = None,
    privacy: Privacy = _privacy.DEFAULT,
) -> None:
    """Write a classification onto a recording span, for both sides: the one place that does.

    `attrs`: whatever else the span takes, set with the outcome in one batch (each batch costs
    the SDK a lock and a validation pass; `attributes.set_attributes` skips the validation when
    it provably changes nothing). A classification with an `error.type` is an error:
    ERROR status with `description` (from `description()`: through the privacy step); `exception`,
    when given, is recorded as its `exception` event through the same step (`Privacy.exception_event`):
    never `Span.record_exception`, which copies the message and traceback as they are.
    """
    attrs[semconv.OUTCOME] = cls.outcome_value
    if cls.boundary is not None:
        attrs[semconv.FAILURE_BOUNDARY] = cls.boundary.value
    if cls.error_type is not None:
        attrs[semconv.ERROR_TYPE] = cls.error_type
    if cls.rpc_code is not None:
        attrs[semconv.RPC_RESPONSE_STATUS_CODE] = str(cls.rpc_code)
    set_attributes(span, attrs)
    if cls.error_type is not None:
        if exception is not None:  # its message and traceback may carry anyone's text
            span.add_event(semconv.EVENT_EXCEPTION, privacy.exception_event(exception))
        # OpenTelemetry: a description only when it says more than error.type, and nothing sensitive
        # (https://opentelemetry.io/docs/specs/semconv/general/recording-errors/).
        span.set_status(StatusCode.ERROR, None if description == cls.error_type else description)


def crash(exc: BaseException) -> Classification:
    return Classification(Outcome.SERVER_ERROR, Boundary.HANDLER, type(exc).__qualname__)


def _caller_mistake(code: int, method: str, initialized: bool) -> Boundary:
    if code == -32601 or code == semconv.MISSING_CLIENT_CAPABILITY:
        return Boundary.CAPABILITY
    if code == semconv.UNSUPPORTED_PROTOCOL_VERSION:
        return Boundary.VERSION
    if code in (-32700, -32600, semconv.HEADER_MISMATCH):
        return Boundary.TRANSPORT
    if not initialized:
        return Boundary.HANDSHAKE
    if code == -32002 or (code == -32602 and method == "resources/read"):
        return Boundary.DISCOVERY
    return Boundary.ARGUMENTS


def is_cancellation(exc: BaseException) -> bool:
    try:
        return isinstance(exc, anyio.get_cancelled_exc_class())
    except Exception:  # no async backend running
        return False


def from_exception(
    exc: BaseException,
    method: str,
    initialized: bool,
    mistake: Classification | None = None,
    in_handler: bool = False,
) -> Classification:
    """A request whose handler chain raised.

    `mistake`: what the request got wrong that a handler may raise a plain exception for (a
    tool or prompt the server does not serve, a prompt's required argument left out), as the
    middleware found it; a handler's `ValueError` for it is the caller's mistake, not a bug.
    """
    if is_cancellation(exc):
        # A listen stream ends when its client closes it: that is how a stream finishes.
        return OK if method in semconv.STREAM_METHODS else CANCELLED
    if isinstance(exc, ProtocolError):
        code = exc.error.code
        if code == -32602 and mistake is UNKNOWN_TARGET:
            # A name the server's own catalog lacks, refused with "invalid params" (a lowlevel handler's
            # "Unknown tool", as the reference servers answer): the name is the mistake, not its arguments.
            return _UNKNOWN_TARGET_32602
        if code in CALLER_MISTAKES:
            # `in_handler`: the handler itself raised it (the tool hook saw it): it stopped there,
            # whatever the code would say of a refusal by the SDK before any handler.
            boundary = Boundary.HANDLER if in_handler else _caller_mistake(code, method, initialized)
            return Classification(Outcome.CLIENT_ERROR, boundary, None, code)
        return Classification(Outcome.SERVER_ERROR, Boundary.HANDLER, code_label(code), code)
    if isinstance(exc, ValidationError):  # malformed params, answered with -32602
        return Classification(Outcome.CLIENT_ERROR, Boundary.ARGUMENTS, None, -32602)
    if mistake is not None:  # e.g. MCPServer's ValueError("Unknown prompt"), "Missing required arguments"
        return mistake
    if refuses_caller(exc):
        return ACCESS_REFUSED
    return crash(exc)


def from_result(result: object, method: str, tool_failure: Classification | None) -> Classification:
    """A request whose handler chain returned."""
    if type(result) is dict:  # the wire result: told apart before the (slower) abstract-class checks
        reply = cast("dict[str, object]", result)
        if reply.get("resultType") == "input_required":
            return PENDING_INPUT
        if tool_failure is not None:
            return tool_failure
        return TOOL_ERROR if method == "tools/call" and reply.get("isError") is True else OK
    if is_input_required(result):
        return PENDING_INPUT
    if tool_failure is not None:
        return tool_failure
    if method == "tools/call" and _is_error_result(result):
        return TOOL_ERROR
    return OK


def _is_error_result(result: object) -> bool:
    if isinstance(result, Mapping):
        return cast("Mapping[str, object]", result).get("isError") is True
    return getattr(result, IS_ERROR, False) is True
