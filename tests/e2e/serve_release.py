"""One replica of one release, over Streamable HTTP, instrumented by `mcpobs.instrument()` alone.

Run by tests/e2e/test_canary_gate.py as ``serve_release.py SERVICE VERSION PORT`` with only standard
OTEL_* variables set. Two services, each in two releases:

- ``stock`` 1.0.0 and 2.0.0: 2.0.0 renames ``check_stock``'s output field ``on_hand`` to ``count``
  (breaking for a client holding 1.0.0's schema);
- ``pricing`` 1.0.0 and 1.1.0: 1.1.0 only rewrites ``get_price``'s description (the schema, and
  so every client's validation, is unchanged), at length: its catalog costs a model about twice
  the tokens (the gate's catalog growth rule);
- ``orders`` 1.0.0 and 1.2.0: same contract, but 1.2.0's ``open_orders`` fails (a bad migration):
  its error ratio rises while no schema changes.

Listings may be cached for ten minutes (`ttlMs`), as a team would set outside a release window.
"""

import sys

import uvicorn
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

import mcpobs

mcpobs.instrument()
service, version, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
server = MCPServer(service, version=version, cache_hints={"tools/list": CacheHint(ttl_ms=600_000)})


class StockV1(BaseModel):
    sku: str
    on_hand: int


class StockV2(BaseModel):
    sku: str
    count: int


class Price(BaseModel):
    sku: str
    cents: int


def check_stock_v1(sku: str) -> StockV1:
    """Units on hand."""
    return StockV1(sku=sku, on_hand=3)


def check_stock_v2(sku: str) -> StockV2:
    """Units on hand."""
    return StockV2(sku=sku, count=3)


def get_price(sku: str) -> Price:
    """The price of one unit."""
    return Price(sku=sku, cents=1999)


def open_orders(sku: str) -> int:
    """Orders waiting for this item."""
    if version == "1.2.0":
        raise RuntimeError("relation orders_v2 does not exist")
    return 2


if service == "stock":
    server.add_tool(check_stock_v2 if version.startswith("2.") else check_stock_v1, name="check_stock")
elif service == "orders":
    server.add_tool(open_orders)
else:
    description = (
        "The price of one unit, in cents, tax included. " + "Prices follow the list of the day; " * 8
        if version == "1.1.0"
        else None
    )
    server.add_tool(get_price, name="get_price", description=description)

uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
