"""OpenTelemetry for MCP servers and clients built on the MCP Python SDK.

One call instruments every server and client the process builds afterwards::

    import mcpobs

    mcpobs.instrument()

Each inbound request then gets one SERVER span named by the MCP semantic conventions, an
outcome (`mcpobs.semconv.Outcome`) that tells the caller's mistakes from tool failures and
bugs, and the `mcp.server.operation.duration` and `mcpobs.server.requests` metrics. Each
`Client` request gets a CLIENT span that parents the server's, in memory, over Streamable
HTTP and over stdio. Cancellation, multi-round-trip rounds, progress reports and
subscription events are recorded as such; tool calls carry contract fingerprints.

Every name is in `mcpobs.semconv`, pinned to `mcpobs.semconv.CONVENTION_VERSION`. For tests,
the `mcpobs_telemetry` pytest fixture (loaded automatically) gives in-memory spans and
metrics; without pytest, `mcpobs.testing.capture()` does the same.
A host spawning a stdio server passes it the OpenTelemetry settings with
``StdioServerParameters(..., env=mcpobs.otel_env())`` (the SDK gives the server a filtered
environment otherwise). From the shell: `python -m mcpobs demo`, `python -m mcpobs jaeger-url`,
`python -m mcpobs contract snapshot|diff`.
A host says which model drives its client calls with ``with mcpobs.model("claude-sonnet-4-5"):``.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Unpack

from mcpobs import semconv
from mcpobs._core.config import ConfigurationError, InstrumentOptions, signature
from mcpobs._core.environment import otel_env
from mcpobs._core.model import model
from mcpobs._instrumentor import MCPInstrumentor
from mcpobs._version import __version__

if TYPE_CHECKING:
    from mcpobs._server.subscriptions import ObservedSubscriptionBus

__all__ = [
    "ConfigurationError",
    "MCPInstrumentor",
    "ObservedSubscriptionBus",
    "__version__",
    "instrument",
    "instrument_server",
    "model",
    "otel_env",
    "semconv",
    "uninstrument",
    "uninstrument_server",
]


def instrument(**options: Unpack[InstrumentOptions]) -> None:
    """Instrument the MCP SDK in this process; calling it again changes nothing.

    A second call with other options warns once that they are ignored (`uninstrument()` first
    to change them).

    Options (all optional):

    - ``tracer_provider``, ``meter_provider``: where spans and metrics go; the global
      providers when omitted. When neither is given and the application has not set global
      providers, mcpobs sets SDK ones from the standard variables (``OTEL_SERVICE_NAME``,
      ``OTEL_TRACES_EXPORTER``/``OTEL_METRICS_EXPORTER``/``OTEL_LOGS_EXPORTER``,
      ``OTEL_EXPORTER_OTLP_*``, ``OTEL_SDK_DISABLED``, ...): OTLP over http/protobuf by default.
    - ``max_attribute_length`` (4096): no string attribute is longer.
    - ``max_progress_spans`` (200): progress spans per operation before the cap.
    - ``capture_content`` (False, or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``):
      record tool arguments and results.
    - ``max_content_length`` (16384), ``redact`` (a function): bound and filter captured content.
    - ``record_user`` (False): record the verified token's subject as ``user.id``.
    - ``record_session_id`` (True) and ``session_id_key`` (None): a legacy Streamable HTTP
      session's id as ``mcp.session.id``, or with a key its keyed hash (docs/privacy.md).
    - ``clients`` (True): also instrument the SDK's ``Client``; False instruments servers only.
    - ``shutdown_timeout`` (``OTEL_PYTHON_MCP_SHUTDOWN_TIMEOUT``, else 3 s): the longest the
      flushes of a stop may take together: at the end of an HTTP app's lifespan (every
      provider mcpobs records to), at exit and on SIGTERM (the providers mcpobs configures).
    - ``termination_grace`` (``OTEL_PYTHON_MCP_TERMINATION_GRACE``, else none): the seconds from SIGTERM to
      the orchestrator's SIGKILL (Kubernetes' ``terminationGracePeriodSeconds``); the calls still
      running just before it are recorded ``stopped`` and exported. Unset, none is ended early.

    A bad option raises `ConfigurationError` saying how to fix it. A server built before this
    call is instrumented when it first serves a connection.
    """
    instrumentor = MCPInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        from mcpobs._core.config import warn_if_ignored

        warn_if_ignored(instrumentor.in_effect, options)  # one warning line when they differ
        return
    from mcpobs._core.config import settings_from

    settings = settings_from(options)  # a bad option fails here, before anything global is configured
    if options.get("tracer_provider") is None and options.get("meter_provider") is None:
        from mcpobs._core import autoconfig
        from mcpobs._core.guard import guarded

        with guarded("configure from OTEL_* variables"):
            autoconfig.configure(shutdown_timeout=settings.shutdown_timeout)
    instrumentor.instrument(**options)


def uninstrument() -> None:
    """Undo `instrument()`: unwrap every seam and give servers back the SDK's own middleware.

    What cannot be swapped back safely (a subscription bus, the ASGI middleware of an app
    already serving) becomes a pass-through; docs/configuration.md lists it.
    """
    instrumentor = MCPInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()


def instrument_server(server: Any, **options: Unpack[InstrumentOptions]) -> None:
    """Instrument one server by hand: an ``MCPServer`` or a lowlevel ``Server``.

    Beside (or instead of) the global `instrument()`: this server's requests get mcpobs's
    spans and metrics through its own options (``tracer_provider``, ``meter_provider``,
    ``excluded_methods``, the hooks, ... as for `instrument()`; the global providers when
    omitted; nothing is configured from ``OTEL_*``). It takes over from the global setup
    for this server. What lives outside the server's own middleware chain (tool failure
    kinds, progress spans, cancel reasons, subscription spans, the HTTP transport
    boundary) needs the global `instrument()`; without it, every call the SDK answers with
    an ``isError`` result (an unknown tool, bad arguments, a crash) counts as ``tool_error``.
    `uninstrument_server(server)` undoes it.
    """
    from mcpobs._core import sdk
    from mcpobs._core.config import settings_from
    from mcpobs._core.telemetry import Telemetry

    if sdk.LINE != 2:
        raise ConfigurationError(
            "instrument_server() puts mcpobs in a server's middleware chain, which mcp 1.x does not have; "
            "on mcp 1.x call mcpobs.instrument(), which instruments every server (docs/compatibility.md)"
        )
    from mcpobs._server import setup

    settings = settings_from(options)
    telemetry = Telemetry(settings, options.get("tracer_provider"), options.get("meter_provider"))
    setup.instrument_server(server, telemetry)


def uninstrument_server(server: Any) -> None:
    """Undo `instrument_server(server)`: the server gets the SDK's own middleware back."""
    from mcpobs._server import setup

    setup.uninstrument_server(server)


def __getattr__(name: str) -> Any:
    """`ObservedSubscriptionBus` wraps mcp 2.x's `SubscriptionBus`: imported on first use, on that line."""
    if name == "ObservedSubscriptionBus":
        from mcpobs._core import sdk

        if sdk.LINE != 2:
            raise ImportError(
                "mcpobs.ObservedSubscriptionBus wraps mcp 2.x's SubscriptionBus, which mcp 1.x does not have; "
                "on mcp 1.x, resources/updated notifications are recorded without it (docs/lifecycle.md)."
            )
        from mcpobs._server.subscriptions import ObservedSubscriptionBus

        return ObservedSubscriptionBus
    raise AttributeError(f"module 'mcpobs' has no attribute {name!r}")


# What help(), notebooks and IDEs that read the runtime signature show: every option by name.
instrument.__signature__ = signature()  # type: ignore[attr-defined]
instrument_server.__signature__ = signature(  # type: ignore[attr-defined]
    inspect.Parameter("server", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Any)
)
