"""The registry: every name mcpobs emits, and the convention version it is pinned to.

Code, docs and dashboards read names from here; nothing else spells an attribute, metric,
unit or outcome. When the MCP semantic conventions move (they are at Development status and
have changed repository once), this is the one file to change, and
``docs/reference.md`` and ``dashboards/`` are regenerated from it.

Each name is registered with a short description and its origin: ``convention`` (defined by
the pinned OpenTelemetry conventions), ``sdk`` (set by the OpenTelemetry SDK itself) or
``mcpobs`` (our extension, in the ``mcpobs.`` namespace so it can never collide with a future
convention name).

Every convention name the ``opentelemetry-semantic-conventions`` package defines is imported
from it, never spelled here: a constant the package renames or drops breaks the import (and
the build), not a dashboard. ``REQUIREMENTS`` lists the pinned conventions' requirement levels
item by item, what mcpobs emits for each and, where it departs, why; ``docs/conventions.md``
is generated from it and a test checks every row against real telemetry.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final, Literal

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as _gen_ai
from opentelemetry.semconv._incubating.attributes import jsonrpc_attributes as _jsonrpc
from opentelemetry.semconv._incubating.attributes import mcp_attributes as _mcp
from opentelemetry.semconv._incubating.attributes import messaging_attributes as _messaging
from opentelemetry.semconv._incubating.attributes import rpc_attributes as _rpc
from opentelemetry.semconv._incubating.attributes import user_attributes as _user
from opentelemetry.semconv._incubating.metrics import mcp_metrics as _mcp_metrics
from opentelemetry.semconv.attributes import client_attributes as _client
from opentelemetry.semconv.attributes import error_attributes as _error
from opentelemetry.semconv.attributes import http_attributes as _http
from opentelemetry.semconv.attributes import network_attributes as _network
from opentelemetry.semconv.attributes import server_attributes as _server
from opentelemetry.semconv.attributes import service_attributes as _service

__all__ = [
    "ATTRIBUTES",
    "ATTRIBUTE_GROUPS",
    "AT_SPAN_END",
    "CALLER_MISTAKE_CODES",
    "CANCEL_REASON",
    "CATALOG_BYTES",
    "CATALOG_CACHE_SCOPE",
    "CATALOG_FINGERPRINT",
    "CATALOG_LARGEST_BYTES",
    "CATALOG_LARGEST_TOOL",
    "CATALOG_RELEASE",
    "CATALOG_SIZE",
    "CATALOG_SIZE_TOKENS",
    "CATALOG_TOKENS",
    "CATALOG_TOKEN_METHOD",
    "CATALOG_TOOLS",
    "CATALOG_TTL_MS",
    "CLIENT_ADDRESS",
    "CLIENT_NAME",
    "CLIENT_NOTIFICATIONS",
    "CLIENT_OPERATION_DURATION",
    "CLIENT_PORT",
    "CLIENT_REQUESTS",
    "CLIENT_SESSION_DURATION",
    "CLIENT_SPAN",
    "CLIENT_TASK_POLLS",
    "CLIENT_VERSION",
    "CONTRACT",
    "CONVENTION_DOC_COMMIT",
    "CONVENTION_NAME",
    "CONVENTION_SOURCE",
    "CONVENTION_STATUS",
    "CONVENTION_VERSION",
    "DEFAULT_MAX_ATTRIBUTE_LENGTH",
    "DEFAULT_MAX_CONTENT_LENGTH",
    "DEFAULT_MAX_PROGRESS_SPANS",
    "DEVIATIONS",
    "DURATION_BUCKETS",
    "ERROR_OUTCOMES",
    "ERROR_TYPE",
    "EVENT_EXCEPTION",
    "EVENT_PROGRESS_CAP_REACHED",
    "EXECUTE_TOOL",
    "FAILURE_BOUNDARY",
    "GENERAL_DEVIATIONS",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROMPT_NAME",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_NAME",
    "HANDSHAKE_METHODS",
    "HEADER_MISMATCH",
    "HEADER_STOPPED",
    "HOP_CREATE",
    "HOP_PROCESS",
    "HOST_STOPPED",
    "HTTP_RESPONSE_STATUS_CODE",
    "INSTRUMENT",
    "INSTRUMENTATION_NAME",
    "JSONRPC_REQUEST_ID",
    "KNOWN_ERROR_CODES",
    "LATENCY_OUTCOMES",
    "MAX_CLIENT_TASKS",
    "MAX_COUNTER_SERIES",
    "MAX_LEARNED_NAMES",
    "MAX_MODEL_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_NOTED_PUBLISHES",
    "MAX_REASON_LENGTH",
    "MAX_RELEASES",
    "MAX_RELEASE_LENGTH",
    "MAX_SERVER_PEERS",
    "MAX_SHAPES",
    "MAX_SHAPES_PER_TOOL",
    "MAX_STATUS_DESCRIPTION",
    "MAX_TARGET_LENGTH",
    "MCP_METHOD_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_RESOURCE_URI",
    "MCP_SESSION_ID",
    "MESSAGING_DESTINATION_NAME",
    "MESSAGING_OPERATION_NAME",
    "MESSAGING_OPERATION_TYPE",
    "MESSAGING_SYSTEM",
    "META_MODEL",
    "META_SCHEMA_FINGERPRINT",
    "META_SERVER_INFO",
    "META_VERDICT",
    "META_VERDICT_WANTED",
    "METRICS",
    "MISSING_CLIENT_CAPABILITY",
    "MRTR_INPUT_METHODS",
    "MRTR_ROUND",
    "NETWORK_PROTOCOL_NAME",
    "NETWORK_PROTOCOL_VERSION",
    "NETWORK_TRANSPORT",
    "OMIT_ATTRIBUTES_ENV",
    "OTEL_METRIC_OVERFLOW",
    "OTHER",
    "OUTCOME",
    "OUTCOME_SOURCE",
    "OUTPUT_VALIDATION",
    "PEER",
    "PROGRESS_CAPPED",
    "PROGRESS_DROPPED",
    "PROGRESS_MESSAGE",
    "PROGRESS_PERCENTAGE",
    "PROGRESS_REPORTS",
    "PROGRESS_REQUESTED",
    "PROGRESS_SPAN",
    "PROGRESS_TOTAL",
    "PROGRESS_VALUE",
    "PROPAGATION",
    "REPLY_UNDELIVERED",
    "REQUIREMENTS",
    "RPC_RESPONSE_STATUS_CODE",
    "SCHEMA_URL",
    "SCHEMA_VERSION",
    "SERVER_ADDRESS",
    "SERVER_NAME",
    "SERVER_NOTIFICATIONS",
    "SERVER_OPERATION_DURATION",
    "SERVER_PORT",
    "SERVER_REQUESTS",
    "SERVER_SESSION_DURATION",
    "SERVER_SPAN",
    "SERVER_STOPPED",
    "SERVER_VERSION",
    "SERVICE_VERSION",
    "SESSION_CAPABILITIES",
    "SESSION_FALLBACK",
    "SESSION_ID_HASH_LENGTH",
    "SESSION_NEGOTIATED_VERSION",
    "SESSION_OFFERED",
    "SESSION_REQUESTED_VERSION",
    "SHAPE_REPORT_INTERVAL",
    "SPAN_KIND",
    "SPAN_NAME",
    "SPAN_STATUS",
    "STALE_CALLS",
    "STREAM_METHODS",
    "SUBSCRIPTION_DIRECTION",
    "SUBSCRIPTION_EVENT",
    "SUBSCRIPTION_EVENTS",
    "SUBSCRIPTION_ID",
    "SUBSCRIPTION_STREAMS",
    "TASKS_IN_FLIGHT",
    "TASK_CANCELLED_BY",
    "TASK_DURATION",
    "TASK_DURATION_BUCKETS",
    "TASK_ERROR_OUTCOMES",
    "TASK_ID_HASH",
    "TASK_ID_HASH_LENGTH",
    "TASK_LEG",
    "TASK_LEG_DURATION",
    "TASK_OUTCOME",
    "TASK_QUEUE_WAIT",
    "TASK_STATUS",
    "TIMEOUT",
    "TOOL_ARGUMENTS_SHAPE_COUNT",
    "TOOL_ARGUMENTS_SHAPE_DEFINITION",
    "TOOL_ARGUMENTS_SHAPE_ID",
    "TOOL_CONTRACT_FINGERPRINT",
    "TOOL_ERROR",
    "TOOL_RESULT_SHAPE_COUNT",
    "TOOL_RESULT_SHAPE_DEFINITION",
    "TOOL_RESULT_SHAPE_ID",
    "TOOL_SCHEMA_DEFINITION",
    "TOOL_SCHEMA_FINGERPRINT",
    "TOOL_SCHEMA_STALE",
    "TOOL_SHAPES_EVICTED",
    "TOOL_SHAPE_RECORDER",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "USER_ID",
    "VERDICT_VERSION",
    "AttributeGroup",
    "AttributeSpec",
    "Boundary",
    "Instrument",
    "Level",
    "MessagingSystem",
    "MetricSpec",
    "Origin",
    "Outcome",
    "OutcomeSource",
    "Requirement",
    "SubscriptionDirection",
    "SubscriptionEvent",
    "TaskCanceller",
    "TaskOutcome",
    "TaskStatus",
    "bounded_target",
    "deliver_span_name",
    "prometheus_label",
    "prometheus_name",
    "publish_span_name",
    "span_name",
    "task_hop_span_name",
]

# --- The pin -------------------------------------------------------------------------------

CONVENTION_NAME: Final = "OpenTelemetry semantic conventions for MCP"
CONVENTION_VERSION: Final = "semantic-conventions-genai v0.1.0"
CONVENTION_SOURCE: Final = "https://github.com/open-telemetry/semantic-conventions-genai/blob/v0.1.0/docs/gen-ai/mcp.md"
CONVENTION_STATUS: Final = "development"
CONVENTION_DOC_COMMIT: Final = "0393513c908bf895e7b3ec480a2c1eb073c584af"
"""The commit of ``docs/gen-ai/mcp.md`` the requirement levels in ``REQUIREMENTS`` were read from."""
# The GenAI repository publishes no schema URL yet; v0.1.0 is built on core conventions
# v1.45.0, which the package does not publish either. The tracer and meter carry the newest
# schema the package does publish (from 0.66b0): a name that exists, that tools can resolve.
# With 0.65b0 installed (beside the SDK 1.44; its constants stop at 1.43.0) the URL is the same:
# the names mcpobs imports are the same in both, and schema 1.44.0 renames none of them.
SCHEMA_VERSION: Final = "1.44.0"
"""The core conventions' schema the tracer and meter name."""
SCHEMA_URL: Final = f"https://opentelemetry.io/schemas/{SCHEMA_VERSION}"
"""Its URL, as the package spells its own (`tests/test_conformance.py`). The tracer and meter take it
from the installed package where it has it (`_core/otel_releases.SCHEMA_URL`): the same URL."""

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
    STOPPED = "stopped"
    """The server stopped while the request ran (SIGTERM, a grace period ending, the connection
    closed under it): a server-side failure, never the caller giving up (`_core/stop.py`)."""


