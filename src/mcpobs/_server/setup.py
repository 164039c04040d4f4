"""How mcpobs sets up a server, in one stated order, and how `uninstrument()` takes it back.

For an `MCPServer`, one hook on `MCPServer.__init__`:

1. its subscription bus is wrapped in `ObservedSubscriptionBus` (before `__init__`: the
   listen handler takes the bus there);
2. `__init__` runs and builds the lowlevel `Server`, whose own hook puts `ServerMiddleware`
   outermost in the chain, where the SDK's `OpenTelemetryMiddleware` was;
3. the middleware is pointed at the server's live tool and prompt registries;
4. the state codec of its `RequestStateBoundary` is wrapped (`RoundCodec`: multi-round-trip
   rounds).

A lowlevel `Server` gets step 2 alone. A server built before `instrument()` gets the same
steps (2 to 4) when it first serves a connection (`ServerRunner.__init__`). Every app
`Server.streamable_http_app()` returns gets the transport boundary (ASGI middleware).

Each step records its undo in the instrumentor's `Changes`: the chain gets the SDK's own
middleware back, the boundary gets its own codec back, and an app
not yet serving loses the ASGI middleware. Two things stay, as pass-throughs that record
nothing after `uninstrument()`: the wrapped bus (listen streams may be open on it) and the
ASGI middleware of an app that already serves (Starlette has built its stack).
"""

from __future__ import annotations

import weakref
from functools import partial
from typing import Any

from mcpobs._core.guard import guarded, report
from mcpobs._core.patches import Changes, Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import rounds as _rounds
from mcpobs._server import sessions as _sessions
from mcpobs._server import subscriptions as _subscriptions
from mcpobs._server import transport as _transport
from mcpobs._server.middleware import ServerMiddleware


