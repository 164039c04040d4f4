"""What mcpobs costs per call, beside the floor the conventions set and beside a peer, in one run.

Every configuration runs in a fresh process, in each of three modes: in memory with
`Client(server)` (mode `auto`: direct dispatch, no JSON-RPC), in memory with
`Client(server, mode="legacy")` (the initialize handshake over JSON-RPC streams), and over
Streamable HTTP on loopback (uvicorn). Ratios are taken against baselines measured in the same
run, never against a number from elsewhere.

    python benchmarks/overhead.py                  # timed: CPU µs per call, every mode (~15 min)
    python benchmarks/overhead.py --instructions   # instructions per call under callgrind (~15 min)
    python benchmarks/overhead.py --only auto --configs bare,sdk,mcpobs --rounds 3
    python benchmarks/overhead.py --memory         # peak RSS after 100,000 calls

Instruction counts do not move with a noisy neighbour, so they are the measure to compare
versions with and to hold targets to; CPU time is printed beside them because instructions
weigh cache misses and memory stalls at nothing. The tables print as Markdown, headed by the
machine and the versions they were measured on, so docs/benchmarks.md takes them as they are.

The floors contain no mcpobs code. Each is what its configuration is required to emit, done
the cheapest way the OpenTelemetry SDK and the MCP SDK allow: the SDK's own span middleware
for the SERVER span, the SDK's own `MCP send` span (JSON-RPC modes) or one bare
`start_as_current_span` around the call (mode auto, where the SDK makes no client span) for
the CLIENT span, and one `Histogram.record` per required duration metric, with the same label
set mcpobs records. That is `floor-full`: what the conventions require.

mcpobs's own floor is `floor-payload`, the same telemetry mcpobs records written with plain
OpenTelemetry code: floor-full, plus every attribute mcpobs's two spans carry beyond the floor's
(the CLIENT span, the floor's own, starts with all of them; a span processor adds them to the
SDK's SERVER span as it starts, as growth.py's floor does), plus the two request counters mcpobs counts
on every call (`mcpobs.server.requests`, `mcpobs.client.requests`) with mcpobs's labels, each an
`ObservableCounter` reporting a total the floor adds to under a lock (the cheapest way the SDK
offers; a synchronous `Counter.add` costs about as much as a histogram record).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
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
SAMPLED = ("mcpobs-sampled", "floor-sampled")
LEAN = ("peer", "contract")
"""The attribute groups `mcpobs-lean` omits: every call's per-session facts (semconv.ATTRIBUTE_GROUPS)."""
FLOORS = ("floor-server", "floor-full", "floor-payload", "floor-sampled", "histograms-only", "fastmcp-floor")
WARM = 50
_UNDER_CALLGRIND = "MCPOBS_BENCH_UNDER_CALLGRIND"
_PAYLOAD = "MCPOBS_BENCH_PAYLOAD"
_FIELDS = "MCPOBS_BENCH_FIELDS"
"""With `--fields N`: the tool takes one object of N string fields, and every call sends all N."""


def _arguments() -> dict[str, object]:
    fields = int(os.environ.get(_FIELDS) or 0)
    if not fields:
        return {"text": "hi"}
    return {"item": {f"field_{n}": f"value {n}" for n in range(fields)}}


ARGUMENTS = _arguments()
"""The attributes of mcpobs's `tools/call echo` spans by kind (JSON), for `floor-payload`."""
SEED = 20261201
"""Trace ids come from `random`: seeded, the 1% configurations sample the same calls in every run."""


# -- worker: one configuration in this fresh process -----------------------------------------------


