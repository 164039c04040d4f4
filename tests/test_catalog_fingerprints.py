"""A tools/list costs what changed: each listed tool's contract is hashed again only when it changed.

The values are `catalog_fingerprint`'s, always (pinned below as the clearing-every-time code
computed them); what moves is how many tool contracts each listing re-encodes and re-hashes.
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

import pytest
from mcp import Client
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


def test_what_marshal_cannot_write_is_hashed_every_time_and_the_same(hashed: list[Any]):
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
    assert [t["name"] for t in hashed] == ["get_order_status"]
    spans = mcpobs_telemetry.spans_named("tools/list", SpanKind.SERVER)
    values = [s.attributes[S.CATALOG_FINGERPRINT] for s in spans]
    wire = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in third.tools]
    assert values[:2] == [SHOP_CATALOG, SHOP_CATALOG] and len(first.tools) == len(third.tools)
    assert values[2] == catalog_fingerprint(wire) != SHOP_CATALOG
