"""The backends a test starts are gone when it ends, however it ends (scripts/stack's own folder: test_examples)."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import stack
from processes import group_alive, sigint_ignored

pytestmark = pytest.mark.e2e


class Boom(Exception):
    pass


def test_a_test_that_fails_midway_leaves_no_backend_behind(tmp_path: Path):
    with sigint_ignored(), pytest.raises(Boom), stack(tmp_path) as backends:  # SIGINT as in a background job
        processes = [backends.jaeger.process, backends.prometheus.process]
        raise Boom
    for process in processes:
        assert process.returncode is not None, process.args[0]  # stopped and reaped
        assert not group_alive(process), f"{process.args[0]} left a process behind"
    assert (tmp_path / "prometheus-data").is_dir()  # what they wrote is in the test's own folder
