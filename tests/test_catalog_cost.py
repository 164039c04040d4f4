"""What a catalog costs a model's context (issue 53): on both sides' tools/list spans, per release, in the diff.

A tool's description grows by 2,000 characters between two releases: the server's and the
client's tools/list spans say so in bytes (exactly 2,000 more) and tokens (about 500 more, by
the estimate), on MCPServer and FastMCP 4, driven by `mcp.Client` and `fastmcp.Client`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fastmcp
import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp_types import ListToolsResult, Tool
from opentelemetry.trace import SpanKind

from mcpobs import semconv as S
from mcpobs._core import cost

pytestmark = pytest.mark.anyio

SHORT = "Look up one order's status."
GROWTH = 2000
LONG = SHORT + " " + "x" * (GROWTH - 1)  # 2,000 more characters, all ASCII: 2,000 more bytes of JSON
NUMBERS = (S.CATALOG_BYTES, S.CATALOG_TOKENS, S.CATALOG_TOOLS, S.CATALOG_LARGEST_TOOL, S.CATALOG_LARGEST_BYTES)


def get_order_status(order_id: str) -> str:
    return "delivered"


def refund(order_id: str, amount_cents: int) -> str:
    """Refund an order."""
    return "ok"


def mcpserver_release(description: str, version: str) -> MCPServer:
    server = MCPServer("shop", version=version)
    server.add_tool(get_order_status, description=description)
    server.add_tool(refund)
    return server


def fastmcp_release(description: str, version: str) -> fastmcp.FastMCP:
    server = fastmcp.FastMCP("shop", version=version)
    server.tool(get_order_status, description=description)
    server.tool(refund)
    return server


def numbers(span: Any) -> tuple[Any, ...]:
    return tuple(span.attributes.get(name) for name in NUMBERS)


async def list_with(driver: str, server: Any) -> None:
    if driver == "mcp":
        async with Client(server) as client:
            await client.list_tools()
    else:
        async with fastmcp.Client(server) as client:
            await client.list_tools()


def listing_spans(telemetry: Any) -> tuple[Any, Any]:
    (server_span,) = telemetry.spans_named("tools/list", SpanKind.SERVER)
    (client_span,) = telemetry.spans_named("tools/list", SpanKind.CLIENT)
    return server_span, client_span


@pytest.mark.parametrize(("host", "driver"), [("mcpserver", "mcp"), ("fastmcp", "fastmcp"), ("mcpserver", "fastmcp")])
async def test_a_description_grown_by_2000_characters_shows_on_both_sides(mcpobs_telemetry, host, driver):
    make = mcpserver_release if host == "mcpserver" else fastmcp_release
    seen = []
    for description, version in ((SHORT, "1.0.0"), (LONG, "2.0.0")):
        mcpobs_telemetry.clear()
        await list_with(driver, make(description, version))
        server_span, client_span = listing_spans(mcpobs_telemetry)
        assert numbers(server_span) == numbers(client_span)  # both sides say the same
        assert server_span.attributes[S.CATALOG_FINGERPRINT] == client_span.attributes[S.CATALOG_FINGERPRINT]
        assert server_span.attributes[S.CATALOG_TOKEN_METHOD] == cost.ESTIMATE
        seen.append(dict(zip(NUMBERS, numbers(server_span), strict=True)))
    before, after = seen
    assert after[S.CATALOG_BYTES] - before[S.CATALOG_BYTES] == GROWTH
    assert after[S.CATALOG_TOKENS] - before[S.CATALOG_TOKENS] == GROWTH // cost.BYTES_PER_TOKEN
    assert before[S.CATALOG_TOOLS] == after[S.CATALOG_TOOLS] == 2
    assert after[S.CATALOG_LARGEST_TOOL] == "get_order_status"
    # The size per release, as a metric.
    sizes = {p.attributes[S.SERVER_VERSION]: p.value for p in mcpobs_telemetry.points(S.CATALOG_SIZE.name)}
    assert sizes == {"1.0.0": before[S.CATALOG_BYTES], "2.0.0": after[S.CATALOG_BYTES]}
    tokens = {p.attributes[S.SERVER_VERSION]: p.value for p in mcpobs_telemetry.points(S.CATALOG_SIZE_TOKENS.name)}
    assert tokens == {"1.0.0": before[S.CATALOG_TOKENS], "2.0.0": after[S.CATALOG_TOKENS]}


async def test_the_bytes_are_the_compact_json_of_name_description_and_input_schema(mcpobs_telemetry):
    server = mcpserver_release("Über den Status.", "1.0.0")  # non-ASCII: counted in UTF-8, not escaped
    async with Client(server) as client:
        listing = await client.list_tools()
    expected = 0
    for tool in listing.tools:
        shown = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
        expected += len(json.dumps(shown, separators=(",", ":"), ensure_ascii=False).encode())
    server_span, client_span = listing_spans(mcpobs_telemetry)
    assert server_span.attributes[S.CATALOG_BYTES] == client_span.attributes[S.CATALOG_BYTES] == expected


async def test_one_client_listing_again_after_a_live_change_sees_the_new_size(mcpobs_telemetry):
    """The client reuses its last listing's numbers only while the listing is unchanged."""
    server = mcpserver_release(SHORT, "1.0.0")
    async with Client(server) as client:
        await client.list_tools()
        await client.list_tools()  # unchanged: the same numbers, not priced again
        server.remove_tool("get_order_status")
        server.add_tool(get_order_status, description=LONG)
        await client.list_tools()
    for kind in (SpanKind.SERVER, SpanKind.CLIENT):
        first, again, changed = sorted(mcpobs_telemetry.spans_named("tools/list", kind), key=lambda s: s.start_time)
        assert numbers(again) == numbers(first)
        assert changed.attributes[S.CATALOG_BYTES] - first.attributes[S.CATALOG_BYTES] == GROWTH
        assert changed.attributes[S.CATALOG_FINGERPRINT] != first.attributes[S.CATALOG_FINGERPRINT]


