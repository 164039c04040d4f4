"""How mcpobs's cost grows with the work, beside the SDK's and beside the floor, in one run.

Each curve grows one quantity (registered tools, schema size, result size, progress reports
per call, open sessions, listing size, distinct tools called in turn) and measures, at each
point, the instructions per call (or per listing) of three configurations, in memory with
`Client(server)` (mode auto):

- `sdk`: the SDK's own spans, nothing else;
- `floor`: the telemetry mcpobs records, written with plain OpenTelemetry code: the SDK's spans
  carrying every attribute mcpobs's spans carry (added by a span processor, one batch per span,
  as overhead.py's `floor-payload`), the CLIENT span mcpobs adds in mode auto, one `progress`
  span and the progress count per report, and every metric record mcpobs makes per call, per
  listing and per report, with the same labels: the server's records in a server middleware
  (the server's duration is timed around the server's handling, as in overhead.py), the
  client's around the call, the counts under a lock. What it records is read, before the run, from
  one mcpobs worker (`describe`); the smoke test checks the floor emits the same span names,
  attribute keys, metric names and label keys as mcpobs. A listing with one tool changed adds
  one canonical encoding and hash of that tool (`mcpobs._core.contract`), the least any
  catalog fingerprint must do;
- `mcpobs`: `instrument()`.

One worker per (configuration, curve) measures every point of the curve in turn, so valgrind's
start-up is paid once: under callgrind the worker starts instrumentation, zeroes the counts,
runs the point's calls and dumps them (one dump file per point). The slope between two points
is the marginal cost of the growing quantity; mcpobs's slope over the floor's is the target
(at most 1.1x at each point, issue 31).

    python benchmarks/growth.py --instructions                 # every curve, callgrind (~20 min)
    python benchmarks/growth.py --instructions --curves progress,listing
    python benchmarks/growth.py --quick                         # tiny points, timed: a smoke run
    python benchmarks/growth.py --from-json benchmarks/results/growth.json --write-docs
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import svg as _svg  # noqa: E402
from harness.callgrind import Callgrind as _Callgrind  # noqa: E402
from harness.machine import machine  # noqa: E402
from harness.markers import replace_between  # noqa: E402
from mcp.server.mcpserver import Context  # noqa: E402  (module level: the tools' annotations name it)

ROOT = HERE.parent
CONFIGS = ("sdk", "floor", "mcpobs")
JSON_OUT = HERE / "results" / "growth.json"
IMAGES = ROOT / "docs" / "images"
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- growth:begin (benchmarks/growth.py --write-docs) -->", "<!-- growth:end -->"
TARGET = 1.1
_UNDER_CALLGRIND = "MCPOBS_BENCH_UNDER_CALLGRIND"
_RECIPE = "MCPOBS_BENCH_RECIPE"
_CAPTURE = "MCPOBS_BENCH_CAPTURE"


@dataclass(frozen=True)
class Curve:
    name: str
    title: str
    x_label: str
    points: tuple[int, ...]
    quick: tuple[int, ...]
    calls: int
    """Measured operations per point (callgrind counts are exact, so few are enough)."""
    per: str = "call"


CURVES = {
    c.name: c
    for c in (
        Curve("tools", "Registered tools (calls to one of them)", "registered tools", (1, 100, 1000, 5000), (1, 5), 50),
        Curve("schema", "Schema size (one object argument)", "fields in the argument", (3, 20, 50, 200), (3, 6), 50),
        Curve("payload", "Result size", "bytes in the result", (100, 1000, 10_000, 100_000), (100, 1000), 50),
        Curve("progress", "Progress reports per call", "reports per call", (0, 1, 10, 100), (0, 2), 20),
        Curve("sessions", "Open sessions (calls spread across them)", "open sessions", (1, 10, 100), (1, 3), 100),
        Curve("listing", "tools/list, unchanged catalog", "tools listed", (10, 100, 1000, 5000), (2, 4), 4, "listing"),
        Curve(
            "listing-changed",
            "tools/list, one tool changed per listing",
            "tools listed",
            (10, 100, 1000, 5000),
            (2, 4),
            4,
            "listing",
        ),
        Curve(
            "distinct",
            "Distinct tools called in turn (round-robin, after one full cycle)",
            "tools in the cycle",
            (1000, 4096, 5000, 10_000),
            (3, 6),
            100,
        ),
    )
}


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
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
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


_OPS = {"tools/call": "call", "tools/list": "listing"}
"""The methods the floor's server middleware records, by the recipe's operation name."""


class _Floor:
    """The telemetry mcpobs records, done with plain OpenTelemetry calls and no mcpobs code.

    `recipe` (from `describe`) holds, per operation (call, listing, progress report), the
    attributes of each span by (kind, method), and each metric record with its labels and how
    many times it is made per operation. Labels naming the described tool name the tool called.
    It is also the server's middleware: the server's records are made there, timed around the
    server's handling, the client's around the client's call.
    """

    def __init__(self, recipe: dict, tracer_provider, meter_provider) -> None:
        import threading

        from opentelemetry.sdk.trace import SpanProcessor
        from opentelemetry.trace import SpanKind

        from mcpobs import semconv as S

        self.recipe = recipe
        self.lock = threading.Lock()
        self.server_side = {S.SERVER_OPERATION_DURATION.name, S.SERVER_REQUESTS.name}
        self.tracer = tracer_provider.get_tracer("floor")
        self.kinds = SpanKind
        meter = meter_provider.get_meter("floor")
        self.instruments: dict[str, object] = {}
        self.totals: dict[str, dict[tuple, tuple[dict, list[float]]]] = {}
        for op in ("call", "listing", "report"):
            for name, kind, _labels, _times in recipe["metrics"][op]:
                if name not in self.instruments:
                    self.instruments[name] = self._instrument(meter, name, kind)
        self._labels: dict[tuple[str, str, str | None], list] = {}
        spans = recipe["spans"]

        class Payload(SpanProcessor):
            """Adds, as each span starts, the attributes mcpobs's span of that kind and method carries."""

            def __init__(self) -> None:
                self.missing: dict[tuple[str, str], dict] = {}

            def on_start(self, span, parent_context=None) -> None:
                key = (span.kind.name, span.name.partition(" ")[0])
                missing = self.missing.get(key)
                if missing is None:
                    theirs = spans.get(f"{key[0]} {key[1]}", {})
                    missing = self.missing[key] = {k: v for k, v in theirs.items() if k not in span.attributes}
                if missing:
                    span.set_attributes(missing)

        tracer_provider.add_span_processor(Payload())

    def _instrument(self, meter, name: str, kind: str):
        """A histogram as mcpobs declares it (its buckets); a counter as the cheapest the SDK allows.

        A synchronous `Counter.add` re-validates and re-hashes its labels on every call; an
        `ObservableCounter` over running totals kept per label set exports the same cumulative
        sum for one dict update per record, so that is the floor's counter.
        """
        from opentelemetry.metrics import Observation

        from mcpobs import semconv as S

        if kind == "histogram":
            spec = next(
                (v for v in vars(S).values() if getattr(v, "name", None) == name and hasattr(v, "buckets")), None
            )
            if spec is None:
                return meter.create_histogram(name)
            return meter.create_histogram(name, unit=spec.unit, explicit_bucket_boundaries_advisory=list(spec.buckets))
        totals = self.totals[name] = {}

        def observe(options):
            return [Observation(cell[0], labels) for labels, cell in totals.values()]

        make = meter.create_observable_counter if kind == "sum" else meter.create_observable_up_down_counter
        return make(name, callbacks=[observe])

    def records(self, op: str, tool: str, side: str | None = None) -> list:
        """(histogram or None, labels, times per operation, running total or None) of one operation on `tool`.

        `side` ("server" or "client") keeps that side's records; None keeps all (a progress report).
        """
        key = (op, tool, side)
        found = self._labels.get(key)
        if found is None:
            described = self.recipe["tool"]
            found = []
            for name, kind, pairs, times in self.recipe["metrics"][op]:
                if side is not None and (name in self.server_side) != (side == "server"):
                    continue
                labels = {k: (tool if v == described else v) for k, v in pairs}
                if kind == "histogram":
                    found.append((self.instruments[name], labels, round(times), None))
                else:
                    totals = self.totals[name]
                    label_key = tuple(sorted(labels.items()))
                    if label_key not in totals:
                        totals[label_key] = (labels, [0.0])
                    found.append((None, labels, times, totals[label_key][1]))
            self._labels[key] = found
        return found

    def record(self, op: str, tool: str, seconds: float, side: str | None = None) -> None:
        for histogram, labels, times, cell in self.records(op, tool, side):
            if cell is not None:
                with self.lock:  # a library cannot assume one thread; overhead.py's floor counts so too
                    cell[0] += times
            elif times == 1:
                histogram.record(seconds, labels)
            else:
                for _ in range(times):
                    histogram.record(seconds, labels)

    async def __call__(self, ctx, call_next):
        """The server middleware: the server's records of a call or listing, timed around its handling."""
        start = time.perf_counter()
        result = await call_next(ctx)
        op = _OPS.get(ctx.method)
        if op is not None:
            tool = ctx.params.get("name", "") if op == "call" and ctx.params else ""
            self.record(op, tool, time.perf_counter() - start, "server")
        return result

    async def around(self, op: str, method: str, tool: str, call):
        """`call()` inside the CLIENT span mcpobs makes in mode auto, then the client's records."""
        attributes = self.recipe["spans"].get(f"CLIENT {method}")
        start = time.perf_counter()
        if attributes is None:
            result = await call()
        else:
            name = f"{method} {tool}" if tool else method
            with self.tracer.start_as_current_span(name, kind=self.kinds.CLIENT, attributes=attributes):
                result = await call()
        self.record(op, tool, time.perf_counter() - start, "client")
        return result

    def report(self, tool: str) -> None:
        """One progress report's span (a child of the request's span) and its count."""
        self.tracer.start_span(
            self.recipe["progress"], kind=self.kinds.INTERNAL, attributes=self.recipe["spans"].get("INTERNAL progress")
        ).end()
        self.record("report", tool, 0.0)


