"""The MCP methods and error codes mcpobs knows, spelled once for the server and the client.

A method outside these sets (or one a server does not register) is `semconv.OTHER` in a
span name or a label; a code in `CALLER_MISTAKES` is the caller's mistake on both sides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core import sdk

SPEC_METHODS = sdk.CLIENT_REQUESTS | sdk.CLIENT_NOTIFICATIONS
"""What a client may send a server: its requests and notifications."""
REQUEST_METHODS = sdk.CLIENT_REQUESTS
"""The requests a client may send a server (a message of these methods must carry an id)."""
SERVER_REQUEST_METHODS = sdk.SERVER_REQUESTS
"""What a server may ask its client (`ping`, `roots/list`, `sampling/createMessage`, ...)."""
TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel", "tasks/result", "tasks/list"})
"""The task requests a client sends (SEP-1686 on the 1.x line, the 2.x tasks extension SEP-2663):
an extension's on 2.x, so not among the SDK's own methods there."""
KNOWN_METHODS = SPEC_METHODS | SERVER_REQUEST_METHODS | TASK_METHODS
"""Every method a client-side span may be named after."""

TARGETED = {"tools/call": S.GEN_AI_TOOL_NAME, "prompts/get": S.GEN_AI_PROMPT_NAME}
"""Methods whose span name carries a target, and the attribute that holds it."""
URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
"""Methods whose span records `mcp.resource.uri`."""

ROUND_METHODS = sdk.ROUND_METHODS
"""Methods that may answer `input_required` and take several rounds (SEP-2322)."""
INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
"""What a pending round may ask the client for; anything else is recorded as `_OTHER`."""

CALLER_MISTAKES = S.CALLER_MISTAKE_CODES | {
    S.HEADER_MISMATCH,
    S.MISSING_CLIENT_CAPABILITY,
    S.UNSUPPORTED_PROTOCOL_VERSION,
}
"""JSON-RPC error codes that mean the caller sent something wrong."""


def input_methods(requests: Mapping[Any, Any] | None) -> list[str]:
    """The bounded, sorted methods of a pending round's input requests (wire dicts or SDK models)."""
    methods: set[str] = set()
    for request in (requests or {}).values():
        method: object = (
            cast("Mapping[str, object]", request).get("method")
            if isinstance(request, Mapping)
            else getattr(request, "method", None)
        )
        methods.add(cast(str, method) if method in INPUT_METHODS else S.OTHER)
    return sorted(methods)


def code_label(code: int) -> str:
    """An error code as `error.type` and metric labels may carry it: itself when JSON-RPC, the MCP
    specification or an SDK defines it, `OTHER` for any other (a peer must not add series)."""
    return str(code) if code in S.KNOWN_ERROR_CODES else S.OTHER
