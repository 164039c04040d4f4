"""FastMCP 3.4's `task=True` on mcp 1.30 (issue 51): pydocket in memory, Streamable HTTP on loopback,
a `fastmcp.Client` calling with `task=True` (its `ToolTask`), both sides instrumented.

One task is one trace: the submission, the PRODUCER `create <tool>` span the job carries, the
tool's CONSUMER `process <tool>` span in docket's worker (parented on the job's context, and
linked), every tasks/* request. A raising tool is `tool_error` on both sides; a cancelled task
`cancelled`; an in-task `ctx.elicit` is relayed under its own task (not the session's first).
Needs pydocket (`fastmcp[tasks]`): skipped without it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry.trace import SpanKind
from task_spans import named, one, settled

from mcpobs import semconv as S

pytest.importorskip("docket", reason="FastMCP 3 tasks need pydocket: fastmcp[tasks]")

from fastmcp import Context, FastMCP  # the tools' annotations are resolved at module level

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def fastmcp3_tasks() -> Any:
    server = FastMCP("tasks-3")

    @server.tool(task=True)
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "step 1")
        await asyncio.sleep(0.05)
        return "done"

    @server.tool(task=True)
    async def boom() -> str:
        raise ValueError("kaboom")

    @server.tool(task=True)
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Proceed?", response_type=bool)
        return f"ask: {answer.action}"

    @server.tool(task=True)
    async def forever() -> str:
        await asyncio.sleep(30)
        return "never"

    return server


@contextlib.asynccontextmanager
async def client_to(server: Any) -> AsyncIterator[Any]:
    from fastmcp import Client

    from mcpobs._cli.serving import serve

    async def elicited(message: str, response_type: Any, params: Any, context: Any) -> bool:
        return True

    with serve(server.http_app()) as base:
        async with Client(base + "/mcp", elicitation_handler=elicited) as client:
            await client.list_tools()  # the client's spans are named by the tools it listed
            yield client


def in_trace(found: list[Any], trace_id: int, method: str) -> None:
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        spans = named(found, method, kind)
        assert spans, (method, kind)
        assert {s.context.trace_id for s in spans} == {trace_id}, (method, kind)


def no_raw_id(found: list[Any], task_ids: list[str]) -> None:
    for span in found:
        text = repr(dict(span.attributes)) + repr([dict(e.attributes or {}) for e in span.events])
        for task_id in task_ids:
            assert task_id not in text, span.name


async def test_each_task_is_one_trace_with_its_work(mcpobs_telemetry):
    async with client_to(fastmcp3_tasks()) as client:
        slow = await client.call_tool("slow", {}, task=True)
        assert (await slow.result()).content[0].text == "done"
        boom = await client.call_tool("boom", {}, task=True)
        with pytest.raises(Exception):  # noqa: B017  # ToolError: the task failed
            await boom.result()
        ids = [slow.task_id, boom.task_id]
    found = await settled(
        mcpobs_telemetry,
        lambda f: named(f, "process slow", SpanKind.CONSUMER) and named(f, "process boom", SpanKind.CONSUMER),
    )
    for tool, outcome in (("slow", "ok"), ("boom", "tool_error")):
        submit = one(found, f"tools/call {tool}", SpanKind.CLIENT)
        served = one(found, f"tools/call {tool}", SpanKind.SERVER)
        create = one(found, f"create {tool}", SpanKind.PRODUCER)
        work = one(found, f"process {tool}", SpanKind.CONSUMER)
        assert served.parent.span_id == submit.context.span_id
        assert create.parent.span_id == served.context.span_id
        assert work.parent.span_id == create.context.span_id  # the job's context, carried by docket
        assert [link.context.span_id for link in work.links] == [create.context.span_id]
        assert work.attributes[S.MESSAGING_SYSTEM] == "pydocket"
        assert work.attributes[S.OUTCOME] == outcome
        assert work.attributes[S.TASK_OUTCOME] == outcome
        if tool == "slow":  # its progress report, under its leg
            under = [s for s in found if s.name == S.PROGRESS_SPAN and s.parent.span_id == work.context.span_id]
            assert len(under) == 1
        for span in (submit, served):  # the submission succeeded
            assert span.attributes[S.OUTCOME] == "ok"
            assert span.attributes[S.TASK_ID_HASH] == work.attributes[S.TASK_ID_HASH]
    slow_trace = one(found, "tools/call slow", SpanKind.CLIENT).context.trace_id
    boom_trace = one(found, "tools/call boom", SpanKind.CLIENT).context.trace_id
    results = {s.context.trace_id: s for s in named(found, "tasks/result", SpanKind.CLIENT)}
    assert set(results) == {slow_trace, boom_trace}  # each task's result in its own trace
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):  # the raising task failed on both sides
        [result] = [s for s in named(found, "tasks/result", kind) if s.context.trace_id == boom_trace]
        assert result.attributes[S.OUTCOME] == "tool_error", kind
        assert result.attributes[S.TASK_OUTCOME] == "tool_error", kind
    no_raw_id(found, ids)


async def test_the_in_task_elicitation_is_under_its_own_task(mcpobs_telemetry):
    async with client_to(fastmcp3_tasks()) as client:
        first = await client.call_tool("slow", {}, task=True)  # the session's first task
        await first.result()
        ask = await client.call_tool("ask", {}, task=True)
        assert (await asyncio.wait_for(ask.result(), 15)).content[0].text == "ask: accept"
        ids = [first.task_id, ask.task_id]
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process ask", SpanKind.CONSUMER))
    work = one(found, "process ask", SpanKind.CONSUMER)
    asked = [s for s in found if s.name.startswith("elicitation/create")]
    assert asked
    assert {s.context.trace_id for s in asked} == {work.context.trace_id}  # not the first task's
    [relayed] = [s for s in asked if s.kind is SpanKind.CLIENT]
    assert relayed.parent.span_id == work.context.span_id
    assert work.attributes[S.TASK_OUTCOME] == "ok"
    no_raw_id(found, ids)


async def test_a_cancelled_task_is_cancelled_on_both_sides(mcpobs_telemetry):
    async with client_to(fastmcp3_tasks()) as client:
        task = await client.call_tool("forever", {}, task=True)
        await asyncio.sleep(0.3)
        await task.cancel()
        assert (await task.status()).status == "cancelled"
        ids = [task.task_id]
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process forever", SpanKind.CONSUMER))
    trace_id = one(found, "tools/call forever", SpanKind.CLIENT).context.trace_id
    in_trace(found, trace_id, "tasks/cancel")
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        assert one(found, "tasks/cancel", kind).attributes[S.TASK_OUTCOME] == "cancelled", kind
    work = one(found, "process forever", SpanKind.CONSUMER)
    assert work.attributes[S.OUTCOME] == "cancelled"
    assert work.context.trace_id == trace_id
    no_raw_id(found, ids)


async def test_pydockets_own_spans_hold_no_raw_task_id(mcpobs_telemetry, monkeypatch):
    """With a global tracer provider (where pydocket opens its spans, `docket.key` holding the task id)."""
    from opentelemetry import trace

    monkeypatch.setattr(trace, "_TRACER_PROVIDER", mcpobs_telemetry.tracer_provider)
    async with client_to(fastmcp3_tasks()) as client:
        task = await client.call_tool("slow", {}, task=True)
        await task.result()
        ids = [task.task_id]
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process slow", SpanKind.CONSUMER))
    assert not [s for s in found if s.instrumentation_scope and s.instrumentation_scope.name.startswith("docket")]
    no_raw_id(found, ids)
