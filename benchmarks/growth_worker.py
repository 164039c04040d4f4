"""One growth.py configuration in this fresh process: every point of its curves, or the floor's recipe.

growth.py starts this as `growth.py --worker CONFIG --plan JSON` (or `--describe`); the
worker answers with one JSON line on stderr. Under callgrind it dumps once per point.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from growth_curves import CAPTURE, RECIPE
from growth_floor import Floor
from harness.callgrind import client as callgrind_client
from harness.telemetry import each_point
from harness.window import Window
from mcp.server.mcpserver import Context  # module level: the tools' annotations name it

# -- worker: one configuration, one curve, every point, in this fresh process ---------------------


class _Capture:
    """What was recorded during the measured operations: span names and attribute keys, metric points."""

    def __init__(self) -> None:
        self.spans: list = []
        self.recording = False

    @staticmethod
    def shape(name: str, tool_names: set[str]) -> str:
        """A span name with the tool's name taken out, so different tools' spans compare."""
        method, _, rest = name.partition(" ")
        return f"{method} {{tool}}" if rest in tool_names else name


def _metric_points(reader) -> dict[tuple[str, str, tuple], float]:
    """(metric, instrument kind, sorted labels) -> count (histograms) or value (sums), cumulative."""
    points: dict[tuple[str, str, tuple], float] = {}
    for metric, point in each_point(reader):
        labels = tuple(sorted((k, v) for k, v in point.attributes.items()))
        if hasattr(point, "bucket_counts"):
            points[metric.name, "histogram", labels] = point.count
        else:
            points[metric.name, type(metric.data).__name__.lower(), labels] = point.value
    return points


def _diff(before: dict, after: dict) -> dict:
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


def _providers(capture: _Capture):
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Discard(SpanExporter):
        def export(self, spans):
            if capture.recording:
                capture.spans.extend(spans)
            return SpanExportResult.SUCCESS

    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    tracer_provider = TracerProvider()
    return tracer_provider, meter_provider, reader, Discard, SimpleSpanProcessor, trace


class _Bench:
    """The server, its clients, and the operation each curve repeats."""

    def __init__(self, config: str, curve: str, floor: Floor | None, stack) -> None:
        from mcp.server.mcpserver import MCPServer

        self.config, self.curve, self.floor, self.stack = config, curve, floor, stack
        self.server = MCPServer("bench", version="1.0.0", middleware=[floor] if floor is not None else [])
        self.clients: list = []
        self.tools = self.server._tool_manager._tools  # registering thousands by copy, not by signature
        self.template = None
        self.reports = 0
        floor_ = floor

        @self.server.tool()
        def echo(text: str) -> str:
            return text

        @self.server.tool()
        def blob(size: int) -> str:
            return "x" * size

        @self.server.tool()
        async def progress(reports: int, ctx: Context) -> str:
            for n in range(reports):
                await ctx.report_progress(n + 1, reports)
                if floor_ is not None:
                    floor_.report("progress")
            return "done"

        self.template = self.tools["echo"]

    def grow_tools(self, total: int, prefix: str = "tool_") -> None:
        """Registered tools up to `total` (echo included), copies of echo under new names."""
        n = len(self.tools)
        while len(self.tools) < total:
            name = f"{prefix}{n}"
            self.tools[name] = self.template.model_copy(update={"name": name})
            n += 1

    def wide(self, fields: int) -> str:
        from pydantic import create_model

        name = f"wide_{fields}"
        if name not in self.tools:
            model = create_model(f"Wide{fields}", **{f"field_{n}": (str, ...) for n in range(fields)})  # type: ignore[call-overload]

            def echo_wide(item) -> str:
                return "ok"

            echo_wide.__annotations__ = {"item": model, "return": str}
            self.server.add_tool(echo_wide, name=name)
        return name

    async def session(self):
        from mcp import Client

        client = await self.stack.enter_async_context(Client(self.server))
        self.clients.append(client)
        return client

    async def relist(self) -> None:
        """Every client learns the catalog as it stands, as a client does before calling (not counted)."""
        for client in self.clients:
            await client.list_tools(cache_mode="refresh")

    async def call(self, client, name: str, arguments: dict, progress=None):
        async def go():
            return await client.call_tool(name, arguments, progress_callback=progress)

        if self.floor is None:
            return await go()
        return await self.floor.around("call", "tools/call", name, go)

    async def listing(self, client):
        async def go():
            return await client.list_tools(cache_mode="bypass")

        if self.floor is None:
            return await go()
        return await self.floor.around("listing", "tools/list", "", go)

    async def prepare(self, x: int):
        """Set the server up for point `x`; returns the operation to repeat, given its index."""
        if not self.clients:
            await self.session()
        first = self.clients[0]
        curve = self.curve
        if curve in ("tools", "distinct") and "blob" in self.tools:
            del self.tools["blob"], self.tools["progress"]  # echo alone, so x counts every registered tool
        if curve == "tools":
            self.grow_tools(x)
            await self.relist()
            return lambda i: self.call(first, "echo", {"text": "hi"})
        if curve == "schema":
            name = self.wide(x)
            await self.relist()
            item = {f"field_{n}": f"value {n}" for n in range(x)}
            return lambda i: self.call(first, name, {"item": item})
        if curve == "payload":
            return lambda i: self.call(first, "blob", {"size": x})
        if curve == "progress":

            async def on_progress(progress, total, message) -> None:
                return None

            return lambda i: self.call(first, "progress", {"reports": x}, on_progress)
        if curve == "sessions":
            while len(self.clients) < x:
                await (await self.session()).list_tools()
            clients = list(self.clients)
            return lambda i: self.call(clients[i % len(clients)], "echo", {"text": "hi"})
        if curve in ("listing", "listing-changed"):
            for name in [n for n in self.tools if n not in ("echo",)]:
                del self.tools[name]
            self.grow_tools(x)
            if curve == "listing":
                return lambda i: self.listing(first)
            names = list(self.tools)
            return lambda i: self.changed_listing(first, names[i % len(names)], i)
        if curve == "distinct":
            self.grow_tools(x + 1)  # echo besides the cycle's tools
            await self.relist()
            names = [f"tool_{n}" for n in range(1, x + 1)]
            return lambda i: self.call(first, names[i % len(names)], {"text": "hi"})
        raise ValueError(curve)

    async def changed_listing(self, client, name: str, i: int):
        """A listing after `name` was swapped for a copy with a new description (a new object)."""
        self.tools[name] = self.tools[name].model_copy(update={"description": f"revision {i}"})
        result = await self.listing(client)
        if self.floor is not None:
            from mcpobs._core.contract import contract_fingerprint, wire_tool

            contract_fingerprint(wire_tool(next(t for t in result.tools if t.name == name)))
        return result

    def warm_count(self, x: int, calls: int) -> int:
        """Operations before counting: caches filled, first-call costs paid (a quick run warms less)."""
        if self.curve == "distinct":
            return x  # one full cycle: every tool seen once, the caches in their steady state
        if self.curve == "sessions":
            return max(x, min(calls, 5))
        return min(calls, 5 if self.curve.startswith("listing") else 20)


async def _run(config: str, plan: list) -> dict:
    """Every point of every curve in `plan` ([curve, points, calls], ...), in order, one server per curve."""

    from mcpobs import semconv as S

    callgrind = callgrind_client()
    capture = _Capture()
    tracer_provider, meter_provider, reader, Discard, Simple, trace = _providers(capture)
    floor = None
    if config == "mcpobs":
        import mcpobs

        mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    elif config == "floor":
        floor = Floor(json.loads(os.environ[RECIPE]), tracer_provider, meter_provider)
    tracer_provider.add_span_processor(Simple(Discard()))
    trace.set_tracer_provider(tracer_provider)  # the SDK's own spans use the global provider
    curves = {}
    for curve_name, points, calls in plan:
        found = await _curve(config, curve_name, points, calls, floor, reader, capture, callgrind)
        curves[curve_name] = {"points": found}
    return {"curves": curves, "progress_span": S.PROGRESS_SPAN}


async def _curve(config, curve_name, points, calls, floor, reader, capture, callgrind) -> list[dict]:
    from contextlib import AsyncExitStack

    results = []
    async with AsyncExitStack() as stack:
        bench = _Bench(config, curve_name, floor, stack)
        for x in points:
            op = await bench.prepare(x)
            for i in range(bench.warm_count(x, calls)):
                await op(i)
            before = _metric_points(reader)
            capture.spans.clear()
            capture.recording = True
            with Window(callgrind) as window:  # a settled heap, then one dump per point
                for i in range(calls):
                    await op(i)
            capture.recording = False
            point: dict = {"x": x, "ops": calls, "cpu_us": window.cpu / calls * 1e6}
            if os.environ.get(CAPTURE):
                tools = set(bench.tools)
                point["spans"] = sorted(
                    {(s.kind.name, _Capture.shape(s.name, tools), tuple(sorted(s.attributes))) for s in capture.spans}
                )
                point["metrics"] = sorted(
                    (name, kind, [k for k, _ in labels], value)
                    for (name, kind, labels), value in _diff(before, _metric_points(reader)).items()
                )
                point["span_count"] = len(capture.spans)
            results.append(point)
    return results


async def _describe(calls: int = 3, reports: int = 5) -> dict:
    """What mcpobs records per call, per listing and per progress report: the floor's recipe."""
    from mcpobs import semconv as S

    capture = _Capture()
    tracer_provider, meter_provider, reader, Discard, Simple, trace = _providers(capture)
    from contextlib import AsyncExitStack

    import mcpobs

    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    tracer_provider.add_span_processor(Simple(Discard()))
    trace.set_tracer_provider(tracer_provider)
    recipe: dict = {"tool": "echo", "progress": S.PROGRESS_SPAN, "spans": {}, "metrics": {}}
    async with AsyncExitStack() as stack:
        bench = _Bench("mcpobs", "describe", None, stack)
        client = await bench.session()
        await client.list_tools()

        async def on_progress(progress, total, message) -> None:
            return None

        phases = {
            "call": lambda: client.call_tool("echo", {"text": "hi"}),
            "listing": lambda: client.list_tools(cache_mode="bypass"),
            "report": lambda: client.call_tool("echo_progress", {"reports": reports}, progress_callback=on_progress),
        }
        bench.tools["echo_progress"] = bench.tools["progress"].model_copy(update={"name": "echo_progress"})
        await client.list_tools(cache_mode="refresh")
        for op, run in phases.items():
            await run()  # the first of each: caches, the catalog
            before = _metric_points(reader)
            capture.spans.clear()
            capture.recording = True
            for _ in range(calls):
                await run()
            capture.recording = False
            per = calls * reports if op == "report" else calls
            records = []
            for (name, kind, labels), value in _diff(before, _metric_points(reader)).items():
                if op == "report" and value < per:
                    continue  # the call's own records (per call, not per report)
                labels = [(k, "echo" if v == "echo_progress" else v) for k, v in labels]
                records.append((name, kind, labels, value / per))
            recipe["metrics"][op] = records
            for span in capture.spans:
                if op == "report" and span.name != S.PROGRESS_SPAN:
                    continue
                method = span.name.partition(" ")[0]
                recipe["spans"][f"{span.kind.name} {method}"] = {
                    k: (list(v) if isinstance(v, tuple) else v) for k, v in span.attributes.items()
                }
    return recipe


def worker(args: argparse.Namespace) -> None:
    import logging

    import anyio

    logging.disable(logging.WARNING)
    result = anyio.run(_describe) if args.describe else anyio.run(_run, args.worker, json.loads(args.plan))
    sys.stderr.write(json.dumps(result) + "\n")
