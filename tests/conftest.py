"""Shared fixtures: the anyio backend; mcpobs's own `mcpobs_telemetry` comes from its plugin."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
