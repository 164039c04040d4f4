"""Nothing lost in the shapes production runs: each server started for real, SIGTERM after the last reply.

Each test serves the app a user writes (`shapes.APP`) with the command a user types, two
workers where the server has workers, makes calls until both workers answered, sends SIGTERM
right after the last reply and counts at a real OTLP receiver on loopback. Nothing is exported
before the end (`shapes.NOT_BEFORE_THE_END`), so every span and every final count depends on
the flush the worker reaches as it stops.
"""

from __future__ import annotations

import pytest
from otlp_receiver import OtlpReceiver
from shapes import count, serve

DEADLINE = 3.0  # the default shutdown deadline
SLACK = 7.0  # the server's own stopping, on a loaded machine

SHAPES = ["uvicorn", "uvicorn --workers 2", "gunicorn", "gunicorn --preload"]


@pytest.mark.anyio
@pytest.mark.parametrize("shape", SHAPES)
async def test_sigterm_right_after_the_last_reply_loses_nothing(shape, tmp_path):
    workers = 1 if shape == "uvicorn" else 2
    receiver = OtlpReceiver()
    with receiver.running(), serve(shape, receiver, tmp_path) as served:
        await served.call(workers=workers)
        served.stop()
        got = count(receiver)
    print(f"{shape}: {got.line(served)}")
    stderr = served.stderr.read_text()[-3000:]
    assert got.calls == served.calls, f"{got.line(served)}\n{stderr}"
    assert got.duplicates == 0, got.line(served)
    assert len(got.instances) == len(served.pids) == workers, got.line(served)
    assert sum(got.requests.values()) == served.calls, f"{got.line(served)}\n{stderr}"
    assert sum(got.durations.values()) == served.calls, got.line(served)
    assert not got.unmatched, got.unmatched
    assert served.took < DEADLINE + SLACK, got.line(served)
