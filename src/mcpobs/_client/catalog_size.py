"""What a listing the client received costs its model's context: the numbers on its tools/list span.

The same numbers as the server's span (`_core/cost.py`), from the listing as the client received
it, computed once per catalog fingerprint of the server's catalog (`_client/catalog.py`) and
added up along a paginated listing's cursors.
"""

from __future__ import annotations

from typing import Any

from mcpobs import semconv as S
from mcpobs._client import memory
from mcpobs._core import sdk
from mcpobs._core.contract import CatalogFingerprints
from mcpobs._core.cost import CatalogCosts, TokenCounter, attributes


def listed(session: Any, result: Any, cursor: object, tokens: TokenCounter) -> dict[str, Any]:
    """The tools/list span's attributes for one page the session received."""
    catalog = memory.catalog_of(session)
    held = catalog.sizes
    if held is None or held[1].tokens is not tokens:
        held = catalog.sizes = (CatalogFingerprints(), CatalogCosts(tokens))
    tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in getattr(result, "tools", None) or ()]
    fingerprint = held[0].of(tools)
    cost = held[1].of(fingerprint, lambda: tools, cursor, getattr(result, sdk.NEXT_CURSOR, None))
    return {S.CATALOG_FINGERPRINT: fingerprint, **attributes(cost, tokens.method)}