class Boundary(StrEnum):
    """Where a request that did not succeed stopped (``mcpobs.failure.boundary``).

    The seven places of "Failure boundaries before your handler": six before the handler,
    and the handler itself; and `access`, where the caller was refused (HTTP 401 or 403, an
    insufficient scope, a tool this caller may not call), wherever that check ran. Access
    refused is the caller's (`client_error`): never a server bug, never an outage.
    """

    TRANSPORT = "transport"
    ACCESS = "access"
    VERSION = "version"
    HANDSHAKE = "handshake"
    CAPABILITY = "capability"
    DISCOVERY = "discovery"
    ARGUMENTS = "arguments"
    HANDLER = "handler"


class OutcomeSource(StrEnum):
    """Who decided a failed client call's outcome and boundary (``mcpobs.outcome.source``).

    Absent when the reply itself said (a JSON-RPC error code, an HTTP status, an exception).
    At 2026-07-28 an unknown tool, bad arguments and a crash all come back as an `isError`
    result: then the server's own classification (`META_VERDICT`) decides, else what the
    client listed (a name it never listed, arguments its listed schema refuses).
    """

    SERVER = "server"
    LISTING = "listing"


class TaskOutcome(StrEnum):
    """What happened to a task (``mcpobs.task.outcome``): recorded once, where it ends.

    The creating `tools/call` is a submission and keeps its own `mcpobs.outcome` (`ok` when the
    task was created); this is the work's. A tool that raised is `tool_error` on every line
    (FastMCP 4 reports it as `completed` with `isError`, FastMCP 3 and the 1.x SDK as `failed`);
    `failed` is a task that failed outside the tool (its worker, its store); `expired` one whose
    time to live ended before it did.
    """

    OK = "ok"
    TOOL_ERROR = "tool_error"
    FAILED = "failed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


class TaskStatus(StrEnum):
    """A task's status as the wire says it (SEP-1686 and SEP-2663 share these values)."""

    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TaskCanceller(StrEnum):
    """Who cancelled a task (``mcpobs.task.cancelled_by``)."""

    CLIENT = "client"
    SERVER = "server"


class MessagingSystem(StrEnum):
    """The queue between a task's submission and its work (``messaging.system`` on hop spans and task metrics)."""

    PYDOCKET = "pydocket"
    """FastMCP's tasks (both lines): pydocket on Redis, Valkey or its in-memory backend."""
    MCP = "mcp"
    """The 1.x SDK's experimental tasks: work started in the submitting process."""


HOP_CREATE: Final = "create"
"""``messaging.operation.type`` (and name) where a task is enqueued: the PRODUCER span."""
HOP_PROCESS: Final = "process"
"""``messaging.operation.type`` (and name) of one execution leg: the CONSUMER span."""


TASK_ERROR_OUTCOMES: Final = frozenset({TaskOutcome.TOOL_ERROR, TaskOutcome.FAILED})
"""Task outcomes that are errors (ERROR status, `error.type`)."""


LATENCY_OUTCOMES: Final = frozenset({Outcome.OK, Outcome.TOOL_ERROR, Outcome.SERVER_ERROR, Outcome.CLIENT_ERROR})
"""Only completed requests are latency samples: a cancelled call or an interim round is not."""

STREAM_METHODS: Final = frozenset({"subscriptions/listen"})
"""Long-lived by design: their spans are never latency samples, whatever their outcome."""

ERROR_OUTCOMES: Final = frozenset({Outcome.TOOL_ERROR, Outcome.SERVER_ERROR, Outcome.STOPPED})
"""What counts against a server's error ratio; the caller's mistakes do not."""

CALLER_MISTAKE_CODES: Final = frozenset({-32700, -32600, -32601, -32602, -32002})
"""JSON-RPC codes that are the caller's mistake, not a server error (semantic-conventions-genai #404)."""

# Spec codes of revision 2026-07-28 that are also the caller's mistake.
HEADER_MISMATCH: Final = -32020
MISSING_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

KNOWN_ERROR_CODES: Final = frozenset(
    {-32700, -32600, -32601, -32602, -32603}  # JSON-RPC 2.0
    | {-32002, -32020, -32021, -32022, -32042}  # the MCP specification's, retired ones included
    | {-32000, -32001, -32800}  # the MCP SDKs' own (connection closed, timeout, request cancelled)
    | {0}  # the Python SDK's answer to a handler's exception at a handshake revision (JSONRPCDispatcher)
)
"""JSON-RPC error codes that appear as themselves in `error.type` and `rpc.response.status_code`
labels. Any other code a peer returns is `OTHER` there (a peer must not add series); the span
keeps the code itself in `rpc.response.status_code`."""

