"""One overhead.py configuration in this fresh process: its providers, server, client and floor, then the calls.

overhead.py starts this as `overhead.py --worker CONFIG --mode MODE --calls N`; the worker
answers with one JSON line on stderr (harness.workers.result).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import ExitStack

from harness import telemetry
from harness.callgrind import client as callgrind_client
from harness.floor import Count, ServerDuration, duration_labels, histogram, request_labels
from harness.telemetry import PAYLOAD, Counts
from harness.window import Window
from harness.workers import test_helpers
from overhead_configs import ARGUMENTS, FASTMCP, FIELDS, FLOORS, LEAN, SEED, WARM


class ClientFloor:
    """Around each call: a bare CLIENT span where the SDK makes none, and the client duration record."""

    def __init__(self, config: str, mode: str, meter_provider) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind

        from mcpobs import semconv as S

        self.client_kind = SpanKind.CLIENT  # read once: an import per call costs the floor ~4k instructions
        self.histogram = None
        self.tracer = None
        self.count = None
        if config == "floor-payload":
            self.count = Count(meter_provider, S.CLIENT_REQUESTS, request_labels("client"))
        if config in ("floor-full", "floor-payload", "floor-sampled", "histograms-only", "fastmcp-floor"):
            self.histogram = histogram(meter_provider, S.CLIENT_OPERATION_DURATION)
            self.labels = duration_labels(mode, "client", fastmcp=config in FASTMCP)
            if mode == "auto" and config not in ("histograms-only", "fastmcp-floor"):
                self.tracer = trace.get_tracer("floor")
                self.attributes = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: "echo"}
                if config == "floor-payload":  # the span is the floor's own: all of mcpobs's attributes at its start
                    self.attributes = json.loads(os.environ[PAYLOAD])["CLIENT"]

    async def call(self, client, name: str) -> None:
        if self.histogram is None:
            await client.call_tool(name, ARGUMENTS)
            return
        if self.tracer is None:
            start = time.perf_counter()
            await client.call_tool(name, ARGUMENTS)
            self.histogram.record(time.perf_counter() - start, self.labels)
            if self.count is not None:
                self.count.add()
            return
        with self.tracer.start_as_current_span("tools/call echo", kind=self.client_kind, attributes=self.attributes):
            start = time.perf_counter()
            await client.call_tool(name, ARGUMENTS)
            self.histogram.record(time.perf_counter() - start, self.labels)
            if self.count is not None:
                self.count.add()


def _sentry() -> None:
    """Sentry as its docs set it up for MCP, minus the DSN: the integration still runs in full.

    With no DSN the client has no transport, but it is active: every transaction is built,
    finished and serialized into an envelope, which is then not sent (the counterpart of the
    exporter that discards spans in the OpenTelemetry configurations). `before_send_transaction`
    counts them, so a run in which the integration did nothing is refused, not reported.
    """
    import sentry_sdk
    from sentry_sdk.integrations.mcp import MCPIntegration

    def count(event, hint):
        Counts.sentry += 1
        return event

    sentry_sdk.init(
        traces_sample_rate=1.0,
        integrations=[MCPIntegration()],
        auto_enabling_integrations=False,  # the MCP integration alone, not Starlette's or httpx's
        before_send_transaction=count,
    )


def _fastmcp_server(config: str, mode: str, meter_provider):
    from fastmcp import FastMCP

    server = FastMCP("bench")

    @server.tool
    async def echo(text: str) -> str:
        return text

    if config in FLOORS:  # the server duration record, outermost in its chain as mcpobs's middleware is
        server._mcp_server.middleware.insert(0, ServerDuration(meter_provider, mode, fastmcp=True))
    return server


def _fastmcp_client(server, mode: str, stack: ExitStack):
    import fastmcp
    from transports import serve_http

    if mode == "http":
        return fastmcp.Client(stack.enter_context(serve_http(server.http_app())) + "/mcp")
    return fastmcp.Client(server, mode="legacy" if mode == "legacy" else "auto")


def _server(config: str, mode: str, meter_provider):
    from mcp.server.mcpserver import MCPServer

    if config in FASTMCP:
        return _fastmcp_server(config, mode, meter_provider)

    floor = [ServerDuration(meter_provider, mode, count=config == "floor-payload")] if config in FLOORS else []
    server = MCPServer("bench", version="1.0.0", middleware=floor)  # a release, as a deployed server states

    fields = int(os.environ.get(FIELDS) or 0)
    if fields:
        from pydantic import create_model

        wide = create_model("Wide", **{f"field_{n}": (str, ...) for n in range(fields)})  # type: ignore[call-overload]

        def echo_wide(item) -> str:
            return "ok"

        echo_wide.__annotations__ = {"item": wide, "return": str}
        server.add_tool(echo_wide, name="echo")
        return server

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


async def _run(config: str, mode: str, calls: int, hostile: bool, describe: bool = False) -> dict[str, float]:
    import random

    from mcp import Client

    callgrind = callgrind_client()
    random.seed(SEED)
    tracer_provider, meter_provider = telemetry.providers(config, describe)
    if config.startswith("mcpobs") or config == "fastmcp-mcpobs":
        import mcpobs

        mcpobs.instrument(
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            clients=config != "mcpobs-server",
            record_shapes=config == "mcpobs-shapes",
            omit_attributes=LEAN if config == "mcpobs-lean" else (),
        )
    elif config == "sentry":
        _sentry()
    server = _server(config, mode, meter_provider)
    floor = ClientFloor(config, mode, meter_provider)
    test_helpers()
    from transports import serve_http

    with ExitStack() as stack:
        if config in FASTMCP:
            client = _fastmcp_client(server, mode, stack)
        elif mode == "http":
            client = Client(stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp")
        else:
            client = Client(server, mode=mode)
        async with client:
            for _ in range(min(WARM, calls)):  # imports, caches, the first listing
                await floor.call(client, "echo")
            await telemetry.quiet()
            spans, sentry = Counts.spans, Counts.sentry
            points = telemetry.points() if describe else {}
            with Window(callgrind) as window:
                for i in range(calls):
                    await floor.call(client, f"tool_{i}" if hostile else "echo")
            cpu, wall = window.cpu, window.wall
            await telemetry.quiet()
            recorded = telemetry.recorded(points) if describe else {}  # before the session's close records its own
    return {
        "cpu_us": cpu / calls * 1e6,
        "wall_us": wall / calls * 1e6,
        "spans_per_call": (Counts.spans - spans) / calls,
        "sentry_per_call": (Counts.sentry - sentry) / calls,
        **({"attributes": Counts.attributes, "metrics": recorded} if describe else {}),
    }


def worker(args: argparse.Namespace) -> None:
    import logging

    import anyio

    logging.disable(logging.WARNING)  # the SDK logs every unknown tool at INFO
    result = anyio.run(_run, args.worker, args.mode, args.calls, args.hostile, args.describe_spans)
    if args.memory:
        import resource

        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stderr.write(json.dumps(result) + "\n")
