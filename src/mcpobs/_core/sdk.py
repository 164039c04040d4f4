"""Which line of the MCP Python SDK is installed, and what each line calls the few names both sides read.

mcp 2.x (revision 2026-07-28) and mcp 1.x (1.24 to 1.30) speak the same wire but share little
code: 2.x has a middleware chain, `MCPError` and the `mcp_types` package; 1.x has `McpError`,
`mcp.types` and none of the rest. This module is the one place that asks which line is
installed (`LINE`) and imports what differs; every other module imports the SDK at module level
only from here, so the whole package imports on either line. Seams that exist on one line only
are inventory rows gated to that line (`_core/inventory.py`), wrapped by that line's adapters.
"""

from __future__ import annotations

from importlib import metadata
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

PROTOCOL_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
"""The revisions either line may meet on the wire (a 1.x server is asked for 2026-07-28 by a 2.x
client's `server/discover`): labels keep them, any other version a peer sends is `_OTHER`."""


def _line() -> Literal[1, 2]:
    try:
        major = metadata.version("mcp").split(".", 1)[0]
    except metadata.PackageNotFoundError:  # a vendored SDK: its modules say which it is
        try:
            import mcp_types  # noqa: F401  # pyright: ignore[reportUnusedImport]
        except ImportError:
            return 1
        return 2
    return 1 if major == "1" else 2


LINE: Literal[1, 2] = _line()
"""The installed SDK's major version: 2 (mcp 2.3 and later 2.x) or 1 (mcp 1.24 to 1.30)."""

if TYPE_CHECKING or LINE == 2:  # type-checked as 2.x, the development line (pyright runs there)
    from mcp.client.extension import UnexpectedClaimedResult
    from mcp.shared.exceptions import MCPError as ProtocolError
    from mcp_types import CallToolResult, InputRequiredResult
    from mcp_types import methods as _methods
    from mcp_types import version as _version
    from mcp_types.jsonrpc import INTERNAL_ERROR, REQUEST_TIMEOUT
    from mcp_types.methods import is_input_required

    CLIENT_REQUESTS = frozenset(_methods.SPEC_CLIENT_METHODS)
    PARSED_CLIENT_REQUESTS = CLIENT_REQUESTS
    CLIENT_NOTIFICATIONS = frozenset(_methods.SPEC_CLIENT_NOTIFICATION_METHODS)
    SERVER_REQUESTS = frozenset(method for method, _revision in _methods.SERVER_REQUESTS)
    ROUND_METHODS = frozenset(_methods.INPUT_REQUIRED_METHODS)
    KNOWN_PROTOCOL_VERSIONS = frozenset(_version.KNOWN_PROTOCOL_VERSIONS) | frozenset(PROTOCOL_REVISIONS)
    MODERN_PROTOCOL_VERSIONS = frozenset(_version.MODERN_PROTOCOL_VERSIONS)

    # The model fields the lines spell differently (2.x snake_case, 1.x the wire's camelCase):
    # CallToolResult's error flag, InitializeResult's revision and server identity, a listing's
    # cursor, a Tool's input schema, InitializeRequestParams' client identity.
    IS_ERROR = "is_error"
    PROTOCOL_VERSION = "protocol_version"
    NEXT_CURSOR = "next_cursor"
    INPUT_SCHEMA = "input_schema"
    SERVER_INFO = "server_info"
    CLIENT_INFO = "client_info"
else:
    from mcp import types as _types
    from mcp.shared.exceptions import McpError as ProtocolError
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS as _SUPPORTED
    from mcp.types import INTERNAL_ERROR, CallToolResult

    class InputRequiredResult:
        """mcp 1.x has no multi-round-trip results: nothing is an instance of this."""

    class UnexpectedClaimedResult(RuntimeError):
        """mcp 1.x has no client extensions that claim results: nothing raises this."""

    REQUEST_TIMEOUT = 408
    """What a 1.x `ClientSession` raises when a request times out (`httpx.codes.REQUEST_TIMEOUT`)."""

    def is_input_required(result: object) -> bool:
        """mcp 1.x has no `input_required` results (a server asks its client by a request of its own)."""
        return False

    def _methods_of(union: Any) -> frozenset[str]:
        """The `method` literals of a 1.x message union (`ClientRequest`, ...): what that SDK can parse."""
        members = get_args(union.model_fields["root"].annotation)
        return frozenset(cast(str, get_args(m.model_fields["method"].annotation)[0]) for m in members)

    PARSED_CLIENT_REQUESTS = _methods_of(_types.ClientRequest)
    """The requests the installed SDK parses; any other is refused before a handler sees it."""
    # A 2.x client's own requests reach a 1.x server too (its `server/discover` probe): named, not `_OTHER`.
    CLIENT_REQUESTS = PARSED_CLIENT_REQUESTS | {"server/discover", "subscriptions/listen"}
    CLIENT_NOTIFICATIONS = _methods_of(_types.ClientNotification)
    SERVER_REQUESTS = _methods_of(_types.ServerRequest)
    ROUND_METHODS = frozenset[str]()
    KNOWN_PROTOCOL_VERSIONS = frozenset(_SUPPORTED) | frozenset(PROTOCOL_REVISIONS)
    MODERN_PROTOCOL_VERSIONS = frozenset[str]()

    IS_ERROR = "isError"
    PROTOCOL_VERSION = "protocolVersion"
    NEXT_CURSOR = "nextCursor"
    INPUT_SCHEMA = "inputSchema"
    SERVER_INFO = "serverInfo"
    CLIENT_INFO = "clientInfo"

tool_result_is_error: Any = attrgetter(IS_ERROR)
"""`CallToolResult.is_error` (2.x) / `.isError` (1.x), read on every tool call: one C call, no lookup of the name."""


__all__ = [
    "CLIENT_INFO",
    "CLIENT_NOTIFICATIONS",
    "CLIENT_REQUESTS",
    "INPUT_SCHEMA",
    "INTERNAL_ERROR",
    "IS_ERROR",
    "KNOWN_PROTOCOL_VERSIONS",
    "LINE",
    "MODERN_PROTOCOL_VERSIONS",
    "NEXT_CURSOR",
    "PARSED_CLIENT_REQUESTS",
    "PROTOCOL_REVISIONS",
    "PROTOCOL_VERSION",
    "REQUEST_TIMEOUT",
    "ROUND_METHODS",
    "SERVER_INFO",
    "SERVER_REQUESTS",
    "CallToolResult",
    "InputRequiredResult",
    "ProtocolError",
    "UnexpectedClaimedResult",
    "is_input_required",
    "tool_result_is_error",
]
