"""The registry: every name mcpobs emits, and the convention version it is pinned to.

Code, docs and dashboards read names from here; nothing else spells an attribute, metric,
unit or outcome. When the MCP semantic conventions move (they are at Development status and
have changed repository once), this is the one file to change, and
``docs/reference.md`` and ``dashboards/`` are regenerated from it.

Each name is registered with a short description and its origin: ``convention`` (defined by
the pinned OpenTelemetry conventions) or ``mcpobs`` (our extension, in the ``mcpobs.``
namespace so it can never collide with a future convention name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final, Literal

__all__ = [
    "ATTRIBUTES",
    "CONVENTION_NAME",
    "CONVENTION_SOURCE",
    "CONVENTION_STATUS",
    "CONVENTION_VERSION",
    "DEVIATIONS",
    "METRICS",
    "OTHER",
    "SCHEMA_URL",
    "AttributeSpec",
    "Boundary",
    "MetricSpec",
    "Outcome",
    "prometheus_label",
    "prometheus_name",
    "span_name",
]

# --- The pin -------------------------------------------------------------------------------

CONVENTION_NAME: Final = "OpenTelemetry semantic conventions for MCP"
CONVENTION_VERSION: Final = "semantic-conventions-genai v0.1.0"
CONVENTION_SOURCE: Final = "https://github.com/open-telemetry/semantic-conventions-genai/blob/v0.1.0/docs/gen-ai/mcp.md"
CONVENTION_STATUS: Final = "development"
# The GenAI repository publishes no schema URL yet; v0.1.0 is built on core conventions
# v1.45.0, so the tracer and meter carry that schema.
SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.45.0"

INSTRUMENTATION_NAME: Final = "mcpobs"

OTHER: Final = "_OTHER"
"""Stands in for any name the server does not register (tools, prompts, methods, versions)."""


# --- Outcomes and boundaries ---------------------------------------------------------------


class Outcome(StrEnum):
    """How a request ended; exactly one per request span (``mcpobs.outcome``)."""

    OK = "ok"
    TOOL_ERROR = "tool_error"
    SERVER_ERROR = "server_error"
    CLIENT_ERROR = "client_error"
    CANCELLED = "cancelled"
    PENDING_INPUT = "pending_input"


class Boundary(StrEnum):
    """Where a request that did not succeed stopped (``mcpobs.failure.boundary``).

    The seven places of "Failure boundaries before your handler": six before the handler,
    and the handler itself.
    """

    TRANSPORT = "transport"
    VERSION = "version"
    HANDSHAKE = "handshake"
    CAPABILITY = "capability"
    DISCOVERY = "discovery"
    ARGUMENTS = "arguments"
    HANDLER = "handler"


LATENCY_OUTCOMES: Final = frozenset({Outcome.OK, Outcome.TOOL_ERROR, Outcome.SERVER_ERROR, Outcome.CLIENT_ERROR})
"""Only completed requests are latency samples: a cancelled call or an interim round is not."""

STREAM_METHODS: Final = frozenset({"subscriptions/listen"})
"""Long-lived by design: their spans are never latency samples, whatever their outcome."""

ERROR_OUTCOMES: Final = frozenset({Outcome.TOOL_ERROR, Outcome.SERVER_ERROR})
"""What counts against a server's error ratio; the caller's mistakes do not."""

CALLER_MISTAKE_CODES: Final = frozenset({-32700, -32600, -32601, -32602, -32002})
"""JSON-RPC codes that are the caller's mistake, not a server error (semantic-conventions-genai #404)."""

# Spec codes of revision 2026-07-28 that are also the caller's mistake.
HEADER_MISMATCH: Final = -32020
MISSING_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

TOOL_ERROR: Final = "tool_error"
"""``error.type`` for a tools/call whose result has ``isError: true`` (convention value)."""
OUTPUT_VALIDATION: Final = "output_validation"
"""``error.type`` on a client span when the SDK rejects a result against its cached output schema."""
TIMEOUT: Final = "timeout"
"""``error.type`` on a client span when the call timed out."""

EXECUTE_TOOL: Final = "execute_tool"
"""``gen_ai.operation.name`` for tools/call."""

