"""The replay judges a candidate by what the running release did with the same calls (issue 52).

Real traffic holds caller mistakes (a model sends an integer id, forgets an argument). A call the
running release refused is not the candidate's fault: only calls that succeeded today can fail the gate,
and the verdict's counts and example traces name only those.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import orders_release
import pytest
from google.protobuf.json_format import MessageToDict
from mcp import Client
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.trace import SpanKind

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent
GOOD = [{"order_id": f"O-{n}"} for n in range(5)]
MISTAKES = [{"order_id": 1873}, {}]


def run_cli(*argv: str) -> tuple[int, str, str]:
    from mcpobs.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
async def recorded(tmp_path):
    """Five good calls and two caller mistakes, served by the running release and written as a collector's
    file exporter writes them: (the OTLP JSON file, trace ids of calls that succeeded, of calls refused)."""
    telemetry = capture(record_shapes=True)
    try:
        async with Client(orders_release.release()) as client:
            for arguments in GOOD + MISTAKES:
                await client.call_tool("get_order_status", arguments)
        spans = telemetry.spans_named("tools/call get_order_status", SpanKind.SERVER)
        lines = "".join(json.dumps(MessageToDict(encode_spans([span]))) + "\n" for span in telemetry.spans())
    finally:
        mcpobs.uninstrument()
    otlp = tmp_path / "traces.jsonl"
    otlp.write_text(lines)
    ok = {f"{s.context.trace_id:032x}" for s in spans if s.attributes[S.OUTCOME] == "ok"}
    refused = {f"{s.context.trace_id:032x}" for s in spans if s.attributes[S.OUTCOME] == "client_error"}
    assert len(ok) == 5 and len(refused) == 2
    return otlp, ok, refused


async def test_the_running_release_passes_its_own_traffic_mistakes_and_all(recorded):
    otlp, _, refused = recorded
    done = subprocess.run(
        [sys.executable, "-m", "mcpobs", "contract", "replay", "orders_release:release", "--from", str(otlp)],
        capture_output=True,
        text=True,
        cwd=HERE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])},
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 would fail" in done.stdout
    assert (
        "calls the running release accepted: 5 accepted by the candidate, 0 refused; "
        "calls it refused (the callers' mistakes): 2 refused by the candidate too, 0 accepted"
    ) in done.stdout
    noted = [line for line in done.stdout.splitlines() if line.startswith("noted: ")]
    assert len(noted) == 2 and all("refused today too (1 call;" in line for line in noted), done.stdout
    assert set(re.findall(r"[0-9a-f]{32}", "\n".join(noted))) == refused


async def test_an_added_optional_argument_passes(recorded):
    otlp, _, _ = recorded
    status, out, err = await anyio.to_thread.run_sync(
        run_cli, "contract", "replay", "orders_release:optional", "--from", str(otlp)
    )
    assert status == 0, out + err
    assert "5 accepted by the candidate, 0 refused" in out


async def test_an_added_required_argument_fails_naming_only_calls_that_succeeded_today(recorded):
    otlp, ok, refused = recorded
    status, out, err = await anyio.to_thread.run_sync(
        run_cli, "contract", "replay", "orders_release:required", "--from", str(otlp)
    )
    assert status == 1, out + err
    (verdict,) = [line for line in out.splitlines() if line.startswith("fail: ")]
    assert verdict.startswith(
        "fail: get_order_status: region: required by the candidate; callers omit it (5 calls; clients mcp/0.1.0; e.g. traces "
    ), out
    examples = set(re.findall(r"[0-9a-f]{32}", verdict))
    assert examples and examples <= ok and not examples & refused
    assert "1 would fail" in out and "0 accepted by the candidate, 5 refused" in out


async def test_a_recording_without_outcomes_is_judged_by_its_schema_and_says_so(recorded, tmp_path):
    otlp, _, _ = recorded
    older = tmp_path / "older.jsonl"
    dropped = {S.OUTCOME, S.FAILURE_BOUNDARY}
    requests = [json.loads(line) for line in otlp.read_text().splitlines()]
    for request in requests:
        for scope in (s for r in request["resourceSpans"] for s in r["scopeSpans"]):
            for span in scope["spans"]:
                span["attributes"] = [a for a in span.get("attributes", []) if a["key"] not in dropped]
    older.write_text("".join(json.dumps(r) + "\n" for r in requests))
    status, out, err = await anyio.to_thread.run_sync(
        run_cli, "contract", "replay", "orders_release:release", "--from", str(older)
    )
    assert status == 0, out + err
    assert "note: 3 argument shapes recorded without the call's outcome" in out
    assert "2 refused by the candidate too" in out


async def test_a_fastmcp4_release_is_listed_and_its_closed_schemas_take_an_optional_argument_as_additive():
    """FastMCP 4 (on mcp 2.x) is listed through its own client (mcp.Client cannot take it), and, as
    FastMCP 3, writes `additionalProperties: false` into every input schema: an added optional argument
    is additive as the clients see it, an added required one breaking."""
    import fastmcp

    from mcpobs._cli.candidate import snapshot
    from mcpobs._cli.contract_diff import diff

    def release(extra: str) -> fastmcp.FastMCP:
        server = fastmcp.FastMCP("shop", version="1.0.0")
        namespace: dict[str, object] = {}
        exec(f"def get_order_status(order_id: str{extra}) -> str:\n    return 'unknown'\n", namespace)
        server.tool(namespace["get_order_status"])
        return server

    old, optional, required = [
        await snapshot(release(extra)) for extra in ("", ", region: str = 'eu'", ", region: str")
    ]
    assert old["inputSchemasClosedBy"].startswith("FastMCP 4.")
    assert old["tools"][0]["inputSchema"]["additionalProperties"] is False
    (added,) = diff(old, optional)
    assert (added.verdict, added.what.split(" (")[0]) == ("additive", "input region: added")
    assert [(c.verdict, c.what) for c in diff(old, required)] == [("breaking", "input region: new required input")]
