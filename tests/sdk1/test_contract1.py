"""The contract tools on mcp 1.x (issue 52): `snapshot module:attr`, `diff` and `replay` of FastMCP 3,
FastMCP 1 and lowlevel servers, with the verdicts they give on mcp 2.x (tests/test_replay_baseline.py).

Each command runs as a user runs it: `python -m mcpobs` in a subprocess of this venv.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import fastmcp
import orders_fastmcp3
import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.trace import SpanKind

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent
GOOD = [{"order_id": f"O-{n}"} for n in range(5)]
MISTAKES = [{"order_id": 1873}, {}]


def cli(*argv: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpobs", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])},
        timeout=120,
    )


@pytest.mark.parametrize("factory", ["release", "fastmcp1", "lowlevel"])
def test_snapshot_of_a_module_attribute_lists_its_tools(factory):
    done = cli("contract", "snapshot", f"orders_fastmcp3:{factory}")
    assert done.returncode == 0, done.stderr
    (tool,) = json.loads(done.stdout)["tools"]
    assert tool["name"] == "get_order_status" and tool["inputSchema"]["required"] == ["order_id"]
    assert re.fullmatch(r"[0-9a-f]{16}", tool["schemaFingerprint"])


def test_diff_of_two_fastmcp3_releases_calls_an_added_optional_argument_additive(tmp_path):
    snapshots = {}
    for name in ("release", "optional", "required"):
        done = cli("contract", "snapshot", f"orders_fastmcp3:{name}")
        assert done.returncode == 0, done.stderr
        snapshots[name] = tmp_path / f"{name}.json"
        snapshots[name].write_text(done.stdout)
    assert json.loads(snapshots["release"].read_text())["tools"][0]["inputSchema"]["additionalProperties"] is False
    added = cli("contract", "diff", str(snapshots["release"]), str(snapshots["optional"]))
    assert added.returncode == 0, added.stdout + added.stderr
    assert added.stdout.startswith("additive: get_order_status: input region: added (optional; FastMCP 3."), (
        added.stdout
    )
    required = cli("contract", "diff", str(snapshots["release"]), str(snapshots["required"]))
    assert required.returncode == 1
    assert "breaking: get_order_status: input region: new required input" in required.stdout


@pytest.fixture
async def recorded(tmp_path):
    """Five good calls and two caller mistakes served by the FastMCP 3 release, as OTLP JSON."""
    telemetry = capture(record_shapes=True)
    try:
        async with fastmcp.Client(orders_fastmcp3.release()) as client:
            for arguments in GOOD + MISTAKES:
                await client.call_tool_mcp("get_order_status", arguments)
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


async def test_replay_gives_the_verdicts_it_gives_on_mcp2(recorded):
    otlp, ok, refused = recorded
    same = cli("contract", "replay", "orders_fastmcp3:release", "--from", str(otlp))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "5 accepted by the candidate, 0 refused; calls it refused (the callers' mistakes): 2 refused" in same.stdout
    optional = cli("contract", "replay", "orders_fastmcp3:optional", "--from", str(otlp))
    assert optional.returncode == 0, optional.stdout + optional.stderr
    required = cli("contract", "replay", "orders_fastmcp3:required", "--from", str(otlp))
    assert required.returncode == 1, required.stdout + required.stderr
    (verdict,) = [line for line in required.stdout.splitlines() if line.startswith("fail: ")]
    assert verdict.startswith(
        "fail: get_order_status: region: required by the candidate; callers omit it (5 calls; clients mcp/0.1.0; e.g. traces "
    ), required.stdout
    examples = set(re.findall(r"[0-9a-f]{32}", verdict))
    assert examples and examples <= ok and not examples & refused
