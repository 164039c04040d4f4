"""mcpobs's own suppression check answers as OpenTelemetry's `is_instrumentation_enabled` does.

It reads the current context once instead of once per key (it runs in every wrapper), so it
must agree with OpenTelemetry's function under each way of suppressing.
"""

from __future__ import annotations

from opentelemetry import context
from opentelemetry.instrumentation.utils import is_instrumentation_enabled, suppress_instrumentation

from mcpobs._core.patches import instrumentation_enabled


def test_it_agrees_with_opentelemetry_outside_and_inside_suppression():
    assert instrumentation_enabled() is is_instrumentation_enabled() is True
    with suppress_instrumentation():
        assert instrumentation_enabled() is is_instrumentation_enabled() is False
    assert instrumentation_enabled() is True


def test_each_key_alone_suppresses():
    """The plain string key (set by older instrumentations) and the created key, each on its own."""
    for key in ("suppress_instrumentation", context._SUPPRESS_INSTRUMENTATION_KEY):  # pyright: ignore[reportPrivateUsage]
        token = context.attach(context.set_value(key, True))
        try:
            assert instrumentation_enabled() is is_instrumentation_enabled() is False, key
        finally:
            context.detach(token)
