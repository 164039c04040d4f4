"""How a client request ended: its reply, its error code, its HTTP status or its exception.

On the client every failed request is an error; the outcome says whose mistake it was and the
boundary where it stopped. The rules, side by side with the server's, are in
docs/failure-taxonomy.md:

- an outage (no connection, the server gone, the transport or its auth flow raising, a 5xx) is
  `server_error` at `transport`: it counts against availability; an outage that got no answer
  is not a latency sample;
- a timeout is `server_error` with `error.type=timeout`: the caller's deadline passed without
  an answer (it counts against availability, and is no latency sample);
- a 401 or 403 is `client_error` at `access`: the caller was refused, never an outage;
- the caller giving up (a cancellation with no failure under it) is the only `cancelled`.
"""

from __future__ import annotations

from mcpobs import semconv as S
from mcpobs._core import outcome as _outcome
from mcpobs._core.methods import CALLER_MISTAKES, code_label
from mcpobs._core.outcome import Classification
from mcpobs._core.sdk import (
    REQUEST_TIMEOUT,
    CallToolResult,
    InputRequiredResult,
    ProtocolError,
    UnexpectedClaimedResult,
    tool_result_is_error,
)
from mcpobs.semconv import Boundary, Outcome

CONNECTION_CLOSED = -32000
"""The SDK's code for a connection that closed under a request (the server process gone)."""
_CLOSED_MESSAGES = ("Connection closed", "SSE stream ended", "SSE stream failed")
"""How the SDK says, with -32000, that the connection or the response's event stream closed under a
request (a legacy client's POST stream ends without an answer when its server stops)."""
REQUEST_CANCELLED = -32800
CANCELLED_MESSAGE = "Request cancelled"
"""A 1.x server's answer to `notifications/cancelled` (code 0): the caller gave the request up."""

OUTPUT_VALIDATION = Classification(Outcome.SERVER_ERROR, Boundary.HANDLER, S.OUTPUT_VALIDATION)
TIMED_OUT = Classification(Outcome.SERVER_ERROR, None, S.TIMEOUT, REQUEST_TIMEOUT, sample=False)
TOOL_ERROR = Classification(Outcome.TOOL_ERROR, Boundary.HANDLER, S.TOOL_ERROR)
GONE = Classification(Outcome.STOPPED, Boundary.TRANSPORT, S.SERVER_STOPPED, CONNECTION_CLOSED, sample=False)
"""The connection closed under the request: the server stopped (or went away) while it ran, the
outcome and `error.type` its own span says (`_core/stop.py`)."""
CUT_SHORT = Classification(Outcome.STOPPED, Boundary.TRANSPORT, S.SERVER_STOPPED, sample=False)
"""An HTTP 500 whose server said its stop cut the request short (`S.HEADER_STOPPED`): what its span says."""
HOST_STOPPED = Classification(Outcome.STOPPED, None, S.HOST_STOPPED, sample=False)
"""The client's own process stopped while the request ran (`_core/stop.py`): its SIGTERM, its web
server's grace over. Not the caller giving up (`cancelled`): nobody chose to."""
UNSUPPORTED_VERSION = Classification(Outcome.CLIENT_ERROR, Boundary.VERSION, "RuntimeError")
"""`initialize` answered with a revision the client does not speak (the SDK raises locally)."""

_FROM_CODE: dict[int, Classification] = {}


def from_result(result: object) -> Classification:
    if type(result) is CallToolResult:  # most replies: told apart before the (slower) model-class checks
        return TOOL_ERROR if tool_result_is_error(result) else _outcome.OK
    if isinstance(result, InputRequiredResult):
        return _outcome.PENDING_INPUT
    if isinstance(result, CallToolResult) and tool_result_is_error(result):
        return TOOL_ERROR
    return _outcome.OK


def from_code(code: int) -> Classification:
    """A JSON-RPC error reply: an error on the client, whose outcome says whose mistake it was."""
    found = _FROM_CODE.get(code)
    if found is not None:
        return found
    if code == REQUEST_TIMEOUT:
        return TIMED_OUT
    if code in CALLER_MISTAKES:
        found = Classification(Outcome.CLIENT_ERROR, _caller_boundary(code), code_label(code), code)
    else:
        found = Classification(Outcome.SERVER_ERROR, Boundary.HANDLER, code_label(code), code)
    if len(_FROM_CODE) < 256:
        _FROM_CODE[code] = found
    return found


def _caller_boundary(code: int) -> Boundary:
    """Where a request the server answered with a caller's-mistake code stopped, as far as the code says."""
    if code == -32601 or code == S.MISSING_CLIENT_CAPABILITY:
        return Boundary.CAPABILITY
    if code == S.UNSUPPORTED_PROTOCOL_VERSION:
        return Boundary.VERSION
    if code in (-32700, -32600, S.HEADER_MISMATCH):
        return Boundary.TRANSPORT
    if code == -32002:
        return Boundary.DISCOVERY
    return Boundary.ARGUMENTS  # -32602: also an unknown prompt or resource; the code cannot say which