class _Bench:
    """The server, its clients, and the operation each curve repeats."""

    def __init__(self, config: str, curve: str, floor: _Floor | None, stack) -> None:
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

    callgrind = _Callgrind() if os.environ.get(_UNDER_CALLGRIND) else None
    capture = _Capture()
    tracer_provider, meter_provider, reader, Discard, Simple, trace = _providers(capture)
    floor = None
    if config == "mcpobs":
        import mcpobs

        mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    elif config == "floor":
        floor = _Floor(json.loads(os.environ[_RECIPE]), tracer_provider, meter_provider)
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
            # A full collection now, and what survives it frozen: otherwise a point's count holds
            # a whole-heap collection or not, by chance (up to +850k per call over 50 calls seen).
            gc.collect()
            gc.freeze()
            if callgrind:
                callgrind(_Callgrind.START, _Callgrind.ZERO)
            cpu = time.process_time()
            for i in range(calls):
                await op(i)
            cpu = time.process_time() - cpu
            if callgrind:
                callgrind(_Callgrind.DUMP, _Callgrind.STOP)
            capture.recording = False
            point: dict = {"x": x, "ops": calls, "cpu_us": cpu / calls * 1e6}
            if os.environ.get(_CAPTURE):
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


# -- driver ------------------------------------------------------------------------------------------


