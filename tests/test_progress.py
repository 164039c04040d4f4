"""Progress reports as child spans of the running tool, exported while it runs, capped per call."""

from __future__ import annotations

import asyncio
import threading

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from opentelemetry.sdk.trace import SpanProcessor
from shop import create_server
from transports import connected, server_spans

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

EXPORT = "tools/call slow_export"


async def export(transport: str, rows: int, *, with_callback: bool) -> list[tuple[float, float | None, str | None]]:
    """Call the shop's slow_export; return what the client's progress callback heard."""
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    server = create_server()
    async with connected(transport, server) as client:
        kwargs = {"progress_callback": on_progress} if with_callback else {}
        result = await client.call_tool("slow_export", {"rows": rows}, **kwargs)
        assert result.content[0].text == "done"
    return heard


def export_span(telemetry):
    (span,) = server_spans(telemetry, EXPORT)
    return span


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_each_progress_report_is_a_child_span_that_ends_before_its_tool(mcpobs_telemetry, transport):
    heard = await export(transport, 5, with_callback=True)
    assert len(heard) == 5  # the client still gets every report
    tool = export_span(mcpobs_telemetry)
    progress = mcpobs_telemetry.spans_named(S.PROGRESS_SPAN)
    assert len(progress) == 5
    for i, span in enumerate(progress, start=1):
        assert span.parent is not None and span.parent.span_id == tool.context.span_id
        assert span.context.trace_id == tool.context.trace_id
        assert span.end_time < tool.end_time
        a = span.attributes
        assert (a[S.PROGRESS_VALUE], a[S.PROGRESS_TOTAL]) == (i, 5)
        assert a[S.PROGRESS_PERCENTAGE] == pytest.approx(i * 20)
        assert S.PROGRESS_MESSAGE not in a  # text the tool wrote: recorded only when opted in
        assert a[S.PROGRESS_REQUESTED] is True
    # progress spans are never latency samples: one sample, the tool call's
    assert mcpobs_telemetry.total(S.SERVER_OPERATION_DURATION.name, {S.GEN_AI_TOOL_NAME: "slow_export"}) == 1
    assert mcpobs_telemetry.total(S.PROGRESS_REPORTS.name, {S.GEN_AI_TOOL_NAME: "slow_export"}) == 5
    assert S.PROGRESS_DROPPED not in tool.attributes


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_progress_is_recorded_when_the_client_did_not_ask_and_says_so(mcpobs_telemetry, transport):
    assert await export(transport, 3, with_callback=False) == []
    progress = mcpobs_telemetry.spans_named(S.PROGRESS_SPAN)
    assert len(progress) == 3
    assert all(s.attributes[S.PROGRESS_REQUESTED] is False for s in progress)


@pytest.mark.parametrize("transport", ["auto", "http"])
async def test_260_reports_become_200_spans_and_the_cap_announces_itself(mcpobs_telemetry, transport):
    await export(transport, 260, with_callback=True)
    tool = export_span(mcpobs_telemetry)
    assert len(mcpobs_telemetry.spans_named(S.PROGRESS_SPAN)) == 200
    assert tool.attributes[S.PROGRESS_DROPPED] == 60
    (event,) = [e for e in tool.events if e.name == S.EVENT_PROGRESS_CAP_REACHED]
    last_recorded = max(s.end_time for s in mcpobs_telemetry.spans_named(S.PROGRESS_SPAN))
    assert event.timestamp >= last_recorded  # at the first dropped report, not at the end
    tool_labels = {S.GEN_AI_TOOL_NAME: "slow_export"}
    assert mcpobs_telemetry.total(S.PROGRESS_REPORTS.name, tool_labels) == 260
    assert mcpobs_telemetry.total(S.PROGRESS_CAPPED.name, tool_labels) == 1
    assert tool.attributes[S.OUTCOME] == "ok"


async def test_the_cap_is_an_instrument_option():
    telemetry = capture(max_progress_spans=3)
    try:
        await export("auto", 5, with_callback=False)
    finally:
        mcpobs.uninstrument()
    assert len(telemetry.spans_named(S.PROGRESS_SPAN)) == 3
    assert export_span(telemetry).attributes[S.PROGRESS_DROPPED] == 2


async def test_the_cap_counts_per_operation(mcpobs_telemetry):
    server = create_server()
    async with Client(server) as client:
        for _ in range(3):
            await client.call_tool("slow_export", {"rows": 150})
    assert len(mcpobs_telemetry.spans_named(S.PROGRESS_SPAN)) == 450
    assert all(S.PROGRESS_DROPPED not in s.attributes for s in server_spans(mcpobs_telemetry, EXPORT))


