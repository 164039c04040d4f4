"""A tools/list costs what changed: each listed tool's contract is hashed again only when it changed.

The values are `catalog_fingerprint`'s, always (pinned below as the clearing-every-time code
computed them); what moves is how many tool contracts each listing re-encodes and re-hashes.
"""

from __future__ import annotations

import copy
import marshal
from types import MappingProxyType
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from opentelemetry.trace import SpanKind
from shop import create_server

from mcpobs import semconv as S
from mcpobs._core import contract
from mcpobs._core.contract import CatalogFingerprints, catalog_fingerprint

pytestmark = pytest.mark.anyio

SHOP_CATALOG = "176897199a4327d1"
"""The shop's catalog fingerprint as every listing computed it before it was cached."""


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The tools whose contract fingerprint is computed, in order."""
    seen: list[Any] = []
    real = contract.contract_fingerprint
    monkeypatch.setattr(contract, "contract_fingerprint", lambda tool: seen.append(tool) or real(tool))
    return seen


def _listing(n: int = 50) -> list[dict[str, Any]]:
    return [
        {
            "name": f"tool_{i}",
            "description": f"Tool {i}.",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}},
            "annotations": {"readOnlyHint": True},
        }
        for i in range(n)
    ]


def test_an_unchanged_listing_hashes_no_tool_and_a_changed_one_only_the_changed(hashed: list[Any]):
    catalogs = CatalogFingerprints()
    listing = _listing()
    assert catalogs.of(listing) == catalog_fingerprint(listing)
    again = copy.deepcopy(listing)  # every listing is fresh dicts: no help from identity
    expected = catalog_fingerprint(again)
    hashed.clear()
    assert catalogs.of(again) == expected
    assert hashed == []
    again[7]["description"] = "Tool 7, reworded."
    expected = catalog_fingerprint(again)
    hashed.clear()
    assert catalogs.of(again) == expected
    assert [t["name"] for t in hashed] == ["tool_7"]
    assert catalogs.of(list(reversed(again))) == catalog_fingerprint(list(reversed(again)))  # order counts
    assert catalogs.of(listing) == catalog_fingerprint(listing)  # back to the first release
    assert catalogs.of([]) == catalog_fingerprint([])


@pytest.mark.parametrize("value", [True, 1.0, -0.0, 0, "1", None, "\ud800"])
def test_values_equal_in_python_but_not_in_json_are_different_contracts(value: object):
    """`1 == True == 1.0` and `0.0 == -0.0`, but a client's validator sees different schemas."""
    catalogs = CatalogFingerprints()
    listing = _listing(3)
    catalogs.of(listing)
    changed = copy.deepcopy(listing)
    changed[1]["inputSchema"]["properties"]["n"]["default"] = value
    assert catalogs.of(changed) == catalog_fingerprint(changed)
    assert catalogs.of(listing) == catalog_fingerprint(listing)


def test_what_is_not_plain_json_is_hashed_every_time_and_the_same(hashed: list[Any]):
    class Version:
        def __str__(self) -> str:
            return "v2"

    odd: list[Any] = [{"name": "a", "inputSchema": {"x": Version()}}, MappingProxyType({"name": "b"})]
    catalogs = CatalogFingerprints()
    first = catalogs.of(odd)
    assert first == catalogs.of(odd) == catalog_fingerprint(odd)
    assert len(hashed) == 2 * len(odd) + len(odd)  # ours twice, then the reference's


