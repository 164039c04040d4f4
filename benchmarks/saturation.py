"""What mcpobs costs a running service: throughput, latency, CPU and bytes at saturation, exporting.

Per mode and configuration, one server process serves a trivial `echo` tool while one load
process drives it with many concurrent callers for a fixed time; both export OTLP/HTTP (batch
span processor, periodic metric reader) to one receiver process on loopback, which counts the
protobuf bytes it is sent per signal and per side. The exporters' threads (encoding, sending)
are part of the cost, and only a run like this one shows them.

Modes:

- ``http-auto``: Streamable HTTP (uvicorn), `Client(url)`: the 2026-07-28 per-request path;
- ``http-legacy``: the same server, `Client(url, mode="legacy")`: the initialize handshake and a
  session per client;
- ``stdio``: the server is the load process's subprocess, over stdio (mode auto); one
  connection, as a host has, with every caller's requests in flight on it at once.

Configurations:

- ``bare``: no tracer provider anywhere (the SDK's span middleware is a no-op);
- ``sdk-server``: the SDK's own span middleware in the server, exporting; a bare load process;
- ``floor-server``: the conventions' minimum on the server: the SDK's span middleware and the one
  metric record the conventions require (the server duration of each `tools/call`), written by hand
  as in ``benchmarks/overhead.py``, exporting; a bare load process;
- ``mcpobs-server``: ``mcpobs.instrument(clients=False)`` in the server, exporting; a bare load process;
- ``mcpobs-server-lean``: the same with ``omit_attributes=["peer", "contract"]``: the per-session
  facts on the handshake spans and the metrics only, so each call's span is smaller;
- ``sdk``: the SDK's own tracing in the server and in the load process's clients, both exporting;
- ``mcpobs``: ``mcpobs.instrument()`` on both sides, both exporting.

The ratios that matter are taken in the same run: ``mcpobs-server / sdk-server`` (the goal:
throughput at least 0.97x, server CPU per call and p99 at most 1.05x, in every mode) and
``mcpobs / sdk`` (the instrumented client beside the SDK's own client spans). ``mcpobs-server /
floor-server`` says how much of the first gap is what the conventions require (a metric the SDK's
tracing does not record) and how much is mcpobs's own. CPU per call is a
process's user + system time over the measured window (/proc, every thread: the batch exporter's
and the metric reader's included) over the calls made in it; the receiver's CPU is not counted.
Span bytes per call are the `tools/call` spans' (each with its share of its batch's envelope:
resource, scope, framing) over the calls made, warm-up included; each caller makes one failing
call (a `ToolError`) before the measured window, for the span bytes of a failing call; metric bytes per call are every
metric export of the configuration's run over its calls, so they depend on the export interval
(one export every 5 s, cumulative temporality) and fall as throughput rises.

On a small shared machine the load process competes with the server for the same cores: read
ratios, not absolute numbers, and prefer a quiet machine and ``--rounds 3`` (interleaved rounds,
the median of each figure).

    python benchmarks/saturation.py --write-docs              # every mode and configuration
    python benchmarks/saturation.py --modes http-legacy --configs sdk-server,mcpobs-server --seconds 5
    python benchmarks/saturation.py --from-json benchmarks/results/saturation.json --write-docs
    python benchmarks/saturation.py --profile --modes http-auto  # where mcpobs's server time goes
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness import cli
from harness.docs import save_json
from harness.machine import machine
from harness.workers import clean_env, test_helpers
from saturation_configs import CONFIGS, METRIC_INTERVAL_MS, MODES
from saturation_figures import brief, derive, report

test_helpers()
from processes import free_port, wait_for_port  # noqa: E402  (tests/processes.py)

ROOT = Path(__file__).resolve().parent.parent
JSON_OUT = Path("benchmarks/results/saturation.json")  # under --root (default: the checkout), as the docs' paths


def _cpu_seconds(pid: int, main_thread: bool = False) -> float:
    """User + system CPU seconds of a process, all its threads or its main thread alone (Linux /proc)."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat" if main_thread else f"/proc/{pid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_server(parent: int) -> int:
    """The pid of the stdio server the load process `parent` started (its only `--role server` child)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"server" in (entry / "cmdline").read_bytes().split(b"\0"):
                return int(entry.name)
        except (OSError, ValueError):
            continue  # a process that ended while the scan read it
    raise RuntimeError(f"the load process {parent} has no stdio server child")


# -- the parent: one run, every mode and configuration -----------------------------------------


def _tallies(receiver_port: int) -> dict[str, dict[str, float]]:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{receiver_port}/count", timeout=5) as reply:
        return json.loads(reply.read())


def _line(process: subprocess.Popen[str], expected: str) -> None:
    assert process.stdout is not None
    got = process.stdout.readline().strip()
    if got != expected:
        process.kill()
        raise RuntimeError(f"the load process said {got!r}, not {expected!r} (its stderr is above)")


def measure(mode: str, config: str, args: argparse.Namespace, receiver_port: int, profile: str) -> dict[str, Any]:
    """One configuration in one mode: fresh server and load processes, the receiver's tallies before and after."""
    me = [sys.executable, str(Path(__file__).resolve())]
    otlp = f"http://127.0.0.1:{receiver_port}"
    env = clean_env(("OTEL_",))
    port = free_port()
    server_args = ["--role", "server", "--config", config, "--mode", mode, "--port", str(port), "--otlp", otlp]
    server_args += ["--profile-out", profile] if profile else []
    srv = None
    if mode == "stdio":
        target = json.dumps([me[1], *server_args])  # the load process starts it
    else:
        srv = subprocess.Popen([*me, *server_args], env=env)
        wait_for_port(port, srv, "the server", timeout=60)
        target = f"http://127.0.0.1:{port}/mcp"
    before = _tallies(receiver_port)
    try:
        load_args = ["--clients", str(args.clients), "--seconds", str(args.seconds), "--warm", str(args.warm)]
        drive = subprocess.Popen(
            [*me, "--role", "load", "--config", config, "--mode", mode, "--target", target, "--otlp", otlp, *load_args],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        # a load process that hangs (its server died, say) would block the readlines below for ever
        watchdog = threading.Timer(args.warm + args.seconds + 300, drive.kill)
        watchdog.daemon = True
        watchdog.start()
        _line(drive, "measuring")
        server_pid = srv.pid if srv else _child_server(drive.pid)
        wall, server_cpu, client_cpu = time.perf_counter(), _cpu_seconds(server_pid), _cpu_seconds(drive.pid)
        server_main = _cpu_seconds(server_pid, main_thread=True)
        _line(drive, "done")
        server_main = _cpu_seconds(server_pid, main_thread=True) - server_main
        server_cpu = _cpu_seconds(server_pid) - server_cpu
        client_cpu = _cpu_seconds(drive.pid) - client_cpu
        wall = time.perf_counter() - wall
        assert drive.stdout is not None
        result = json.loads(drive.stdout.readline())
        if drive.wait(120) != 0:
            raise RuntimeError(f"the load process exited with {drive.returncode}")
        watchdog.cancel()
    finally:
        if srv is not None:
            srv.terminate()
            srv.wait(60)
    # Both processes have flushed and exited, and the receiver counts an export before it answers.
    after = _tallies(receiver_port)
    received = {key: {k: n - before.get(key, {}).get(k, 0) for k, n in tally.items()} for key, tally in after.items()}
    cpu = {"server_cpu": server_cpu, "server_main_cpu": server_main, "client_cpu": client_cpu}
    return {**result, "cpu_wall": wall, **cpu, "received": received}


def run(args: argparse.Namespace, modes: list[str], configs: list[str], profiles: Path | None = None) -> dict[str, Any]:
    """Every (mode, configuration), `args.rounds` times interleaved; the JSON is saved as each round ends."""
    started = time.perf_counter()
    receiver_port = free_port()
    rcv = subprocess.Popen([sys.executable, __file__, "--role", "receiver", "--port", str(receiver_port)])
    data: dict[str, Any] = {
        "machine": machine(),
        "clients": args.clients,
        "seconds": args.seconds,
        "warm": args.warm,
        "rounds": args.rounds,
        "metric_interval_s": METRIC_INTERVAL_MS / 1000,
        "run_seconds": 0.0,
        "runs": {mode: {config: [] for config in configs} for mode in modes},
    }
    try:
        wait_for_port(receiver_port, rcv, "the receiver", timeout=60)
        for n in range(args.rounds):
            for mode in modes:
                for config in configs:
                    profile = str(profiles / f"{mode}-{config}.prof") if profiles and config != "bare" else ""
                    raw = measure(mode, config, args, receiver_port, profile)
                    data["runs"][mode][config].append(raw)
                    summary = derive([raw])
                    print(f"round {n + 1}, {mode}, {config}: {brief(summary)}", file=sys.stderr, flush=True)
            data["run_seconds"] = time.perf_counter() - started
            if args.json:
                save_json(args.json, data)
    finally:
        rcv.terminate()
        rcv.wait(10)
    return data


def main() -> None:
    parser = cli.parser(__doc__)
    parser.add_argument(
        "--role", choices=("parent", "receiver", "server", "load"), default="parent", help=argparse.SUPPRESS
    )
    parser.add_argument("--config", choices=CONFIGS, default="bare", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=MODES, default="http-auto", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--target", default="", help=argparse.SUPPRESS)
    parser.add_argument("--otlp", default="", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", default="", help=argparse.SUPPRESS)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of: " + ", ".join(MODES))
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset of: " + ", ".join(CONFIGS))
    parser.add_argument("--clients", type=int, default=50, help="concurrent callers (default 50)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per configuration (default 10)")
    parser.add_argument("--warm", type=float, default=2.0, help="seconds of load before measuring (default 2)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds; each figure is their median")
    parser.add_argument("--json", type=Path, help=f"where the raw numbers go (--write-docs: {JSON_OUT})")
    parser.add_argument("--from-json", type=Path, help="no run: the report and docs from a saved run")
    parser.add_argument(
        "--write-docs", action="store_true", help="write the JSON, the plot, the docs section, the README rows"
    )
    parser.add_argument(
        "--profile", action="store_true", help="run each server under cProfile; print mcpobs's top functions"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)  # the tests write a copy
    args = parser.parse_args()
    if args.role != "parent":
        import saturation_roles as roles

        if args.role == "receiver":
            return roles.receiver(args.port)
        if args.role == "server":
            return roles.server(args.config, args.mode, args.port, args.otlp, args.profile_out)
        return roles.load(args.config, args.mode, args.target, args.clients, args.seconds, args.warm, args.otlp)

    if args.profile and args.write_docs:
        parser.error("--profile slows the servers: its figures are not for the docs")
    if args.from_json:
        data = json.loads(args.from_json.read_text())
    else:
        modes, configs = cli.subset(parser, args.modes, MODES, ""), cli.subset(parser, args.configs, CONFIGS, "")
        if args.write_docs and not args.json:
            args.json = args.root / JSON_OUT
        configs = [c for c in CONFIGS if c in configs]  # bare first, each pair's baseline before it
        with tempfile.TemporaryDirectory() as tmp:
            profiles = Path(tmp) if args.profile else None
            data = run(args, [m for m in MODES if m in modes], configs, profiles)
            if profiles:
                from saturation_profile import profile_report

                print(profile_report(data, profiles))
    print(report(data))
    if args.write_docs:
        from saturation_docs import write_docs

        write_docs(data, args.root)


if __name__ == "__main__":
    main()
