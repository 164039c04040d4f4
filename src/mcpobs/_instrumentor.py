"""`MCPInstrumentor`: what `instrument()` changes in the SDK, and how `uninstrument()` undoes it.

The instrumentor owns one `Changes` per instrumentation: the wrapped seams and the undo
step of every live edit (`_server.setup` says which and in what order).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]

from mcpobs._core import sdk
from mcpobs._core.config import InEffect, Settings, settings_from
from mcpobs._core.guard import guarded
from mcpobs._core.inventory import SUPPORTED, warn_untested
from mcpobs._core.patches import Changes
from mcpobs._core.telemetry import Telemetry

_instruments = (f"mcp {SUPPORTED['mcp']}",)
"""Declared to `opentelemetry-instrument`; FastMCP is adapted to when installed (`_core/inventory.py`)."""


class MCPInstrumentor(BaseInstrumentor):
    """OpenTelemetry instrumentor for the MCP Python SDK.

    `opentelemetry-instrument` finds it through the `opentelemetry_instrumentor` entry
    point named `mcpobs-otel` (the distribution's name); `OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=mcpobs-otel` turns it off.
    In code, prefer `mcpobs.instrument()`, which also configures OpenTelemetry from the
    `OTEL_*` variables when nothing else did; `instrument()` here (as contrib's do) only
    instruments, onto the providers given or the global ones. Under `opentelemetry-instrument`
    the configuring is done by an `opentelemetry_pre_instrument` hook (`_core.zero_code`).
    """

    _changes: Changes | None = None
    in_effect: InEffect | None = None
    """The options of the instrumentation in place, for `instrument()` called again."""

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        settings = settings_from(kwargs)
        with guarded("release check"):
            warn_untested()
        self.in_effect = InEffect(settings, kwargs.get("tracer_provider"), kwargs.get("meter_provider"))
        telemetry = Telemetry(settings, kwargs.get("tracer_provider"), kwargs.get("meter_provider"))
        changes = self._changes = Changes()
        (_sdk2 if sdk.LINE == 2 else _sdk1)(telemetry, changes, settings)
        _stops(telemetry, changes)

    def _uninstrument(self, **kwargs: Any) -> None:
        changes, self._changes = self._changes, None
        self.in_effect = None
        if changes is not None:
            changes.undo()


# What each line of the SDK gets wrapped and set up, in one place per line. Each function imports
# its line's modules itself, so the other line's are never imported; every row they wrap is also
# gated to its line in the inventory.


def _stops(telemetry: Telemetry, changes: Changes) -> None:
    """Both lines: the stop that does not wait (`_core/stop.py`), and where it begins."""
    import os

    from mcpobs._core import stop as _stop
    from mcpobs._core import stop_points as _stop_points
    from mcpobs._core.autoconfig import shutdown_timeout_from, termination_grace_from

    deadline = telemetry.settings.shutdown_timeout
    deadline = shutdown_timeout_from(os.environ) if deadline is None else deadline
    grace = telemetry.settings.termination_grace
    _stop.use(telemetry.providers, deadline, termination_grace_from(os.environ) if grace is None else grace)
    changes.wrap(_stop_points.patches())
    _stop_points.rebind()
    # Only where there is something to export: with no SDK provider given or set (the bare
    # instrumentor, as contrib's), mcpobs changes nothing global, SIGTERM's disposition included.
    if any(hasattr(provider, "force_flush") for provider in telemetry.providers()):
        with guarded("SIGTERM of the host"):
            undo = _stop_points.host_sigterm()
            if undo is not None:
                changes.on_undo("SIGTERM handler", undo)


def _sdk2(telemetry: Telemetry, changes: Changes, settings: Settings) -> None:
    """mcp 2.x: the server middleware chain, its HTTP app, and the `Client`."""
    from mcpobs._client import catalog as _catalog
    from mcpobs._client import fastmcp as _fastmcp_client
    from mcpobs._client import seams as _client
    from mcpobs._core import labels as _labels
    from mcpobs._hosts import fastmcp_tasks as _fastmcp_tasks
    from mcpobs._server import cancellation as _cancellation
    from mcpobs._server import lifespan as _lifespan
    from mcpobs._server import progress as _progress
    from mcpobs._server import sessions as _sessions
    from mcpobs._server import subscriptions as _subscriptions
    from mcpobs._server import transport as _transport
    from mcpobs._server.setup import ServerSetup

    _transport.activate(telemetry)
    changes.on_undo("transport boundary", _transport.deactivate)
    changes.wrap(ServerSetup(telemetry, changes).patches())
    changes.wrap(_fastmcp_tasks.patches(telemetry, changes))
    _fastmcp_tasks.quiet_pydocket(changes)
    changes.wrap(_transport.patches())
    changes.wrap(_cancellation.patches())
    changes.wrap(_progress.patches(telemetry))
    changes.wrap(_lifespan.patches(telemetry))
    changes.wrap(_sessions.patches())
    changes.wrap(_subscriptions.patches(telemetry))
    changes.on_undo("subscriptions", _subscriptions.deactivate)
    changes.on_undo("release bounds", _labels.forget_releases)
    if settings.clients:
        changes.wrap(_client.patches(telemetry))
        changes.wrap(_fastmcp_client.patches(telemetry))
        changes.on_undo("client catalogs", _catalog.reset)


def _sdk1(telemetry: Telemetry, changes: Changes, settings: Settings) -> None:
    """mcp 1.x (1.24 to 1.30): no middleware chain; the server's dispatch, its sessions and its hosts
    (the lowlevel `Server`, FastMCP 1, FastMCP 3), a server's own requests to its client, and the
    client (`ClientSession` over its transport functions, and FastMCP 3's `Client`). The line's code
    lives in its folders (`_server/sdk1`, `_client/sdk1`, `_hosts/sdk1`), reached only from here."""
    from mcpobs._client import sdk1 as _client1
    from mcpobs._core import labels as _labels
    from mcpobs._hosts import fastmcp_tasks as _fastmcp_tasks
    from mcpobs._server import sdk1 as _server1
    from mcpobs._server import transport as _transport

    _transport.activate(telemetry)
    changes.on_undo("transport boundary", _transport.deactivate)
    changes.wrap(_server1.patches(telemetry, changes))
    # FastMCP 3's tasks run on pydocket too: its own spans carry the raw task id (`docket.key`)
    _fastmcp_tasks.quiet_pydocket(changes)
    changes.wrap(_client1.server_asks(telemetry))
    changes.on_undo("release bounds", _labels.forget_releases)
    if settings.clients:
        from mcpobs._client import catalog as _catalog

        changes.wrap(_client1.patches(telemetry, settings))
        changes.on_undo("client catalogs", _catalog.reset)
