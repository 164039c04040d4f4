"""The per-request state the server middleware shares with the hooks deeper in the call.

One contextvar, owned here. The middleware sets it for the duration of a request; the tool,
progress and round hooks write what they learn into its named fields, and the middleware
writes those onto the span when the request ends. Child tasks inherit it, so a tool's
worker threads and task groups see their request.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from mcpobs._core.outcome import Classification


class RequestState:
    """What deeper hooks learn about one inbound request; the middleware writes it on the span at the end."""

    __slots__ = (
        "exception",
        "input_methods",
        "method",
        "progress_dropped",
        "progress_spans",
        "round",
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
        """Why the tool failed, before the SDK flattened it into an `isError` result (tool hook)."""
        self.exception: BaseException | None = None
        """The tool's own exception, recorded on the span for a server error (tool hook)."""
        self.tool_depth = 0
        self.progress_spans = 0
        self.progress_dropped = 0
        self.round: int | None = None
        """Which round of a multi-round-trip exchange this request is (`rounds`)."""
        self.input_methods: list[str] | None = None
        """What a pending round asks the client for (`rounds`)."""


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
