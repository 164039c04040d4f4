"""What the server's tool listings cost a model's context: on each tools/list span, and per release as a metric.

The numbers (`_core/cost.py`) are computed once per catalog fingerprint, which the server computes
for the span anyway; a paginated listing adds its pages up along the cursors it handed out. The
gauges are set when a complete listing (its last page) is served and its size moved: one
release's catalog is one value, labelled by the server's release (bounded, `_core/labels.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core.cost import CatalogCost, CatalogCosts, attributes
from mcpobs._core.telemetry import Telemetry


class CatalogSize:
    __slots__ = ("_costs", "_labels", "_sized", "_telemetry")

    def __init__(self, telemetry: Telemetry, labels: Mapping[str, Any]) -> None:
        self._telemetry = telemetry
        self._costs = CatalogCosts(telemetry.catalog_tokens)
        self._labels = dict(labels)
        self._sized: CatalogCost | None = None

    def listed(
        self, fingerprint: str, tools: Sequence[Mapping[str, Any]], params: object, reply: Mapping[str, object]
    ) -> dict[str, Any]:
        """The span's attributes for one listed page; the gauges when it completes a listing."""
        cursor = cast("dict[str, object]", params).get("cursor") if isinstance(params, dict) else None
        next_cursor = reply.get("nextCursor")
        cost = self._costs.of(fingerprint, lambda: tools, cursor, next_cursor)
        method = self._costs.tokens.method
        if next_cursor is None and cost != self._sized:
            self._sized = cost
            tel = self._telemetry
            tel.catalog_size.set(cost.bytes, self._labels)
            tel.catalog_size_tokens.set(cost.tokens, {**self._labels, S.CATALOG_TOKEN_METHOD: method})
        return attributes(cost, method)