# --- Bounds --------------------------------------------------------------------------------

DEFAULT_MAX_ATTRIBUTE_LENGTH: Final = 4096
"""Characters; no string attribute value is longer (``instrument(max_attribute_length=...)``)."""
DEFAULT_MAX_PROGRESS_SPANS: Final = 200
"""Progress spans per operation before the cap announces itself (``instrument(max_progress_spans=...)``)."""
DEFAULT_MAX_CONTENT_LENGTH: Final = 16384
"""Characters of captured arguments or results, when content capture is opted in."""
MAX_LEARNED_NAMES: Final = 1024
"""Tool and prompt names learned from a lowlevel server's own listings, per server."""
MAX_NAME_LENGTH: Final = 128
"""Characters of a tool or prompt name a client may learn before it has listed them (the spec's
limit for tool names); a longer name is ``_OTHER`` in labels and span names."""
MAX_REASON_LENGTH: Final = 128
"""Characters of a cancellation reason."""
MAX_NOTED_PUBLISHES: Final = 1024
"""Publish contexts kept per listen stream to link its deliveries (the SDK's per-stream backlog)."""
MAX_COUNTER_SERIES: Final = 2000
"""Label sets per counter; later ones are counted under ``otel.metric.overflow=true`` (the SDK's own limit and rule)."""


# --- Attributes ----------------------------------------------------------------------------

Origin = Literal["convention", "mcpobs"]


@dataclass(frozen=True)
class AttributeSpec:
    name: str
    brief: str
    origin: Origin
    where: str
    """Which telemetry carries it: server span, client span, progress span, ..."""


ATTRIBUTES: dict[str, AttributeSpec] = {}


def _attr(name: str, brief: str, origin: Origin, where: str) -> str:
    ATTRIBUTES[name] = AttributeSpec(name, brief, origin, where)
    return name


_C: Final = "convention"
_M: Final = "mcpobs"
_REQ = "server and client spans"

MCP_METHOD_NAME: Final = _attr("mcp.method.name", "The JSON-RPC method; `_OTHER` when unknown.", _C, _REQ)
MCP_PROTOCOL_VERSION: Final = _attr("mcp.protocol.version", "The MCP revision of the request.", _C, _REQ)
MCP_RESOURCE_URI: Final = _attr("mcp.resource.uri", "A resource URI; never in a name.", _C, _REQ)
JSONRPC_REQUEST_ID: Final = _attr("jsonrpc.request.id", "The JSON-RPC request id.", _C, _REQ)
GEN_AI_OPERATION_NAME: Final = _attr("gen_ai.operation.name", "`execute_tool` for tools/call.", _C, _REQ)
GEN_AI_TOOL_NAME: Final = _attr("gen_ai.tool.name", "The tool; `_OTHER` when not registered.", _C, _REQ)
GEN_AI_PROMPT_NAME: Final = _attr("gen_ai.prompt.name", "The prompt; `_OTHER` when not registered.", _C, _REQ)
GEN_AI_TOOL_CALL_ARGUMENTS: Final = _attr(
    "gen_ai.tool.call.arguments", "Tool arguments as JSON; opt-in only, truncated.", _C, _REQ
)
GEN_AI_TOOL_CALL_RESULT: Final = _attr(
    "gen_ai.tool.call.result", "Tool result as JSON; opt-in only, truncated.", _C, _REQ
)
ERROR_TYPE: Final = _attr("error.type", "Set only when the request failed as an error.", _C, _REQ)
RPC_RESPONSE_STATUS_CODE: Final = _attr("rpc.response.status_code", "The JSON-RPC error code.", _C, _REQ)
NETWORK_TRANSPORT: Final = _attr("network.transport", "`pipe` for stdio, `tcp` for HTTP.", _C, _REQ)
NETWORK_PROTOCOL_NAME: Final = _attr("network.protocol.name", "`http` on Streamable HTTP.", _C, _REQ)
SERVER_ADDRESS: Final = _attr("server.address", "The server's host, on client spans.", _C, "client spans")
SERVER_PORT: Final = _attr("server.port", "The server's port, on client spans.", _C, "client spans")
HTTP_RESPONSE_STATUS_CODE: Final = _attr(
    "http.response.status_code", "HTTP status of a request the transport refused.", _C, "transport spans"
)
OTEL_METRIC_OVERFLOW: Final = _attr(
    "otel.metric.overflow", "`true` on the one series that counts label sets past the limit.", _C, "counters"
)
USER_ID: Final = _attr("user.id", "The verified token's subject; opt-in only.", _C, "server spans")

