"""Shared fixtures: the anyio backend; mcpobs's own `mcpobs_telemetry` comes from its plugin."""

import os

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Under `scripts/test` (MCPOBS_NO_SKIPS=1) or CI, a skipped test fails: a skip is not a pass."""
    outcome = yield
    report = outcome.get_result()
    strict = os.environ.get("MCPOBS_NO_SKIPS") == "1" or os.environ.get("CI", "").lower() == "true"
    if strict and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, which scripts/test counts as a failure: {reason}"