TOOL_ERROR: Final = "tool_error"
"""``error.type`` for a tools/call whose result has ``isError: true`` (convention value)."""
OUTPUT_VALIDATION: Final = "output_validation"
"""``error.type`` on a client span when the SDK rejects a result against its cached output schema."""
TIMEOUT: Final = "timeout"
"""``error.type`` on a client span when the call timed out."""
SERVER_STOPPED: Final = "server_stopped"
"""``error.type`` of a `stopped` request, on both sides: the server stopped while it ran."""
HOST_STOPPED: Final = "host_stopped"
"""``error.type`` of a `stopped` request on the client: its own process (the host) stopped while it
ran (SIGTERM, its web server's grace over), so its answer was never taken (mcpobs's own)."""
REPLY_UNDELIVERED: Final = "reply_undelivered"
"""``error.type`` of a server request whose handler finished but whose answer was never written to
its client: the connection closed first (`cancelled`: the caller went away), or the server stopped
first (`stopped`). Never `ok`: the work was done and nobody was told (mcpobs's own)."""

# The package marks the enum deprecated (gen_ai.operation.name moves namespace); the MCP
# conventions pinned here still use it, and the value is the same.
EXECUTE_TOOL: Final = _gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value  # pyright: ignore[reportDeprecated]
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
MAX_TARGET_LENGTH: Final = 128
"""Characters of a tool or prompt name in a span name or a metric label (`gen_ai.tool.name`,
`gen_ai.prompt.name`), the server's own registered names included: a catalog generated from an
OpenAPI spec can register a 20,000-character name. A longer name is cut to its first 119
characters, `…` and 8 hex characters of its SHA-256 (`bounded_target`): the cut shows, and two
long names stay apart."""
MAX_NOTED_PUBLISHES: Final = 1024
"""Publish contexts kept per listen stream to link its deliveries (the SDK's per-stream backlog)."""
MAX_STATUS_DESCRIPTION: Final = 256
"""Characters of a span status description (the error's message, with `record_error_messages`)."""
SESSION_ID_HASH_LENGTH: Final = 32
"""Hex characters of ``mcp.session.id`` when it is recorded as a keyed hash."""
TASK_ID_HASH_LENGTH: Final = 32
"""Hex characters of ``mcpobs.task.id_hash``: a task id is a bearer credential, never recorded raw."""
MAX_CLIENT_TASKS: Final = 4096
"""Tasks a client process remembers (their submissions' span contexts, by id hash) to send later
requests for them in their trace; past it the oldest is forgotten, and its requests open traces of
their own."""
MAX_COUNTER_SERIES: Final = 2000
MAX_RELEASES: Final = 16
"""Distinct values per release label (`mcpobs.server.version`, `.client.version`, `.catalog.release`) per
process; later ones are `_OTHER` there (a rollout has two or three releases live, not sixteen)."""
MAX_SERVER_PEERS: Final = 32
"""Distinct (`server.address`, `server.port`) pairs a process's clients put on metrics; a later server is
`server.address=_OTHER` there, without a port (a gateway reaching its users' servers adds no series). Spans
keep every address."""
MAX_RELEASE_LENGTH: Final = 64
"""Characters of a release in a label; a longer one is `_OTHER`."""
MAX_MODEL_LENGTH: Final = 128
"""Characters of a model name, version or provider on a span."""
"""Label sets per counter; later ones are counted under ``otel.metric.overflow=true`` (the SDK's own limit and rule)."""


# --- Attributes ----------------------------------------------------------------------------

Origin = Literal["convention", "sdk", "mcpobs"]


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
_REQ_METRICS = "server and client spans, operation metrics"
_NET = "spans and duration metrics"

MCP_METHOD_NAME: Final = _attr(_mcp.MCP_METHOD_NAME, "The JSON-RPC method; `_OTHER` when unknown.", _C, _REQ_METRICS)
MCP_PROTOCOL_VERSION: Final = _attr(_mcp.MCP_PROTOCOL_VERSION, "The MCP revision of the request.", _C, _NET)
MCP_RESOURCE_URI: Final = _attr(
    _mcp.MCP_RESOURCE_URI,
    "A resource URI, its userinfo, query values and fragment `REDACTED` unless raw_resource_uris; never in a "
    "name or a label.",
    _C,
    _REQ,
)
MCP_SESSION_ID: Final = _attr(
    _mcp.MCP_SESSION_ID,
    "The transport's session id (legacy Streamable HTTP), or its keyed hash; never a label.",
    _C,
    _REQ,
)
JSONRPC_REQUEST_ID: Final = _attr(_jsonrpc.JSONRPC_REQUEST_ID, "The JSON-RPC request id.", _C, _REQ)
GEN_AI_OPERATION_NAME: Final = _attr(
    _gen_ai.GEN_AI_OPERATION_NAME, "`execute_tool` for tools/call, absent otherwise.", _C, _REQ_METRICS
)
GEN_AI_TOOL_NAME: Final = _attr(_gen_ai.GEN_AI_TOOL_NAME, "The tool; `_OTHER` when not registered.", _C, _REQ_METRICS)
GEN_AI_PROMPT_NAME: Final = _attr(
    _gen_ai.GEN_AI_PROMPT_NAME, "The prompt; `_OTHER` when not registered.", _C, _REQ_METRICS
)
GEN_AI_TOOL_CALL_ARGUMENTS: Final = _attr(
    _gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS, "Tool arguments as JSON; opt-in only, redacted, truncated.", _C, _REQ
)
GEN_AI_TOOL_CALL_RESULT: Final = _attr(
    _gen_ai.GEN_AI_TOOL_CALL_RESULT, "Tool result as JSON; opt-in only, redacted, truncated.", _C, _REQ
)
ERROR_TYPE: Final = _attr(_error.ERROR_TYPE, "Set only when the request failed as an error.", _C, _REQ_METRICS)
RPC_RESPONSE_STATUS_CODE: Final = _attr(_rpc.RPC_RESPONSE_STATUS_CODE, "The JSON-RPC error code.", _C, _REQ_METRICS)
NETWORK_TRANSPORT: Final = _attr(_network.NETWORK_TRANSPORT, "`pipe` for stdio, `tcp` for HTTP.", _C, _NET)
NETWORK_PROTOCOL_NAME: Final = _attr(_network.NETWORK_PROTOCOL_NAME, "`http` on Streamable HTTP.", _C, _NET)
NETWORK_PROTOCOL_VERSION: Final = _attr(
    _network.NETWORK_PROTOCOL_VERSION, "The HTTP version (`1.1`, `2`) on Streamable HTTP, where known.", _C, _NET
)
SERVER_ADDRESS: Final = _attr(
    _server.SERVER_ADDRESS, "The server's host, on the client side.", _C, "client spans and metrics"
)
SERVER_PORT: Final = _attr(
    _server.SERVER_PORT, "The server's port, on the client side.", _C, "client spans and metrics"
)
CLIENT_ADDRESS: Final = _attr(_client.CLIENT_ADDRESS, "The calling peer's address, over HTTP.", _C, "server spans")
CLIENT_PORT: Final = _attr(_client.CLIENT_PORT, "The calling peer's port, over HTTP.", _C, "server spans")
HTTP_RESPONSE_STATUS_CODE: Final = _attr(
    _http.HTTP_RESPONSE_STATUS_CODE,
    "HTTP status (an int) of a request the transport refused, or a client request answered with >= 400.",
    _C,
    "transport spans, client spans",
)
USER_ID: Final = _attr(_user.USER_ID, "The verified token's subject; opt-in only.", _C, "server spans")
OTEL_METRIC_OVERFLOW: Final = _attr(
    "otel.metric.overflow",
    "`true` on the one series that counts label sets past the limit (the metrics SDK's own attribute).",
    "sdk",
    "counters",
)