def paged_server(pages: list[list[Tool]]) -> Server:
    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        cursor = params.cursor if params is not None else None
        index = int(cursor) if cursor else 0
        nxt = str(index + 1) if index + 1 < len(pages) else None
        return ListToolsResult(tools=pages[index], next_cursor=nxt)

    return Server("paged", version="3.0.0", on_list_tools=list_tools)


async def test_a_paginated_listing_adds_up_its_pages(mcpobs_telemetry):
    def tool(name: str, words: int) -> Tool:
        return Tool(name=name, description="word " * words, input_schema={"type": "object"})

    pages = [[tool("a", 10), tool("b", 300)], [tool("c", 50)]]
    whole = cost.catalog_cost([t.model_dump(by_alias=True, mode="json", exclude_none=True) for p in pages for t in p])
    async with Client(paged_server(pages)) as client:
        first = await client.list_tools()
        await client.list_tools(cursor=first.next_cursor)
    for kind in (SpanKind.SERVER, SpanKind.CLIENT):
        page1, page2 = sorted(mcpobs_telemetry.spans_named("tools/list", kind), key=lambda s: s.start_time)
        assert page1.attributes[S.CATALOG_TOOLS] == 2
        assert page2.attributes[S.CATALOG_TOOLS] == 3
        assert page2.attributes[S.CATALOG_BYTES] == whole.bytes
        assert page2.attributes[S.CATALOG_TOKENS] == whole.tokens
        assert page2.attributes[S.CATALOG_LARGEST_TOOL] == "b"
    (size,) = mcpobs_telemetry.points(S.CATALOG_SIZE.name)  # set by the last page only: the whole catalog
    assert (size.attributes[S.SERVER_VERSION], size.value) == ("3.0.0", whole.bytes)