OUTCOME: Final = _attr("mcpobs.outcome", "How the request ended: one of `Outcome`.", _M, _REQ)
FAILURE_BOUNDARY: Final = _attr(
    "mcpobs.failure.boundary", "Where a request that was not ok stopped: one of `Boundary`.", _M, _REQ
)
CANCEL_REASON: Final = _attr("mcpobs.cancel.reason", "The peer's reason for cancelling, bounded.", _M, _REQ)
MRTR_ROUND: Final = _attr(
    "mcpobs.mrtr.round", "Round of a multi-round-trip request: 1 first, 2 first retry, ...", _M, _REQ
)
MRTR_INPUT_METHODS: Final = _attr("mcpobs.mrtr.input_methods", "Methods a pending round asks the client for.", _M, _REQ)
PROGRESS_VALUE: Final = _attr("mcpobs.progress.value", "Progress so far.", _M, "progress spans")
PROGRESS_TOTAL: Final = _attr("mcpobs.progress.total", "Total, when known.", _M, "progress spans")
PROGRESS_PERCENTAGE: Final = _attr("mcpobs.progress.percentage", "value / total * 100.", _M, "progress spans")
PROGRESS_MESSAGE: Final = _attr("mcpobs.progress.message", "The report's message, bounded.", _M, "progress spans")
PROGRESS_REQUESTED: Final = _attr(
    "mcpobs.progress.requested", "Whether the client asked for progress (sent a token).", _M, "progress spans"
)
PROGRESS_DROPPED: Final = _attr(
    "mcpobs.progress.dropped", "Progress reports over the cap, not recorded as spans.", _M, "server spans"
)
SUBSCRIPTION_ID: Final = _attr("mcpobs.subscription.id", "The listen stream's id.", _M, "subscription spans")
SUBSCRIPTION_EVENT: Final = _attr(
    "mcpobs.subscription.event", "Event kind: one of `SubscriptionEvent`.", _M, "subscription spans"
)
SUBSCRIPTION_DIRECTION: Final = _attr(
    "mcpobs.subscription.direction", "`published` or `delivered`.", _M, "subscription metrics"
)
TOOL_SCHEMA_FINGERPRINT: Final = _attr(
    "mcpobs.tool.schema_fingerprint", "Hash of the tool's canonical input and output schemas.", _M, _REQ
)
TOOL_CONTRACT_FINGERPRINT: Final = _attr(
    "mcpobs.tool.contract_fingerprint",
    "Schema fingerprint plus name, title, description, annotations.",
    _M,
    _REQ,
)
TOOL_SCHEMA_STALE: Final = _attr(
    "mcpobs.tool.schema_stale", "The client called with a schema other than the one served now.", _M, _REQ
)
CATALOG_FINGERPRINT: Final = _attr("mcpobs.catalog.fingerprint", "Hash of a whole tools/list.", _M, _REQ)
CATALOG_TOOLS: Final = _attr("mcpobs.catalog.tools", "Tools in a tools/list result.", _M, _REQ)
CATALOG_TTL_MS: Final = _attr("mcpobs.catalog.ttl_ms", "The cache hint the server sent.", _M, _REQ)
CATALOG_CACHE_SCOPE: Final = _attr("mcpobs.catalog.cache_scope", "The cache scope the server sent.", _M, _REQ)
CLIENT_NAME: Final = _attr("mcpobs.client.name", "The calling client's name, bounded.", _M, "server spans")
CLIENT_VERSION: Final = _attr("mcpobs.client.version", "The calling client's version, bounded.", _M, "server spans")
SERVER_NAME: Final = _attr("mcpobs.server.name", "The serving server's name.", _M, "server spans")
SERVER_VERSION: Final = _attr("mcpobs.server.version", "The serving server's version.", _M, "server spans")
_SESSION = "server/discover and initialize spans"
SESSION_REQUESTED_VERSION: Final = _attr(
    "mcpobs.session.requested_version", "The protocol version the client asked for.", _M, _SESSION
)
SESSION_CAPABILITIES: Final = _attr("mcpobs.session.capabilities", "Capabilities the server advertised.", _M, _SESSION)
SESSION_OFFERED: Final = {
    kind: _attr(f"mcpobs.session.{kind}", f"How many {kind} the server offers (0 says so plainly).", _M, _SESSION)
    for kind in ("tools", "prompts", "resources")
}

