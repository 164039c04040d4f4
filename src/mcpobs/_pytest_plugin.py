"""The pytest plugin (the `pytest11` entry point): the `mcpobs_telemetry` fixture.

Kept apart from `mcpobs.testing` so that module, and `python -m mcpobs demo` which uses it,
work where pytest is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpobs.testing import CapturedTelemetry, capture


@pytest.fixture
def mcpobs_telemetry() -> Iterator[CapturedTelemetry]:
    """mcpobs instrumented into in-memory exporters for one test."""
    import mcpobs

    captured = capture()
    try:
        yield captured
    finally:
        mcpobs.uninstrument()
        captured.tracer_provider.shutdown()
        captured.meter_provider.shutdown()