class _Callgrind:
    """Callgrind's client requests, without a compiler: the few bytes valgrind.h would emit.

    Under `valgrind --tool=callgrind --instr-atstart=no` start-up runs uninstrumented (about
    ten times faster) and only the measured calls are counted. The sequence is valgrind's
    documented x86-64 client-request preamble; natively it does nothing and returns 0.
    """

    _CODE = bytes.fromhex(
        "4889f8"  # mov rax, rdi: the request block
        "31d2"  # xor edx, edx: the answer when not under valgrind
        "48c1c703"
        "48c1c70d"
        "48c1c73d"
        "48c1c733"  # rol rdi by 3, 13, 61, 51: 128 bits, a no-op
        "4887db"  # xchg rbx, rbx: the request itself
        "4889d0"  # mov rax, rdx
        "c3"  # ret
    )
    _BASE = (ord("C") << 24) | (ord("T") << 16)  # VG_USERREQ_TOOL_BASE('C','T') in callgrind.h
    DUMP, ZERO, START, STOP = 0, 1, 4, 5

    def __init__(self) -> None:
        import ctypes
        import mmap

        self._page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        self._page.write(self._CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._call = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(address)
        self._block = (ctypes.c_uint64 * 6)()
        self._ctypes = ctypes

    def __call__(self, *requests: int) -> None:
        for request in requests:
            self._block[0] = self._BASE + request
            self._call(self._ctypes.addressof(self._block))


class _Counts:
    spans = 0
    sentry = 0
    attributes: dict[str, dict] = {}
    """The last `tools/call echo` span's attributes, by span kind (`--describe-spans`)."""
    reader = None
    """The configuration's metric reader, for `--describe-spans` to say what was recorded."""


def _providers(config: str, describe: bool = False):
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    class Discard(SpanExporter):
        def export(self, spans):
            _Counts.spans += len(spans)
            if describe:
                for span in spans:
                    if span.name.endswith("tools/call echo"):  # the SDK's is `MCP send tools/call echo`
                        _Counts.attributes[span.kind.name] = dict(span.attributes)
            return SpanExportResult.SUCCESS

    if config in ("bare", "sentry", "fastmcp-bare"):
        return None, None
    _Counts.reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[_Counts.reader])
    if config == "histograms-only":
        return None, meter_provider
    sampler = ParentBased(TraceIdRatioBased(0.01)) if config in SAMPLED else None
    tracer_provider = TracerProvider(sampler=sampler) if sampler else TracerProvider()
    if config == "floor-payload":
        tracer_provider.add_span_processor(_payload(json.loads(os.environ[_PAYLOAD])))
    tracer_provider.add_span_processor(SimpleSpanProcessor(Discard()))
    trace.set_tracer_provider(tracer_provider)  # the SDK's own spans use the global provider
    return tracer_provider, meter_provider


def _payload(attributes: dict[str, dict]):
    """The span processor of `floor-payload` (mcpobs's attributes by span kind, from `describe`)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class Payload(SpanProcessor):
        """Adds, as each span starts, the attributes mcpobs's span of that kind carries and it lacks."""

        def __init__(self, attributes: dict[str, dict]) -> None:
            self.attributes = attributes
            self.missing: dict[tuple[str, str], dict] = {}

        def on_start(self, span, parent_context=None) -> None:
            key = (span.kind.name, span.name)
            missing = self.missing.get(key)
            if missing is None:
                theirs = self.attributes.get(span.kind.name, {})
                missing = self.missing[key] = {k: v for k, v in theirs.items() if k not in span.attributes}
            if missing:
                span.set_attributes(missing)

    return Payload(attributes)


def _labels(mode: str, side: str = "server", fastmcp: bool = False) -> dict[str, str | int]:
    """The duration labels mcpobs records for a successful `tools/call echo` on that side.

    The releases too (issue 22): the server's own on the server side; the answering server's
    and the client's own on the client side (the bench server states 1.0.0 and the SDK's
    client 0.1.0; FastMCP states its own version for both).
    """
    from mcpobs import semconv as S

    server, client = (_version("fastmcp"),) * 2 if fastmcp else ("1.0.0", "0.1.0")
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


def _histogram(meter_provider, spec):
    return meter_provider.get_meter("floor").create_histogram(
        spec.name, unit=spec.unit, description=spec.brief, explicit_bucket_boundaries_advisory=list(spec.buckets)
    )


def _request_labels(side: str) -> dict[str, str]:
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


class _Count:
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


class _ServerDuration:
    """A server middleware that records the server duration histogram (and, in `floor-payload`, the request count)."""

    def __init__(self, meter_provider, mode: str, fastmcp: bool = False, count: bool = False) -> None:
        from mcpobs import semconv as S

        self.histogram = _histogram(meter_provider, S.SERVER_OPERATION_DURATION)
        self.labels = _labels(mode, fastmcp=fastmcp)
        self.count = _Count(meter_provider, S.SERVER_REQUESTS, _request_labels("server")) if count else None

    async def __call__(self, ctx, call_next):
        start = time.perf_counter()
        result = await call_next(ctx)
        if ctx.method == "tools/call":
            self.histogram.record(time.perf_counter() - start, self.labels)
            if self.count is not None:
                self.count.add()
        return result


