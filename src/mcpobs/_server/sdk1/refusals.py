"""mcp 1.x: a request the session refuses while parsing it, before any handler (and any span) sees it.

An unknown method, or params that do not validate, fail the session's parse
(`ClientRequest.model_validate`), which is wrapped to record the request as one the server
refused (`transport.refused_in_session`: one SERVER span and count, as a refusal on a stream).
A request sent before `initialize` is refused the same way, by `dispatch.py`.
"""

from __future__ import annotations

from typing import Any

from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch
from mcpobs._core.sdk import PARSED_CLIENT_REQUESTS
from mcpobs._server import transport as _transport
from mcpobs.semconv import Boundary

INVALID_PARAMS = -32602
"""What a 1.x session answers a request it cannot parse, or one sent before `initialize`."""


def patches() -> list[Patch]:
    def validate_request(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientRequest.model_validate(obj)`: a request the session refuses before any handler."""
        try:
            return wrapped(*args, **kwargs)
        except Exception:
            with guarded("request refused by validation"):
                _refused_by_validation(args[0] if args else kwargs.get("obj"))
            raise

    return [Patch.of(I.SERVER1_VALIDATE_REQUEST, validate_request)]


def _refused_by_validation(obj: Any) -> None:
    if not isinstance(obj, dict):
        return
    message: dict[str, Any] = obj  # pyright: ignore[reportUnknownVariableType]
    method = message.get("method")
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    # A method the SDK parses whose params did not validate: the caller's arguments; any other: a
    # method this server does not offer (a 2.x client's `server/discover` probe, say).
    boundary = Boundary.ARGUMENTS if method in PARSED_CLIENT_REQUESTS else Boundary.CAPABILITY
    _transport.refused_in_session(method, meta, INVALID_PARAMS, boundary)
