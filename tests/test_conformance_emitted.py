"""What mcpobs emits, row by row of the conventions' requirement table, on every transport.

One real conversation per transport (in process, Streamable HTTP on loopback, stdio in a
subprocess; 2026-07-28 and handshake-era), then every row of `semconv.REQUIREMENTS` is checked
against the spans and metric points both sides recorded (tests/conformance_survey.py).
"""

from __future__ import annotations

import anyio
import pytest
from conformance_survey import TRANSPORTS, check_for, observe, verdicts

from mcpobs import semconv as S


def test_every_requirement_has_a_check():
    for row in S.REQUIREMENTS:
        assert check_for(row.signal, row.item), row


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_each_requirement_is_emitted_as_the_table_says(transport):
    observed = anyio.run(observe, transport)
    missing = [
        f"{row.signal} / {row.item}: the table says {row.emitted!r}"
        for row, verdict, _ in verdicts(S.REQUIREMENTS, [observed])
        if verdict == "missing"
    ]
    assert not missing, "\n".join(missing)
