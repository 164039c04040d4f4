"""What a listing the client received costs its model's context: the numbers on its tools/list span.

The same numbers as the server's span (`_core/cost.py`), from the listing as the client received
it, computed once per catalog fingerprint of the server's catalog (`_client/catalog.py`) and
added up along a paginated listing's cursors.

A listing equal (pydantic's `==`) to the page this server's catalog last received reuses its
fingerprint without dumping it to JSON again: that dump was most of what pricing cost a client
(docs/contract.md). `==` takes `1`, `1.0` and `true` in a schema for one another, so a release
that changed only such a number's type is priced at the next listing that differs otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpobs import semconv as S
from mcpobs._client import memory
from mcpobs._core import sdk
from mcpobs._core.contract import CatalogFingerprints
from mcpobs._core.cost import CatalogCosts, TokenCounter, attributes


class ListingSizes:
    """One server catalog's listings as its sessions received them: fingerprints, costs, the last page."""

    __slots__ = ("costs", "fingerprints", "last")

    def __init__(self, tokens: TokenCounter) -> None:
        self.fingerprints = CatalogFingerprints()
        self.costs = CatalogCosts(tokens)
        self.last: tuple[Sequence[Any], str] | None = None


def listed(session: Any, result: Any, cursor: object, tokens: TokenCounter) -> dict[str, Any]:
    """The tools/list span's attributes for one page the session received."""
    catalog = memory.catalog_of(session)
    held: ListingSizes | None = catalog.sizes
    if held is None or held.costs.tokens is not tokens:
        held = catalog.sizes = ListingSizes(tokens)
    received: Sequence[Any] = getattr(result, "tools", None) or ()

    def dumped() -> list[dict[str, Any]]:
        return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in received]

    last = held.last
    if (
        last is not None
        and len(last[0]) == len(received)
        and all(a == b for a, b in zip(last[0], received, strict=True))
    ):
        fingerprint, tools = last[1], dumped  # dumped only if its cost was forgotten meanwhile
    else:
        wire = dumped()
        fingerprint = held.fingerprints.of(wire)
        held.last = (list(received), fingerprint)
        tools = lambda: wire  # noqa: E731
    cost = held.costs.of(fingerprint, tools, cursor, getattr(result, sdk.NEXT_CURSOR, None))
    return {S.CATALOG_FINGERPRINT: fingerprint, **attributes(cost, tokens.method)}