OUTCOME: Final = _attr("mcpobs.outcome", "How the request ended: one of `Outcome`.", _M, _REQ)
FAILURE_BOUNDARY: Final = _attr(
    "mcpobs.failure.boundary", "Where a request that was not ok stopped: one of `Boundary`.", _M, _REQ
)
OUTCOME_SOURCE: Final = _attr(
    "mcpobs.outcome.source",
    "Who decided a client span's outcome and boundary when the reply alone could not: one of `OutcomeSource`.",
    _M,
    "client tools/call and prompts/get spans that failed",
)
CANCEL_REASON: Final = _attr(
    "mcpobs.cancel.reason", "The peer's reason for cancelling, bounded; only with record_error_messages.", _M, _REQ
)
MRTR_ROUND: Final = _attr(
    "mcpobs.mrtr.round", "Round of a multi-round-trip request: 1 first, 2 first retry, ...", _M, _REQ
)
MRTR_INPUT_METHODS: Final = _attr("mcpobs.mrtr.input_methods", "Methods a pending round asks the client for.", _M, _REQ)
PROGRESS_VALUE: Final = _attr("mcpobs.progress.value", "Progress so far.", _M, "progress spans")
PROGRESS_TOTAL: Final = _attr("mcpobs.progress.total", "Total, when known.", _M, "progress spans")
PROGRESS_PERCENTAGE: Final = _attr("mcpobs.progress.percentage", "value / total * 100.", _M, "progress spans")
PROGRESS_MESSAGE: Final = _attr(
    "mcpobs.progress.message",
    "The report's message: content a tool wrote, through `redact`, bounded; only with record_progress_messages=True.",
    _M,
    "progress spans",
)
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
    "mcpobs.tool.schema_stale",
    "`true` when the client called with a schema other than the one served now; absent otherwise.",
    _M,
    "server tools/call spans, only when true",
)
_TASK = "task spans: the creating tools/call, tasks/* requests, the hop's create and process spans"
TASK_ID_HASH: Final = _attr(
    "mcpobs.task.id_hash",
    "HMAC-SHA256 of the task id with `session_id_key`, else its SHA-256 (the ids are random, 122 to 256 "
    "bits); the raw id never. Never a label.",
    _M,
    _TASK,
)
TASK_STATUS: Final = _attr("mcpobs.task.status", "The task's status on the wire: one of `TaskStatus`.", _M, _TASK)
TASK_OUTCOME: Final = _attr(
    "mcpobs.task.outcome",
    "What happened to the task: one of `TaskOutcome`, on the span where it ended (and the poll that saw it).",
    _M,
    _TASK + "; task metrics",
)
TASK_CANCELLED_BY: Final = _attr(
    "mcpobs.task.cancelled_by", "Who cancelled the task: one of `TaskCanceller`.", _M, _TASK
)
TASK_LEG: Final = _attr(
    "mcpobs.task.leg", "Execution leg: 1 first, 2 after the first input round, ...", _M, "process spans"
)
MESSAGING_SYSTEM: Final = _attr(
    _messaging.MESSAGING_SYSTEM,
    "The queue between submission and work: `pydocket`, or `mcp` for the 1.x SDK's in-process tasks.",
    _C,
    "create and process spans; task metrics",
)
MESSAGING_OPERATION_TYPE: Final = _attr(
    _messaging.MESSAGING_OPERATION_TYPE, "`create` where a task is enqueued, `process` per leg.", _C, "hop spans"
)
MESSAGING_OPERATION_NAME: Final = _attr(_messaging.MESSAGING_OPERATION_NAME, "`create` or `process`.", _C, "hop spans")
MESSAGING_DESTINATION_NAME: Final = _attr(
    _messaging.MESSAGING_DESTINATION_NAME,
    "The task's tool (registered, bounded as `gen_ai.tool.name`).",
    _C,
    "hop spans",
)
_SHAPES = "server tools/call spans"
TOOL_ARGUMENTS_SHAPE_ID: Final = _attr(
    "mcpobs.tool.arguments_shape.id",
    "Hash of the canonical, value-free shape of the call's arguments (docs/contract.md, the corpus).",
    _M,
    _SHAPES,
)
TOOL_ARGUMENTS_SHAPE_DEFINITION: Final = _attr(
    "mcpobs.tool.arguments_shape.definition",
    "The arguments' canonical shape as JSON: keys, JSON types, enum members; never a free value.",
    _M,
    "server tools/call spans, the first time a shape is seen and when its count is reported",
)
TOOL_ARGUMENTS_SHAPE_COUNT: Final = _attr(
    "mcpobs.tool.arguments_shape.count",
    "Calls of this arguments shape (tool, schema, client) this process has served, with the definition.",
    _M,
    "server tools/call spans carrying a definition",
)
TOOL_RESULT_SHAPE_ID: Final = _attr(
    "mcpobs.tool.result_shape.id", "Hash of the canonical shape of the structured result.", _M, _SHAPES
)
TOOL_RESULT_SHAPE_DEFINITION: Final = _attr(
    "mcpobs.tool.result_shape.definition",
    "The structured result's canonical shape as JSON; never a free value.",
    _M,
    "server tools/call spans, the first time a shape is seen and when its count is reported",
)
TOOL_RESULT_SHAPE_COUNT: Final = _attr(
    "mcpobs.tool.result_shape.count",
    "Calls with this result shape this process has served, with the definition.",
    _M,
    "server tools/call spans carrying a definition",
)
TOOL_SHAPE_RECORDER: Final = _attr(
    "mcpobs.tool.shape_recorder",
    "A random id per server per process: present exactly when a shape definition is (tail sampling keeps it).",
    _M,
    "server tools/call spans carrying a definition",
)
TOOL_SHAPES_EVICTED: Final = _attr(
    "mcpobs.tool.shapes_evicted",
    "Shapes this process dropped to stay within its bounds, so far (absent while none).",
    _M,
    "server tools/call spans carrying a definition",
)
TOOL_SCHEMA_DEFINITION: Final = _attr(
    "mcpobs.tool.schema_definition",
    "The tool's input and output schemas as the canonical JSON the schema fingerprint hashes.",
    _M,
    "server tools/call spans carrying a definition, once per schema per process and interval",
)
MAX_SHAPES: Final = 2048
"""Distinct recorded shapes per server per process (tool, schema, client, direction, shape); the oldest is evicted."""
MAX_SHAPES_PER_TOOL: Final = 128
"""Distinct recorded shapes per tool per server per process; the tool's oldest is evicted."""
SHAPE_REPORT_INTERVAL: Final = 300.0
"""Seconds after which a shape's running count rides on a span again, whatever the count."""
CATALOG_FINGERPRINT: Final = _attr("mcpobs.catalog.fingerprint", "Hash of a whole tools/list.", _M, _REQ)
CATALOG_TOOLS: Final = _attr(
    "mcpobs.catalog.tools", "Tools in a tools/list result (a paginated listing: its pages so far).", _M, _REQ
)
_COST = "server and client tools/list spans"
CATALOG_BYTES: Final = _attr(
    "mcpobs.catalog.bytes",
    "The catalog's size as a model receives it, exact: the sum over its tools of the UTF-8 bytes of the "
    'compact JSON (separators "," and ":") of each tool\'s name, description and inputSchema as listed, in '
    "that order. A paginated listing: its pages so far (the last page's is the whole catalog).",
    _M,
    _COST,
)
CATALOG_TOKENS: Final = _attr(
    "mcpobs.catalog.tokens",
    "The same text in tokens, by `mcpobs.catalog.token_method`: by default an estimate, each tool's bytes "
    "(`mcpobs.catalog.bytes`) / 4 rounded up, summed (measured 10% above cl100k_base and 8% above o200k_base "
    "on the MCP reference servers' catalogs, docs/contract.md); an exact count with the `tokens` extra and "
    "OTEL_PYTHON_MCP_CATALOG_ENCODING=cl100k_base.",
    _M,
    _COST,
)
CATALOG_TOKEN_METHOD: Final = _attr(
    "mcpobs.catalog.token_method",
    "How `mcpobs.catalog.tokens` was counted: `estimate` (bytes / 4) or the encoding's name (`cl100k_base`).",
    _M,
    _COST + "; the catalog size metrics",
)
CATALOG_LARGEST_TOOL: Final = _attr(
    "mcpobs.catalog.largest_tool",
    "The listed name of the tool with the most bytes (the first such), cut to 128 characters.",
    _M,
    _COST,
)
CATALOG_LARGEST_BYTES: Final = _attr(
    "mcpobs.catalog.largest_tool_bytes", "That tool's bytes, as counted for `mcpobs.catalog.bytes`.", _M, _COST
)
CATALOG_TTL_MS: Final = _attr("mcpobs.catalog.ttl_ms", "The cache hint the server sent.", _M, _REQ)
CATALOG_CACHE_SCOPE: Final = _attr("mcpobs.catalog.cache_scope", "The cache scope the server sent.", _M, _REQ)
CLIENT_NAME: Final = _attr("mcpobs.client.name", "The calling client's name, bounded.", _M, "server spans")
CLIENT_VERSION: Final = _attr(
    "mcpobs.client.version",
    "The calling client's version (on the client: its own); a release label, bounded by `MAX_RELEASES`.",
    _M,
    "server spans; client request metrics, stale calls",
)
SERVER_NAME: Final = _attr("mcpobs.server.name", "The serving server's name.", _M, "server spans")
SERVER_VERSION: Final = _attr(
    "mcpobs.server.version",
    "The serving server's release (on the client: the release that answered); bounded by `MAX_RELEASES`.",
    _M,
    "server and client spans, request and duration metrics, stale calls",
)
SERVICE_VERSION: Final = _attr(
    _service.SERVICE_VERSION,
    "The first server's release, when mcpobs configured the providers and the application set none.",
    _C,
    "the resource",
)
CATALOG_RELEASE: Final = _attr(
    "mcpobs.catalog.release",
    "The server release the client's tool listing came from (a cached listing keeps its release).",
    _M,
    "client tools/call spans and request metrics",
)
_MODEL = "client spans; server spans when the client sends it"
GEN_AI_REQUEST_MODEL: Final = _attr(
    _gen_ai.GEN_AI_REQUEST_MODEL, "The model driving the client, as the host names it (`mcpobs.model`).", _C, _MODEL
)
GEN_AI_RESPONSE_MODEL: Final = _attr(
    _gen_ai.GEN_AI_RESPONSE_MODEL, "The exact model version the host reports (`mcpobs.model(version=...)`).", _C, _MODEL
)
GEN_AI_PROVIDER_NAME: Final = _attr(
    _gen_ai.GEN_AI_PROVIDER_NAME, "The model's provider, when the host names it.", _C, _MODEL
)
_SESSION = "server/discover and initialize spans"
SESSION_REQUESTED_VERSION: Final = _attr(
    "mcpobs.session.requested_version", "The protocol version the client asked for.", _M, _SESSION
)
SESSION_CAPABILITIES: Final = _attr("mcpobs.session.capabilities", "Capabilities the server advertised.", _M, _SESSION)
_NEGOTIATION = "client server/discover and initialize spans"
SESSION_NEGOTIATED_VERSION: Final = _attr(
    "mcpobs.session.negotiated_version", "The protocol revision the connection settled on.", _M, _NEGOTIATION
)
SESSION_FALLBACK: Final = _attr(
    "mcpobs.session.fallback",
    "`true` when the client fell back to `initialize`: the server refused the `server/discover` probe, "
    "answered it with no revision the client speaks, or never answered it (the probe then ends a timeout).",
    _M,
    _NEGOTIATION,
)
SESSION_OFFERED: Final = {
    kind: _attr(f"mcpobs.session.{kind}", f"How many {kind} the server offers (0 says so plainly).", _M, _SESSION)
    for kind in ("tools", "prompts", "resources")
}


