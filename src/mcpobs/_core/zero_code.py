"""Zero-code use: `opentelemetry-instrument python app.py` with nothing else configured.

`opentelemetry-instrument` runs the installed distro and configurators, then the
`opentelemetry_pre_instrument` hooks, then every instrumentor. This hook (registered under
that group) sets SDK providers from the `OTEL_*` variables for the signals nobody set (a
distro that configured them wins), so the instrumentor itself never configures anything:
instrumenting stays free of global side effects, as contrib instrumentors are.
"""

from __future__ import annotations

import os

from opentelemetry.instrumentation.environment_variables import OTEL_PYTHON_DISABLED_INSTRUMENTATIONS

from mcpobs._core.guard import guarded
from mcpobs._version import DISTRIBUTION


def configure() -> None:
    """The `opentelemetry_pre_instrument` entry point; skipped when mcpobs is disabled."""
    disabled = {name.strip() for name in os.environ.get(OTEL_PYTHON_DISABLED_INSTRUMENTATIONS, "").split(",")}
    if DISTRIBUTION in disabled or "*" in disabled:
        return
    from mcpobs._core import autoconfig

    with guarded("configure from OTEL_* variables"):
        autoconfig.configure()
