"""overhead.py's configurations and modes: what each runs, which floor it is held to, the call it makes.

Shared by the driver (overhead.py) and the worker process (overhead_worker.py); overhead1.py
and saturation.py borrow the floors' names.
"""

from __future__ import annotations

import os

MODES = ("auto", "legacy", "http")
CONFIGS = (
    "bare",
    "sdk",
    "mcpobs-server",
    "floor-server",
    "mcpobs",
    "mcpobs-shapes",
    "mcpobs-lean",
    "floor-full",
    "floor-payload",
    "mcpobs-sampled",
    "floor-sampled",
    "histograms-only",
    "sentry",
    "fastmcp-bare",
    "fastmcp-native",
    "fastmcp-floor",
    "fastmcp-mcpobs",
)
FASTMCP = ("fastmcp-bare", "fastmcp-native", "fastmcp-floor", "fastmcp-mcpobs")
"""A FastMCP 4 server driven by `fastmcp.Client` (in memory: its own transport, in the mode's
protocol era; over HTTP: its `http_app()`), the tool `async` so no worker thread runs."""
WHAT = {
    "bare": "no tracer provider: the SDK's span middleware is a no-op",
    "sdk": "the SDK's own spans (a SERVER span per request; a CLIENT `MCP send` span in the JSON-RPC modes)",
    "mcpobs-server": "`instrument(clients=False)`: mcpobs's server span, classification and metrics",
    "floor-server": "floor of mcpobs-server: the SDK's spans + one server duration record per call",
    "mcpobs": "`instrument()`: server and client spans and metrics",
    "mcpobs-shapes": "`instrument(record_shapes=True)`: mcpobs with the tool-call corpus (its price beside `mcpobs`)",
    "mcpobs-lean": '`instrument(omit_attributes=["peer", "contract"])`: the per-session facts kept on the '
    "handshake spans and the metrics, not on every call (docs/privacy.md)",
    "floor-full": "floor of mcpobs: the SDK's spans (+ a bare CLIENT span in mode auto) + server and client duration records",
    "floor-payload": "floor of mcpobs, the same telemetry in plain OpenTelemetry code: floor-full + every attribute "
    "mcpobs's two spans carry beyond the floor's own (a span processor, one batch per span) + the server and client "
    "request counts with mcpobs's labels (observable counters)",
    "mcpobs-sampled": "`instrument()` under a 1% `ParentBased(TraceIdRatioBased)` sampler",
    "floor-sampled": "floor of mcpobs-sampled: floor-full under the same 1% sampler",
    "histograms-only": "no tracer at all, the two duration records alone (a stricter reference for 1% sampling)",
    "sentry": "peer: Sentry's MCP integration (sentry-sdk, no DSN, traces_sample_rate=1.0), no OpenTelemetry",
    "fastmcp-bare": "FastMCP server and `fastmcp.Client`, no tracer provider (FastMCP's telemetry a no-op)",
    "fastmcp-native": "FastMCP's own telemetry (mode `native`): its SERVER span per request, CLIENT span per call",
    "fastmcp-floor": "floor of fastmcp-mcpobs: FastMCP's own two spans + server and client duration records",
    "fastmcp-mcpobs": "FastMCP + `instrument()`: mcpobs's spans (FastMCP's suppressed), classification, metrics",
}
FLOOR_OF = {
    "mcpobs-server": "floor-server",
    "mcpobs": "floor-payload",
    "mcpobs-sampled": "floor-sampled",
    "fastmcp-mcpobs": "fastmcp-floor",
}
CONVENTIONS_OF = {"mcpobs": "floor-full", "mcpobs-lean": "floor-full"}
"""What the conventions require of mcpobs's configuration (its spans and duration records, not
its attributes beyond them or its counters): a reference beside the floor, not the target."""
TARGET = 1.05
"""Every mcpobs configuration within 5% of its floor, in every mode (issue 15)."""
LEAN = ("peer", "contract")
"""The attribute groups `mcpobs-lean` omits: every call's per-session facts (semconv.ATTRIBUTE_GROUPS)."""
FLOORS = ("floor-server", "floor-full", "floor-payload", "floor-sampled", "histograms-only", "fastmcp-floor")
WARM = 50
FIELDS = "MCPOBS_BENCHFIELDS"
"""With `--fields N`: the tool takes one object of N string fields, and every call sends all N."""


def arguments() -> dict[str, object]:
    fields = int(os.environ.get(FIELDS) or 0)
    if not fields:
        return {"text": "hi"}
    return {"item": {f"field_{n}": f"value {n}" for n in range(fields)}}


ARGUMENTS = arguments()
"""What every call sends: `{"text": "hi"}`, or with `--fields N` one object of N fields."""
SEED = 20261201
"""Trace ids come from `random`: seeded, the 1% configurations sample the same calls in every run."""