class ServerSetup:
    """Sets servers and apps up for one `instrument()`, recording each undo step."""

    def __init__(self, telemetry: Telemetry, changes: Changes) -> None:
        self.telemetry = telemetry
        self.changes = changes

    # -- the steps ------------------------------------------------------------------------------

    def add_middleware(self, server: Any) -> ServerMiddleware:
        """Step 2: mcpobs's middleware where the SDK's own span middleware was, or outermost."""
        from mcp.server._otel import OpenTelemetryMiddleware

        chain = server.middleware
        ours = ServerMiddleware(self.telemetry, server)
        for i, middleware in enumerate(chain):
            if isinstance(middleware, OpenTelemetryMiddleware | ServerMiddleware):
                # Taking over from another mcpobs middleware (`instrument_server`): inherit what it replaced.
                ours.replaced = middleware.replaced if isinstance(middleware, ServerMiddleware) else middleware
                chain[i] = ours
                break
        else:
            chain.insert(0, ours)
        self.changes.on_undo("server middleware restore", partial(_remove_middleware, telemetry=self.telemetry), server)
        return ours

    def know_tools(self, server: Any) -> None:
        """Step 3: point an `MCPServer`'s mcpobs middleware at its live tool and prompt registries."""
        for middleware in server._lowlevel_server.middleware:
            if isinstance(middleware, ServerMiddleware) and middleware.telemetry is self.telemetry:
                middleware.names.tool_lookup = server._tool_manager.get_tool
                middleware.names.prompt_lookup = server._prompt_manager.get_prompt
                middleware.names.offered = _offered_by(server)

    def count_rounds(self, server: Any) -> None:
        """Step 4: label multi-round-trip rounds (see `rounds`)."""
        boundary = _rounds.install(server)
        if boundary is not None:
            self.changes.on_undo("round codec restore", _rounds.uninstall, boundary)

    def set_up(self, mcpserver: Any) -> None:
        """Steps 3 and 4 for an `MCPServer` whose lowlevel server has step 2."""
        self.know_tools(mcpserver)
        self.count_rounds(mcpserver)

    # -- the seams ------------------------------------------------------------------------------

    def server_init(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        """Wraps the lowlevel `Server.__init__` (also run inside `MCPServer.__init__`)."""
        wrapped(*args, **kwargs)
        with guarded("server setup"):
            self.add_middleware(instance)

    def mcpserver_init(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        """Wraps `MCPServer.__init__`: the four steps, in order."""
        try:
            kwargs = _subscriptions.observe_bus(kwargs)
        except Exception as exc:
            report("subscription bus setup", exc)
        wrapped(*args, **kwargs)
        with guarded("MCPServer setup"):
            self.set_up(instance)

    def runner_init(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        """Wraps `ServerRunner.__init__`: a server built before `instrument()` is adopted here,
        and a handshake connection starts its session (`sessions`)."""
        wrapped(*args, **kwargs)
        try:  # a handshake connection starts a session; a born-ready one (2026-07-28) costs this test
            connection = instance.connection
            if not connection.initialized.is_set():
                _sessions.started(connection, self.telemetry)
        except Exception as exc:
            report("session start", exc)
        # In process (mode auto) a runner is built per request: an adopted server costs one test here.
        try:
            if type(instance.server.middleware[0]) is ServerMiddleware:
                return
        except Exception:  # an unexpected runner is looked at, guarded, below
            pass
        with guarded("server adoption"):
            server = instance.server
            if any(isinstance(m, ServerMiddleware) for m in server.middleware):
                return  # set up already (or by hand, with `instrument_server`)
            self.adopt(server)

    def adopt(self, server: Any) -> None:
        """Steps 2 to 4 for a lowlevel `Server` built without them (and its `MCPServer`, if any)."""
        self.add_middleware(server)
        owner = _mcpserver_of(server)
        if owner is not None:
            self.set_up(owner)

    def app_factory(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Server.streamable_http_app` (`MCPServer`'s delegates to it): the transport boundary."""
        app = wrapped(*args, **kwargs)
        with guarded("transport boundary setup"):
            _transport.install(app, instance, self.telemetry)
            self.changes.on_undo("transport boundary removal", _transport.uninstall, app)
        return app

    def patches(self) -> list[Patch]:
        return [
            Patch("mcp.server.lowlevel.server", "Server.__init__", self.server_init),
            Patch("mcp.server.mcpserver.server", "MCPServer.__init__", self.mcpserver_init),
            Patch("mcp.server.runner", "ServerRunner.__init__", self.runner_init),
            Patch("mcp.server.lowlevel.server", "Server.streamable_http_app", self.app_factory),
        ]


_by_hand: weakref.WeakKeyDictionary[Any, Changes] = weakref.WeakKeyDictionary()
"""Servers set up with `instrument_server`, and how to undo each."""


def instrument_server(server: Any, telemetry: Telemetry) -> None:
    """Steps 2 to 4 for one server, by hand; `uninstrument_server` undoes them."""
    from mcp.server.mcpserver import MCPServer

    uninstrument_server(server)
    changes = Changes()
    setup = ServerSetup(telemetry, changes)
    if isinstance(server, MCPServer):
        setup.add_middleware(server._lowlevel_server)  # pyright: ignore[reportPrivateUsage]  # no public accessor
        setup.set_up(server)
    else:
        setup.adopt(server)
    _by_hand[server] = changes


def uninstrument_server(server: Any) -> None:
    changes = _by_hand.pop(server, None)
    if changes is not None:
        changes.undo()


def _remove_middleware(server: Any, telemetry: Telemetry) -> None:
    chain = server.middleware
    for i, middleware in enumerate(chain):
        if isinstance(middleware, ServerMiddleware) and middleware.telemetry is telemetry:
            if middleware.replaced is not None:
                chain[i] = middleware.replaced
            else:
                del chain[i]
            return


def _mcpserver_of(server: Any) -> Any:
    """The `MCPServer` a lowlevel `Server` belongs to: its tools/call handler is bound to it."""
    from mcp.server.mcpserver import MCPServer

    entry = server.get_request_handler("tools/call")
    owner = getattr(getattr(entry, "handler", None), "__self__", None)
    return owner if isinstance(owner, MCPServer) else None


def _offered_by(server: Any) -> Any:
    def offered() -> dict[str, int]:
        return {
            "tools": len(server._tool_manager.list_tools()),
            "prompts": len(server._prompt_manager.list_prompts()),
            "resources": len(server._resource_manager.list_resources()),
        }

    return offered