# --- Optional attribute groups -------------------------------------------------------------


@dataclass(frozen=True)
class AttributeGroup:
    """Attributes of request spans a user may leave out together (`instrument(omit_attributes=...)`)."""

    name: str
    attributes: tuple[str, ...]
    why: str
    """Why they are on every request span by default, and where the facts remain once omitted."""


PEER: Final = "peer"
CONTRACT: Final = "contract"
HANDSHAKE_METHODS: Final = frozenset({"initialize", "server/discover"})
"""The spans that keep the `peer` group when it is omitted from request spans: where a session's facts are stated."""

AT_SPAN_END: Final = frozenset(
    {MCP_PROTOCOL_VERSION, NETWORK_TRANSPORT, NETWORK_PROTOCOL_NAME, NETWORK_PROTOCOL_VERSION, SERVER_VERSION}
)
"""Labels a request span takes in its end batch, not at its start. A sampler is given what the
conventions ask for at start (the method, the target, the ids); each attribute a span starts
with costs the SDK a validation pass, the end batch's direct write does not (issue 42)."""

OMIT_ATTRIBUTES_ENV: Final = "OTEL_PYTHON_MCP_OMIT_ATTRIBUTES"
"""Comma-separated names of `ATTRIBUTE_GROUPS` to leave off request spans (`instrument(omit_attributes=...)`)."""

ATTRIBUTE_GROUPS: Final = {
    group.name: group
    for group in (
        AttributeGroup(
            PEER,
            (SERVER_NAME, SERVER_VERSION, CLIENT_NAME, CLIENT_VERSION, CATALOG_RELEASE),
            "Who served and who called, on the call itself: a trace read alone (or a tail sampler's decision) "
            "names the releases without a join. Omitted, the server/discover and initialize spans keep them "
            "(join on `mcp.session.id`, or the process's resource), and the metrics keep the releases as labels; "
            "`record_shapes` needs them (the corpus is split by client).",
        ),
        AttributeGroup(
            CONTRACT,
            (TOOL_SCHEMA_FINGERPRINT, TOOL_CONTRACT_FINGERPRINT),
            "Which schema and contract the call was made against (client: the listing it held; server: the tool "
            "it served), so a call can be tied to a release's contract without the listing. Omitted, "
            "`mcpobs.tool.schema_stale=true` and `mcpobs.tool.stale_calls` still say when they differ; "
            "`record_shapes` needs them (the corpus is keyed on the schema fingerprint).",
        ),
    )
}
"""Optional attribute groups of request spans, by the name `omit_attributes` takes (docs/configuration.md)."""

META_SCHEMA_FINGERPRINT: Final = "dev.mcpobs/schemaFingerprint"
"""`_meta` key in which an instrumented client sends the schema fingerprint of the listing it holds."""
META_MODEL: Final = "dev.mcpobs/model"
"""`_meta` key carrying the model behind a call to the server, with `mcpobs.model(..., send=True)`."""
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
"""`_meta` key in which a 2026-07-28 server stamps its name and version on every result (the spec's)."""
META_VERDICT: Final = "dev.mcpobs/verdict"
"""`_meta` key in which a server running mcpobs tells the client how it classified a failed tool call:
`{"outcome": ..., "boundary": ..., "errorType": ...}`, values of `Outcome`, `Boundary` and the
registry's own error types only (no text anyone wrote). Sent only to a client that asks
(`META_VERDICT_WANTED`), which removes it before its host sees the result;
`instrument(send_verdict=False)` on the server: never sent."""
META_VERDICT_WANTED: Final = "dev.mcpobs/verdictWanted"
"""`_meta` key of a tools/call request in which an instrumented client asks for the verdict: its value
is `VERDICT_VERSION`. A server running mcpobs removes it before the server's own code sees the request."""
VERDICT_VERSION: Final = 1
"""The one value of `META_VERDICT_WANTED` a server answers (any other is not asked)."""
HEADER_STOPPED: Final = "mcpobs-stopped"
"""HTTP response header a server running mcpobs adds to the 500 it answers a request its stop cut
short (its handler cancelled by the server's shutdown before any answer): the status the ASGI server
would have sent, so its client can record `stopped`, as the server does, not `server_error`."""

# --- Events --------------------------------------------------------------------------------

EVENT_EXCEPTION: Final = "exception"
"""OpenTelemetry's exception event (the one `Span.record_exception` writes), written through the privacy step."""
EVENT_PROGRESS_CAP_REACHED: Final = "mcpobs.progress.cap_reached"
"""Span event on a tool span at its first progress report over the cap."""


class SubscriptionEvent(StrEnum):
    TOOLS_LIST_CHANGED = "tools_list_changed"
    PROMPTS_LIST_CHANGED = "prompts_list_changed"
    RESOURCES_LIST_CHANGED = "resources_list_changed"
    RESOURCE_UPDATED = "resource_updated"


