"""`otel_env()`: the OpenTelemetry settings to hand a stdio server the host spawns.

The SDK's `stdio_client` starts a server with a filtered environment (PATH, HOME and a few
more), not the host's, unless `StdioServerParameters(env=...)` adds variables. A server the
host spawns therefore does not see the host's `OTEL_*` and exports to the default endpoint.
Passing the whole environment would fix that and leak everything else; this returns only
the `OTEL_*` variables, and leaves out the ones that carry credentials (the OTLP headers,
which hold API keys and bearer tokens) unless asked.

Passed as they are, they also carry the host's service name, so the server's spans and
metrics would be filed under the host's: `service_name=` gives the server its own, in
`OTEL_SERVICE_NAME`, and takes `service.name` out of `OTEL_RESOURCE_ATTRIBUTES` so that no
SDK that reads the two in another order can bring the host's back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import cast

from opentelemetry.sdk.environment_variables import OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME
from opentelemetry.sdk.resources import SERVICE_NAME

from mcpobs._core.config import ConfigurationError

_PREFIX = "OTEL_"
_CREDENTIALS = ("_HEADERS",)
"""Name endings of variables that usually hold secrets: OTEL_EXPORTER_OTLP_[SIGNAL_]HEADERS."""


def otel_env(
    *, service_name: str | None = None, headers: bool = False, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """This process's `OTEL_*` variables, for ``StdioServerParameters(env=...)``.

    ``service_name="shop"`` names the server's own service (``OTEL_SERVICE_NAME``, and no
    ``service.name`` left in ``OTEL_RESOURCE_ATTRIBUTES``); left out, the server shares the
    host's name. ``headers=True`` includes ``OTEL_EXPORTER_OTLP_HEADERS`` and the per-signal
    headers too: only for a server you trust with the credentials they may hold. ``environ``
    defaults to `os.environ`.
    """
    given = cast("object", service_name)  # checked as a caller may pass it, whatever the annotation says
    if given is not None and (not isinstance(given, str) or not given.strip()):
        raise ConfigurationError(
            f"otel_env(service_name={service_name!r}): expected the stdio server's own service name, "
            "e.g. otel_env(service_name='shop'), or leave it out to pass on the host's."
        )
    env = os.environ if environ is None else environ
    found = {
        name: value
        for name, value in env.items()
        if name.startswith(_PREFIX) and (headers or not name.endswith(_CREDENTIALS))
    }
    if service_name is not None:
        found[OTEL_SERVICE_NAME] = service_name
        others = _without_service_name(found.pop(OTEL_RESOURCE_ATTRIBUTES, ""))
        if others:
            found[OTEL_RESOURCE_ATTRIBUTES] = others
    return found


def _without_service_name(attributes: str) -> str:
    """`OTEL_RESOURCE_ATTRIBUTES` (comma-separated key=value pairs) without its `service.name` pair."""
    pairs = (pair.strip() for pair in attributes.split(","))
    kept = [pair for pair in pairs if pair and pair.split("=", 1)[0].strip() != SERVICE_NAME]
    return ",".join(kept)
