"""The per-request state the server middleware shares with the hooks deeper in the call.

One contextvar, owned here. The middleware sets it for the duration of a request; the tool,
progress and round hooks write what they learn into its named fields, and the middleware
writes those onto the span when the request ends. Child tasks inherit it, so a tool's
worker threads and task groups see their request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from mcpobs import semconv as S
from mcpobs._core import inventory as I

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from mcpobs._core.labels import Network
    from mcpobs._core.outcome import Classification


class RequestState:
    """What deeper hooks learn about one inbound request; the middleware writes it on the span at the end."""

    __slots__ = (
        "exception",
        "input_methods",
        "later",
        "method",
        "progress_dropped",
        "progress_labels",
        "progress_requested",
        "progress_spans",
        "round",
        "span",
        "tool",
        "tool_depth",
        "tool_failure",
    )

    def __init__(self, method: str, tool: str | None, span: Span, later: Mapping[str, Any]) -> None:
        self.method = method
        self.tool = tool
        self.span = span
        self.later = later
        """The labels the span takes at its end, not at its start (`S.AT_SPAN_END`): shared, never changed."""
        self.tool_failure: Classification | None = None
        """Why the tool failed, before the SDK flattened it into an `isError` result (tool hook)."""
        self.exception: BaseException | None = None
        """The tool's own exception, recorded on the span for a server error (tool hook)."""
        self.tool_depth = 0
        self.progress_spans = 0
        self.progress_dropped = 0
        self.progress_labels: Mapping[str, Any] | None = None
        """The labels of this request's progress counts, found at its first report (`progress`)."""
        self.progress_requested: bool | None = None
        """Whether the caller asked for progress, read at the first recorded report (`progress`)."""
        self.round: int | None = None
        """Which round of a multi-round-trip exchange this request is (`rounds`)."""
        self.input_methods: list[str] | None = None
        """What a pending round asks the client for (`rounds`)."""


T = TypeVar("T")

_current: ContextVar[RequestState | None] = ContextVar("mcpobs_request", default=None)


current = _current.get
"""The request being handled in this context, if any (the contextvar's own `get`: no extra call)."""

enter = _current.set
"""Make `state` the current request's (returns the token `leave` takes)."""

leave = _current.reset

_by_session: dict[int, RequestState] = {}
"""The running request of each per-request `ServerSession` (the SDK builds one per inbound
request), by the session's `id()`, from the middleware's start of the request to its end (the
session is alive all that time, so its id is never another's)."""


def serving(session: object, state: RequestState) -> int:
    """`session` serves `state`'s request from now; returns the key `served` takes."""
    key = id(session)
    _by_session[key] = state
    return key


def served(key: int) -> None:
    _by_session.pop(key, None)


def of_session(session: object) -> RequestState | None:
    """The request `session` serves, found without the context (a plain `threading.Thread`
    reporting progress through `asyncio.run_coroutine_threadsafe` carries none)."""
    return _by_session.get(id(session))


_OUTBOUND = I.SESSION_OUTBOUND.attribute
_INNER = I.RUNNER_OUTBOUND_INNER.attribute
"""The private names `dispatch_context` reads, taken from their inventory rows once, at import."""


def dispatch_context(session: Any) -> Any:
    """The SDK's per-request dispatch context behind a `ServerSession` (private to the SDK).

    One place reads it: the progress hook (did the caller ask for progress?) and the
    cancellation table (keyed by it) both come through here.
    """
    outbound = getattr(session, _OUTBOUND, None)
    return getattr(outbound, _INNER, outbound)  # the runner's no-back-channel wrapper


_transport: ContextVar[Network | None] = ContextVar("mcpobs_transport", default=None)

transport = _transport.get
"""The network labels of the transport a server runs on in this context (`PIPE` under stdio,
tcp/http in a legacy Streamable HTTP session's loop, where each request's own scope then adds
the HTTP version); None elsewhere."""


label_transport = _transport.set
"""Label what runs from here on in this context with `network` (returns the token `unlabel_transport` takes)."""

unlabel_transport = _transport.reset


def while_running(var: ContextVar[T], value: Callable[[Any], T]) -> Any:
    """A wrapper for an SDK coroutine: `var` is `value(instance)` for everything it drives."""

    async def running(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        token = var.set(value(instance))
        try:
            return await wrapped(*args, **kwargs)
        finally:
            var.reset(token)

    return running


def on_transport(network: Network) -> Any:
    """A wrapper for an SDK coroutine that serves on `network` (stdio, a legacy HTTP session):
    everything it drives, requests and sessions, knows its transport's labels."""
    return while_running(_transport, lambda _: network)


_internal: ContextVar[bool] = ContextVar("mcpobs_sdk_internal", default=False)

internal = _internal.get
"""True while the SDK runs a request of its own through the server's chain (the `tools/list`
behind Mcp-Param header validation): no client sent it, so it is neither a span nor a count."""


sdk_internal = while_running(_internal, lambda _: True)
"""A wrapper for an SDK coroutine that runs requests of its own through the chain."""

_ASKED = (S.MCP_PROTOCOL_VERSION, S.NETWORK_TRANSPORT, S.NETWORK_PROTOCOL_NAME, S.NETWORK_PROTOCOL_VERSION)


def asked_labels() -> dict[str, Any]:
    """The revision and network of the request being served here, as its SERVER span takes them
    at its end: what a request the server sends while serving it is labelled with. Empty outside
    a served request, or when its span does not record."""
    serving = _current.get()
    if serving is None or not serving.span.is_recording():
        return {}
    later = serving.later
    return {k: later[k] for k in _ASKED if k in later}