META_SCHEMA_FINGERPRINT: Final = "dev.mcpobs/schemaFingerprint"
"""`_meta` key in which an instrumented client sends the schema fingerprint of the listing it holds."""

# --- Events --------------------------------------------------------------------------------

EVENT_PROGRESS_CAP_REACHED: Final = "mcpobs.progress.cap_reached"
"""Span event on a tool span at its first progress report over the cap."""


class SubscriptionEvent(StrEnum):
    TOOLS_LIST_CHANGED = "tools_list_changed"
    PROMPTS_LIST_CHANGED = "prompts_list_changed"
    RESOURCES_LIST_CHANGED = "resources_list_changed"
    RESOURCE_UPDATED = "resource_updated"


# --- Metrics -------------------------------------------------------------------------------

DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The conventions' bucket boundaries for MCP durations, in seconds."""

Instrument = Literal["histogram", "counter", "updowncounter"]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    instrument: Instrument
    unit: str
    brief: str
    origin: Origin
    attributes: tuple[str, ...]
    buckets: tuple[float, ...] | None = field(default=None)


METRICS: dict[str, MetricSpec] = {}


def _metric(
    name: str,
    instrument: Instrument,
    unit: str,
    brief: str,
    origin: Origin,
    attributes: tuple[str, ...],
    buckets: tuple[float, ...] | None = None,
) -> MetricSpec:
    spec = MetricSpec(name, instrument, unit, brief, origin, attributes, buckets)
    METRICS[name] = spec
    return spec


_OPERATION_ATTRS: Final = (
    MCP_METHOD_NAME,
    GEN_AI_TOOL_NAME,
    GEN_AI_PROMPT_NAME,
    ERROR_TYPE,
    RPC_RESPONSE_STATUS_CODE,
    MCP_PROTOCOL_VERSION,
    NETWORK_TRANSPORT,
    OUTCOME,
)

SERVER_OPERATION_DURATION: Final = _metric(
    "mcp.server.operation.duration",
    "histogram",
    "s",
    "Duration of completed requests on the server; cancelled and pending rounds excluded.",
    _C,
    _OPERATION_ATTRS,
    DURATION_BUCKETS,
)
CLIENT_OPERATION_DURATION: Final = _metric(
    "mcp.client.operation.duration",
    "histogram",
    "s",
    "Duration of completed requests on the client; cancelled and pending rounds excluded.",
    _C,
    _OPERATION_ATTRS,
    DURATION_BUCKETS,
)
SERVER_REQUESTS: Final = _metric(
    "mcpobs.server.requests",
    "counter",
    "{request}",
    "Every request the server received, by outcome and failure boundary.",
    _M,
    (MCP_METHOD_NAME, GEN_AI_TOOL_NAME, GEN_AI_PROMPT_NAME, OUTCOME, FAILURE_BOUNDARY, ERROR_TYPE),
)
CLIENT_REQUESTS: Final = _metric(
    "mcpobs.client.requests",
    "counter",
    "{request}",
    "Every request the client sent, by outcome.",
    _M,
    (MCP_METHOD_NAME, GEN_AI_TOOL_NAME, GEN_AI_PROMPT_NAME, OUTCOME, ERROR_TYPE),
)
PROGRESS_REPORTS: Final = _metric(
    "mcpobs.progress.reports",
    "counter",
    "{report}",
    "Progress reports made by tools, including those over the cap.",
    _M,
    (MCP_METHOD_NAME, GEN_AI_TOOL_NAME),
)
PROGRESS_CAPPED: Final = _metric(
    "mcpobs.progress.capped",
    "counter",
    "{operation}",
    "Operations whose progress reports reached the cap.",
    _M,
    (MCP_METHOD_NAME, GEN_AI_TOOL_NAME),
)
SUBSCRIPTION_STREAMS: Final = _metric(
    "mcpobs.subscription.streams",
    "updowncounter",
    "{stream}",
    "Open subscriptions/listen streams; back to zero when they close.",
    _M,
    (),
)
SUBSCRIPTION_EVENTS: Final = _metric(
    "mcpobs.subscription.events",
    "counter",
    "{event}",
    "Subscription events published on a bus and delivered on listen streams.",
    _M,
    (SUBSCRIPTION_EVENT, SUBSCRIPTION_DIRECTION),
)
STALE_CALLS: Final = _metric(
    "mcpobs.tool.stale_calls",
    "counter",
    "{call}",
    "tools/call requests made with a schema other than the one served now.",
    _M,
    (GEN_AI_TOOL_NAME,),
)


