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


# Modules whose tests share one costly start: the e2e session (real backends and one workload,
# tests/e2e/conftest.py) and the TypeScript reference server. scripts/test runs the suite on two
# workers (-n 2 --dist loadgroup); each group stays on one worker, so each is started once.
SHARED_STARTS = {"e2e": "e2e", "test_client_against_typescript_server.py": "typescript-server"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        for part, group in SHARED_STARTS.items():
            if part in item.path.parts:
                item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """A pytest-xdist worker hands each report over as UTF-8, and captured output can hold a lone
    surrogate (tests/test_hostile_text.py sends them through the SDK's logs): escape it, or the
    worker dies with an internal error."""
    report.sections = [(title, text.encode("utf-8", "backslashreplace").decode()) for title, text in report.sections]
