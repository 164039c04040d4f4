"""Every string mcpobs records is valid UTF-8 and bounded, whatever the caller, peer or handler wrote.

OTLP carries strings as protobuf `string` fields, which must be valid UTF-8: one lone surrogate
("\\ud800", valid JSON and a valid Python `str`) in one attribute makes the exporter fail to
encode the whole batch, so one caller could make hundreds of other requests' spans vanish. A
seeded generator feeds random and hostile strings through every field a request can put in
telemetry (tool and prompt names, arguments a handler echoes into its exception, resource URIs,
progress messages, the client's name and version, the requested protocol version) and every
span is then encoded with the real OTLP encoder. The end-to-end case runs the issue's own
example over Streamable HTTP into a real OTLP/HTTP receiver on loopback.
"""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import Implementation
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otlp_receiver import OtlpReceiver
from transports import serve_http

import mcpobs
from mcpobs import semconv as S
from mcpobs._core.text import clean
from mcpobs.testing import capture

LIMIT = S.DEFAULT_MAX_ATTRIBUTE_LENGTH

HOSTILE = [
    "\ud800",
    "\udfff",
    "a\ud83d",  # the first half of a pair, alone
    "\ude00b",  # the second half, alone
    "\ud83d\ude00",  # a pair as two code points: Python keeps them apart, UTF-8 cannot encode them
    "x" * 100_000,
    "\ud800" * 5000,
    "é" * 5000 + "\udc80",
    "\x00\x01\x1b[31m\u202e",
    "",
]


def hostile_strings(seed: int = 24, count: int = 40) -> list[str]:
    """The fixed hostile strings, then random ones mixing ASCII, BMP, astral and surrogate code points."""
    rng = random.Random(seed)
    pools = [(0x20, 0x7E), (0x00, 0x1F), (0x80, 0x7FF), (0x800, 0xD7FF), (0xD800, 0xDFFF), (0x10000, 0x10FFFF)]
    made = list(HOSTILE)
    for _ in range(count):
        length = rng.choice([1, 3, 17, 200, 5000])
        made.append("".join(chr(rng.randint(*rng.choice(pools))) for _ in range(length)))
    return made


def shop() -> MCPServer:
    server = MCPServer("hostile")

    @server.tool()
    def find_order(order_id: str) -> str:
        raise LookupError(f"no order {order_id}")

    @server.tool()
    def open_report(path: str) -> str:
        name = os.fsdecode(path.encode() + b"\xff.txt")  # a byte that is not UTF-8: a lone surrogate
        raise FileNotFoundError(f"no such file: {name}")

    @server.tool()
    async def report(message: str, ctx: Context) -> str:
        await ctx.report_progress(1, 2, message)
        return "reported"

    @server.resource("orders://{order_id}")
    def order(order_id: str) -> str:
        raise LookupError(f"no order {order_id}")

    @server.prompt()
    def summary(order_id: str) -> str:
        raise LookupError(f"no order {order_id}")

    return server


async def drive(client: Any, text: str) -> None:
    """Each way one string reaches what mcpobs records; every call may fail, none may crash the test."""
    calls = [
        lambda: client.call_tool("find_order", {"order_id": text}),
        lambda: client.call_tool(text, {}),
        lambda: client.call_tool("report", {"message": text}),
        lambda: client.read_resource(f"orders://{text}"),
        lambda: client.get_prompt("summary", {"order_id": text}),
        lambda: client.get_prompt(text, {}),
    ]
    for call in calls:
        with suppress(Exception):
            await call()


def strings_in(span: Any) -> Iterator[tuple[str, str]]:
    """(where, value) for every string a span carries."""
    yield "name", span.name
    if span.status.description is not None:
        yield "status", span.status.description
    for key, value in (span.attributes or {}).items():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, str):
                yield key, item
    for event in span.events:
        yield "event", event.name
        for key, value in (event.attributes or {}).items():
            if isinstance(value, str):
                yield f"event {key}", value


def assert_clean(spans: list[Any]) -> None:
    assert spans
    encode_spans(spans).SerializeToString()  # raises on a string protobuf cannot carry
    for span in spans:
        for where, value in strings_in(span):
            value.encode("utf-8")  # raises on a lone surrogate
            assert len(value) <= LIMIT, f"{span.name!r} {where}: {len(value)} characters"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_hostile_strings_in_every_recorded_field_encode_with_the_real_otlp_encoder(mode):
    # Error messages and raw URIs opted in: the hostile text then reaches every field that can hold it.
    telemetry = capture(record_error_messages=True, raw_resource_uris=True, record_progress_messages=True)
    try:
        await _hostile_run(telemetry, mode)
    finally:
        mcpobs.uninstrument()