def _result(stderr: str) -> dict:
    return json.loads([line for line in stderr.splitlines() if line.startswith("{")][-1])


def _env(recipe: str | None, capture: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SENTRY_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(ROOT / "src")) if p)
    if recipe:
        env[_RECIPE] = recipe
    if capture:
        env[_CAPTURE] = "1"
    return env


def describe() -> str:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", "mcpobs", "--describe"],
        capture_output=True,
        text=True,
        env=_env(None, False),
    )
    if done.returncode != 0:
        raise RuntimeError(f"describing mcpobs's telemetry failed:\n{done.stderr[-3000:]}")
    return json.dumps(_result(done.stderr))


def measure(config: str, plan: list, recipe: str, counted: bool, capture: bool) -> dict:
    """One worker: every point of the curves in `plan` for `config`; counted: under callgrind, one dump per point."""
    cmd = [sys.executable, __file__, "--worker", config, "--plan", json.dumps(plan)]
    env = _env(recipe if config == "floor" else None, capture)
    what = f"{config} ({', '.join(c for c, _, _ in plan)})"
    started = time.perf_counter()
    if not counted:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{what} failed:\n{done.stderr[-3000:]}")
        result = _result(done.stderr)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "cg.out"
            valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
            done = subprocess.run(valgrind + cmd, capture_output=True, text=True, env={**env, _UNDER_CALLGRIND: "1"})
            if done.returncode != 0:
                raise RuntimeError(f"{what} failed under callgrind:\n{done.stderr[-3000:]}")
            result = _result(done.stderr)
            points = [p for c, _, _ in plan for p in result["curves"][c]["points"]]
            for n, point in enumerate(points, start=1):
                part = Path(f"{out}.{n}")
                found = re.search(r"^totals: (\d+)", part.read_text() if part.exists() else "", re.MULTILINE)
                if found is None:
                    raise RuntimeError(f"callgrind wrote no dump {n} for {what}")
                point["instructions"] = int(found[1]) / point["ops"]
            if Path(f"{out}.{len(points) + 1}").exists():
                raise RuntimeError(f"callgrind dumped more than once per point for {what}")
    seconds = time.perf_counter() - started
    return {name: {**curve, "seconds": seconds} for name, curve in result["curves"].items()}


