"""Contract telemetry: fingerprints, a stale catalog, who called, privacy, and the contract diff."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from opentelemetry.trace import SpanKind
from pydantic import BaseModel
from shop import create_server

from mcpobs import semconv as S
from mcpobs._cli.contract_diff import diff
from mcpobs._core.contract import FingerprintCache

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent


class WarehoseV1(BaseModel):
    warehouse: str
    on_hand: int


class StockV1(BaseModel):
    sku: str
    warehouses: list[WarehoseV1]


class WarehouseV2(BaseModel):
    warehouse: str
    count: int  # release 1 called it on_hand


class StockV2(BaseModel):
    sku: str
    warehouses: list[WarehouseV2]


def check_stock_v1(sku: str) -> StockV1:
    """Stock per warehouse."""
    return StockV1(sku=sku, warehouses=[WarehoseV1(warehouse="north", on_hand=3)])


def check_stock_v2(sku: str) -> StockV2:
    """Stock per warehouse."""
    return StockV2(sku=sku, warehouses=[WarehouseV2(warehouse="north", count=3)])


def fingerprints_of(server: MCPServer, name: str) -> tuple[str, str]:
    return FingerprintCache().of(server._tool_manager.get_tool(name))


def test_fingerprints_are_stable_across_processes():
    here = fingerprints_of(create_server(), "get_order_status")
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
        "from shop import create_server\nfrom mcpobs._core.contract import FingerprintCache\n"
        "print(*FingerprintCache().of(create_server()._tool_manager.get_tool('get_order_status')))"
    )
    # A different hash seed proves nothing depends on dict or set ordering.
    env = {"PYTHONHASHSEED": "12345"}
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert tuple(there.stdout.split()) == here


def test_renamed_field_moves_the_schema_fingerprint_and_wording_only_the_contract():
    one, two, three = MCPServer("a"), MCPServer("b"), MCPServer("c")
    one.add_tool(check_stock_v1, name="check_stock")
    two.add_tool(check_stock_v2, name="check_stock")
    three.add_tool(check_stock_v1, name="check_stock", description="Stock per warehouse, counted nightly.")
    v1, v2, reworded = (fingerprints_of(s, "check_stock") for s in (one, two, three))
    assert v1[0] != v2[0] and v1[1] != v2[1]
    assert reworded[0] == v1[0]  # same schema
    assert reworded[1] != v1[1]  # different contract


async def test_calls_and_listings_carry_fingerprints(mcpobs_telemetry):
    server = create_server()
    async with Client(server) as client:
        listing = await client.list_tools()
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    call = mcpobs_telemetry.server_span("tools/call get_order_status")
    expected = fingerprints_of(server, "get_order_status")
    assert (call.attributes[S.TOOL_SCHEMA_FINGERPRINT], call.attributes[S.TOOL_CONTRACT_FINGERPRINT]) == expected
    lst = mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)[0]
    assert lst.attributes[S.CATALOG_TOOLS] == len(listing.tools)
    assert lst.attributes[S.CATALOG_TTL_MS] == 0
    assert lst.attributes[S.CATALOG_CACHE_SCOPE] == "private"
    assert len(lst.attributes[S.CATALOG_FINGERPRINT]) == 16


async def test_a_client_holding_the_old_schema_is_flagged_stale_after_a_live_swap(mcpobs_telemetry):
    server = MCPServer("shop")
    server.add_tool(check_stock_v1, name="check_stock")
    held, _ = fingerprints_of(server, "check_stock")  # what a client that listed release 1 holds
    async with Client(server) as client:
        await client.call_tool("check_stock", {"sku": "KG-1031"}, meta={S.META_SCHEMA_FINGERPRINT: held})
        server.remove_tool("check_stock")  # the release, while connected
        server.add_tool(check_stock_v2, name="check_stock")
        with pytest.raises(RuntimeError, match="'on_hand' is a required property"):  # the seeds' rolling deploy
            await client.call_tool("check_stock", {"sku": "KG-1031"}, meta={S.META_SCHEMA_FINGERPRINT: held})
    before, after = mcpobs_telemetry.spans_named("tools/call check_stock", SpanKind.SERVER)
    assert S.TOOL_SCHEMA_STALE not in before.attributes  # written only when true
    assert after.attributes[S.TOOL_SCHEMA_STALE] is True
    assert after.attributes[S.TOOL_SCHEMA_FINGERPRINT] != held
    assert mcpobs_telemetry.total(S.STALE_CALLS.name, {S.GEN_AI_TOOL_NAME: "check_stock"}) == 1


async def test_server_spans_say_who_called(mcpobs_telemetry):
    from mcp_types import Implementation

    async with Client(create_server(), client_info=Implementation(name="support-host", version="4.2")) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
    span = mcpobs_telemetry.server_span("tools/call get_order_status")
    assert span.attributes[S.CLIENT_NAME] == "support-host"
    assert span.attributes[S.CLIENT_VERSION] == "4.2"
    labels = {k for p in mcpobs_telemetry.points(S.SERVER_REQUESTS.name) for k in p.attributes}
    assert S.CLIENT_NAME not in labels


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_one_log_line_per_session_says_tools_0_plainly(mcpobs_telemetry, caplog, mode):
    empty = MCPServer("empty-deploy")
    with caplog.at_level(logging.INFO, logger="mcpobs.session"):
        async with Client(empty, mode=mode) as client:
            await client.list_tools()
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcpobs.session"]
    assert "tools=0" in line and "prompts=0" in line
    span = mcpobs_telemetry.server_span("server/discover" if mode == "auto" else "initialize")
    assert span.attributes[S.SESSION_OFFERED["tools"]] == 0
    full = create_server()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mcpobs.session"):
        async with Client(full, mode=mode) as client:
            await client.list_tools()
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcpobs.session"]
    assert f"tools={len(await full.list_tools())}" in line
    assert "'tools'" in line  # the advertised capabilities


def _all_attribute_text(telemetry) -> str:
    return json.dumps(
        [dict(s.attributes) for s in telemetry.spans()] + [[e.attributes for e in s.events] for s in telemetry.spans()],
        default=str,
    )


async def test_no_arguments_or_results_by_default(mcpobs_telemetry):
    async with Client(create_server()) as client:
        await client.call_tool("get_order_status", {"order_id": "O-1873"})
        await client.call_tool("quote_refund", {"order_id": "O-SECRET-77", "amount_cents": 1})
    text = _all_attribute_text(mcpobs_telemetry)
    assert "O-SECRET-77" not in text and "delivered" not in text
    assert S.GEN_AI_TOOL_CALL_ARGUMENTS not in text and S.GEN_AI_TOOL_CALL_RESULT not in text


async def test_opted_in_content_is_bounded_and_redactable():
    import mcpobs
    from mcpobs.testing import capture

    def redact(value):
        return {k: "***" if k == "order_id" else v for k, v in value.items()} if isinstance(value, dict) else value

    telemetry = capture(capture_content=True, max_content_length=64, redact=redact)
    try:
        async with Client(create_server()) as client:
            await client.call_tool("quote_refund", {"order_id": "O-SECRET-77", "amount_cents": 10**80})
    finally:
        mcpobs.uninstrument()
    span = telemetry.server_span("tools/call quote_refund")
    args = span.attributes[S.GEN_AI_TOOL_CALL_ARGUMENTS]
    assert "O-SECRET-77" not in args and '"order_id": "***"' in args
    assert len(args) <= 64 and len(span.attributes[S.GEN_AI_TOOL_CALL_RESULT]) <= 64


async def test_request_state_is_never_recorded():
    import mcpobs
    from mcpobs.testing import capture

    server = MCPServer("shop")

    @server.tool()
    async def confirm_refund(ctx: Context) -> str | InputRequiredResult:
        if ctx.input_responses is None:
            form = ElicitRequestFormParams(message="Sure?", requested_schema={"type": "object", "properties": {}})
            return InputRequiredResult(input_requests={"ok": ElicitRequest(params=form)}, request_state="STATE-77")
        return "refunded"

    async def answer(ctx, params):
        return ElicitResult(action="accept", content={})

    for capture_content in (False, True):
        telemetry = capture(capture_content=capture_content)
        try:
            async with Client(server, elicitation_callback=answer) as client:
                assert not (await client.call_tool("confirm_refund", {})).is_error
        finally:
            mcpobs.uninstrument()
        text = _all_attribute_text(telemetry)
        assert "STATE-77" not in text and "requestState" not in text


def _tool(name: str, inputs: dict, outputs: dict | None = None, **extra) -> dict:
    return {"name": name, "inputSchema": inputs, "outputSchema": outputs, **extra}


def _obj(props: dict, required=(), closed=False) -> dict:
    schema = {"type": "object", "properties": props, "required": list(required)}
    if closed:
        schema["additionalProperties"] = False
    return schema


STR, INT = {"type": "string"}, {"type": "integer"}


def verdicts(old_tools, new_tools) -> set[tuple[str, str]]:
    return {(c.verdict, c.what) for c in diff({"tools": old_tools}, {"tools": new_tools})}


def test_diff_classifies_the_compatibility_matrix():
    base = _tool("t", _obj({"city": STR}, ["city"]), _obj({"temp": INT}, ["temp"]))
    assert verdicts([base], []) == {("breaking", "tool removed")}
    assert verdicts([], [base]) == {("additive", "tool added")}
    renamed = _tool("t", _obj({"city": STR}, ["city"]), _obj({"celsius": INT}, ["celsius"]))
    assert ("breaking", "output temp: removed") in verdicts([base], [renamed])
    retyped = _tool("t", _obj({"city": STR}, ["city"]), _obj({"temp": STR}, ["temp"]))
    assert ("breaking", "output temp: type ['integer'] -> ['string']") in verdicts([base], [retyped])
    required = _tool("t", _obj({"city": STR, "unit": STR}, ["city", "unit"]), base["outputSchema"])
    assert ("breaking", "input unit: new required input") in verdicts([base], [required])
    optional = _tool("t", _obj({"city": STR, "unit": STR}, ["city"]), base["outputSchema"])
    assert verdicts([base], [optional]) == {("additive", "input unit: added")}
    closed = _tool("t", _obj({"city": STR}, ["city"], closed=True), base["outputSchema"])
    optional_closed = _tool("t", _obj({"city": STR, "unit": STR}, ["city"], closed=True), base["outputSchema"])
    assert verdicts([closed], [optional_closed]) == {
        ("breaking", "input unit: new input, but old replicas forbid additional properties")
    }
    enum_old = _tool("t", _obj({"unit": {"type": "string", "enum": ["c", "f", "k"]}}))
    enum_new = _tool("t", _obj({"unit": {"type": "string", "enum": ["c", "f"]}}))
    assert ("breaking", "input unit: enum narrowed, removed ['k']") in verdicts([enum_old], [enum_new])
    reworded = dict(base, description="Now with more words.")
    assert verdicts([base], [reworded]) == {("safe", "description changed (moves the contract fingerprint)")}


async def test_snapshot_and_diff_from_the_command_line(tmp_path):
    """The seeds' release: check_stock's warehouses[].on_hand renamed to count, through $defs."""
    (tmp_path / "release1.py").write_text(
        f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
        "from mcp.server.mcpserver import MCPServer\nfrom test_contract import check_stock_v1\n"
        "mcp = MCPServer('shop')\nmcp.add_tool(check_stock_v1, name='check_stock')\n"
    )
    (tmp_path / "release2.py").write_text(
        (tmp_path / "release1.py").read_text().replace("check_stock_v1", "check_stock_v2")
    )
    run = [sys.executable, "-m", "mcpobs", "contract"]
    for release in ("release1", "release2"):
        snap = subprocess.run([*run, "snapshot", f"{release}:mcp"], cwd=tmp_path, capture_output=True, text=True)
        assert snap.returncode == 0, snap.stderr
        (tmp_path / f"{release}.json").write_text(snap.stdout)
    same = subprocess.run(
        [*run, "diff", "release1.json", "release1.json"], cwd=tmp_path, capture_output=True, text=True
    )
    assert (same.returncode, same.stdout.splitlines()[0]) == (0, "no changes")
    assert same.stdout.splitlines()[1].endswith("1 tools: unchanged")  # the catalog's size, issue 53
    changed = subprocess.run(
        [*run, "diff", "release1.json", "release2.json"], cwd=tmp_path, capture_output=True, text=True
    )
    assert changed.returncode == 1
    assert "breaking: check_stock: output warehouses[].on_hand: removed" in changed.stdout.splitlines()


class Category(BaseModel):
    name: str
    children: list[Category] = []  # a model that holds itself: its schema's $ref points back up


class CategoryV2(BaseModel):
    name: str
    children: list[CategoryV2] = []
    code: str = ""


async def listed(server: MCPServer) -> dict[str, object]:
    from mcpobs._core.contract import wire_tool

    async with Client(server) as client:
        return {"tools": [wire_tool(t) for t in (await client.list_tools()).tools]}


async def test_diff_of_a_recursive_model_ends_and_sees_below_it():
    """A pydantic model that holds itself made the schema walk recurse until RecursionError."""
    old, new = MCPServer("catalog"), MCPServer("catalog")

    @old.tool()
    def count(root: Category) -> int:
        return 1

    @new.tool(name="count")
    def count_coded(root: CategoryV2) -> int:
        return 1

    same = await listed(old)
    assert diff(same, same) == []
    assert [(c.verdict, c.what) for c in diff(same, await listed(new))] == [("additive", "input root.code: added")]


async def test_the_session_line_and_stale_count_do_not_depend_on_sampling(caplog):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    import mcpobs
    from mcpobs.testing import CapturedTelemetry

    telemetry = CapturedTelemetry()
    telemetry.tracer_provider = TracerProvider(sampler=ALWAYS_OFF)
    telemetry.tracer_provider.add_span_processor(SimpleSpanProcessor(telemetry.exporter))
    mcpobs.instrument(tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider)
    server = MCPServer("shop")
    server.add_tool(check_stock_v1, name="check_stock")
    try:
        with caplog.at_level(logging.INFO, logger="mcpobs.session"):
            async with Client(server) as client:
                await client.call_tool("check_stock", {"sku": "K"}, meta={S.META_SCHEMA_FINGERPRINT: "0" * 16})
    finally:
        mcpobs.uninstrument()
    assert telemetry.spans() == []
    assert any(r.name == "mcpobs.session" and "tools=1" in r.getMessage() for r in caplog.records)
    assert telemetry.total(S.STALE_CALLS.name, {S.GEN_AI_TOOL_NAME: "check_stock"}) == 1
