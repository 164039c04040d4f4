"""A short script's last spans and counts arrive at exit, on every supported Python (a real subprocess).

The flush at exit runs in `atexit`, on a thread of its own within a deadline (`_core/shutdown.py`).
Python 3.12.0 and 3.12.1 refuse to start a thread once the interpreter is finalizing
("RuntimeError: can't create new thread at interpreter shutdown", cpython#104690, relaxed in
3.12.2), and `atexit` runs then: the flush thread never started, a traceback went to stderr,
and every span and count the script had not yet exported was lost. scripts/test runs this on
pyenv's 3.12.1 as well as 3.11, 3.13 and 3.14.
"""

from __future__ import annotations

from exiting import exporting_to, run_short_script
from otlp_receiver import OtlpReceiver

CALLS = 3


def test_a_short_script_exports_its_last_spans_and_counts_at_exit(tmp_path):
    # Long export intervals: nothing leaves before exit, so the flush at exit carries it all.
    slow = {"OTEL_BSP_SCHEDULE_DELAY": "60000", "OTEL_METRIC_EXPORT_INTERVAL": "60000"}
    with OtlpReceiver().running() as receiver:
        _, stderr = run_short_script(tmp_path, exporting_to(receiver.port, **slow), calls=CALLS)
    assert "Traceback" not in stderr and "can't create new thread" not in stderr, stderr
    calls = [s for s in receiver.received_spans if s.name == "tools/call ping"]
    assert sorted(s.kind for s in calls) == [2] * CALLS + [3] * CALLS, stderr  # SERVER and CLIENT each
    assert receiver.final_totals("mcp.server.operation.duration"), stderr
