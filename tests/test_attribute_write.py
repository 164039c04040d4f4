"""mcpobs's direct attribute write leaves exactly what the SDK's `set_attributes` would.

The end batch of every span skips the SDK's per-value validation when it provably changes
nothing (`_core/attributes.py`); the spans a user exports must not tell the two apart, under
the default limits and under limits so low the SDK cuts and drops.
"""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from mcpobs._core import attributes
from mcpobs.testing import capture

_WRITE = attributes._write  # pyright: ignore[reportPrivateUsage]


def _server() -> MCPServer:
    server = MCPServer("shop", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def broken(text: str) -> str:
        raise RuntimeError("no")

    return server


async def _exported(direct: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object], int]:
    """Every exported span's name, kind, attributes in order and dropped count; how many batches went direct."""
    import mcpobs

    monkeypatch.setattr(attributes, "_write", _WRITE)
    attributes._proved = False  # pyright: ignore[reportPrivateUsage]
    attributes._prove()  # pyright: ignore[reportPrivateUsage]
    assert attributes._span_class is not None, "the SDK's span still works as the direct write expects"  # pyright: ignore[reportPrivateUsage]
    written = 0
    real = _WRITE

    def counted(span: object, batch: object) -> bool:
        nonlocal written
        done = direct and real(span, batch)  # type: ignore[arg-type]
        written += done
        return done

    monkeypatch.setattr(attributes, "_write", counted)
    telemetry = capture()
    try:
        async with Client(_server()) as client:
            await client.call_tool("echo", {"text": "hi"})
            await client.call_tool("broken", {"text": "hi"})
            await client.call_tool("missing", {})
    finally:
        mcpobs.uninstrument()
    spans = [
        (s.name, s.kind, list(s.attributes.items()), s.dropped_attributes, s.status.status_code)
        for s in telemetry.spans()
    ]
    return spans, written


@pytest.mark.anyio
async def test_direct_write_exports_what_set_attributes_exports(monkeypatch: pytest.MonkeyPatch):
    sdk, none = await _exported(False, monkeypatch)
    ours, written = await _exported(True, monkeypatch)
    assert none == 0
    assert written > 0, "the direct write was taken"
    assert ours == sdk


@pytest.mark.anyio
@pytest.mark.parametrize(
    "limits",
    [{"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT": "6"}, {"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "3"}],
    ids=["count", "length"],
)
async def test_low_limits_cut_and_drop_as_the_sdk_does(monkeypatch: pytest.MonkeyPatch, limits: dict[str, str]):
    for name, value in limits.items():
        monkeypatch.setenv(name, value)
    sdk, _ = await _exported(False, monkeypatch)
    ours, _ = await _exported(True, monkeypatch)
    assert ours == sdk
    if "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT" in limits:
        assert any(dropped for *_, dropped, _ in sdk), "the limit dropped attributes"
    else:
        assert all(len(v) <= 3 for _, _, items, *_ in sdk for _, v in items if isinstance(v, str))


def test_a_span_that_is_not_the_sdks_takes_set_attributes():
    class Recorded:
        def __init__(self) -> None:
            self.batches: list[dict[str, object]] = []

        def set_attributes(self, batch: dict[str, object]) -> None:
            self.batches.append(batch)

    span = Recorded()
    attributes.set_attributes(span, {"a": "1"})  # type: ignore[arg-type]
    assert span.batches == [{"a": "1"}]
