"""`Host`: what mcpobs asks of a server framework, answered here for the SDK's lowlevel `Server`.

A lowlevel `Server` has handlers and nothing else: no registry (its names are learned, up to
a bound, from its own tools/list and prompts/list results, `_core/names.py`), no tool-run
path of its own (a failed tool is whatever its handler returns or raises, classified by the
middleware), progress through the SDK's `ServerSession.report_progress`, its app from
`Server.streamable_http_app` and its transports from the SDK. The other adapters override
what their framework does differently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded
from mcpobs._core.labels import PIPE, Network
from mcpobs._core.names import ServerNames
from mcpobs._core.patches import Patch
from mcpobs._server import state as _state

if TYPE_CHECKING:
    from mcpobs._core.outcome import Classification
    from mcpobs._core.telemetry import Telemetry


class Setup(Protocol):
    """What a host's seams ask of the instrumentation's server setup (`_server/setup.py` answers).

    Declared here, on the hosts' side, so the setup depends on the hosts and not the reverse.
    """

    @property
    def telemetry(self) -> Telemetry: ...

    def set_up(self, owner: Any, host: Host) -> None:
        """Point a framework server's middleware at its registries and count its rounds."""
        ...

    def watch_app(self, app: Any, server: Any, path: str | tuple[str, ...] | None = None) -> None:
        """The transport boundary on an app serving `server`."""
        ...


class Host:
    """A server framework. This base is the SDK's lowlevel `Server` (it owns nothing more)."""

    name = "lowlevel Server"

    drops_sdk_span_middleware = False
    """Whether the framework takes the SDK's `OpenTelemetryMiddleware` out itself (so
    `uninstrument()` must not put it back where mcpobs's middleware was)."""

    def is_owner(self, obj: object) -> bool:
        """Whether `obj` is this framework's server object (what `instrument_server` may be given)."""
        return False

    def owner_of(self, server: Any) -> Any | None:
        """The framework object that built this lowlevel `Server`, or None if not this framework's."""
        return None

    def lowlevel_of(self, owner: Any) -> Any:
        """The lowlevel `Server` a framework object serves through."""
        return owner

    def know_names(self, names: ServerNames, owner: Any) -> None:
        """Point `names` at the framework's live registries (a lowlevel `Server` has none: learned)."""

    def patches(self, setup: Setup) -> list[Patch]:
        """The framework's own seams (each a row of `_core/inventory.py`).

        A lowlevel `Server` runs on stdio inside `async with stdio_server()`: that block is labelled.
        """
        return [Patch.of(I.STDIO_SERVER, on_stdio)]


def know_managers(names: ServerNames, tools: Any, prompts: Any, resources: Any) -> None:
    """Point `names` at the SDK's tool, prompt and resource managers (`MCPServer`'s, FastMCP 1's: one API)."""
    names.tool_lookup = tools.get_tool
    names.prompt_lookup = prompts.get_prompt

    def offered() -> dict[str, int]:
        return {
            "tools": len(tools.list_tools()),
            "prompts": len(prompts.list_prompts()),
            "resources": len(resources.list_resources()),
        }

    names.offered = offered


async def outermost_tool_call(
    state: _state.RequestState,
    why: Callable[[BaseException], tuple[Classification | None, BaseException | None]],
    wrapped: Any,
    args: Any,
    kwargs: Any,
) -> Any:
    """Run a framework's tool call (the request's outermost); if it raises, `why` classifies it
    before the framework flattens the exception into a result."""
    state.tool_depth += 1
    try:
        return await wrapped(*args, **kwargs)
    except BaseException as exc:
        with guarded("tool classification"):
            state.tool_failure, state.exception = why(exc)
        raise
    finally:
        state.tool_depth -= 1


def on_stdio(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    """Wraps a `stdio_server()`-like context manager factory: its block is labelled `pipe`."""
    return Labelled(wrapped(*args, **kwargs), PIPE)


class Labelled:
    """An async context manager whose block knows its transport's labels (`state.transport()`)."""

    __slots__ = ("_inner", "_network", "_token")

    def __init__(self, inner: Any, network: Network) -> None:
        self._inner = inner
        self._network = network
        self._token: Any = None

    async def __aenter__(self) -> Any:
        # Before the inner block starts its reader task: requests are handled in the
        # context of the task that read them (the SDK's context streams).
        self._token = _state.label_transport(self._network)
        try:
            return await self._inner.__aenter__()
        except BaseException:
            _state.unlabel_transport(self._token)
            raise

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._inner.__aexit__(*exc)
        finally:
            _state.unlabel_transport(self._token)
