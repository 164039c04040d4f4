"""No cliff at an internal bound: past it the oldest entry is evicted, the recent ones stay cached.

Each cache below used to empty itself when full, so the first key past its bound made every
key miss at once (a server calling more than 4,096 distinct tools in turn recomputed every
fingerprint and label set on every call). Each test goes 5,000 keys in, then asks again for the
4,096 most recent: none is recomputed, and the cache holds no more than its bound.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from mcpobs import semconv as S
from mcpobs._core import contract, labels, tally
from mcpobs._core.config import settings_from
from mcpobs._core.names import ServerNames
from mcpobs._core.outcome import Classification
from mcpobs._server import corpus

_KEYS = 5_000
_BOUND = 4_096


def _tools() -> list[dict[str, Any]]:
    """Distinct tool objects, held for the whole test (the caches key by identity)."""
    return [{"name": f"tool_{i}", "inputSchema": {"type": "object"}} for i in range(_KEYS)]


def test_fingerprints_of_the_most_recent_tools_stay_cached_past_the_bound(monkeypatch: pytest.MonkeyPatch):
    made: list[object] = []
    real = contract.wire_tool
    monkeypatch.setattr(contract, "wire_tool", lambda tool: made.append(tool) or real(tool))
    cache = contract.FingerprintCache()
    tools = _tools()
    first = [cache.of(tool) for tool in tools]
    assert len(made) == _KEYS
    made.clear()
    again = [cache.of(tool) for tool in tools[-_BOUND:]]
    assert made == []  # the clearing cache recomputed 3,193 of these
    assert again == first[-_BOUND:]
    assert len(cache._cache) <= _BOUND  # pyright: ignore[reportPrivateUsage]
    cache.of(tools[0])  # the oldest was evicted: computed again, the same
    assert made == [tools[0]] and cache.of(tools[0]) == first[0]


def test_label_sets_of_the_most_recent_keys_stay_built_past_the_bound(monkeypatch: pytest.MonkeyPatch):
    built: list[tuple[Any, ...]] = []
    real = labels.base_labels
    monkeypatch.setattr(labels, "base_labels", lambda key: built.append(key) or real(key))
    sets = labels.LabelSets(S.SERVER_REQUESTS, errors_only=True, duration=S.SERVER_OPERATION_DURATION)
    keys = [("tools/call", "2026-07-28", S.GEN_AI_TOOL_NAME, f"tool_{i}", None) for i in range(_KEYS)]
    ok = Classification(S.Outcome.OK)
    first = [sets.with_outcome(key, ok) for key in keys]
    assert len(built) == _KEYS
    built.clear()
    again = [sets.with_outcome(key, ok) for key in keys[-_BOUND:]]
    bases = [sets.base(key) for key in keys[-_BOUND:]]
    assert built == []
    assert all(a is b for a, b in zip(again, first[-_BOUND:], strict=True))  # the very same shared dicts
    assert bases[-1][S.GEN_AI_TOOL_NAME] == f"tool_{_KEYS - 1}"
    assert len(sets._base) <= _BOUND and len(sets._outcome) <= _BOUND  # pyright: ignore[reportPrivateUsage]


def test_shared_label_dicts_stay_remembered_past_the_bound(monkeypatch: pytest.MonkeyPatch):
    looked_up: list[tuple[Any, ...]] = []
    real = tally.Tally._entry  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(tally.Tally, "_entry", lambda self, key, lbls: looked_up.append(key) or real(self, key, lbls))
    counter = tally.Tally()
    shared = [{S.GEN_AI_TOOL_NAME: f"tool_{i}"} for i in range(_KEYS)]
    for each in shared:
        counter.add_shared(1, each)
    assert len(looked_up) == _KEYS
    looked_up.clear()
    for each in shared[-_BOUND:]:
        counter.add_shared(1, each)
    assert looked_up == []
    assert len(counter._shared) <= _BOUND  # pyright: ignore[reportPrivateUsage]
    entries = counter._totals.values()  # pyright: ignore[reportPrivateUsage]
    assert sum(total for _, total in entries) == _KEYS + _BOUND  # every add counted once, on its series


def test_compiled_tool_shapes_stay_kept_past_the_bound(monkeypatch: pytest.MonkeyPatch):
    compiled: list[object] = []
    real = corpus._Tool  # pyright: ignore[reportPrivateUsage]

    def counting(tool: Any, fingerprint: str) -> Any:
        compiled.append(tool)
        return real(tool, fingerprint)

    monkeypatch.setattr(corpus, "_Tool", counting)
    book = corpus.Corpus(settings_from({}, {}))
    tools = _tools()
    for tool in tools:
        book._tool(tool, "f")  # pyright: ignore[reportPrivateUsage]
    compiled.clear()
    for tool in tools[-_BOUND:]:
        book._tool(tool, "f")  # pyright: ignore[reportPrivateUsage]
    assert compiled == []
    assert len(book._tools) <= _BOUND  # pyright: ignore[reportPrivateUsage]


# A server's own catalog can be larger than any fixed bound: the caches of its registered names
# grow to twice what it registers (`known`), so cycling through all of them misses only once.


def test_fingerprints_of_a_catalog_past_the_floor_all_stay_cached(monkeypatch: pytest.MonkeyPatch):
    made: list[object] = []
    real = contract.wire_tool
    monkeypatch.setattr(contract, "wire_tool", lambda tool: made.append(tool) or real(tool))
    tools = _tools()
    cache = contract.FingerprintCache(known=lambda: len(tools))
    for _ in range(2):
        for tool in tools:
            cache.of(tool)
    assert len(made) == _KEYS  # the second pass computed nothing (it used to compute all 5,000)
    assert len(cache._cache) == _KEYS  # pyright: ignore[reportPrivateUsage]


def test_label_sets_of_a_catalog_past_the_floor_are_built_once(monkeypatch: pytest.MonkeyPatch):
    built: list[tuple[Any, ...]] = []
    real = labels.base_labels
    monkeypatch.setattr(labels, "base_labels", lambda key: built.append(key) or real(key))
    keys = [("tools/call", "2026-07-28", S.GEN_AI_TOOL_NAME, f"tool_{i}", None) for i in range(_KEYS)]
    sets = labels.LabelSets(
        S.SERVER_REQUESTS, errors_only=True, duration=S.SERVER_OPERATION_DURATION, known=lambda: len(keys)
    )
    ok = Classification(S.Outcome.OK)
    first = [sets.with_outcome(key, ok) for key in keys]
    again = [sets.with_outcome(key, ok) for key in keys]
    assert len(built) == _KEYS
    assert all(a is b for a, b in zip(again, first, strict=True))


def test_shared_label_dicts_of_a_catalog_past_the_floor_stay_remembered(monkeypatch: pytest.MonkeyPatch):
    looked_up: list[tuple[Any, ...]] = []
    real = tally.Tally._entry  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(tally.Tally, "_entry", lambda self, key, lbls: looked_up.append(key) or real(self, key, lbls))
    keys = [("tools/call", "2026-07-28", S.GEN_AI_TOOL_NAME, f"tool_{i}", None) for i in range(_KEYS)]
    sets = labels.LabelSets(S.SERVER_REQUESTS, errors_only=True, known=lambda: len(keys))
    ok = Classification(S.Outcome.OK)
    counter = tally.Tally()
    for _ in range(2):
        for key in keys:
            counter.add_shared(1, sets.with_outcome(key, ok)[1])
    assert len(looked_up) == _KEYS  # the 4,096 most recent were remembered: every one looked up again


def test_compiled_shapes_of_a_catalog_past_the_floor_are_compiled_once(monkeypatch: pytest.MonkeyPatch):
    compiled: list[object] = []
    real = corpus._Tool  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(corpus, "_Tool", lambda tool, fingerprint: compiled.append(tool) or real(tool, fingerprint))
    tools = _tools()
    book = corpus.Corpus(settings_from({}, {}), known=lambda: len(tools))
    for _ in range(2):
        for tool in tools:
            book._tool(tool, "f")  # pyright: ignore[reportPrivateUsage]
    assert len(compiled) == _KEYS


@pytest.mark.slow  # 15,000 calls through the client: about 20 s
@pytest.mark.anyio
async def test_a_server_cycling_through_5000_registered_tools_computes_each_once(
    mcpobs_telemetry, monkeypatch: pytest.MonkeyPatch
):
    """The whole path: a real server, every call through the in-memory client, twice round."""
    made: list[object] = []
    built: list[tuple[Any, ...]] = []
    real_wire, real_labels = contract.wire_tool, labels.base_labels
    monkeypatch.setattr(contract, "wire_tool", lambda tool: made.append(tool) or real_wire(tool))
    monkeypatch.setattr(labels, "base_labels", lambda key: built.append(key) or real_labels(key))
    server = MCPServer("large")

    def echo(text: str) -> str:
        return text

    for i in range(_KEYS):
        server.add_tool(echo, name=f"tool_{i}")
    async with Client(server) as client:
        await client.list_tools()  # the client names a tool only once listed: its first call's key is then the same
        for i in range(_KEYS):
            await client.call_tool(f"tool_{i}", {"text": "x"})
        made.clear()
        built.clear()
        for i in range(_KEYS):
            await client.call_tool(f"tool_{i}", {"text": "x"})
        assert made == [] and built == []  # the fixed bound recomputed all 5,000, every pass
        for i in range(_KEYS):  # names a caller makes up fold to one label set: nothing grows
            await client.call_tool(f"made_up_{i}", {"text": "x"})
    assert len(built) <= 3


def test_the_catalog_is_counted_once_per_many_asks_not_per_miss():
    """Past the floor every first-time miss asks how large the catalog is; counting copies the
    registry (MCPServer's `list_tools()`), so a 10,000-tool catalog filling the caches would copy
    it thousands of times. The count is taken afresh once per 256 asks."""
    counted: list[int] = []
    names = ServerNames(object())

    def offered() -> dict[str, int]:
        counted.append(1)
        return {"tools": 10_000, "prompts": 0, "resources": 0}

    names.offered = offered
    sizes = {names.known() for _ in range(1_000)}
    assert sizes == {10_000}
    assert len(counted) == 4  # asks 1, 257, 513 and 769: the old count copied on all 1,000
