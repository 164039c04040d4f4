"""`MCPInstrumentor`: what `instrument()` patches, and how `uninstrument()` undoes it."""

from __future__ import annotations

import weakref
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]

from mcpobs._client import seams as _client
from mcpobs._core import autoconfig as _autoconfig
from mcpobs._core import patches as _patches
from mcpobs._core.config import settings_from
from mcpobs._core.guard import guarded
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import cancellation as _cancellation
from mcpobs._server import middleware as _middleware
from mcpobs._server import progress as _progress
from mcpobs._server import rounds as _rounds
from mcpobs._server import subscriptions as _subscriptions
from mcpobs._server import transport as _transport
from mcpobs._server.middleware import ServerMiddleware

_instruments = ("mcp >= 2.3.0, < 3",)


class MCPInstrumentor(BaseInstrumentor):
    """OpenTelemetry instrumentor for the MCP Python SDK.

    `opentelemetry-instrument` finds it through the `opentelemetry_instrumentor` entry
    point named `mcpobs`; `OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=mcpobs` turns it off.
    In code, prefer `mcpobs.instrument()`.
    """

    _applied: list[_patches.Applied]
    _servers: weakref.WeakSet[Any]

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        settings = settings_from(kwargs)
        if kwargs.get("tracer_provider") is None and kwargs.get("meter_provider") is None:
            with guarded("configure from OTEL_* variables"):
                _autoconfig.configure()
        telemetry = Telemetry(settings, kwargs.get("tracer_provider"), kwargs.get("meter_provider"))
        self._servers = weakref.WeakSet()
        self._applied = _patches.apply(
            _middleware.patches(telemetry, self._servers)
            + _cancellation.patches()
            + _progress.patches(telemetry)
            + _rounds.patches()
            + _subscriptions.patches(telemetry)
            + (_client.patches(telemetry) if settings.clients else [])
            + _transport.patches(telemetry)
        )

    def _uninstrument(self, **kwargs: Any) -> None:
        _patches.remove(getattr(self, "_applied", []))
        self._applied = []
        _subscriptions.deactivate()
        _transport.deactivate()
        for server in list(getattr(self, "_servers", ())):
            with guarded("server restore"):
                _restore(server)


def _restore(server: Any) -> None:
    from mcp.server._otel import OpenTelemetryMiddleware

    chain = server.middleware
    for i, middleware in enumerate(chain):
        if isinstance(middleware, ServerMiddleware):
            chain[i] = OpenTelemetryMiddleware()
