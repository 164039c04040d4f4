"""How a client request ended: its reply, its error code or its exception, as one `Classification`.

On the client every failed request is an error; the outcome says whose mistake it was.
"""

from __future__ import annotations

from mcp.client.extension import UnexpectedClaimedResult
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types.jsonrpc import REQUEST_TIMEOUT

from mcpobs import semconv as S
from mcpobs._core import outcome as _outcome
from mcpobs._core.methods import CALLER_MISTAKES, code_label
from mcpobs._core.outcome import Classification
from mcpobs.semconv import Outcome

OUTPUT_VALIDATION = Classification(Outcome.SERVER_ERROR, None, S.OUTPUT_VALIDATION)
TIMED_OUT = Classification(Outcome.CANCELLED, None, S.TIMEOUT, REQUEST_TIMEOUT)
TOOL_ERROR = Classification(Outcome.TOOL_ERROR, None, S.TOOL_ERROR)


def from_result(result: object) -> Classification:
    if isinstance(result, InputRequiredResult):
        return _outcome.PENDING_INPUT
    if isinstance(result, CallToolResult) and result.is_error:
        return TOOL_ERROR
    return _outcome.OK


def from_code(code: int) -> Classification:
    """A JSON-RPC error reply: an error on the client, whose outcome says whose mistake it was."""
    if code == REQUEST_TIMEOUT:
        return TIMED_OUT
    outcome = Outcome.CLIENT_ERROR if code in CALLER_MISTAKES else Outcome.SERVER_ERROR
    return Classification(outcome, None, code_label(code), code)


def from_exception(exc: BaseException) -> Classification:
    from mcp.shared.exceptions import MCPError

    if _outcome.is_cancellation(exc):
        return _outcome.CANCELLED
    if isinstance(exc, MCPError):
        return from_code(exc.error.code)
    if isinstance(exc, TimeoutError):
        return TIMED_OUT
    return Classification(Outcome.SERVER_ERROR, None, type(exc).__qualname__)


def failed_validation(replied: Classification | None, exc: BaseException) -> bool:
    """`call_tool` raised after a successful reply: the SDK rejected the result against the
    tool's output schema (its only `RuntimeError` there besides the two ruled out here)."""
    return (
        isinstance(exc, RuntimeError)
        and not isinstance(exc, UnexpectedClaimedResult)
        and replied is not None
        and replied.outcome is Outcome.OK
    )
