"""`otel_env()`: the OpenTelemetry settings to hand a stdio server the host spawns.

The SDK's `stdio_client` starts a server with a filtered environment (PATH, HOME and a few
more), not the host's, unless `StdioServerParameters(env=...)` adds variables. A server the
host spawns therefore does not see the host's `OTEL_*` and exports to the default endpoint.
Passing the whole environment would fix that and leak everything else; this returns only
the `OTEL_*` variables, and leaves out the ones that carry credentials (the OTLP headers,
which hold API keys and bearer tokens) unless asked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_PREFIX = "OTEL_"
_CREDENTIALS = ("_HEADERS",)
"""Name endings of variables that usually hold secrets: OTEL_EXPORTER_OTLP_[SIGNAL_]HEADERS."""


def otel_env(*, headers: bool = False, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's `OTEL_*` variables, for ``StdioServerParameters(env=...)``.

    ``headers=True`` includes ``OTEL_EXPORTER_OTLP_HEADERS`` and the per-signal headers too:
    only for a server you trust with the credentials they may hold. ``environ`` defaults
    to `os.environ`.
    """
    env = os.environ if environ is None else environ
    return {
        name: value
        for name, value in env.items()
        if name.startswith(_PREFIX) and (headers or not name.endswith(_CREDENTIALS))
    }