def test_costs_are_computed_once_per_catalog_fingerprint():
    priced: list[int] = []
    costs = cost.CatalogCosts()
    tools = [{"name": "a", "description": "x" * 40, "inputSchema": {"type": "object"}}]

    def listing() -> list[dict[str, Any]]:
        priced.append(1)
        return tools

    first = costs.of("f1", listing)
    assert costs.of("f1", listing) == first
    assert len(priced) == 1
    costs.of("f2", listing)
    assert len(priced) == 2


# -- the exact count (the `tokens` extra) ----------------------------------------------------------

FIXED_TEXT = 'get_order_status: Look up one order\'s status. {"order_id":{"type":"string"}} Über 東京 🚀'
"""Its cl100k_base tokens, as tiktoken's reference encoding counts them."""
FIXED_TEXT_CL100K = 26


def test_the_exact_count_matches_the_named_encoding_with_no_network(tmp_path):
    """Runs in a child with no network (`unshare -n`, as root) or, failing that, with every socket refused.

    Needs the tokens extra, which the dev extra installs (pyproject.toml): without it this fails, saying so.
    """
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('no network in this test')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse; socket.getaddrinfo = refuse\n"
        "from mcpobs._core import cost\n"
        f"print(cost.counter('cl100k_base').count({FIXED_TEXT!r}.encode()))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIKTOKEN")}
    env["TIKTOKEN_CACHE_DIR"] = str(tmp_path / "tiktoken-cache")  # empty: nothing was fetched before
    command = [sys.executable, "-c", code]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and subprocess.run(["unshare", "-n", "true"]).returncode == 0:
        command = ["unshare", "-n", *command]
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == FIXED_TEXT_CL100K
    # And the listing spans count with it when the environment names it.
    spans = (
        "import anyio\nfrom mcp import Client\nfrom mcp.server.mcpserver import MCPServer\n"
        "from opentelemetry.trace import SpanKind\nfrom mcpobs import semconv as S\nfrom mcpobs.testing import capture\n"
        "from mcpobs._core import cost\n"
        "t = capture()\nserver = MCPServer('s')\n"
        f"server.add_tool(lambda order_id: order_id, name='get_order_status', description={FIXED_TEXT!r})\n"
        "async def main():\n    async with Client(server) as c:\n        return (await c.list_tools()).tools[0]\n"
        "tool = anyio.run(main).model_dump(by_alias=True, mode='json', exclude_none=True)\n"
        "exact = cost.counter('cl100k_base').count(cost.tool_json(tool))\n"
        "for kind in (SpanKind.SERVER, SpanKind.CLIENT):\n"
        "    (span,) = t.spans_named('tools/list', kind)\n"
        "    print(span.attributes[S.CATALOG_TOKEN_METHOD], span.attributes[S.CATALOG_TOKENS] == exact)\n"
    )
    env[cost.ENCODING_ENV] = "cl100k_base"
    out = subprocess.run([*command[:-1], spans], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cl100k_base", "True", "cl100k_base", "True"]


def test_an_unknown_or_missing_encoding_is_one_line_and_falls_back_to_the_estimate():
    counter, problem = cost.configured_counter({cost.ENCODING_ENV: "p50k_base"})
    assert counter is cost.ESTIMATOR
    assert problem is not None and "p50k_base" in problem and "\n" not in problem


# -- contract snapshot and diff: per tool, per release, and the budget ---------------------------


def mcpobs_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-m", "mcpobs", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )


@pytest.fixture
async def two_releases(tmp_path: Path) -> Path:
    """Snapshots of release 1 and of release 2, whose get_order_status description grew by 2,000 characters."""
    from mcpobs._cli.candidate import snapshot

    for description, version in ((SHORT, "1.0.0"), (LONG, "2.0.0")):
        taken = await snapshot(mcpserver_release(description, version))
        (tmp_path / f"{version}.json").write_text(json.dumps(taken))
    return tmp_path


async def test_snapshot_records_each_tools_cost(two_releases):
    taken = json.loads((two_releases / "2.0.0.json").read_text())
    by_name = {t["name"]: t for t in taken["tools"]}
    tool = by_name["get_order_status"]
    assert tool["cost"] == {"bytes": len(cost.tool_json(tool)), "tokens": cost.estimate(cost.tool_json(tool))}
    assert taken["cost"]["bytes"] == sum(t["cost"]["bytes"] for t in taken["tools"])
    assert taken["cost"]["tokens"] == sum(t["cost"]["tokens"] for t in taken["tools"])
    assert taken["cost"]["tokenMethod"] == "estimate" and taken["cost"]["tools"] == 2


async def test_diff_names_the_tool_that_grew_with_its_growth_and_the_totals(two_releases):
    old = json.loads((two_releases / "1.0.0.json").read_text())
    run = mcpobs_cli("contract", "diff", "1.0.0.json", "2.0.0.json", cwd=two_releases)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "grew: get_order_status: description +2,000 bytes, about +500 tokens" in lines
    was = old["cost"]
    (total,) = [line for line in lines if line.startswith("catalog: ")]
    assert total == (
        f"catalog: {was['bytes']:,} bytes, about {was['tokens']:,} tokens -> {was['bytes'] + 2000:,} bytes, "
        f"about {was['tokens'] + 500:,} tokens (+2,000 bytes, about +500 tokens; 2 -> 2 tools)"
    )
    assert not any(line.startswith(("grew: refund", "shrank:")) for line in lines)  # unchanged tools are not named
    back = mcpobs_cli("contract", "diff", "2.0.0.json", "1.0.0.json", cwd=two_releases)
    assert "shrank: get_order_status: description -2,000 bytes, about -500 tokens" in back.stdout.splitlines()


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (("--token-budget", "400"), "over budget: the catalog is about {now} tokens, over the budget of 400"),
        (("--max-growth", "10%"), "over budget: the catalog grew by about +500 tokens, over the limit of 10%"),
        (("--max-growth", "499"), "over budget: the catalog grew by about +500 tokens, over the limit of 499 tokens"),
    ],
)
async def test_a_budget_the_release_exceeds_fails_with_its_own_status_naming_the_tool(two_releases, options, says):
    now = json.loads((two_releases / "2.0.0.json").read_text())["cost"]["tokens"]
    run = mcpobs_cli("contract", "diff", "1.0.0.json", "2.0.0.json", *options, cwd=two_releases)
    assert run.returncode == 3, (run.stdout, run.stderr)
    (verdict,) = [line for line in run.stdout.splitlines() if line.startswith("over budget: ")]
    assert verdict.startswith(says.format(now=f"{now:,}"))
    assert verdict.endswith("tools that grew: get_order_status +500")
    within = mcpobs_cli(
        "contract", "diff", "1.0.0.json", "2.0.0.json", "--token-budget", str(now), "--max-growth", "500",
        cwd=two_releases,
    )  # fmt: skip
    assert within.returncode == 0, within.stdout


def test_a_budget_written_wrong_is_one_line(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"tools": []}))
    run = mcpobs_cli("contract", "diff", "a.json", "a.json", "--max-growth", "ten", cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == (
        "mcpobs contract diff: --max-growth 'ten': give tokens (e.g. 500) or a percentage (e.g. 10%)"
    )


def test_the_catalog_cost_benchmark_still_runs(tmp_path):
    """A smoke run of benchmarks/catalog_cost.py (nothing here is timed): its three configurations, their ratios."""
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "catalog_cost.py"
    out = tmp_path / "catalog_cost.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, str(script), "--rounds", "1", "--listings", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert set(result["ratio_to_cost_off"]) == {"cost-off", "cost-on", "cost-uncached"}
    assert result["catalog"]["tools"] == 12