def run(curves: list[Curve], quick: bool, counted: bool, capture: bool, save: Path | None = None) -> dict:
    """Every (curve, configuration) worker, two at a time; with `save`, the JSON is rewritten as each curve completes."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    started = time.perf_counter()
    recipe = describe()
    data = {
        "machine": machine(),
        "measure": "instructions" if counted else "cpu_us",
        "quick": quick,
        "seconds": 0.0,
        "recipe": json.loads(recipe),
        "curves": {},
    }
    done: dict[str, dict] = {c.name: {} for c in curves}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = {}

        def plan(curve: Curve) -> list:
            return [curve.name, curve.quick if quick else curve.points, min(curve.calls, 5) if quick else curve.calls]

        # counted: a worker per (curve, configuration), the costliest curves first, so the two
        # cores finish together; timed (a smoke run): a worker per configuration, every curve in it
        ordered = sorted(curves, key=lambda c: c.name not in ("distinct", "listing", "listing-changed"))
        plans = [[plan(c)] for c in ordered] if counted else [[plan(c) for c in ordered]]
        for p in plans:
            for config in CONFIGS:
                jobs[pool.submit(measure, config, p, recipe, counted, capture)] = config
        for job in as_completed(jobs):
            config = jobs[job]
            try:
                found = job.result()
            except Exception as failed:  # one worker failing leaves the others' numbers
                print(f"{config} failed: {failed}", file=sys.stderr)
                continue
            for name, result in found.items():
                done[name][config] = result
                if len(done[name]) == len(CONFIGS):
                    data["curves"][name] = {c: done[name][c] for c in CONFIGS}
                    data["seconds"] = time.perf_counter() - started
                    print(f"{name}: done after {data['seconds']:.0f} s", file=sys.stderr)
                    if save:
                        save.parent.mkdir(parents=True, exist_ok=True)
                        save.write_text(json.dumps(data, indent=1) + "\n")
    data["curves"] = {c.name: data["curves"][c.name] for c in curves if c.name in data["curves"]}
    return data


# -- tables, plots, docs -----------------------------------------------------------------------------


def _values(data: dict, curve: str, config: str, measure: str) -> list[float]:
    return [p[measure] for p in data["curves"][curve][config]["points"]]


def _fmt(value: float) -> str:
    return f"{value / 1000:,.0f}k" if abs(value) >= 10_000 else f"{value:,.0f}"


def curve_table(data: dict, name: str) -> str:
    """Per point: the three counts, mcpobs over the floor, what each adds to the SDK, and the slopes.

    "Added" is a configuration minus `sdk`: the telemetry's own cost, without the SDK's work it
    rides on (a 5,000-tool listing is 1.3G instructions of the SDK's own). A slope is the cost
    of one more unit of the growing quantity between this point and the one before; where the
    floor's step is under 1% of it (flat), the ratio of two near-zero slopes says nothing, so the
    cell gives what mcpobs's step adds instead.
    """
    measure = data["measure"]
    curve = CURVES[name]
    xs = [p["x"] for p in data["curves"][name]["sdk"]["points"]]
    sdk, floor, ours = (_values(data, name, c, measure) for c in CONFIGS)
    unit = "instructions" if measure == "instructions" else "CPU µs"
    lines = [
        f"| {curve.x_label} | sdk | floor | mcpobs | mcpobs / floor | floor adds | mcpobs adds | adds ratio "
        "| floor slope | mcpobs slope | slope ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, x in enumerate(xs):
        ratio = ours[n] / floor[n]
        added_floor, added_ours = floor[n] - sdk[n], ours[n] - sdk[n]
        # a floor within 1% of the SDK adds less than the SDK's own spread between runs: no ratio then
        added = f"{added_ours / added_floor:.2f}" if added_floor > 0.01 * sdk[n] else "floor ≈ sdk"
        if n == 0:
            slopes = "| - | - | - |"
        else:
            dx = x - xs[n - 1]
            fs, ms = (floor[n] - floor[n - 1]) / dx, (ours[n] - ours[n - 1]) / dx
            if abs(floor[n] - floor[n - 1]) > 0.01 * floor[n - 1]:
                good = ms / fs <= TARGET
                slope_ratio = f"**{ms / fs:.2f}**" if good else f"**{ms / fs:.2f}** (over {TARGET})"
            else:
                step = (ours[n] - ours[n - 1]) - (floor[n] - floor[n - 1])
                slope_ratio = f"flat floor; mcpobs's step {'+' if step >= 0 else ''}{_fmt(step)}"
            slopes = f"| {_fmt(fs)} | {_fmt(ms)} | {slope_ratio} |"
        lines.append(
            f"| {x:,} | {_fmt(sdk[n])} | {_fmt(floor[n])} | {_fmt(ours[n])} | {ratio:.3f} "
            f"| {_fmt(added_floor)} | {_fmt(added_ours)} | {added} {slopes}"
        )
    per = "listing" if curve.per == "listing" else "call"
    return f"{unit} per {per}; slopes per one more of: {curve.x_label}\n\n" + "\n".join(lines)


def plot(data: dict, name: str) -> str:
    measure = data["measure"]
    curve = CURVES[name]
    xs = [p["x"] for p in data["curves"][name]["sdk"]["points"]]
    shifted = min(xs) == 0  # progress starts at 0 reports: a log axis over reports + 1, ticked with reports
    xs_plot = [x + 1 for x in xs] if shifted else xs
    per = "listing" if curve.per == "listing" else "call"
    y = ("instructions" if measure == "instructions" else "CPU µs") + f" per {per}"
    x_label = curve.x_label + (" (axis at reports + 1)" if shifted else "")
    series = {c: _values(data, name, c, measure) for c in CONFIGS}
    return _svg.chart(curve.title, x_label, y, xs_plot, series, [_svg.label(x) for x in xs])


HOW = {
    "tools": "Tools registered on the server (copies of `echo` under new names); every call is to `echo`.",
    "schema": "The tool takes one object argument of that many string fields, and every call sends all of them.",
    "payload": "The tool returns a string of that many bytes.",
    "progress": "The tool reports progress that many times per call; the client passes a progress callback. "
    "The floor makes, per report, one `progress` span (a child of the request's span) carrying "
    "mcpobs's progress attributes, and one count of `mcpobs.progress.reports` with mcpobs's labels.",
    "sessions": "That many `Client(server)` sessions open at once, the calls spread across them in turn.",
    "listing": "One `tools/list` (the client's cache bypassed) of a catalog that does not change between "
    "listings: the floor is the SDK plus the listing's spans and metric records, nothing per tool.",
    "listing-changed": "The same, with one tool replaced by a copy with a new description before each "
    "listing; the floor adds one canonical encoding and hash of the changed tool "
    "(`mcpobs._core.contract.contract_fingerprint`).",
    "distinct": "That many tools called round-robin, measured after one full cycle (every tool seen "
    "once): past any internal cache bound, each call is one the cache has forgotten.",
}


def section(data: dict, images: Path = IMAGES) -> str:
    """The "Growth curves" section of docs/benchmarks.md, with the plots written beside it."""
    out = [
        "## Growth curves",
        "",
        "`benchmarks/growth.py` grows one quantity at a time and measures, at each point, the SDK's own",
        "spans (`sdk`), the floor (`floor`: the same spans, attributes and metric records mcpobs makes,",
        "written with plain OpenTelemetry code) and `instrument()` (`mcpobs`), in memory (mode auto).",
        "A slope is the cost of one more unit of the growing quantity between two points; the target",
        f"is mcpobs's slope within {TARGET}x the floor's at each point (issue 31). Where the floor is",
        "flat the ratio of two near-zero slopes says nothing, so the table gives mcpobs's step instead.",
        '"Adds" is a configuration minus `sdk`: what the telemetry itself costs, without the SDK\'s own',
        "work it rides on, and \"adds ratio\" is mcpobs's over the floor's. The floor's attributes and",
        "records are read from one mcpobs worker before the run, and the smoke test",
        "(`tests/test_benchmark.py`) checks the floor emits the same span names and attribute keys, metric",
        "names and label keys, as many times, as mcpobs. Its server records are made in a server middleware",
        "(the server's duration timed around the server's handling), its client records around the call;",
        "its counters are `ObservableCounter`s over running totals kept under a lock, the cheapest way this",
        "OpenTelemetry SDK counts (a synchronous `Counter.add` re-hashes its labels on every call); the",
        "recipe is overhead.py's `floor-payload`. A full collection and `gc.freeze()` precede each point.",
        "",
        "```bash",
        "python benchmarks/growth.py --instructions --write-docs --write-readme  # the run, this section, the README rows",
        "python benchmarks/growth.py --from-json benchmarks/results/growth.json --write-docs  # again from the JSON",
        "python benchmarks/growth.py --instructions --curves progress,listing",
        "```",
        "",
        f"Measured on: {data['machine']}. Run time: {data['seconds'] / 60:.1f} min"
        + (" (quick points)." if data.get("quick") else "."),
        "",
    ]
    images.mkdir(parents=True, exist_ok=True)
    for name in [n for n in CURVES if n in data["curves"]]:  # in CURVES order, whatever order they finished in
        svg = images / f"growth-{name}.svg"
        svg.write_text(plot(data, name))
        rel = os.path.relpath(svg, DOCS.parent)
        title = CURVES[name].title
        out += [f"### {title}", "", HOW[name], "", f"![{title}]({rel})", "", curve_table(data, name), ""]
    return "\n".join(out).rstrip() + "\n"


def write_docs(text: str, docs: Path = DOCS) -> None:
    replace_between(docs, (BEGIN, END), text, append=True)


README_BEGIN, README_END = (
    "<!-- growth-table:begin (benchmarks/growth.py --write-readme) -->",
    "<!-- growth-table:end -->",
)
README = ROOT / "README.md"


def readme_rows(data: dict) -> str:
    """The README's cost rows that come from the growth run: the largest point of each curve."""
    measure, curves = data["measure"], data["curves"]
    unit = "k instr" if measure == "instructions" else "µs"

    def cells(values: list[float]) -> str:
        sdk, floor, ours = values
        shown = [f"{v / 1000:,.0f}" if measure == "instructions" else f"{v:,.0f}" for v in values]
        over = ours - sdk
        plus = f"{over / 1000:,.0f}k" if measure == "instructions" else f"{over:,.0f} µs"
        adds = f"{over / (floor - sdk):.2f}x" if floor - sdk > 0.01 * sdk else f"floor ≈ SDK; mcpobs +{plus}"
        return f"{shown[0]} | {shown[1]} | {shown[2]} | {ours / floor:.2f}x | {adds}"

    rows = []
    if "tools" in curves:
        first = [_values(data, "tools", c, measure)[0] for c in CONFIGS]
        rows.append(f"| a trivial call (one tool registered) | {cells(first)} |")
    at = {
        "tools": "a call with {x:,} tools registered",
        "schema": "a call with a {x:,}-field argument",
        "payload": "a call returning {x:,} bytes",
        "sessions": "a call with {x:,} sessions open",
        "distinct": "a call cycling through {x:,} distinct tools",
        "listing": "`tools/list` of {x:,} tools, unchanged",
        "listing-changed": "`tools/list` of {x:,} tools, one changed",
    }
    if "progress" in curves:
        xs = [p["x"] for p in curves["progress"]["sdk"]["points"]]
        per = [_values(data, "progress", c, measure) for c in CONFIGS]
        slope = [(v[-1] - v[-2]) / (xs[-1] - xs[-2]) for v in per]
        rows.append(f"| one progress report ({xs[-2]} to {xs[-1]} per call) | {cells(slope)} |")
    for name, label in at.items():
        if name in curves:
            x = curves[name]["sdk"]["points"][-1]["x"]
            rows.append(f"| {label.format(x=x)} | {cells([_values(data, name, c, measure)[-1] for c in CONFIGS])} |")
    head = (
        f"| work ({unit}, in memory, mode auto) | SDK | floor | mcpobs | mcpobs / floor "
        "| mcpobs's cost over the SDK / the floor's |\n|---|---:|---:|---:|---:|---:|"
    )
    return head + "\n" + "\n".join(rows) + "\n"


def write_readme(text: str, readme: Path = README) -> None:
    replace_between(readme, (README_BEGIN, README_END), text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", choices=CONFIGS)
    parser.add_argument("--plan", help=argparse.SUPPRESS)
    parser.add_argument("--describe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--curves", help="comma-separated subset of: " + ", ".join(CURVES))
    parser.add_argument("--quick", action="store_true", help="two tiny points per curve, 5 operations each")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--capture", action="store_true", help="record what each configuration emits (smoke test)")
    parser.add_argument("--json", type=Path, help=f"where the raw numbers go (default {JSON_OUT.relative_to(ROOT)})")
    parser.add_argument("--images", type=Path, default=IMAGES, help="where the SVG plots go")
    parser.add_argument("--from-json", type=Path, help="no run: tables, plots and docs from a saved run")
    parser.add_argument("--write-docs", action="store_true", help="rewrite the growth section of docs/benchmarks.md")
    parser.add_argument("--write-readme", action="store_true", help="rewrite the growth rows of README's cost table")
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.from_json:
        data = json.loads(args.from_json.read_text())
    else:
        names = args.curves.split(",") if args.curves else list(CURVES)
        unknown = set(names) - set(CURVES)
        if unknown:
            parser.error(f"unknown curve(s) {', '.join(sorted(unknown))}; choose from {', '.join(CURVES)}")
        if args.instructions and shutil.which("valgrind") is None:
            sys.exit("--instructions needs valgrind on PATH (e.g. apt-get install valgrind)")
        out = args.json or (JSON_OUT if args.instructions and not args.quick else None)
        data = run([CURVES[n] for n in names], args.quick, args.instructions, args.capture, out)
    text = section(data, args.images)
    print(text)
    if args.write_docs:
        write_docs(text)
    if args.write_readme:
        write_readme(readme_rows(data))


if __name__ == "__main__":
    main()