class SubscriptionDirection(StrEnum):
    """`mcpobs.subscription.direction`: an event published by the server, or delivered to one stream."""

    PUBLISHED = "published"
    DELIVERED = "delivered"


# --- Metrics -------------------------------------------------------------------------------

DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The conventions' bucket boundaries for MCP durations, in seconds."""

Instrument = Literal["histogram", "counter", "updowncounter", "gauge"]


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
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME,
    GEN_AI_PROMPT_NAME,
    ERROR_TYPE,
    RPC_RESPONSE_STATUS_CODE,
    MCP_PROTOCOL_VERSION,
    NETWORK_TRANSPORT,
    NETWORK_PROTOCOL_NAME,
    NETWORK_PROTOCOL_VERSION,
    OUTCOME,
    SERVER_VERSION,
)
_SESSION_ATTRS: Final = (
    ERROR_TYPE,
    MCP_PROTOCOL_VERSION,
    NETWORK_TRANSPORT,
    NETWORK_PROTOCOL_NAME,
    NETWORK_PROTOCOL_VERSION,
)
_SERVER_PEER: Final = (SERVER_ADDRESS, SERVER_PORT)

SERVER_OPERATION_DURATION: Final = _metric(
    _mcp_metrics.MCP_SERVER_OPERATION_DURATION,
    "histogram",
    "s",
    "Duration of completed requests on the server; cancelled and pending rounds excluded.",
    _C,
    _OPERATION_ATTRS,
    DURATION_BUCKETS,
)
CLIENT_OPERATION_DURATION: Final = _metric(
    _mcp_metrics.MCP_CLIENT_OPERATION_DURATION,
    "histogram",
    "s",
    "Duration of completed requests on the client; cancelled and pending rounds excluded.",
    _C,
    (*_OPERATION_ATTRS, CLIENT_VERSION, *_SERVER_PEER),
    DURATION_BUCKETS,
)
SERVER_SESSION_DURATION: Final = _metric(
    _mcp_metrics.MCP_SERVER_SESSION_DURATION,
    "histogram",
    "s",
    "How long a session (a handshake connection: stdio, legacy Streamable HTTP) lasted on the server.",
    _C,
    _SESSION_ATTRS,
    DURATION_BUCKETS,
)
CLIENT_SESSION_DURATION: Final = _metric(
    _mcp_metrics.MCP_CLIENT_SESSION_DURATION,
    "histogram",
    "s",
    "How long a `Client` (or a bare `ClientSession`) stayed connected, from entering it to leaving it.",
    _C,
    _SESSION_ATTRS + _SERVER_PEER,
    DURATION_BUCKETS,
)
SERVER_REQUESTS: Final = _metric(
    "mcpobs.server.requests",
    "counter",
    "{request}",
    "Every request the server received (a message with an id), by outcome and failure boundary; "
    "notifications are counted in `mcpobs.server.notifications`.",
    _M,
    (MCP_METHOD_NAME, GEN_AI_TOOL_NAME, GEN_AI_PROMPT_NAME, OUTCOME, FAILURE_BOUNDARY, ERROR_TYPE, SERVER_VERSION),
)
SERVER_NOTIFICATIONS: Final = _metric(
    "mcpobs.server.notifications",
    "counter",
    "{notification}",
    "Every notification the server received (`notifications/initialized`, `notifications/cancelled`, ...), "
    "by method and outcome. A request method sent without an id is a request refused (`client_error`), "
    "counted in `mcpobs.server.requests`.",
    _M,
    (MCP_METHOD_NAME, OUTCOME, FAILURE_BOUNDARY, ERROR_TYPE, SERVER_VERSION),
)
CLIENT_REQUESTS: Final = _metric(
    "mcpobs.client.requests",
    "counter",
    "{request}",
    "Every request the client sent (a message with an id), by outcome and failure boundary; "
    "notifications are counted in `mcpobs.client.notifications`.",
    _M,
    (
        MCP_METHOD_NAME,
        GEN_AI_TOOL_NAME,
        GEN_AI_PROMPT_NAME,
        OUTCOME,
        FAILURE_BOUNDARY,
        ERROR_TYPE,
        SERVER_VERSION,
        CLIENT_VERSION,
        CATALOG_RELEASE,
    ),
)
CLIENT_NOTIFICATIONS: Final = _metric(
    "mcpobs.client.notifications",
    "counter",
    "{notification}",
    "Every notification the client sent (`notifications/initialized`, `notifications/cancelled`, ...), "
    "by method and outcome.",
    _M,
    (MCP_METHOD_NAME, OUTCOME, FAILURE_BOUNDARY, ERROR_TYPE, SERVER_VERSION, CLIENT_VERSION),
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
    (GEN_AI_TOOL_NAME, SERVER_VERSION),
)

CATALOG_SIZE: Final = _metric(
    "mcpobs.catalog.size",
    "gauge",
    "By",
    "The server's whole tool catalog as a model receives it (`mcpobs.catalog.bytes`), by release; set when a "
    "complete listing (its last page) is served and its size changed.",
    _M,
    (SERVER_VERSION,),
)
CATALOG_SIZE_TOKENS: Final = _metric(
    "mcpobs.catalog.size_tokens",
    "gauge",
    "{token}",
    "The same catalog in tokens (`mcpobs.catalog.tokens`), by release and counting method.",
    _M,
    (SERVER_VERSION, CATALOG_TOKEN_METHOD),
)

TASK_DURATION_BUCKETS: Final = (0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 14400.0, 86400.0)
"""Seconds; tasks run from seconds to a day (fastmcp-tasks' default time to live is 15 minutes)."""
_TASK_ATTRS: Final = (GEN_AI_TOOL_NAME, MESSAGING_SYSTEM, SERVER_VERSION)
TASK_DURATION: Final = _metric(
    "mcpobs.task.duration",
    "histogram",
    "s",
    "From submission to the task's terminal state, recorded once where it ended; its count counts outcomes.",
    _M,
    (*_TASK_ATTRS, TASK_OUTCOME, TASK_CANCELLED_BY, ERROR_TYPE),
    TASK_DURATION_BUCKETS,
)
TASK_QUEUE_WAIT: Final = _metric(
    "mcpobs.task.queue_wait",
    "histogram",
    "s",
    "From submission to the first leg's start: how long the work waited for a worker.",
    _M,
    _TASK_ATTRS,
    TASK_DURATION_BUCKETS,
)
TASK_LEG_DURATION: Final = _metric(
    "mcpobs.task.leg.duration",
    "histogram",
    "s",
    "One execution leg in a worker (a task asking for input ends its leg: `pending_input`).",
    _M,
    (*_TASK_ATTRS, OUTCOME, ERROR_TYPE),
    TASK_DURATION_BUCKETS,
)
TASKS_IN_FLIGHT: Final = _metric(
    "mcpobs.tasks.in_flight",
    "updowncounter",
    "{task}",
    "Tasks submitted and not yet ended: +1 where submitted, -1 where ended (sum over processes).",
    _M,
    _TASK_ATTRS,
)
CLIENT_TASK_POLLS: Final = _metric(
    "mcpobs.client.task.polls",
    "histogram",
    "{request}",
    "tasks/get requests a client sent for one task, recorded when it saw the task end.",
    _M,
    (GEN_AI_TOOL_NAME, TASK_OUTCOME),
    (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0),
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
    """``{mcp.method.name} {target}``: target only for a registered tool or prompt, bounded (`bounded_target`)."""
    return f"{method} {bounded_target(target)}" if target else method


def bounded_target(name: str) -> str:
    """A tool or prompt name as a span name or label holds it: at most `MAX_TARGET_LENGTH` characters."""
    return name if len(name) <= MAX_TARGET_LENGTH else _cut_target(name)


@functools.lru_cache(maxsize=256)
def _cut_target(name: str) -> str:
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[: MAX_TARGET_LENGTH - 9]}\u2026{digest}"


PROGRESS_SPAN: Final = "progress"
"""A child of the running request's span, one per ``report_progress()`` call, ended at once."""


