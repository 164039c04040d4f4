"""An OTLP endpoint nothing listens at costs one log line, not seconds at every export and at exit.

The OTLP exporters retry a refused connection with backoff for up to their timeout (10 s),
once per batch, and the SDK flushes every signal at exit: a short script with no collector
at the default ``localhost:4318`` took 16 s to exit, a uvicorn server as long to stop, with
six retry lines each time. For the exporters `configure()` creates, a wrapper first opens a
TCP connection to the endpoint (refused at once on a closed port, at most `_CONNECT_TIMEOUT`
otherwise); when that fails the batch is dropped without calling the exporter, and one line
says which endpoint and which variable to change. A recovered endpoint is used again at the
next export. Behind an HTTP(S) proxy the check is left out: the proxy, not the endpoint, is
what the exporter connects to.

A collector that accepts connections and never answers (stuck, or its listen queue still
taking connections the process never reads) held every export for the exporter's whole
timeout: SIGTERM took 40 s for an HTTP server. So the check also asks: after connecting it
sends a bodyless HTTP request (over TLS for https: the handshake is the answer) and waits at
most `_ANSWER_TIMEOUT` for the first byte of any reply; silence counts as unreachable.

In a forked child the endpoints start unchecked with fresh locks (the exporter thread that
held one in the parent does not exist there), and each exporter's HTTP session drops the
connections it holds: a keep-alive socket the parent opened is the parent's, and two
processes writing requests into one connection corrupt both.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.request
import weakref
from typing import Any
from urllib.parse import urlparse

from mcpobs._core import otel_releases
from mcpobs._core.guard import logger
from mcpobs._core.text import for_log
from mcpobs._core.uri import scrub

_CONNECT_TIMEOUT = 1.0
"""Seconds to wait for a TCP connection before calling the endpoint unreachable."""
_ANSWER_TIMEOUT = 1.0
"""Seconds to wait, once connected, for the first byte of an answer."""
_TRUST_UP = 5.0
_TRUST_DOWN = 2.0
"""Seconds a check is reused: exports of several signals at exit share one check."""
_QUICK_REFUSAL = 0.05
"""A refusal faster than this is not reused: asking again costs nothing, and the batch made
just after a collector restarts is exported instead of dropped."""


class Endpoint:
    """One host:port the exporters send to, and whether it accepted a connection lately."""

    def __init__(self, host: str, port: int, tls: bool = False) -> None:
        self.host = host
        self.port = port
        self.tls = tls
        self._up = True
        self._checked = float("-inf")
        self._trust = _TRUST_UP
        self._said = False
        self._lock = threading.Lock()

    def reachable(self, url: str, variable: str, defaulted: bool) -> bool:
        """Whether to export now; says once per outage that nothing answers."""
        with self._lock:
            now = time.monotonic()
            if now - self._checked > self._trust:
                self._up = _answers(self.host, self.port, self.tls)
                self._checked = time.monotonic()
                took = self._checked - now
                self._trust = _TRUST_UP if self._up else _TRUST_DOWN if took > _QUICK_REFUSAL else 0.0
                if self._up and self._said:
                    logger.info("mcpobs: the OTLP endpoint %s answers again; exporting resumes.", shown(url))
                    self._said = False
            if not self._up and not self._said:
                self._said = True
                logger.warning(
                    "mcpobs: nothing answers at the OTLP endpoint %s (%s); telemetry sent there is dropped "
                    "until it does. Set %s to your collector's address, or OTEL_TRACES_EXPORTER=none and "
                    "OTEL_METRICS_EXPORTER=none to stop exporting.",
                    shown(url),
                    f"the default: {variable} is not set" if defaulted else f"from {variable}",
                    variable,
                )
            return self._up

    def forget(self) -> None:
        """An export failed: check again before the next one."""
        with self._lock:
            self._checked = float("-inf")

    def _start_over(self) -> None:
        self._lock = threading.Lock()
        self._checked = float("-inf")


_endpoints: dict[tuple[str, int], Endpoint] = {}
_endpoints_lock = threading.Lock()


def shown(url: str) -> str:
    """An endpoint as a log line shows it: without its userinfo and query values (`uri.scrub`), one bounded line."""
    return for_log(scrub(url), 512)


def _endpoint(host: str, port: int, tls: bool = False) -> Endpoint:
    with _endpoints_lock:
        return _endpoints.setdefault((host, port), Endpoint(host, port, tls))


def _answers(host: str, port: int, tls: bool) -> bool:
    """Whether something at host:port accepts a connection and answers within the timeouts."""
    try:
        sock = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT)
    except OSError:
        return False
    try:
        sock.settimeout(_ANSWER_TIMEOUT)
        if tls:
            import ssl

            context = ssl.create_default_context()
            context.check_hostname = False  # only liveness is asked here; the exporter verifies
            context.verify_mode = ssl.CERT_NONE
            sock = context.wrap_socket(sock, server_hostname=host)  # the handshake needs an answer
            return True
        sock.sendall(b"HEAD / HTTP/1.1\r\nHost: " + host.encode("idna") + b"\r\nConnection: close\r\n\r\n")
        return bool(sock.recv(1))
    except (OSError, UnicodeError):
        return False
    finally:
        sock.close()


def _proxied(url: Any) -> bool:
    proxies = urllib.request.getproxies()
    return url.scheme in proxies and not urllib.request.proxy_bypass(url.hostname or "")


class GuardedExporter:
    """An exporter that drops a batch at once when its endpoint refuses connections."""

    def __init__(
        self, exporter: Any, endpoint: Endpoint, url: str, variable: str, defaulted: bool, failure: Any
    ) -> None:
        self._exporter = exporter
        self._endpoint = endpoint
        self._url = url
        self._variable = variable
        self._defaulted = defaulted
        self._failure = failure

    def _drop_connections(self) -> None:
        otel_releases.drop_connections(self._exporter)  # the child's copies of the sockets only

    def export(self, *args: Any, **kwargs: Any) -> Any:
        if not self._endpoint.reachable(self._url, self._variable, self._defaulted):
            return self._failure
        result = self._exporter.export(*args, **kwargs)
        if result == self._failure:
            self._endpoint.forget()
        return result

    def __getattr__(self, name: str) -> Any:  # shutdown, force_flush, preferred temporality...
        return getattr(self._exporter, name)


def guard(exporter: Any, signal: str, variable: str, defaulted: bool) -> Any:
    """`exporter` wrapped when it has an http(s) endpoint reached directly; else as it is.

    `variable` is where the endpoint comes from (`defaulted`: it is unset, the SDK's default
    applies), for the one line shown when nothing answers there.
    """
    raw = getattr(exporter, "_endpoint", None)
    if not isinstance(raw, str) or not raw:
        return exporter
    url = urlparse(raw if "://" in raw else f"http://{raw}")
    if url.scheme not in ("http", "https") or not url.hostname or _proxied(url):
        return exporter
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        return exporter
    endpoint = _endpoint(url.hostname, port, url.scheme == "https")
    guarded = GuardedExporter(exporter, endpoint, raw, variable, defaulted, _failure(signal))
    _guarded.add(guarded)
    return guarded


_guarded: weakref.WeakSet[GuardedExporter] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    global _endpoints_lock
    _endpoints_lock = threading.Lock()
    for endpoint in list(_endpoints.values()):
        endpoint._start_over()  # pyright: ignore[reportPrivateUsage]
    for exporter in list(_guarded):
        try:
            exporter._drop_connections()  # pyright: ignore[reportPrivateUsage]
        except Exception as exc:
            # the type only: the message of a connection's failure can repeat its URL
            logger.debug("mcpobs: an exporter's connections were not dropped after a fork (%s)", type(exc).__qualname__)


os.register_at_fork(after_in_child=_after_fork_in_child)


def _failure(signal: str) -> Any:
    if signal == "traces":
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.FAILURE
    if signal == "metrics":
        from opentelemetry.sdk.metrics.export import MetricExportResult

        return MetricExportResult.FAILURE
    from opentelemetry.sdk._logs.export import LogRecordExportResult

    return LogRecordExportResult.FAILURE
