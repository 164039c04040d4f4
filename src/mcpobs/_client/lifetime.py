"""`mcp.client.session.duration`: one sample per `Client`, from entering it to leaving it.

Its life starts when the `Client` starts building its session (`Client._build_session`,
`began`), not in `Client.__aenter__`: a subclass may enter its own way without calling it
(fast-agent-mcp's modern mode builds the session, sends `server/discover` and publishes the
session itself), and still ends in `Client.__aexit__`. The cost is a few steps per `Client`,
none per request. A `Client` left with an exception (other than a cancellation)
records its class as `error.type`; one whose entering fails publishes no session and records
nothing.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from mcpobs import semconv as S
from mcpobs._client import memory
from mcpobs._client.describe import describe
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.names import bounded_version
from mcpobs._core.outcome import is_cancellation
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry

_started: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
"""Per `ClientSession` a `Client` built (a `Client` itself takes no weak reference): when it started building it."""


def began(session: Any, start: float) -> None:
    """A `Client` started building `session` at `start` (`perf_counter`), however it then enters it."""
    _started[session] = start


def patches(telemetry: Telemetry) -> list[Patch]:
    async def enter(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        result = await wrapped(*args, **kwargs)
        with guarded("client session start"):
            describe(instance, telemetry.privacy)
        return result

    async def leave(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        labels = None
        with guarded("client session end"):
            session = getattr(instance, I.CLIENT_SESSION.attribute, None)
            start = _started.pop(session, None) if session is not None else None
            if start is not None:
                labels = session_labels(session, args[1] if len(args) > 1 else kwargs.get("exc_val"))
        try:
            return await wrapped(*args, **kwargs)
        finally:
            if labels is not None:
                with guarded("client session end"):
                    telemetry.client_session_duration.record(time.perf_counter() - start, labels)  # type: ignore[operator]

    return [
        Patch.of(I.CLIENT_ENTER, enter),
        Patch.of(I.CLIENT_EXIT, leave),
    ]


def session_labels(session: Any, failure: object) -> dict[str, Any]:
    """The labels of a session's duration: its version, where its server is, and why it ended, if it failed."""
    remembered = memory.remembered(session)
    labels: dict[str, Any] = {S.MCP_PROTOCOL_VERSION: bounded_version(memory.version_of(session, remembered))}
    if remembered is not None and remembered.network is not None:
        labels.update(remembered.network.labels)
    if isinstance(failure, BaseException) and not is_cancellation(failure):
        labels[S.ERROR_TYPE] = type(failure).__qualname__
    return labels