def task_hop_span_name(operation: Literal["create", "process"], tool: str) -> str:
    """``create {tool}`` where a task is enqueued, ``process {tool}`` per execution leg (the messaging
    conventions' `{operation} {destination}`; the tool bounded as in every span name)."""
    return f"{operation} {tool}"


def publish_span_name(event: SubscriptionEvent) -> str:
    """``publish {event}``: an event handed to a subscription bus (messaging-style naming)."""
    return f"publish {event.value}"


def deliver_span_name(event: SubscriptionEvent) -> str:
    """``deliver {event}``: an event written to one ``subscriptions/listen`` stream."""
    return f"deliver {event.value}"


# --- The conventions' requirement levels, item by item ------------------------------------


class Level(StrEnum):
    """Requirement levels of the conventions (a span's name, kind and status are SHOULDs: recommended)."""

    REQUIRED = "required"
    CONDITIONALLY_REQUIRED = "conditionally required"
    RECOMMENDED = "recommended"
    OPT_IN = "opt-in"


SERVER_SPAN: Final = "server span"
CLIENT_SPAN: Final = "client span"
SPAN_NAME: Final = "span name"
SPAN_KIND: Final = "span kind"
SPAN_STATUS: Final = "span status"
PROPAGATION: Final = "context propagation"
INSTRUMENT: Final = "instrument"


@dataclass(frozen=True)
class Requirement:
    """One item of the pinned conventions for one signal, and what mcpobs emits for it."""

    signal: str
    """`SERVER_SPAN`, `CLIENT_SPAN` or a metric's name."""
    item: str
    """An attribute's name, or `SPAN_NAME`, `SPAN_KIND`, `SPAN_STATUS`, `PROPAGATION`, `INSTRUMENT`."""
    level: Level
    condition: str
    """When the conventions ask for it."""
    emitted: str
    """What mcpobs records."""
    deviation: str | None = None
    """Why mcpobs departs from the conventions here; None where it conforms."""


_NEVER_JSONRPC_1 = "Never: MCP is JSON-RPC 2.0."
_OTHER_LABEL = (
    "A caller can send any name; a metric series per name would be unbounded, so labels carry "
    "only names the server registers (the client: names it listed) and `_OTHER` for the rest. "
    "The span keeps the name as sent."
)
_CRASH_CLASS = (
    "A lowlevel `Server` handler that raises a plain exception is answered with a code the "
    "transport picks (0 on the handshake loop, -32603 elsewhere) that the handler chain never "
    "sees: mcpobs records the exception's class as `error.type` and no code. (`MCPServer` turns "
    "such a crash into a JSON-RPC error, which is recorded as the conventions ask.)"
)
_NOT_SAMPLES = (
    "A cancelled call or an interim multi-round-trip round is not a completed request; "
    "counting it would skew latency percentiles (each is counted in `mcpobs.*.requests`)."
)


def _span_rows(signal: str) -> tuple[Requirement, ...]:
    server = signal == SERVER_SPAN
    R = Requirement
    L = Level
    rows = [
        R(
            signal,
            SPAN_NAME,
            L.RECOMMENDED,
            "`{mcp.method.name} {target}`, target a tool or prompt name",
            "`{method} {tool or prompt}` for a registered name, `{method}` otherwise; never a URI",
        ),
        R(
            signal,
            SPAN_KIND,
            L.RECOMMENDED,
            "SERVER on the receiver, CLIENT on the sender",
            "SERVER" if server else "CLIENT",
        ),
        R(
            signal,
            SPAN_STATUS,
            L.RECOMMENDED,
            "ERROR when `error.type` is set; description = the JSON-RPC error's message when there is one",
            "ERROR exactly when `error.type` is set; description: the exception's type (never the error.type); "
            f"its message, cut to {MAX_STATUS_DESCRIPTION} characters, only with `record_error_messages`",
            "An error's message is text a caller, a tool or a peer wrote and can carry their data (a card "
            "number, a token); OpenTelemetry asks for a description only where it is not expected to hold "
            "sensitive details. With `record_error_messages=True` it is the message, through `redact`.",
        ),
        R(
            signal,
            PROPAGATION,
            L.RECOMMENDED,
            "W3C trace context in `params._meta`; the server parents on it and links the ambient context",
            "the server parents on `params._meta` and links an ambient (HTTP) span; without it, on the "
            "HTTP `traceparent` header"
            if server
            else "`traceparent` injected into `params._meta`, and as an HTTP header over HTTP (in process the "
            "handler runs under the span)",
        ),
        R(signal, MCP_METHOD_NAME, L.REQUIRED, "always", "the method; `_OTHER` for one nobody handles"),
        R(
            signal,
            ERROR_TYPE,
            L.CONDITIONALLY_REQUIRED,
            "if and only if the operation fails",
            "`tool_error` for an `isError` result (whatever the tool raised), the JSON-RPC code of an error "
            "reply, the exception's class for a lowlevel handler's plain exception; none for the caller's "
            "mistakes (#404)"
            if server
            else "the JSON-RPC code of an error reply, `tool_error` for an `isError` result, `timeout`, "
            "`output_validation`, or the class of a local exception",
            _CRASH_CLASS if server else None,
        ),
        R(
            signal,
            GEN_AI_PROMPT_NAME,
            L.CONDITIONALLY_REQUIRED,
            "when the operation concerns a prompt",
            "the prompt's name on prompts/get",
        ),
        R(
            signal,
            GEN_AI_TOOL_NAME,
            L.CONDITIONALLY_REQUIRED,
            "when the operation concerns a tool",
            "the tool's name on tools/call",
        ),
        R(
            signal,
            JSONRPC_REQUEST_ID,
            L.CONDITIONALLY_REQUIRED,
            "when the client executes a request",
            "the request's id on every request, none on notifications"
            if server
            else "the id the request was sent with (in process: the id the dispatcher gave it)",
        ),
        R(
            signal,
            MCP_RESOURCE_URI,
            L.CONDITIONALLY_REQUIRED,
            "requests that carry a resource URI",
            "the URI on resources/read, subscribe and unsubscribe" if server else "the URI on resources/read",
        ),
        R(
            signal,
            RPC_RESPONSE_STATUS_CODE,
            L.CONDITIONALLY_REQUIRED,
            "if the response carries an error code",
            "the JSON-RPC error code, as a string",
            _CRASH_CLASS if server else None,
        ),
    ]
    if server:
        rows += [
            R(
                signal,
                CLIENT_ADDRESS,
                L.RECOMMENDED,
                "if applicable",
                "the peer's address over HTTP (the ASGI scope's client)",
            ),
            R(signal, CLIENT_PORT, L.RECOMMENDED, "when `client.address` is set", "the peer's port over HTTP"),
        ]
    rows += [
        R(
            signal,
            GEN_AI_OPERATION_NAME,
            L.RECOMMENDED,
            "`execute_tool` for a tool call, otherwise unset",
            "`execute_tool` on tools/call only",
        ),
        R(signal, _jsonrpc.JSONRPC_PROTOCOL_VERSION, L.RECOMMENDED, "when it is not 2.0", _NEVER_JSONRPC_1),
        R(signal, MCP_PROTOCOL_VERSION, L.RECOMMENDED, "always", "the request's revision; `_OTHER` if unknown"),
        R(
            signal,
            MCP_SESSION_ID,
            L.RECOMMENDED,
            "when the request is part of a session",
            "the `Mcp-Session-Id` of a legacy Streamable HTTP session (or its keyed hash, or nothing: "
            "see docs/privacy.md); stdio and 2026-07-28 connections have no session id",
        ),
        R(signal, NETWORK_PROTOCOL_NAME, L.RECOMMENDED, "when applicable", "`http` over Streamable HTTP"),
        R(
            signal,
            NETWORK_PROTOCOL_VERSION,
            L.RECOMMENDED,
            "when applicable",
            "the request's HTTP version (`1.1`, `2`)"
            if server
            else "the HTTP version of the server's responses, once one has arrived",
        ),
        R(signal, NETWORK_TRANSPORT, L.RECOMMENDED, "always", "`tcp` over HTTP, `pipe` over stdio; unset in process"),
    ]
    if not server:
        rows += [
            R(signal, SERVER_ADDRESS, L.RECOMMENDED, "if applicable", "the host of the URL the `Client` was given"),
            R(
                signal,
                SERVER_PORT,
                L.RECOMMENDED,
                "when `server.address` is set",
                "the URL's port (the scheme's default when it names none)",
            ),
        ]
    rows += [
        R(
            signal,
            GEN_AI_TOOL_CALL_ARGUMENTS,
            L.OPT_IN,
            "opt-in",
            "with `capture_content`: JSON, through `redact`, cut to `max_content_length`",
        ),
        R(
            signal,
            GEN_AI_TOOL_CALL_RESULT,
            L.OPT_IN,
            "opt-in",
            "with `capture_content`: the result's content, structuredContent and isError as JSON, "
            "through `redact`, cut to `max_content_length`",
        ),
    ]
    return tuple(rows)