class _ClientFloor:
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
            self.count = _Count(meter_provider, S.CLIENT_REQUESTS, _request_labels("client"))
        if config in ("floor-full", "floor-payload", "floor-sampled", "histograms-only", "fastmcp-floor"):
            self.histogram = _histogram(meter_provider, S.CLIENT_OPERATION_DURATION)
            self.labels = _labels(mode, "client", fastmcp=config in FASTMCP)
            if mode == "auto" and config not in ("histograms-only", "fastmcp-floor"):
                self.tracer = trace.get_tracer("floor")
                self.attributes = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: "echo"}
                if config == "floor-payload":  # the span is the floor's own: all of mcpobs's attributes at its start
                    self.attributes = json.loads(os.environ[_PAYLOAD])["CLIENT"]

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
        _Counts.sentry += 1
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
        server._mcp_server.middleware.insert(0, _ServerDuration(meter_provider, mode, fastmcp=True))
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

    floor = [_ServerDuration(meter_provider, mode, count=config == "floor-payload")] if config in FLOORS else []
    server = MCPServer("bench", version="1.0.0", middleware=floor)  # a release, as a deployed server states

    fields = int(os.environ.get(_FIELDS) or 0)
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

    callgrind = _Callgrind() if os.environ.get(_UNDER_CALLGRIND) else None
    random.seed(SEED)
    tracer_provider, meter_provider = _providers(config, describe)
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
    floor = _ClientFloor(config, mode, meter_provider)
    sys.path.insert(0, str(HERE.parent / "tests"))
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
            spans, sentry = _Counts.spans, _Counts.sentry
            points = _points() if describe else {}
            # A full collection now, and what survives it frozen (as growth.py does): otherwise
            # the count holds more or fewer whole-heap collections by the call count, by chance.
            gc.collect()
            gc.freeze()
            if callgrind:
                callgrind(_Callgrind.START, _Callgrind.ZERO)
            cpu, wall = time.process_time(), time.perf_counter()
            for i in range(calls):
                await floor.call(client, f"tool_{i}" if hostile else "echo")
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            if callgrind:
                callgrind(_Callgrind.DUMP, _Callgrind.STOP)
            recorded = _recorded(points) if describe else {}  # before the session's close records its own
    return {
        "cpu_us": cpu / calls * 1e6,
        "wall_us": wall / calls * 1e6,
        "spans_per_call": (_Counts.spans - spans) / calls,
        "sentry_per_call": (_Counts.sentry - sentry) / calls,
        **({"attributes": _Counts.attributes, "metrics": recorded} if describe else {}),
    }


def _points() -> dict[tuple[str, str], object]:
    """(metric name, its labels as JSON) -> the point's value (a sum, or a histogram's count)."""
    found: dict[tuple[str, str], object] = {}
    if _Counts.reader is None:
        return found
    for resource in _Counts.reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    found[metric.name, json.dumps(dict(point.attributes), sort_keys=True)] = (
                        point.count if value is None else value
                    )
    return found


def _recorded(before: dict[tuple[str, str], object]) -> dict[str, list[dict]]:
    """What the measured calls recorded (`--describe-spans`): metric name -> the label sets whose points moved."""
    found: dict[str, list[dict]] = {}
    for (name, labels), value in _points().items():
        if before.get((name, labels)) != value:
            found.setdefault(name, []).append(json.loads(labels))
    return found


def worker(args: argparse.Namespace) -> None:
    import logging

    import anyio

    logging.disable(logging.WARNING)  # the SDK logs every unknown tool at INFO
    result = anyio.run(_run, args.worker, args.mode, args.calls, args.hostile, args.describe_spans)
    if args.memory:
        import resource

        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stderr.write(json.dumps(result) + "\n")


# -- driver ------------------------------------------------------------------------------------------


_payloads: dict[str, str] = {}
"""Mode -> the attributes of mcpobs's spans in it (JSON), measured once per run by `describe`."""


def describe(mode: str) -> str:
    """What mcpobs's `tools/call echo` spans carry in this mode, for `floor-payload` to add."""
    if mode not in _payloads:
        done = subprocess.run(
            [*_command("mcpobs", mode, 5), "--describe-spans"], capture_output=True, text=True, env=_env(mode)
        )
        if done.returncode != 0:
            raise RuntimeError(f"describing mcpobs's spans ({mode}) failed:\n{done.stderr[-3000:]}")
        attributes = _result(done.stderr)["attributes"]
        if set(attributes) != {"SERVER", "CLIENT"}:
            raise RuntimeError(
                f"expected a SERVER and a CLIENT `tools/call echo` span ({mode}), got {sorted(attributes)}"
            )
        _payloads[mode] = json.dumps(attributes)
    return _payloads[mode]


