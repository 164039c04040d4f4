"""Floods: 100,000 progress reports in one call, 10,000 subscription events at a slow listener.

A runaway loop in a tool or a publisher must cost the host a bounded amount of telemetry:
spans capped at the configured bound, the rest counted exactly, memory flat.
"""

from __future__ import annotations

import inspect
import time
import tracemalloc
from contextlib import suppress

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import SubscriptionLost
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ListenHandler
from opentelemetry.trace import SpanKind
from shop import create_server

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

FLOOD = 100_000
BURST = 10_000
SDK_STREAM_BACKLOG = inspect.signature(ListenHandler).parameters["max_buffered_events"].default
"""The SDK's per-stream backlog: a listen stream that falls this far behind is ended."""


async def export_with_progress(rows: int) -> tuple[str, int, float, float]:
    """Call slow_export(rows) with a progress callback; (result, reports heard, seconds, tracemalloc peak MB)."""
    heard = 0

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        nonlocal heard
        heard += 1

    async with Client(create_server()) as client:
        await client.call_tool("slow_export", {"rows": 1})  # warm up the session outside the measurement
        tracemalloc.start()
        try:
            baseline = tracemalloc.get_traced_memory()[0]
            started = time.perf_counter()
            result = await client.call_tool("slow_export", {"rows": rows}, progress_callback=on_progress)
            seconds = time.perf_counter() - started
            peak = tracemalloc.get_traced_memory()[1] - baseline
        finally:
            tracemalloc.stop()
    return result.content[0].text, heard, seconds, peak / 1e6


async def test_a_hundred_thousand_progress_reports_keep_the_cap_count_exactly_and_memory_flat():
    # What keeping every report would cost: the same call, uncapped, over 2,000 reports.
    telemetry = capture(max_progress_spans=FLOOD)
    try:
        *_, uncapped_mb = await export_with_progress(2_000)
        assert len(telemetry.spans_named(S.PROGRESS_SPAN)) == 2_001
    finally:
        mcpobs.uninstrument()
    kept_all_mb = uncapped_mb / 2_000 * FLOOD

    telemetry = capture()
    try:
        text, heard, seconds, peak_mb = await export_with_progress(FLOOD)
    finally:
        mcpobs.uninstrument()
    print(f"\n{FLOOD} reports: {seconds:.1f}s, peak +{peak_mb:.2f} MB (all kept: ~{kept_all_mb:.0f} MB)")
    assert text == "done" and heard == FLOOD  # the client heard every report
    calls = telemetry.spans_named("tools/call slow_export", SpanKind.SERVER)
    flood = calls[-1]
    progress = [s for s in telemetry.spans_named(S.PROGRESS_SPAN) if s.parent.span_id == flood.context.span_id]
    assert len(progress) == S.DEFAULT_MAX_PROGRESS_SPANS
    assert flood.attributes[S.PROGRESS_DROPPED] == FLOOD - S.DEFAULT_MAX_PROGRESS_SPANS
    assert [e.name for e in flood.events].count(S.EVENT_PROGRESS_CAP_REACHED) == 1
    assert telemetry.total(S.PROGRESS_REPORTS.name) == FLOOD + 1  # the warm-up's one report too
    assert telemetry.total(S.PROGRESS_CAPPED.name) == 1
    assert len(telemetry.points(S.PROGRESS_REPORTS.name)) == 1  # one series, whatever the volume
    # Flat: a small fraction of what keeping every report would take.
    assert peak_mb < 16 < kept_all_mb / 10


def publishing(server: MCPServer) -> MCPServer:
    @server.tool()
    async def burst(ctx: Context, n: int, each_its_own_uri: bool = False) -> str:
        """Publishes n events as fast as the bus takes them."""
        for i in range(n):
            if each_its_own_uri:
                await ctx.notify_resource_updated(f"shop://item/{i}")
            else:
                await ctx.notify_tools_changed()
        return f"published {n}"

    return server


