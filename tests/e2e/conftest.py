"""One session for every end-to-end test: real Jaeger and Prometheus, one workload (see workload_session)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from workload_session import Session, run_workload


@pytest.fixture(scope="session")
def e2e(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    with run_workload(tmp_path_factory.mktemp("e2e")) as session:
        yield session