def _command(config: str, mode: str, calls: int, hostile: bool = False, memory: bool = False) -> list[str]:
    cmd = [sys.executable, __file__, "--worker", config, "--mode", mode, "--calls", str(calls)]
    return cmd + (["--hostile"] if hostile else []) + (["--memory"] if memory else [])


def _env(mode: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SENTRY_"))}
    if mode in _payloads:
        env[_PAYLOAD] = _payloads[mode]
    return env


def _check(config: str, result: dict[str, float]) -> dict[str, float]:
    if config == "sentry" and result["sentry_per_call"] < 1:
        raise RuntimeError(f"Sentry's MCP integration recorded {result['sentry_per_call']:.2f} transactions per call")
    return result


def _spawn(config: str, mode: str, calls: int, hostile: bool = False, memory: bool = False) -> dict[str, float]:
    done = subprocess.run(
        _command(config, mode, calls, hostile, memory), capture_output=True, text=True, env=_env(mode)
    )
    if done.returncode != 0:
        raise RuntimeError(f"{config} ({mode}) failed:\n{done.stderr[-3000:]}")
    return _check(config, _result(done.stderr))


def _result(stderr: str) -> dict[str, float]:
    return json.loads([line for line in stderr.splitlines() if line.startswith("{")][-1])


def _instructions(config: str, mode: str, calls: int) -> dict[str, float]:
    """One worker under callgrind, instrumented only from the first measured call to the last.

    The worker starts instrumentation and zeroes the counts just before its calls and dumps
    them just after (`_Callgrind`), so the one dump holds the calls alone, on every thread
    (uvicorn's too), without start-up, warm-up or teardown.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        env = {**_env(mode), _UNDER_CALLGRIND: "1"}
        done = subprocess.run(cmd + _command(config, mode, calls), capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{config} ({mode}) failed under callgrind:\n{done.stderr[-3000:]}")
        part = Path(f"{out}.1")
        found = re.search(r"^totals: (\d+)", part.read_text() if part.exists() else "", re.MULTILINE)
        if found is None or Path(f"{out}.2").exists():
            raise RuntimeError(f"callgrind did not dump exactly once, after the calls, for {config} ({mode})")
    result = _check(config, _result(done.stderr))
    result["instructions"] = int(found[1]) / calls
    return result


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> str:
    """The line that names what the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    with open("/proc/cpuinfo") if Path("/proc/cpuinfo").exists() else open(os.devnull) as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cpu}, {os.cpu_count()} cores; "
        f"Python {platform.python_version()}; mcp {_version('mcp')}; opentelemetry-sdk {_version('opentelemetry-sdk')}; "
        f"sentry-sdk {_version('sentry-sdk')}; fastmcp {_version('fastmcp')}; mcpobs {commit.stdout.strip() or '?'}"
    )


def _available(configs: tuple[str, ...]) -> tuple[str, ...]:
    if set(FASTMCP) & set(configs) and _version("fastmcp") == "not installed":
        print("fastmcp: FastMCP is not installed, so its rows are left out (pip install -e '.[dev]')")
        configs = tuple(c for c in configs if c not in FASTMCP)
    if "sentry" in configs and _version("sentry-sdk") == "not installed":
        print("sentry: sentry-sdk is not installed, so the peer row is left out (pip install -e '.[bench]')")
        return tuple(c for c in configs if c != "sentry")
    return configs


