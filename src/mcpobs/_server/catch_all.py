"""The code the SDK answers a handler's plain exception with, which the server's span records.

A handler that raises something other than `MCPError` or a pydantic `ValidationError` is
answered with the SDK's catch-all, chosen by the revision the request speaks, not by the
transport: -32603 "Internal server error" at 2026-07-28 (`runner.modern_error_data`, used by
the single-exchange HTTP entry and the dual-era stream loop, and the in-memory
`DirectDispatcher`, which mirrors it), and 0 with the exception's text at the handshake
revisions (`JSONRPCDispatcher`, "code=0 pins existing-server compat", in memory as over
Streamable HTTP and stdio). The server's span is closed before the dispatcher writes the
answer, so this is the SDK's rule as `tests/test_prompt_failures.py` observes it on every
transport, not a read of the bytes sent. Looked up only when a request failed that way.
"""

from __future__ import annotations

from mcpobs._core.methods import code_label
from mcpobs._core.outcome import Classification
from mcpobs._core.sdk import INTERNAL_ERROR, MODERN_PROTOCOL_VERSIONS
from mcpobs.semconv import Boundary, Outcome

LEGACY_CATCH_ALL = 0
"""`JSONRPCDispatcher`'s code for a handler's exception (JSON-RPC would say -32603)."""


def answered_code(protocol_version: object) -> int:
    """The code the SDK answers a request at `protocol_version` with when its handler raised."""
    return INTERNAL_ERROR if protocol_version in MODERN_PROTOCOL_VERSIONS else LEGACY_CATCH_ALL


def answered(protocol_version: object) -> Classification:
    """A handler's exception as its client saw it: a server error at the handler, with the code sent."""
    code = answered_code(protocol_version)
    return Classification(Outcome.SERVER_ERROR, Boundary.HANDLER, code_label(code), code)