# --- Names in Prometheus -------------------------------------------------------------------

_PROMETHEUS_UNITS: Final = {"s": "seconds", "ms": "milliseconds", "By": "bytes", "1": ""}


def prometheus_name(spec: MetricSpec) -> str:
    """The metric's name once Prometheus's OTLP receiver has translated it (its default).

    Dots become underscores, a unit adds its suffix (``s`` -> ``_seconds``; an annotation
    such as ``{request}`` adds none), counters end in ``_total``. A histogram's series add
    ``_bucket``, ``_sum`` and ``_count`` to this name.
    """
    name = spec.name.replace(".", "_")
    unit = "" if spec.unit.startswith("{") else _PROMETHEUS_UNITS.get(spec.unit, spec.unit)
    if unit and not name.endswith("_" + unit):
        name += "_" + unit
    return name + "_total" if spec.instrument == "counter" else name


def prometheus_label(attribute: str) -> str:
    """The label an attribute becomes in Prometheus (``gen_ai.tool.name`` -> ``gen_ai_tool_name``)."""
    return attribute.replace(".", "_")


# --- Span names ----------------------------------------------------------------------------


def span_name(method: str, target: str | None = None) -> str:
    """``{mcp.method.name} {target}``: target only for a registered tool or prompt."""
    return f"{method} {target}" if target else method


PROGRESS_SPAN: Final = "progress"
"""A child of the running request's span, one per ``report_progress()`` call, ended at once."""


def publish_span_name(event: SubscriptionEvent) -> str:
    """``publish {event}``: an event handed to a subscription bus (messaging-style naming)."""
    return f"publish {event.value}"


def deliver_span_name(event: SubscriptionEvent) -> str:
    """``deliver {event}``: an event written to one ``subscriptions/listen`` stream."""
    return f"deliver {event.value}"


# --- Where mcpobs departs from or extends the pinned conventions ---------------------------

DEVIATIONS: Final = (
    (
        "server/discover, subscriptions/listen",
        "Methods of revision 2026-07-28 the pinned conventions do not list yet "
        "(semantic-conventions-genai #437); recorded as known methods.",
    ),
    (
        "`_OTHER` for unregistered tools, prompts and methods",
        "The conventions name spans after the target; a caller-supplied name would make "
        "cardinality unbounded, so only names the server registers are used.",
    ),
    (
        "mcpobs.* attributes and metrics",
        "Outcomes, boundaries, lifecycle states, progress, subscriptions and contract "
        "fingerprints have no convention yet; they live in mcpobs's own namespace.",
    ),
    (
        "client_error is not an error",
        "Follows semantic-conventions-genai #404 on the server: the caller's mistakes set "
        "rpc.response.status_code but neither error.type nor an ERROR status.",
    ),
    (
        "mcp.server.operation.duration excludes cancelled and pending rounds",
        "A cancelled call or an interim multi-round-trip round is not a completed request; "
        "counting it would skew latency percentiles.",
    ),
)