_FROM_STATUS: dict[int, Classification] = {}
_STAND_INS = frozenset({CONNECTION_CLOSED, -32603})
"""Codes a 400 may carry that say nothing of why: a legacy server's generic -32000, the SDK's -32603."""


def from_status(status: int, code: int | None) -> Classification:
    """A request whose HTTP response was an error status (the SDK stands in a JSON-RPC code for it).

    A 400 carries the server's own JSON-RPC error (the version check's -32022, say): its code
    decides. Otherwise the status does: 401/403 access refused, 5xx an outage, any other 4xx
    (404: no MCP endpoint there, or the session is gone) the transport refusing the request.
    """
    if status == 400 and code is not None and code not in _STAND_INS:
        return from_code(code)
    found = _FROM_STATUS.get(status)
    if found is None:
        if status in (401, 403):
            found = Classification(Outcome.CLIENT_ERROR, Boundary.ACCESS, str(status))
        elif status >= 500:
            found = Classification(Outcome.SERVER_ERROR, Boundary.TRANSPORT, str(status))
        else:
            found = Classification(Outcome.CLIENT_ERROR, Boundary.TRANSPORT, str(status))
        if len(_FROM_STATUS) < 64:
            _FROM_STATUS[status] = found
    return found


_CLOSED_UNDER = frozenset({"RemoteProtocolError", "ReadError"})
"""httpx's (and httpcore's) names for a connection that closed after the request went out and before
its answer: the server process gone while it ran (killed at the end of its grace, say)."""


def outage(exc: BaseException) -> Classification:
    """The transport raised under the request (no connection, DNS, TLS, its auth flow): no answer came.

    A connection closed under a request already sent is its server stopping while it ran: `stopped`,
    as the SDK's -32000 says over stdio and a legacy stream (`GONE`); one never made is an outage.
    """
    kind = type(exc)
    if kind.__name__ in _CLOSED_UNDER and kind.__module__.startswith(("httpx", "httpcore")):
        return GONE
    return Classification(Outcome.SERVER_ERROR, Boundary.TRANSPORT, kind.__qualname__, sample=False)


def from_exception(
    exc: BaseException, status: int | None = None, failure: BaseException | None = None
) -> Classification:
    """`status`: the HTTP error status the request got; `failure`: what its transport raised."""
    if _outcome.is_cancellation(exc):
        # Cancelled because the transport under it failed (its task group tore down): an outage,
        # or the HTTP status its POST got (mcp 1.x raises an error status in the transport's task).
        if failure is None:
            return _outcome.CANCELLED
        return from_status(status, None) if status is not None else outage(failure)
    if isinstance(exc, ProtocolError):
        if status is not None:
            return from_status(status, exc.error.code)
        code = exc.error.code
        if code == REQUEST_CANCELLED or (code == 0 and exc.error.message == CANCELLED_MESSAGE):
            return _outcome.CANCELLED
        if code == CONNECTION_CLOSED and exc.error.message.startswith(_CLOSED_MESSAGES):
            return GONE  # the SDK's own, raised locally: the server went away
        return from_code(code)
    if isinstance(exc, TimeoutError):
        return TIMED_OUT
    if _is_transport_failure(exc):
        return outage(exc)
    return Classification(Outcome.SERVER_ERROR, None, type(exc).__qualname__)  # a local failure


_TRANSPORT_MODULES = ("httpx", "httpcore", "h11", "h2", "ssl", "anyio", "mcp.client.auth", "mcp.client.streamable_http")


def _is_transport_failure(exc: BaseException) -> bool:
    """No connection, DNS, TLS, a closed stream, the OAuth flow: the way to the server failed."""
    return isinstance(exc, OSError) or type(exc).__module__.startswith(_TRANSPORT_MODULES)


def failed_validation(replied: Classification | None, exc: BaseException) -> bool:
    """`call_tool` raised after a successful reply: the SDK rejected the result against the
    tool's output schema (its only `RuntimeError` there besides the two ruled out here)."""
    return (
        isinstance(exc, RuntimeError)
        and not isinstance(exc, UnexpectedClaimedResult)
        and replied is not None
        and replied.outcome is Outcome.OK
    )


def unsupported_version(replied: Classification | None, exc: BaseException) -> bool:
    """`initialize` raised after a successful reply: the server chose a revision the SDK does not speak."""
    return (
        isinstance(exc, RuntimeError)
        and replied is not None
        and replied.outcome is Outcome.OK
        and str(exc).startswith("Unsupported protocol version")
    )
