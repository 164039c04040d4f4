"""Ports and child processes for the tests that start real ones (backends, npm peers, Redis, examples)."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    """A loopback port nothing listens on (the OS picked it and it was released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str, timeout: float = 15) -> None:
    """Wait until `process` accepts connections on `port`; fail fast if it exits first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not listen on {port} (exit {process.poll()})") from None
            time.sleep(0.05)


def stop(process: subprocess.Popen, grace: float = 10) -> None:
    """Terminate, and kill what does not exit within `grace` seconds."""
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
