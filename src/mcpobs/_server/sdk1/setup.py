"""How mcpobs sets up servers on mcp 1.x, and how `uninstrument()` takes it back.

1.x has no middleware chain to put mcpobs in: every seam is a class-level wrapper, and a server
is set up when it first serves (its first session, or its first request if it was already
serving when `instrument()` ran). Its `ServerObserver` (`sdk1/dispatch.py`: the 2.x middleware's
logic) is made then, pointed at its host's registries (`_hosts/sdk1`'s `hosts()`: FastMCP 1, FastMCP 3,
or the lowlevel `Server`'s own listing), and kept on the server, so a server built before
`instrument()` is recorded as one built after. Every app FastMCP 1 or 3 builds gets the
transport boundary; a lowlevel server's own mount of the SDK's session manager has it there.

Each change records its undo in the instrumentor's `Changes`: the observer leaves the server,
and an app not yet serving loses the ASGI middleware (one already serving keeps it as a
pass-through that records nothing, as on 2.x).
"""

from __future__ import annotations

from typing import Any

from mcpobs import _hosts
from mcpobs._core.guard import report
from mcpobs._core.patches import Changes, Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._hosts import Host
from mcpobs._hosts import sdk1 as _hosts1
from mcpobs._server import transport as _transport
from mcpobs._server.sdk1 import cancels as _cancels
from mcpobs._server.sdk1 import http as _http
from mcpobs._server.sdk1 import notifications as _notifications
from mcpobs._server.sdk1 import progress as _progress
from mcpobs._server.sdk1 import refusals as _refusals
from mcpobs._server.sdk1 import sessions as _sessions
from mcpobs._server.sdk1 import tasks as _tasks
from mcpobs._server.sdk1 import tool_failures as _tool_failures
from mcpobs._server.sdk1.dispatch import ServerObserver, name_tool_late
from mcpobs._server.sdk1.dispatch import patches as dispatch_patches

OBSERVER = "_mcpobs_observer"
"""The attribute a 1.x `Server` keeps its observer in while instrumented (removed by `uninstrument()`)."""


class ServerSetup1:
    """Sets 1.x servers and apps up for one `instrument()`, recording each undo step."""

    def __init__(self, telemetry: Telemetry, changes: Changes) -> None:
        self.telemetry = telemetry
        self.changes = changes
        self.hosts, self.lowlevel = _hosts1.hosts()

    def observer(self, server: Any) -> ServerObserver:
        """The server's observer: made, and pointed at its host's registries, when it first serves."""
        found = getattr(server, OBSERVER, None)
        if isinstance(found, ServerObserver) and found.telemetry is self.telemetry:
            return found
        observer = ServerObserver(self.telemetry, server)
        try:
            host, owner = _hosts.owning_in(self.hosts, self.lowlevel, server)
            host.know_names(observer.names, owner)
        except Exception as exc:  # its names are then learned from its listings
            report("server names", exc)
        setattr(server, OBSERVER, observer)
        self.changes.on_undo("server observer removal", _forget, server)
        return observer

    # -- the `Setup` the hosts' seams ask (`_hosts/host.py`) ---------------------------------------

    def set_up(self, owner: Any, host: Host) -> None:
        """A framework's server: its names, if it already serves (otherwise when it does)."""
        observer = getattr(host.lowlevel_of(owner), OBSERVER, None)
        if isinstance(observer, ServerObserver) and observer.telemetry is self.telemetry:
            host.know_names(observer.names, owner)

    def watch_app(self, app: Any, server: Any, path: str | tuple[str, ...] | None = None) -> None:
        """The transport boundary on an app serving `server` (only its MCP endpoints `path`, if given)."""
        _transport.install(app, server, self.telemetry, path)
        self.changes.on_undo("transport boundary removal", _transport.uninstall, app)

    def patches(self) -> list[Patch]:
        """The SDK's seams on 1.x, then each host's own."""
        telemetry = self.telemetry
        run = _sessions.run_wrapper(telemetry, self.observer)
        from mcpobs._core import inventory as I

        found = [
            Patch.of(I.SERVER1_RUN, run),
            Patch.of(I.FASTMCP3_RUN, run),
            *dispatch_patches(self.observer),
            *_tool_failures.patches(),
            *_refusals.patches(),
            *_cancels.patches(),
            *_http.patches(telemetry),
            *_progress.patches(telemetry),
            *_notifications.patches(telemetry),
            *_tasks.patches(telemetry, name_tool_late),
        ]
        found += self.lowlevel.patches(self)
        for host in self.hosts:
            found += host.patches(self)
        return found


def _forget(server: Any) -> None:
    if OBSERVER in vars(server):
        delattr(server, OBSERVER)
