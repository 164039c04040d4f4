"""A dead OTLP endpoint costs one stderr line, not seconds at exit (real subprocesses).

With nothing listening at the endpoint, the OTLP exporters retry each batch with backoff for
up to 10 s, and the SDK flushes every signal at exit. Each process here runs twice: exporting
to a closed loopback port, and with exporting off; the difference in wall time is what the
dead endpoint costs. The bound is generous (3 s): the retries cost 10 s and more.
"""

from __future__ import annotations

import pytest
from exiting import OFF, environment, exporting_to, run_short_script, sigterm_time
from processes import free_port


def added_lines(stderr: str, quiet: str) -> list[str]:
    """The stderr lines the dead endpoint added to a run with exporting off."""
    seen = set(quiet.splitlines())
    return [line for line in stderr.splitlines() if line.strip() and line not in seen]


def test_a_short_script_exits_on_time_with_one_line_naming_the_endpoint(tmp_path):
    port = free_port()
    off, quiet = run_short_script(tmp_path, environment(**OFF))
    exporting, stderr = run_short_script(tmp_path, exporting_to(port))
    assert exporting - off < 3, f"{exporting:.1f} s against {off:.1f} s with exporting off:\n{stderr}"
    lines = [line for line in added_lines(stderr, quiet) if "export" in line.lower()]  # not rich's timestamps
    assert len(lines) == 1, stderr
    assert f"http://127.0.0.1:{port}" in lines[0] and "OTEL_EXPORTER_OTLP_ENDPOINT" in lines[0]


@pytest.mark.anyio
async def test_a_uvicorn_server_stops_promptly_after_sigterm(tmp_path):
    port = free_port()
    off, quiet = await sigterm_time(tmp_path, environment(**OFF))
    exporting, stderr = await sigterm_time(tmp_path, exporting_to(port))
    assert exporting - off < 3, f"{exporting:.1f} s against {off:.1f} s with exporting off:\n{stderr}"
    lines = [line for line in added_lines(stderr, quiet) if "export" in line.lower()]  # not uvicorn's pid lines
    assert len(lines) == 1, stderr
    assert f"http://127.0.0.1:{port}" in lines[0] and "OTEL_EXPORTER_OTLP_ENDPOINT" in lines[0]