async def _hostile_run(mcpobs_telemetry, mode):
    server = shop()
    for text in hostile_strings():
        info = Implementation(name=text or "x", version=text or "1")
        async with Client(server, mode=mode, client_info=info) as client:
            await drive(client, text)
    spans = mcpobs_telemetry.spans()
    assert len(spans) > 300
    assert_clean(spans)
    # the status descriptions still say what failed, with the caller's text made valid
    failed = [s for s in spans if s.status.description and s.status.description.startswith("no order ")]
    assert failed


def test_clean_keeps_valid_text_and_repairs_the_rest():
    assert clean("get_order_status", 100) == "get_order_status"
    assert clean("naïve ☃ 😀", 100) == "naïve ☃ 😀"
    assert clean("a\ud800b", 100) == "a\ufffdb"
    assert clean("\ud83d\ude00", 100) == "😀"  # a pair written as two code points is the character
    assert clean("x" * 10, 4) == "xxxx"
    assert clean(12345, 3) == "123"

    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert clean(Unprintable(), 100) == "<Unprintable>"
    for text in hostile_strings(seed=7, count=200):
        cleaned = clean(text, LIMIT)
        cleaned.encode("utf-8")
        assert len(cleaned) <= LIMIT


def test_the_session_log_line_is_bounded_and_valid(mcpobs_telemetry, caplog):
    import anyio

    server = shop()
    huge = "2025-\ud800" + "9" * 200_000

    async def main() -> None:
        info = Implementation(name="n" * 100_000, version="\ud800")
        async with Client(server, mode="legacy", client_info=info) as client:
            await client.session._dispatcher.send_raw_request(
                "initialize",
                {"protocolVersion": huge, "capabilities": {}, "clientInfo": {"name": "c" * 50_000, "version": "1"}},
                {},
            )

    with caplog.at_level(logging.INFO, logger="mcpobs.session"), suppress(Exception):
        anyio.run(main)
    lines = [r.getMessage() for r in caplog.records if r.name == "mcpobs.session"]
    assert lines
    for line in lines:
        line.encode("utf-8")
        assert len(line) < 2000, len(line)


# -- end to end: the example, into a real OTLP/HTTP receiver ---------------------------


class Counting(OTLPSpanExporter):
    """The real OTLP/HTTP exporter, counting the spans handed to it."""

    handed = 0

    def export(self, spans: Any) -> Any:
        Counting.handed += len(spans)
        return super().export(spans)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_one_lone_surrogate_among_300_calls_loses_no_span_at_the_receiver(transport):
    """The issue's case: a tool raising `LookupError(f"no order {order_id}")`, one caller sending "\\ud800".

    Over HTTP the SDK's JSON parser refuses a lone surrogate escape, so there the surrogate comes
    from the handler instead: a file name with a byte that is not UTF-8, as `os.fsdecode` gives it.
    """
    receiver = OtlpReceiver()
    with receiver.running():
        provider = TracerProvider()
        Counting.handed = 0
        provider.add_span_processor(BatchSpanProcessor(Counting(endpoint=receiver.traces_url, timeout=5)))
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
        mcpobs.uninstrument()
        mcpobs.instrument(tracer_provider=provider, meter_provider=meter_provider)
        try:
            server = shop()
            with ExitStack() as stack:
                target = (
                    server
                    if transport == "memory"
                    else stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp"
                )
                async with Client(target) as client:
                    for i in range(300):
                        if i != 150:
                            call = client.call_tool("find_order", {"order_id": f"O-{i}"})
                        elif transport == "memory":
                            call = client.call_tool("find_order", {"order_id": "\ud800"})
                        else:
                            call = client.call_tool("open_report", {"path": "report"})
                        assert (await call).is_error
            assert provider.force_flush(10_000)
        finally:
            mcpobs.uninstrument()
            provider.shutdown()
    assert Counting.handed >= 600  # a client and a server span per call, and the handshake's
    assert receiver.spans == Counting.handed, f"{receiver.spans} of {Counting.handed} spans arrived"