def test_the_kept_contracts_stay_bounded_by_twice_the_listing():
    catalogs = CatalogFingerprints()
    listing = _listing(3_000)
    for release in range(3):
        for tool in listing:
            tool["description"] = f"release {release}"
        assert catalogs.of(listing) == catalog_fingerprint(listing)
    assert len(catalogs._contracts) <= 6_000  # pyright: ignore[reportPrivateUsage]


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every canonical encoding and every `marshal.dumps` (the key the old cache paid per tool)."""
    seen: list[Any] = []
    canonical, dumps = contract._canonical, marshal.dumps  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(contract, "_canonical", lambda value: seen.append(value) or canonical(value))
    monkeypatch.setattr(marshal, "dumps", lambda *args: seen.append(args[0]) or dumps(*args))
    return seen


def _mcpserver(n: int) -> MCPServer:
    server = MCPServer("catalog")

    def quote(sku: str, quantity: int = 1, discount: float = 0.0) -> str:
        return sku

    for i in range(n):
        server.add_tool(quote, name=f"quote_{i}", annotations=ToolAnnotations(read_only_hint=True))
    return server


async def test_an_unchanged_listing_of_a_real_server_encodes_nothing(mcpobs_telemetry, encoded: list[Any]):
    """The old cache marshalled every listed tool to find it unchanged: 26k of its 38k instructions."""
    server = _mcpserver(200)
    async with Client(server) as client:
        await client.list_tools()
        encoded.clear()
        await client.list_tools()
        await client.list_tools()
    assert encoded == []
    values = {s.attributes[S.CATALOG_FINGERPRINT] for s in mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)}
    assert len(values) == 1


def _changed_in_place(tool: Any, step: int) -> None:
    """A registered tool's contract changed without a new tool object: the SDK lists it as it is."""
    properties = tool.parameters["properties"]
    if step == 0:
        properties["sku"]["description"] = "The stock-keeping unit."  # a schema dict, in place
    elif step == 1:
        properties["quantity"]["default"] = True  # 1 -> True: equal in Python, not in JSON
    elif step == 2:
        properties["quantity"]["default"] = 1.0
    elif step == 3:
        properties["discount"]["default"] = -0.0
    elif step == 4:
        tool.annotations = ToolAnnotations(read_only_hint=False)
    else:
        tool.description = "Quote a price, reworded."


async def test_a_contract_changed_in_place_gets_its_new_fingerprint_on_that_listing(
    mcpobs_telemetry, hashed: list[Any]
):
    server = _mcpserver(20)
    tool = server._tool_manager.get_tool("quote_7")  # pyright: ignore[reportPrivateUsage]
    expected: list[str] = []
    rehashed: list[list[str]] = []
    async with Client(server) as client:
        await client.list_tools()
        for step in range(6):
            _changed_in_place(tool, step)
            hashed.clear()
            listed = await client.list_tools()
            rehashed.append([t["name"] for t in hashed])
            wire = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
            expected.append(catalog_fingerprint(wire))
    spans = mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)
    values = [s.attributes[S.CATALOG_FINGERPRINT] for s in spans]
    assert values[1:] == expected
    assert len(set(values)) == 7  # every step moved it
    # and only the changed tool was hashed again: once by the server, once by the client (issue 53's numbers)
    assert rehashed == [["quote_7", "quote_7"]] * 6


async def test_listings_of_a_real_server_hash_only_the_swapped_tool(mcpobs_telemetry, hashed: list[Any]):
    server = create_server()
    async with Client(server) as client:
        first = await client.list_tools()
        hashed.clear()
        await client.list_tools()
        unchanged = list(hashed)
        tool = server._tool_manager.get_tool("get_order_status")  # pyright: ignore[reportPrivateUsage]
        server.remove_tool("get_order_status")
        server.add_tool(tool.fn, name="get_order_status", description="Where an order is, reworded.")
        hashed.clear()
        third = await client.list_tools()
    assert unchanged == []
    assert [t["name"] for t in hashed] == ["get_order_status"] * 2  # the server's and the client's
    spans = mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)
    values = [s.attributes[S.CATALOG_FINGERPRINT] for s in spans]
    wire = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in third.tools]
    assert values[:2] == [SHOP_CATALOG, SHOP_CATALOG] and len(first.tools) == len(third.tools)
    assert values[2] == catalog_fingerprint(wire) != SHOP_CATALOG
