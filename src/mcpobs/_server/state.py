"""The per-request state the server middleware shares with the hooks deeper in the call.

One contextvar, owned here. The middleware sets it for the duration of a request; the tool,
progress and subscription hooks read it. Child tasks inherit it, so a tool's worker
threads and task groups see their request.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from mcpobs._core.outcome import Classification


class RequestState:
    """What deeper hooks learn about one inbound request."""

    __slots__ = (
        "exception",
        "extra",
        "method",
        "progress_dropped",
        "progress_spans",
        "span",
        "tool",
        "tool_depth",
        "tool_failure",
    )

    def __init__(self, method: str, tool: str | None, span: Span) -> None:
        self.method = method
        self.tool = tool
        self.span = span
        self.tool_failure: Classification | None = None
        self.exception: BaseException | None = None
        self.tool_depth = 0
        self.progress_spans = 0
        self.progress_dropped = 0
        self.extra: dict[str, Any] | None = None
        """Attributes deeper hooks add to the request's span; the middleware writes them at its end."""

    def set_attribute(self, name: str, value: Any) -> None:
        """Add an attribute to this request's span when the middleware ends it."""
        if self.extra is None:
            self.extra = {}
        self.extra[name] = value


_current: ContextVar[RequestState | None] = ContextVar("mcpobs_request", default=None)


def current() -> RequestState | None:
    return _current.get()


def enter(state: RequestState) -> Token[RequestState | None]:
    return _current.set(state)


def leave(token: Token[RequestState | None]) -> None:
    _current.reset(token)


_transport: ContextVar[str | None] = ContextVar("mcpobs_transport", default=None)


def transport() -> str | None:
    """`pipe` while a stdio server runs in this context; None elsewhere."""
    return _transport.get()


def set_transport(value: str) -> Token[str | None]:
    return _transport.set(value)


def reset_transport(token: Token[str | None]) -> None:
    _transport.reset(token)
