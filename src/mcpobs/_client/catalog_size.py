"""What a listing the client received costs its model's context: the numbers on its tools/list span.

The same numbers as the server's span (`_core/cost.py`), from the listing as the client received
it, computed once per catalog fingerprint of the server's catalog (`_client/catalog.py`) and
added up along a paginated listing's cursors.

A listing whose tools are the same JSON as the page this server's catalog last received reuses
its fingerprint without dumping it to JSON again: that dump was most of what pricing cost a client
(docs/contract.md). "The same" is decided as the server's fingerprints decide it: against an exact
copy of each tool's fields (`contract.exact_copy`), numbers by type and text, so `1`, `1.0` and
`true` in a schema are three listings, as they are three contracts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._client import memory
from mcpobs._core import sdk
from mcpobs._core.contract import CatalogFingerprints, exact_copy
from mcpobs._core.cost import CatalogCosts, TokenCounter, attributes


class ListingSizes:
    """One server catalog's listings as its sessions received them: fingerprints, costs, the last page."""

    __slots__ = ("costs", "fingerprints", "last")

    def __init__(self, tokens: TokenCounter) -> None:
        self.fingerprints = CatalogFingerprints()
        self.costs = CatalogCosts(tokens)
        self.last: tuple[list[Any], str] | None = None
        """Exact copies of the last page's tools (`_kept`), and its fingerprint."""


_COMPARED = frozenset({"name", "title", "description", "input_schema", "inputSchema", "output_schema", "outputSchema"})
"""A received tool's fields that its contract hashes, under both lines' names (annotations: compared as models)."""


def _fields(tool: Any) -> dict[str, Any]:
    fields = cast("dict[str, Any]", getattr(tool, "__dict__", {}))
    return {k: v for k, v in fields.items() if k in _COMPARED}


def _kept(tool: Any) -> Any:
    """An exact copy of what the tool's contract hashes, or None when it is not plain JSON (then never reused)."""
    try:
        return (exact_copy(_fields(tool)), getattr(tool, "annotations", None))
    except (TypeError, RecursionError):
        return None


def _same(kept: list[Any], received: Sequence[Any]) -> bool:
    if len(kept) != len(received):
        return False
    for copy, tool in zip(kept, received, strict=True):
        # the copy on the left: its numbers compare by type and text
        if copy is None or not (copy[0] == _fields(tool) and copy[1] == getattr(tool, "annotations", None)):
            return False
    return True


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
    if last is not None and _same(last[0], received):
        fingerprint, tools = last[1], dumped  # dumped only if its cost was forgotten meanwhile
    else:
        wire = dumped()
        fingerprint = held.fingerprints.of(wire)
        held.last = ([_kept(t) for t in received], fingerprint)
        tools = lambda: wire  # noqa: E731
    cost = held.costs.of(fingerprint, tools, cursor, getattr(result, sdk.NEXT_CURSOR, None))
    return {S.CATALOG_FINGERPRINT: fingerprint, **attributes(cost, tokens.method)}
