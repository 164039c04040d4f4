"""How mcpobs sets up a server, in one stated order, and how `uninstrument()` takes it back.

Each server framework is a host (`_hosts/`): it says which framework object built a lowlevel
`Server`, where the names are, and adds its own seams. For an `MCPServer`, one hook on
`MCPServer.__init__` (`_hosts/mcpserver.py`):

1. its subscription bus is wrapped in `ObservedSubscriptionBus` (before `__init__`: the
   listen handler takes the bus there);
2. `__init__` runs and builds the lowlevel `Server`, whose own hook puts `ServerMiddleware`
   outermost in the chain, where the SDK's `OpenTelemetryMiddleware` was;
3. the middleware is pointed at the server's live tool and prompt registries (the host's);
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

from mcpobs import _hosts
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded, report
from mcpobs._core.patches import Changes, Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._hosts import Host
from mcpobs._server import rounds as _rounds
from mcpobs._server import sessions as _sessions
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

    def know_names(self, owner: Any, host: Host) -> None:
        """Step 3: point the framework's server's mcpobs middleware at its live registries."""
        for middleware in host.lowlevel_of(owner).middleware:
            if isinstance(middleware, ServerMiddleware) and middleware.telemetry is self.telemetry:
                host.know_names(middleware.names, owner)

    def count_rounds(self, server: Any) -> None:
        """Step 4: label multi-round-trip rounds (see `rounds`)."""
        boundary = _rounds.install(server)
        if boundary is not None:
            self.changes.on_undo("round codec restore", _rounds.uninstall, boundary)

    def set_up(self, owner: Any, host: Host) -> None:
        """Steps 3 and 4 for a framework's server whose lowlevel server has step 2."""
        self.know_names(owner, host)
        self.count_rounds(host.lowlevel_of(owner))

    # -- the seams ------------------------------------------------------------------------------

    def server_init(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
        """Wraps the lowlevel `Server.__init__` (also run inside a framework's own `__init__`)."""
        wrapped(*args, **kwargs)
        with guarded("server setup"):
            self.add_middleware(instance)

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
        """Steps 2 to 4 for a lowlevel `Server` built without them (and its framework's server, if any)."""
        self.add_middleware(server)
        host, owner = _hosts.owning(server)
        if owner is not None:
            self.set_up(owner, host)

    def app_factory(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `Server.streamable_http_app` (`MCPServer`'s delegates to it): the transport boundary."""
        app = wrapped(*args, **kwargs)
        with guarded("transport boundary setup"):
            self.watch_app(app, instance)
        return app

    def watch_app(self, app: Any, server: Any, path: str | tuple[str, ...] | None = None) -> None:
        """The transport boundary on an app serving `server` (only its MCP endpoint `path`, if given)."""
        _transport.install(app, server, self.telemetry, path)
        self.changes.on_undo("transport boundary removal", _transport.uninstall, app)

    def patches(self) -> list[Patch]:
        """The SDK's setup seams, then each host's own."""
        found = [
            Patch.of(I.SERVER_INIT, self.server_init, setup=True),
            Patch.of(I.RUNNER_INIT, self.runner_init, setup=True),
            Patch.of(I.SERVER_HTTP_APP, self.app_factory, setup=True),
        ]
        found += _hosts.LOWLEVEL.patches(self)
        for host in _hosts.HOSTS:
            found += host.patches(self)
        return found


_by_hand: weakref.WeakKeyDictionary[Any, Changes] = weakref.WeakKeyDictionary()
"""Servers set up with `instrument_server`, and how to undo each."""


def instrument_server(server: Any, telemetry: Telemetry) -> None:
    """Steps 2 to 4 for one server, by hand; `uninstrument_server` undoes them."""
    uninstrument_server(server)
    changes = Changes()
    setup = ServerSetup(telemetry, changes)
    host = _hosts.framework_of(server)
    if host is not None:
        setup.add_middleware(host.lowlevel_of(server))
        setup.set_up(server, host)
    else:
        setup.adopt(server)
    _by_hand[server] = changes


def uninstrument_server(server: Any) -> None:
    changes = _by_hand.pop(server, None)
    if changes is not None:
        changes.undo()


def _remove_middleware(server: Any, telemetry: Telemetry) -> None:
    """The SDK's own middleware back where it was, unless the server's framework had removed it."""
    chain = server.middleware
    host, _ = _hosts.owning(server)
    for i, middleware in enumerate(chain):
        if isinstance(middleware, ServerMiddleware) and middleware.telemetry is telemetry:
            if middleware.replaced is not None and not host.drops_sdk_span_middleware:
                chain[i] = middleware.replaced
            else:
                del chain[i]
            return