async def test_progress_is_exported_while_the_tool_still_runs(mcpobs_telemetry):
    server = create_server()
    halfway = anyio.Event()
    finish = anyio.Event()

    @server.tool()
    async def nightly_export(ctx: Context) -> str:
        await ctx.report_progress(3, 10, "three seconds in")
        halfway.set()
        await finish.wait()
        return "done"

    async with Client(server) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "nightly_export", {})
        await halfway.wait()
        # the tool is still running: its span is not exported, its progress is
        assert server_spans(mcpobs_telemetry, "tools/call nightly_export") == []
        (progress,) = mcpobs_telemetry.spans_named(S.PROGRESS_SPAN)
        assert progress.attributes[S.PROGRESS_PERCENTAGE] == pytest.approx(30)
        finish.set()
    assert len(server_spans(mcpobs_telemetry, "tools/call nightly_export")) == 1


async def test_progress_from_a_sync_tool_on_a_worker_thread_parents_on_its_call(mcpobs_telemetry):
    server = create_server()

    @server.tool()
    def count_stock(ctx: Context) -> str:
        anyio.from_thread.run(ctx.report_progress, 1, 2)
        return "counted"

    async with Client(server) as client:
        await client.call_tool("count_stock", {})
    (tool,) = server_spans(mcpobs_telemetry, "tools/call count_stock")
    (progress,) = mcpobs_telemetry.spans_named(S.PROGRESS_SPAN)
    assert progress.parent.span_id == tool.context.span_id


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_progress_from_a_plain_thread_of_a_running_call_is_recorded_on_that_call(mcpobs_telemetry, transport):
    """A `threading.Thread` carries no context: the report is found to be its call's all the same."""
    server = create_server()

    @server.tool()
    async def reindex(ctx: Context) -> str:
        loop = asyncio.get_running_loop()

        def work() -> None:
            for i in (1, 2):
                asyncio.run_coroutine_threadsafe(ctx.report_progress(i, 2, "reindexing"), loop).result(30)

        thread = threading.Thread(target=work)
        thread.start()
        await anyio.to_thread.run_sync(thread.join)
        return "reindexed"

    async with connected(transport, server) as client:
        await client.call_tool("reindex", {})
    (tool,) = server_spans(mcpobs_telemetry, "tools/call reindex")
    progress = mcpobs_telemetry.spans_named(S.PROGRESS_SPAN)
    assert len(progress) == 2
    assert all(p.parent is not None and p.parent.span_id == tool.context.span_id for p in progress)
    assert mcpobs_telemetry.total(S.PROGRESS_REPORTS.name, {S.GEN_AI_TOOL_NAME: "reindex"}) == 2


class RaisingOn(SpanProcessor):
    """A broken pipeline: raises whenever a span with this name starts or ends."""

    def __init__(self, name: str) -> None:
        self.name = name

    def on_start(self, span, parent_context=None) -> None:
        if span.name == self.name:
            raise RuntimeError("exporter down")

    def on_end(self, span) -> None:
        if span.name == self.name:
            raise RuntimeError("exporter down")


async def test_a_broken_telemetry_pipeline_never_breaks_a_tool_reporting_progress(mcpobs_telemetry):
    mcpobs_telemetry.tracer_provider.add_span_processor(RaisingOn(S.PROGRESS_SPAN))
    heard = await export("auto", 3, with_callback=True)
    assert len(heard) == 3  # the tool ran and the client heard every report
    assert len(server_spans(mcpobs_telemetry, EXPORT)) == 1


async def test_a_report_neither_rebuilds_its_labels_nor_rereads_the_request(mcpobs_telemetry, monkeypatch):
    """Per report, only what changes is computed: the counter's series and whether the caller
    asked for progress are found once per request, not on every report (issue 31)."""
    from mcpobs._core.tally import Tally
    from mcpobs._server import progress

    progress_key = ((S.MCP_METHOD_NAME, "tools/call"), (S.GEN_AI_TOOL_NAME, "slow_export"))
    hashed: list[object] = []
    entry, requested = Tally._entry, progress._requested

    def counting_entry(self, key, labels):
        if key == progress_key:
            hashed.append(key)
        return entry(self, key, labels)

    def counting_requested(session):
        hashed.append("requested")
        return requested(session)

    monkeypatch.setattr(Tally, "_entry", counting_entry)
    monkeypatch.setattr(progress, "_requested", counting_requested)
    for _ in range(2):
        assert len(await export("auto", 5, with_callback=True)) == 5
    assert hashed.count("requested") == 2  # once per request
    assert hashed.count(progress_key) <= 1  # once per process: later reports find the series by identity
    assert mcpobs_telemetry.total(S.PROGRESS_REPORTS.name, {S.GEN_AI_TOOL_NAME: "slow_export"}) == 10
    assert all(s.attributes[S.PROGRESS_REQUESTED] is True for s in mcpobs_telemetry.spans_named(S.PROGRESS_SPAN))
