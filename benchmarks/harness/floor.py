"""The floors' building blocks: telemetry mcpobs records, written by hand with plain OpenTelemetry code.

A floor holds no mcpobs code: each piece here is the cheapest way the OpenTelemetry SDK offers
to record what mcpobs records on the trivial `tools/call echo` (overhead.py, overhead1.py,
saturation.py and growth.py build their floors from them), so a ratio to a floor prices
mcpobs's own work and nothing the conventions require anyway.
"""

from __future__ import annotations

import time
from typing import Any

from harness.machine import version


def payload(attributes: dict[str, dict], by_method: bool = False) -> Any:
    """A span processor adding, as each span starts, the attributes mcpobs's span carries and it lacks.

    `attributes` maps a span kind (`by_method`: a kind and the span name's first word, the
    method, as "SERVER tools/call") to the attributes of mcpobs's span of that kind.
    """
    from opentelemetry.sdk.trace import SpanProcessor

    class Payload(SpanProcessor):
        def __init__(self) -> None:
            self.missing: dict[tuple[str, str], dict] = {}

        def on_start(self, span, parent_context=None) -> None:
            key = (span.kind.name, span.name.partition(" ")[0] if by_method else span.name)
            missing = self.missing.get(key)
            if missing is None:
                theirs = attributes.get(f"{key[0]} {key[1]}" if by_method else key[0], {})
                missing = self.missing[key] = {k: v for k, v in theirs.items() if k not in span.attributes}
            if missing:
                span.set_attributes(missing)

    return Payload()


def duration_labels(mode: str, side: str = "server", fastmcp: bool = False) -> dict[str, str | int]:
    """The duration labels mcpobs records for a successful `tools/call echo` on that side.

    The releases too (issue 22): the server's own on the server side; the answering server's
    and the client's own on the client side (the bench server states 1.0.0 and the SDK's
    client 0.1.0; FastMCP states its own version for both).
    """
    from mcpobs import semconv as S

    server, client = (version("fastmcp"),) * 2 if fastmcp else ("1.0.0", "0.1.0")
    labels = {
        S.MCP_METHOD_NAME: "tools/call",
        S.MCP_PROTOCOL_VERSION: "2025-11-25" if mode == "legacy" else "2026-07-28",
        S.GEN_AI_OPERATION_NAME: S.EXECUTE_TOOL,
        S.GEN_AI_TOOL_NAME: "echo",
        S.SERVER_VERSION: server,
        S.OUTCOME: S.Outcome.OK.value,
    }
    if side == "client":
        labels[S.CLIENT_VERSION] = client
    if mode == "http":
        labels |= {S.NETWORK_TRANSPORT: "tcp", S.NETWORK_PROTOCOL_NAME: "http", S.NETWORK_PROTOCOL_VERSION: "1.1"}
        if side == "client":
            labels |= {S.SERVER_ADDRESS: "127.0.0.1", S.SERVER_PORT: 8000}
    return labels


def histogram(meter_provider, spec):
    return meter_provider.get_meter("floor").create_histogram(
        spec.name, unit=spec.unit, description=spec.brief, explicit_bucket_boundaries_advisory=list(spec.buckets)
    )


def request_labels(side: str) -> dict[str, str]:
    """The labels of mcpobs's request count for a successful `tools/call echo` on that side (any mode)."""
    from mcpobs import semconv as S

    labels = {
        S.MCP_METHOD_NAME: "tools/call",
        S.GEN_AI_TOOL_NAME: "echo",
        S.SERVER_VERSION: "1.0.0",
        S.OUTCOME: S.Outcome.OK.value,
    }
    if side == "client":
        labels |= {S.CATALOG_RELEASE: "1.0.0", S.CLIENT_VERSION: "0.1.0"}
    return labels


class Count:
    """A request counter the plain way that costs least: a total under a lock, read by an `ObservableCounter`."""

    def __init__(self, meter_provider, spec, labels: dict[str, str]) -> None:
        import threading

        from opentelemetry.metrics import Observation

        self.total = 0
        self.lock = threading.Lock()
        meter_provider.get_meter("floor").create_observable_counter(
            spec.name,
            callbacks=[lambda options: [Observation(self.total, labels)]],
            unit=spec.unit,
            description=spec.brief,
        )

    def add(self) -> None:
        with self.lock:
            self.total += 1


class ServerDuration:
    """A server middleware that records the server duration histogram (and, in `floor-payload`, the request count)."""

    def __init__(self, meter_provider, mode: str, fastmcp: bool = False, count: bool = False) -> None:
        from mcpobs import semconv as S

        self.histogram = histogram(meter_provider, S.SERVER_OPERATION_DURATION)
        self.labels = duration_labels(mode, fastmcp=fastmcp)
        self.count = Count(meter_provider, S.SERVER_REQUESTS, request_labels("server")) if count else None

    async def __call__(self, ctx, call_next):
        start = time.perf_counter()
        result = await call_next(ctx)
        if ctx.method == "tools/call":
            self.histogram.record(time.perf_counter() - start, self.labels)
            if self.count is not None:
                self.count.add()
        return result
