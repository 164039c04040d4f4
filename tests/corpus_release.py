"""One tool in a few releases, and a workload of two client releases: the tool-call corpus's test bed.

`check_stock` as the server release 1.1.0 serves it: `sku` required; `unit` an optional enum;
`warehouse` an optional nested object (its `region` an enum); `note` an optional field only the
newer client release (2.0.0) sends. The candidates each change one thing:

- `compatible`: a new optional `priority` (exit 0);
- `required`: `unit` required (old callers omit it);
- `dropped_enum`: `unit` loses `pallet` (old callers send it);
- `closed`: no `note`, and additional properties forbidden (the seed's v1 replica: new callers send it).

Every argument value a client sends is a distinct secret string, `SECRET_PREFIX` and a counter: none may
reach the telemetry with default settings.
"""

import itertools
from collections import Counter
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

SECRET_PREFIX = "s3cr3t-"
_secrets = itertools.count()


class Warehouse(BaseModel):
    region: Literal["north", "south"]
    bin: str | None = None


Unit = Literal["each", "box", "pallet"]
UnitWithoutPallet = Literal["each", "box"]


class Stock(BaseModel):
    sku: str
    on_hand: int


def _server(version: str, variant: str = "release") -> MCPServer:
    server = MCPServer("stock", version=version)

    if variant == "required":

        def check_stock(sku: str, unit: Unit, warehouse: Warehouse | None = None, note: str | None = None) -> Stock:
            """Units on hand."""
            return Stock(sku=sku, on_hand=3)

    elif variant == "compatible":

        def check_stock(  # type: ignore[misc]
            sku: str,
            unit: Unit = "each",
            warehouse: Warehouse | None = None,
            note: str | None = None,
            priority: int | None = None,
        ) -> Stock:
            """Units on hand."""
            return Stock(sku=sku, on_hand=3)

    elif variant == "dropped_enum":

        def check_stock(  # type: ignore[misc]
            sku: str,
            unit: UnitWithoutPallet = "each",
            warehouse: Warehouse | None = None,
            note: str | None = None,
        ) -> Stock:
            """Units on hand."""
            return Stock(sku=sku, on_hand=3)

    else:

        def check_stock(  # type: ignore[misc]
            sku: str,
            unit: Unit = "each",
            warehouse: Warehouse | None = None,
            note: str | None = None,
        ) -> Stock:
            """Units on hand."""
            return Stock(sku=sku, on_hand=3)

    server.add_tool(check_stock)
    if variant == "closed":
        schema = server._tool_manager.get_tool("check_stock").parameters  # pyright: ignore[reportPrivateUsage]
        del schema["properties"]["note"]
        schema["additionalProperties"] = False
    return server


def release() -> MCPServer:
    """The release serving today's traffic."""
    return _server("1.1.0")


def compatible() -> MCPServer:
    return _server("1.2.0", "compatible")


def required() -> MCPServer:
    return _server("1.2.0", "required")


def dropped_enum() -> MCPServer:
    return _server("1.2.0", "dropped_enum")


def closed() -> MCPServer:
    return _server("1.0.0", "closed")


def secret() -> str:
    return f"{SECRET_PREFIX}{next(_secrets)}"


def calls(client_version: str, rounds: int) -> list[dict[str, Any]]:
    """The arguments one client release sends, `rounds` times over, each value a fresh secret."""
    out: list[dict[str, Any]] = []
    for _ in range(rounds):
        if client_version.startswith("1."):
            out += [
                {"sku": secret()},
                {"sku": secret(), "unit": "each"},
                {"sku": secret(), "unit": "pallet", "warehouse": {"region": "north"}},
            ]
        else:
            out += [
                {"sku": secret(), "note": secret()},
                {"sku": secret(), "unit": "box", "warehouse": {"region": "south", "bin": secret()}, "note": secret()},
            ]
    return out


def expected(rounds: int) -> dict[str, int]:
    """Calls behind each failing field, per candidate, for `rounds` rounds of each client release."""
    sent = calls("1.0.0", rounds) + calls("2.0.0", rounds)
    count = Counter[str]()
    count["required"] = sum(1 for a in sent if "unit" not in a)
    count["dropped_enum"] = sum(1 for a in sent if a.get("unit") == "pallet")
    count["closed"] = sum(1 for a in sent if "note" in a)
    return dict(count)
