"""Serve an MCP app the way production runs it (uvicorn, gunicorn, several workers), then stop it.

`serve` writes the app as a user writes it (`app.py`: `mcpobs.instrument()`, an `MCPServer`,
`app = server.streamable_http_app()`), starts the server command a user types, waits until it
answers, and hands back a `Served` to drive calls with (`calls`: concurrent clients until
every worker answered) and to stop with a signal (`stop`), timed. Telemetry goes to a real
OTLP receiver (`otlp_receiver.py`) with the batch delay and the metric interval longer than
any test: what arrives was sent by the final flush, or not at all.

`count` then checks what arrived against what was served: every `tools/call` span, the spans
of every method as many as each process counted (`mcpobs.server.requests` or `.notifications`), the final
cumulative count of the request (and notification) counter and the duration histogram of every worker, none twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from exiting import exporting_to
from mcp import Client
from otlp_receiver import OtlpReceiver
from processes import free_port, start, wait_for_http

from mcpobs import semconv as S

BIN = Path(sys.executable).parent

APP = """
import os
import time

from mcp.server.mcpserver import MCPServer

import mcpobs

mcpobs.instrument()
server = MCPServer("shop")


@server.tool()
async def whoami(hold: float = 0.0) -> int:
    time.sleep(hold)  # blocks this worker's event loop: see Served.call
    return os.getpid()


app = server.streamable_http_app()
"""

OWN_PROVIDERS = APP.replace(
    "mcpobs.instrument()",
    """
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

tracer_provider = TracerProvider(resource=Resource.create())
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
reader = PeriodicExportingMetricReader(OTLPMetricExporter())
meter_provider = MeterProvider(resource=Resource.create(), metric_readers=[reader])
mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
""",
)
"""The same app with providers the application set up itself."""

MOUNTED = APP.replace(
    "app = server.streamable_http_app()",
    """
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import Mount

mcp_app = server.streamable_http_app()


@asynccontextmanager
async def lifespan(app):
    async with server.session_manager.run():  # as the SDK asks of an app that mounts its app
        yield


app = Starlette(routes=[Mount("/", app=mcp_app)], lifespan=lifespan)
""",
)
"""The same server mounted in the application's own Starlette app, with a lifespan of its own."""

NOT_BEFORE_THE_END = {"OTEL_BSP_SCHEDULE_DELAY": "600000", "OTEL_METRIC_EXPORT_INTERVAL": "600000"}
"""Nothing exported before the process ends: every span and metric depends on the final flush."""


def commands(shape: str, port: int, app_dir: Path) -> list[str]:
    """The command line a user runs for `shape`, two workers where it has workers."""
    where = f"127.0.0.1:{port}"
    if shape == "uvicorn":
        return [str(BIN / "uvicorn"), "app:app", "--app-dir", str(app_dir), "--port", str(port)]
    if shape == "uvicorn --workers 2":
        return [str(BIN / "uvicorn"), "app:app", "--app-dir", str(app_dir), "--port", str(port), "--workers", "2"]
    if shape.startswith("gunicorn"):
        preload = ["--preload"] if "--preload" in shape else []
        worker = "uvicorn_worker.UvicornWorker"
        chdir = ["--chdir", str(app_dir)]
        return [str(BIN / "gunicorn"), "app:app", "-k", worker, "-w", "2", "-b", where, *chdir, *preload]
    if shape == "granian --workers 2":
        return [
            str(BIN / "granian"),
            "app:app",
            "--interface",
            "asgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "2",
        ]
    if shape in ("hypercorn", "hypercorn --workers 2"):
        workers = "2" if shape.endswith("2") else "1"
        return [str(BIN / "hypercorn"), "app:app", "--bind", where, "--workers", workers]
    raise ValueError(shape)


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    stderr: Path
    pids: Counter[int] = field(default_factory=Counter)
    """The worker pid that answered each call."""
    took: float = 0.0
    """Seconds from the signal to the server's exit."""

    @property
    def calls(self) -> int:
        return sum(self.pids.values())

    async def call(self, tool: str = "whoami", clients: int = 8, each: int = 5, workers: int = 1) -> None:
        """`clients` concurrent clients make `each` calls; again until `workers` processes answered."""

        async def one_client(i: int) -> None:
            # Each client connects 50 ms after the one before, whose first call blocks its
            # worker's event loop for 200 ms: that worker cannot accept meanwhile, so another
            # does. (An idle worker accepts every pending connection at once, so clients that
            # all connect together can all land on one worker: CI saw 800 calls on one pid.)
            await anyio.sleep(0.05 * i)
            async with Client(self.url) as client:
                for n in range(each):
                    arguments = {"hold": 0.2} if n == 0 and tool == "whoami" else {}
                    result = await client.call_tool(tool, arguments)
                    assert not result.is_error, result
                    self.pids[int(result.structured_content["result"])] += 1  # type: ignore[index]

        for _ in range(20):
            async with anyio.create_task_group() as group:
                for i in range(clients):
                    group.start_soon(one_client, i)
            if len(self.pids) >= workers:
                return
        raise AssertionError(f"only workers {sorted(self.pids)} answered {self.calls} calls")

    def stop(self, sig: int = signal.SIGTERM, wait: float = 60) -> None:
        """SIGTERM to the server's main process, as an orchestrator sends it; SIGINT and SIGKILL
        to its whole process group, as a terminal's Ctrl-C and a container's end do."""
        started = time.monotonic()
        if sig == signal.SIGTERM:
            self.process.send_signal(sig)
        else:
            os.killpg(self.process.pid, sig)
        self.process.wait(wait)
        self.took = time.monotonic() - started


