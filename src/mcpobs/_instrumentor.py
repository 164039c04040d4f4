"""`MCPInstrumentor`: what `instrument()` patches, and how `uninstrument()` undoes it."""

from __future__ import annotations

import weakref
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]

from mcpobs import _patches, _state
from mcpobs._config import settings_from
from mcpobs._guard import guarded
from mcpobs._server import ServerMiddleware, tool_call_hook
from mcpobs._telemetry import Telemetry

_instruments = ("mcp >= 2.3.0, < 3",)

_LOWLEVEL = "mcp.server.lowlevel.server"
_MCPSERVER = "mcp.server.mcpserver.server"
_TOOLS = "mcp.server.mcpserver.tools.tool_manager"


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
        telemetry = Telemetry(settings, kwargs.get("tracer_provider"), kwargs.get("meter_provider"))
        self._servers = weakref.WeakSet()
        servers = self._servers

        def server_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
            wrapped(*args, **kwargs)
            with guarded("server setup"):
                _install(instance, telemetry)
                servers.add(instance)

        def mcpserver_init(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> None:
            wrapped(*args, **kwargs)
            with guarded("MCPServer setup"):
                for middleware in instance._lowlevel_server.middleware:
                    if isinstance(middleware, ServerMiddleware):
                        middleware.names.tool_lookup = instance._tool_manager.get_tool
                        middleware.names.prompt_lookup = instance._prompt_manager.get_prompt

        async def run_stdio(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            token = _state.set_transport("pipe")
            try:
                return await wrapped(*args, **kwargs)
            finally:
                _state.reset_transport(token)

        self._applied = _patches.apply(
            [
                _patches.Patch(_LOWLEVEL, "Server.__init__", server_init),
                _patches.Patch(_MCPSERVER, "MCPServer.__init__", mcpserver_init),
                _patches.Patch(_MCPSERVER, "MCPServer.run_stdio_async", run_stdio),
                _patches.Patch(_TOOLS, "ToolManager.call_tool", tool_call_hook),
            ]
        )

    def _uninstrument(self, **kwargs: Any) -> None:
        _patches.remove(getattr(self, "_applied", []))
        self._applied = []
        for server in list(getattr(self, "_servers", ())):
            with guarded("server restore"):
                _restore(server)


def _install(server: Any, telemetry: Telemetry) -> None:
    """Put mcpobs's middleware where the SDK's own span middleware was: outermost."""
    from mcp.server._otel import OpenTelemetryMiddleware

    chain = server.middleware
    ours = ServerMiddleware(telemetry, server)
    for i, middleware in enumerate(chain):
        if isinstance(middleware, OpenTelemetryMiddleware | ServerMiddleware):
            chain[i] = ours
            return
    chain.insert(0, ours)


def _restore(server: Any) -> None:
    from mcp.server._otel import OpenTelemetryMiddleware

    chain = server.middleware
    for i, middleware in enumerate(chain):
        if isinstance(middleware, ServerMiddleware):
            chain[i] = OpenTelemetryMiddleware()
