"""A task in the process that serves it (docket's in-memory backend, the server's own worker):
the same spans as across processes, from one `instrument()`; and `uninstrument()` gives pydocket
its tracers back and leaves the legs registered meanwhile unrecorded."""

import asyncio

from fastmcp import Client, Context, FastMCP
from fastmcp_tasks import TasksExtension
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import NoOpTracer, SpanKind

import mcpobs
from mcpobs import semconv as S
from mcpobs._cli.serving import serve


def _server() -> FastMCP:
    mcp = FastMCP("in-process-tasks")
    mcp.add_extension(TasksExtension(url="memory://", name="in-process"))

    @mcp.tool(task=True)
    async def slow(n: int, ctx: Context) -> str:
        for i in range(n):
            await ctx.report_progress(i + 1, n)
            await asyncio.sleep(0.05)
        return "done"

    return mcp


def _call(mcp: FastMCP) -> str:
    async def call(url: str) -> str:
        async with Client(url) as client:
            return (await client.call_tool("slow", {"n": 2})).content[0].text

    with serve(mcp.http_app()) as base:
        return asyncio.run(call(base + "/mcp"))


def _hop(spans: list[ReadableSpan]) -> tuple[ReadableSpan, ReadableSpan, ReadableSpan]:
    call = next(s for s in spans if s.kind is SpanKind.SERVER and s.name == "tools/call slow")
    create = next(s for s in spans if s.kind is SpanKind.PRODUCER)
    leg = next(s for s in spans if s.kind is SpanKind.CONSUMER)
    return call, create, leg


def test_a_task_run_in_process_is_one_trace(mcpobs_telemetry):
    import docket.docket
    import docket.worker

    assert isinstance(docket.docket.tracer, NoOpTracer) and isinstance(docket.worker.tracer, NoOpTracer)
    assert _call(_server()) == "done"
    spans = mcpobs_telemetry.spans()
    call, create, leg = _hop(spans)
    assert create.parent is not None and create.parent.span_id == call.context.span_id
    assert leg.parent is not None and leg.parent.span_id == create.context.span_id
    assert leg.context.trace_id == call.context.trace_id
    assert (leg.attributes or {})[S.TASK_OUTCOME] == "ok"
    progress = [s for s in spans if s.name == S.PROGRESS_SPAN]
    assert [s.parent.span_id for s in progress if s.parent] == [leg.context.span_id] * 2


def test_uninstrument_gives_pydocket_its_tracers_back_and_stops_recording_legs(mcpobs_telemetry):
    """The legs were registered while instrumented (the server's lifespan): after `uninstrument()`
    they run as they would without mcpobs, and record nothing."""
    import docket.docket
    import docket.worker

    async def call(url: str) -> str:
        async with Client(url) as client:
            return (await client.call_tool("slow", {"n": 1})).content[0].text

    with serve(_server().http_app()) as base:
        assert asyncio.run(call(base + "/mcp")) == "done"
        assert [s for s in mcpobs_telemetry.spans() if s.kind is SpanKind.CONSUMER]
        mcpobs_telemetry.clear()
        mcpobs.uninstrument()
        assert asyncio.run(call(base + "/mcp")) == "done"
    assert not isinstance(docket.docket.tracer, NoOpTracer) and not isinstance(docket.worker.tracer, NoOpTracer)
    assert mcpobs_telemetry.spans() == []