def _operation_rows(spec: MetricSpec) -> tuple[Requirement, ...]:
    server = spec is SERVER_OPERATION_DURATION
    R = Requirement
    L = Level
    name = spec.name
    rows = [
        R(
            name,
            INSTRUMENT,
            L.RECOMMENDED,
            "a histogram in `s` with the conventions' bucket boundaries",
            "histogram in `s`, those buckets; cancelled requests and interim rounds are not samples",
            _NOT_SAMPLES,
        ),
        R(name, MCP_METHOD_NAME, L.REQUIRED, "always", "the method; `_OTHER` for one nobody handles"),
        R(
            name,
            ERROR_TYPE,
            L.CONDITIONALLY_REQUIRED,
            "if and only if the operation fails",
            "as on the span",
            _CRASH_CLASS if server else None,
        ),
        R(
            name,
            GEN_AI_PROMPT_NAME,
            L.CONDITIONALLY_REQUIRED,
            "when the operation concerns a prompt",
            "the prompt's name, `_OTHER` when not registered",
            _OTHER_LABEL,
        ),
        R(
            name,
            GEN_AI_TOOL_NAME,
            L.CONDITIONALLY_REQUIRED,
            "when the operation concerns a tool",
            "the tool's name, `_OTHER` when not registered" if server else "the tool's name, `_OTHER` when not listed",
            _OTHER_LABEL,
        ),
        R(
            name,
            RPC_RESPONSE_STATUS_CODE,
            L.CONDITIONALLY_REQUIRED,
            "if the response carries an error code",
            "the JSON-RPC error code, as a string",
            _CRASH_CLASS if server else None,
        ),
        R(
            name,
            GEN_AI_OPERATION_NAME,
            L.RECOMMENDED,
            "`execute_tool` for a tool call, otherwise unset",
            "`execute_tool` on tools/call only",
        ),
        R(name, _jsonrpc.JSONRPC_PROTOCOL_VERSION, L.RECOMMENDED, "when it is not 2.0", _NEVER_JSONRPC_1),
        R(name, MCP_PROTOCOL_VERSION, L.RECOMMENDED, "always", "the request's revision; `_OTHER` if unknown"),
        R(name, NETWORK_PROTOCOL_NAME, L.RECOMMENDED, "when applicable", "`http` over Streamable HTTP"),
        R(name, NETWORK_PROTOCOL_VERSION, L.RECOMMENDED, "when applicable", "as on the span"),
        R(name, NETWORK_TRANSPORT, L.RECOMMENDED, "always", "`tcp` over HTTP, `pipe` over stdio; unset in process"),
    ]
    if not server:
        rows += [
            R(name, SERVER_ADDRESS, L.RECOMMENDED, "if applicable", "as on the span"),
            R(name, SERVER_PORT, L.RECOMMENDED, "when `server.address` is set", "as on the span"),
        ]
    rows.append(
        R(name, MCP_RESOURCE_URI, L.OPT_IN, "opt-in", "not offered: a URI is unbounded, never a label"),
    )
    return tuple(rows)


def _session_rows(spec: MetricSpec) -> tuple[Requirement, ...]:
    server = spec is SERVER_SESSION_DURATION
    R = Requirement
    L = Level
    name = spec.name
    rows = [
        R(
            name,
            INSTRUMENT,
            L.RECOMMENDED,
            "a histogram in `s` with the conventions' bucket boundaries",
            "histogram in `s`, those buckets; one sample per handshake connection (stdio, legacy Streamable "
            "HTTP, legacy in process) when it closes; 2026-07-28 requests open no session"
            if server
            else "histogram in `s`, those buckets; one sample per `Client` (or bare `ClientSession`), from entering it to leaving it",
        ),
        R(
            name,
            ERROR_TYPE,
            L.CONDITIONALLY_REQUIRED,
            "if and only if the session ends with an error",
            "the class of the exception that ended the connection (a cancelled one ended normally)"
            if server
            else "the class of the exception the `Client` was left with (cancellation is not an error)",
        ),
        R(name, _jsonrpc.JSONRPC_PROTOCOL_VERSION, L.RECOMMENDED, "when it is not 2.0", _NEVER_JSONRPC_1),
        R(name, MCP_PROTOCOL_VERSION, L.RECOMMENDED, "always", "the negotiated revision"),
        R(name, NETWORK_PROTOCOL_NAME, L.RECOMMENDED, "when applicable", "`http` over Streamable HTTP"),
        R(name, NETWORK_PROTOCOL_VERSION, L.RECOMMENDED, "when applicable", "the HTTP version, where known"),
        R(name, NETWORK_TRANSPORT, L.RECOMMENDED, "always", "`tcp` over HTTP, `pipe` over stdio; unset in process"),
    ]
    if not server:
        rows += [
            R(name, SERVER_ADDRESS, L.RECOMMENDED, "if applicable", "as on the client span"),
            R(name, SERVER_PORT, L.RECOMMENDED, "when `server.address` is set", "as on the client span"),
        ]
    return tuple(rows)


REQUIREMENTS: Final = (
    _span_rows(SERVER_SPAN)
    + _span_rows(CLIENT_SPAN)
    + _operation_rows(SERVER_OPERATION_DURATION)
    + _operation_rows(CLIENT_OPERATION_DURATION)
    + _session_rows(SERVER_SESSION_DURATION)
    + _session_rows(CLIENT_SESSION_DURATION)
)
"""Every item the pinned conventions ask of MCP spans and metrics, per signal (docs/gen-ai/mcp.md at
`CONVENTION_DOC_COMMIT`), with what mcpobs emits; tests/test_conformance.py checks each row."""


# --- Where mcpobs departs from or extends the pinned conventions ---------------------------

GENERAL_DEVIATIONS: Final = (
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
        "schema URL",
        f"The pinned conventions build on core conventions v1.45.0, which the "
        f"`opentelemetry-semantic-conventions` package does not publish yet; the tracer and meter carry "
        f"`{SCHEMA_URL}`, the newest it does (from 0.66b0; with 0.65b0, whose schemas stop at 1.43.0, the "
        f"same URL: no name mcpobs emits differs between them).",
    ),
    (
        "a refused server/discover probe is ok when the fallback succeeds",
        "An older server refuses the probe with a JSON-RPC error (-32601, or HTTP 400); that is how it "
        "says which era it speaks. When initialize then succeeds, the probe ends ok with "
        "mcpobs.session.fallback=true instead of failing every connection to an older server. A probe "
        "never answered (the SDK gives up after 10 s, then falls back) was no refusal: it stays a timeout.",
    ),
    (
        "`_OTHER` for error codes outside the specs",
        "error.type and rpc.response.status_code carry the code a peer returned; only JSON-RPC's, "
        "the MCP specification's and the SDKs' codes are kept in labels.",
    ),
)

DEVIATIONS: Final = GENERAL_DEVIATIONS + tuple(
    (f"`{r.item}` on {r.signal}", r.deviation) for r in REQUIREMENTS if r.deviation is not None
)
"""(what, why) for every departure: the general ones, then each deviating row of `REQUIREMENTS`."""