@contextmanager
def serve(
    shape: str,
    receiver: OtlpReceiver | int,
    tmp_path: Path,
    app: str = APP,
    options: tuple[str, ...] = (),
    **settings: str,
) -> Iterator[Served]:
    """Serve `app` as `shape` (with the server's `options` added), exporting to `receiver` (or to the collector at that port)."""
    (tmp_path / "app.py").write_text(app)
    port = free_port()
    collector = receiver if isinstance(receiver, int) else receiver.port
    env = exporting_to(collector, **{**NOT_BEFORE_THE_END, **settings})
    err = tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        command = [*commands(shape, port, tmp_path), *options]
        process = start(command, cwd=tmp_path, env=env, stdout=stderr, stderr=stderr)
    try:
        wait_for_http(port, process, shape)
        yield Served(process, f"http://127.0.0.1:{port}/mcp", err)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass
class Count:
    """What reached the receiver, against what the server did."""

    calls: int
    """`tools/call` spans received (calls made: `Served.calls`)."""
    duplicates: int
    """Spans received more than once."""
    instances: set[str]
    """`service.instance.id` of the processes whose spans arrived."""
    requests: dict[str, float]
    """Per process, the final `mcpobs.server.requests` for tools/call."""
    durations: dict[str, float]
    """Per process, the final `mcp.server.operation.duration` count for tools/call."""
    unmatched: dict[tuple[str, str], tuple[int, float]]
    """(process, method) whose spans received and final request (or notification) count differ."""

    def line(self, served: Served) -> str:
        requests, durations = sum(self.requests.values()), sum(self.durations.values())
        return (
            f"{self.calls} of {served.calls} tools/call spans ({self.duplicates} twice), requests counted "
            f"{requests:g}, durations {durations:g}, from {len(self.instances)} instances "
            f"({len(served.pids)} worker pids answered), stopped in {served.took:.1f} s"
        )


def count(receiver: OtlpReceiver) -> Count:
    with receiver.lock:
        spans = list(receiver.received_spans)
    ids = Counter(s.span_id for s in spans)
    per_method = Counter((s.instance, s.attributes.get(S.MCP_METHOD_NAME, "")) for s in spans)
    unmatched: dict[tuple[str, str], tuple[int, float]] = {}
    methods = {m for _, m in per_method}
    for method in methods:
        counted = Counter(receiver.final_totals(S.SERVER_REQUESTS.name, **{S.MCP_METHOD_NAME: method}))
        counted.update(receiver.final_totals(S.SERVER_NOTIFICATIONS.name, **{S.MCP_METHOD_NAME: method}))
        for instance in {i for i, _ in per_method} | set(counted):
            received, total = per_method[(instance, method)], counted.get(instance, 0)
            if received != total:
                unmatched[(instance, method)] = (received, total)
    tools_call = {S.MCP_METHOD_NAME: "tools/call"}
    return Count(
        calls=sum(1 for s in spans if s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"),
        duplicates=sum(n - 1 for n in ids.values() if n > 1),
        instances={s.instance for s in spans},
        requests=receiver.final_totals(S.SERVER_REQUESTS.name, **tools_call),
        durations=receiver.final_totals(S.SERVER_OPERATION_DURATION.name, **tools_call),
        unmatched=unmatched,
    )