async def burst_at_a_slow_listener(each_its_own_uri: bool) -> tuple[str, int]:
    """Publish BURST events in one call while the listener reads one event per millisecond."""
    heard = 0
    uris = [f"shop://item/{i}" for i in range(BURST)] if each_its_own_uri else ()
    async with (
        Client(publishing(create_server())) as client,
        client.listen(tools_list_changed=True, resource_subscriptions=uris) as stream,
    ):
        result = await client.call_tool("burst", {"n": BURST, "each_its_own_uri": each_its_own_uri})
        # The SDK ends a stream whose backlog overflows; the client then says the subscription is lost.
        with anyio.move_on_after(10), suppress(SubscriptionLost):
            async for _ in stream:
                heard += 1
                await anyio.sleep(0.001)
    return result.content[0].text, heard


@pytest.mark.parametrize("each_its_own_uri", [False, True], ids=["equal-events", "distinct-uris"])
async def test_a_burst_of_ten_thousand_events_at_a_slow_listener_is_counted_and_linked_right(
    mcpobs_telemetry, each_its_own_uri
):
    text, heard = await burst_at_a_slow_listener(each_its_own_uri)
    assert text == f"published {BURST}"
    kind = S.SubscriptionEvent.RESOURCE_UPDATED if each_its_own_uri else S.SubscriptionEvent.TOOLS_LIST_CHANGED
    published = mcpobs_telemetry.spans_named(S.publish_span_name(kind))
    delivered = mcpobs_telemetry.spans_named(S.deliver_span_name(kind))
    print(f"\n{BURST} published, {len(delivered)} written to the stream, {heard} read by the slow listener")
    assert len(published) == BURST
    # What the server wrote before the SDK ended the stream: at most its backlog and the client's.
    assert heard <= len(delivered) <= 2 * SDK_STREAM_BACKLOG
    events = {
        p.attributes[S.SUBSCRIPTION_DIRECTION]: p.value for p in mcpobs_telemetry.points(S.SUBSCRIPTION_EVENTS.name)
    }
    assert events == {"published": BURST, "delivered": len(delivered)}
    assert mcpobs_telemetry.total(S.SUBSCRIPTION_STREAMS.name) == 0  # the ended stream is no longer counted
    assert len(mcpobs_telemetry.points(S.SUBSCRIPTION_EVENTS.name)) <= 2 * len(S.SubscriptionEvent)

    # Each delivery links to the publish of the very event it carries, in order (the k-th event
    # delivered was the k-th published), even after the backlog overflowed.
    order = {s.context.span_id: i for i, s in enumerate(published)}
    linked = [order[d.links[0].context.span_id] for d in delivered]
    assert linked == list(range(len(delivered)))
    if each_its_own_uri:
        for d in delivered:
            assert (
                d.attributes[S.MCP_RESOURCE_URI]
                == published[order[d.links[0].context.span_id]].attributes[S.MCP_RESOURCE_URI]
            )
    # Bounded names, whatever the URIs.
    assert {s.name for s in mcpobs_telemetry.spans()} <= {
        "tools/call burst",
        "subscriptions/listen",
        "server/discover",
        "tools/list",
        S.publish_span_name(kind),
        S.deliver_span_name(kind),
    }


async def test_the_bursts_memory_is_the_sdks_own_not_telemetry_kept_per_event():
    """tracemalloc peak of the burst bare, then instrumented into a pipeline that keeps nothing."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    async def peak_mb() -> float:
        tracemalloc.start()
        try:
            await burst_at_a_slow_listener(each_its_own_uri=True)
            return tracemalloc.get_traced_memory()[1] / 1e6
        finally:
            tracemalloc.stop()

    bare = await peak_mb()
    tracer_provider, meter_provider = TracerProvider(), MeterProvider()  # spans recorded, then dropped
    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        instrumented = await peak_mb()
    finally:
        mcpobs.uninstrument()
    print(f"\nburst peak: bare {bare:.1f} MB, instrumented {instrumented:.1f} MB")
    # Per-stream state is capped at the SDK's backlog: 10,000 events leave a few MB, not 10,000 contexts.
    assert S.MAX_NOTED_PUBLISHES >= SDK_STREAM_BACKLOG  # enough to link every event the stream holds
    assert instrumented - bare < 8