def _print_table(mode: str, measure: str, unit: str, values: dict[str, float], extra: dict[str, dict]) -> None:
    print(f"\n#### {mode}: {measure}\n")
    print(f"| config | {unit} | vs bare | vs sdk | vs its floor | spans/call (Sentry: transactions) | vs floor-full |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c, v in values.items():
        # A FastMCP row is set beside FastMCP's bare run and its own telemetry, not the SDK's.
        bare_of, sdk_of = ("fastmcp-bare", "fastmcp-native") if c in FASTMCP else ("bare", "sdk")
        bare = f"{v / values[bare_of]:.3f}" if bare_of in values else "-"
        sdk = f"{v / values[sdk_of]:.3f}" if sdk_of in values else "-"
        floor = FLOOR_OF.get(c)
        against = "-"
        if floor in values:
            ratio = v / values[floor]
            against = f"**{ratio:.3f}**" if ratio <= TARGET else f"**{ratio:.3f}** (over {TARGET})"
        spans = extra[c]["sentry_per_call" if c == "sentry" else "spans_per_call"]
        conventions = CONVENTIONS_OF.get(c)
        required = f"{v / values[conventions]:.3f}" if conventions in values else "-"
        print(f"| {c} | {v:,.0f} | {bare} | {sdk} | {against} | {spans:.2f} | {required} |")


def table(rounds: int, calls: int, http_calls: int, modes: tuple[str, ...], configs: tuple[str, ...]) -> None:
    print(f"Timed: CPU time per call (client and server share the process), median of {rounds} fresh-process")
    print(f"rounds, configurations interleaved round by round; wall time beside it. {machine()}")
    for mode in modes:
        if "floor-payload" in configs:
            describe(mode)
        n = http_calls if mode == "http" else calls
        samples: dict[str, list[dict[str, float]]] = {c: [] for c in configs}
        for _ in range(rounds):
            for config in configs:
                samples[config].append(_spawn(config, mode, n))
        cpu = {c: statistics.median(s["cpu_us"] for s in samples[c]) for c in configs}
        _print_table(
            mode,
            f"CPU µs per call ({n} calls, {rounds} rounds)",
            "CPU µs/call",
            cpu,
            {c: s[-1] for c, s in samples.items()},
        )
        walls = ", ".join(f"{c} {statistics.median(s['wall_us'] for s in samples[c]):,.0f}" for c in configs)
        spread = ", ".join(
            f"{c} {min(s['cpu_us'] for s in samples[c]):,.0f}-{max(s['cpu_us'] for s in samples[c]):,.0f}"
            for c in configs
        )
        print(f"\nwall µs/call: {walls}\n\nCPU µs/call, min-max over the rounds: {spread}")


def instructions(calls: int, http_calls: int, modes: tuple[str, ...], configs: tuple[str, ...]) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind on PATH (e.g. apt-get install valgrind)")
    from concurrent.futures import ThreadPoolExecutor

    print(f"Instructions per call (callgrind; start-up and warm-up not counted). {machine()}")
    if "floor-payload" in configs:
        for mode in modes:
            describe(mode)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = {
            (mode, c): pool.submit(_instructions, c, mode, http_calls if mode == "http" else calls)
            for mode in modes
            for c in configs
        }
        for mode in modes:
            results = {c: runs[mode, c].result() for c in configs}
            n = http_calls if mode == "http" else calls
            k = {c: r["instructions"] / 1000 for c, r in results.items()}
            _print_table(mode, f"instructions per call ({n} calls)", "k instr/call", k, results)


def memory(calls: int) -> None:
    print(f"peak RSS after {calls} in-memory calls (fresh process each)")
    for config in ("bare", "mcpobs"):
        for hostile in (False, True):
            peak = _spawn(config, "auto", calls, hostile=hostile, memory=True)["peak_rss_mb"]
            print(f"  {config:<8} {'unique tool names' if hostile else 'one tool name':<18} {peak:8.1f} MiB")


def _modes(only: str | None) -> tuple[str, ...]:
    if only is None:
        return MODES
    return ("auto", "legacy") if only == "memory" else (only,)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", choices=CONFIGS)
    parser.add_argument("--mode", choices=MODES, default="auto")
    parser.add_argument("--calls", type=int, help="calls per round in memory (default 2000 timed, 1000 counted)")
    parser.add_argument("--http-calls", type=int, help="calls per round over HTTP (default 200)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=(*MODES, "memory"), help="one mode (memory: auto and legacy)")
    parser.add_argument("--configs", help="comma-separated subset of: " + ", ".join(CONFIGS))
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--describe", action="store_true", help="print what each configuration runs")
    parser.add_argument("--describe-spans", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fields", type=int, help="the tool takes an object of this many fields (default: one string)")
    args = parser.parse_args()
    if args.fields:
        os.environ[_FIELDS] = str(args.fields)  # the workers inherit it
        globals()["ARGUMENTS"] = _arguments()
    if args.worker:
        worker(args)
        return
    configs = tuple(args.configs.split(",")) if args.configs else CONFIGS
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        parser.error(f"unknown configuration(s) {', '.join(sorted(unknown))}; choose from {', '.join(CONFIGS)}")
    configs = _available(configs)
    http_calls = args.http_calls or 200
    if args.describe:
        print("| config | what runs |\n|---|---|")
        for c in CONFIGS:
            print(f"| {c} | {WHAT[c]} |")
    elif args.instructions:
        instructions(args.calls or 1000, http_calls, _modes(args.only), configs)
    elif args.memory:
        memory(args.calls or 100_000)
    else:
        table(args.rounds, args.calls or 2000, http_calls, _modes(args.only), configs)


if __name__ == "__main__":
    main()
