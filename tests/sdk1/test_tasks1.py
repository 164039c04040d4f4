"""Tasks on the mcp 1.x line (issue 51): the 1.x SDK's experimental tasks (`run_task`) served over
Streamable HTTP on loopback, driven by a real 1.x `ClientSession.experimental`, both sides instrumented.

One task is one trace: the submission (tools/call CLIENT and SERVER, `ok`, the task's id hashed),
the PRODUCER `create <tool>` span, the work's CONSUMER `process <tool>` span, and every tasks/*
request the client sent for it. A task whose work raised is `tool_error` on both sides (its
`tasks/result` too, which the client's SDK fails to parse); a cancelled one `cancelled`. No
exported attribute holds a raw task id.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry.trace import SpanKind
from task_spans import named, one, settled

from mcpobs import semconv as S

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TOOLS = ("slow", "boom", "ask", "forever")


def tasks_server() -> Any:
    import mcp.types as types
    from mcp.server.lowlevel import Server

    server = Server("tasks-1x")
    server.experimental.enable_tasks()

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(name=n, inputSchema={"type": "object"}, execution=types.ToolExecution(taskSupport="required"))
            for n in TOOLS
        ]

    @server.call_tool()
    async def call_tool(name: str, args: dict[str, Any]) -> Any:
        ctx = server.request_context

        async def work(task: Any) -> types.CallToolResult:
            if name == "slow":
                await task.update_status("step 1")
                await asyncio.sleep(0.05)
                return types.CallToolResult(content=[types.TextContent(type="text", text="done")])
            if name == "boom":
                raise ValueError("kaboom")
            if name == "ask":
                answer = await task.elicit(
                    message="Proceed?", requestedSchema={"type": "object", "properties": {"ok": {"type": "boolean"}}}
                )
                return types.CallToolResult(content=[types.TextContent(type="text", text=f"ask: {answer.action}")])
            await asyncio.sleep(30)
            return types.CallToolResult(content=[])

        return await ctx.experimental.run_task(work)

    return server


@contextlib.asynccontextmanager
async def session_to(server: Any) -> AsyncIterator[Any]:
    import httpx
    import mcp.types as types
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from mcpobs._cli.serving import serve

    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with manager.run():
            yield

    async def elicited(context: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content={"ok": True})

    app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
    with serve(app) as base:
        async with (
            httpx.AsyncClient(timeout=30) as http,
            streamable_http_client(base + "/mcp/", http_client=http) as (read, write, _),
            ClientSession(read, write, elicitation_callback=elicited) as session,
        ):
            await session.initialize()
            await session.list_tools()
            yield session


async def until_terminal(session: Any, task_id: str) -> Any:
    while True:
        status = await session.experimental.get_task(task_id)
        if status.status in ("completed", "failed", "cancelled", "input_required"):
            return status
        await asyncio.sleep(0.05)


def no_raw_id(found: list[Any], task_ids: list[str]) -> None:
    for span in found:
        text = repr(dict(span.attributes)) + repr([dict(e.attributes or {}) for e in span.events])
        for task_id in task_ids:
            assert task_id not in text and task_id.split(":")[-1] not in text, span.name


async def test_a_task_is_one_trace_with_its_work(mcpobs_telemetry):
    import mcp.types as types

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        async with session_to(tasks_server()) as session:
            created = await session.experimental.call_tool_as_task("slow", {})
            task_id = created.task.taskId
            assert (await until_terminal(session, task_id)).status == "completed"
            result = await session.experimental.get_task_result(task_id, types.CallToolResult)
            assert result.content[0].text == "done"
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process slow", SpanKind.CONSUMER))
    submit = one(found, "tools/call slow", SpanKind.CLIENT)
    trace_id = submit.context.trace_id
    served = one(found, "tools/call slow", SpanKind.SERVER)
    create = one(found, "create slow", SpanKind.PRODUCER)
    work = one(found, "process slow", SpanKind.CONSUMER)
    assert served.parent.span_id == submit.context.span_id
    assert create.parent.span_id == served.context.span_id
    assert work.parent.span_id == create.context.span_id  # the job's context: parent and link
    assert [link.context.span_id for link in work.links] == [create.context.span_id]
    for span in (submit, served):  # a submission that succeeded, not the task's result
        assert span.attributes[S.OUTCOME] == "ok"
        assert span.attributes[S.TASK_STATUS] == "working"
        assert span.attributes[S.TASK_ID_HASH] == work.attributes[S.TASK_ID_HASH]
        assert S.TASK_OUTCOME not in span.attributes
    assert work.attributes[S.MESSAGING_SYSTEM] == "mcp"
    assert work.attributes[S.MESSAGING_OPERATION_TYPE] == "process"
    assert work.attributes[S.OUTCOME] == "ok"
    assert work.attributes[S.TASK_OUTCOME] == "ok"
    # every tasks/* request for it, client and server, in the task's trace
    for method in ("tasks/get", "tasks/result"):
        for kind in (SpanKind.CLIENT, SpanKind.SERVER):
            spans = named(found, method, kind)
            assert spans and {s.context.trace_id for s in spans} == {trace_id}, (method, kind)
    polls = named(found, "tasks/get", SpanKind.CLIENT)
    assert polls[-1].attributes[S.TASK_OUTCOME] == "ok"  # the poll that saw it end
    assert polls[-1].attributes[S.TASK_ID_HASH] == work.attributes[S.TASK_ID_HASH]
    no_raw_id(found, [task_id])
    [duration] = mcpobs_telemetry.points(S.TASK_DURATION.name)
    assert duration.count == 1
    assert duration.attributes == {S.GEN_AI_TOOL_NAME: "slow", S.MESSAGING_SYSTEM: "mcp", S.TASK_OUTCOME: "ok"}
    assert duration.sum >= 0.05  # submission to completion: the work slept 50 ms
    [wait] = mcpobs_telemetry.points(S.TASK_QUEUE_WAIT.name)
    assert wait.count == 1 and wait.sum < duration.sum
    [leg] = mcpobs_telemetry.points(S.TASK_LEG_DURATION.name)
    assert leg.attributes[S.OUTCOME] == "ok"
    assert mcpobs_telemetry.total(S.TASKS_IN_FLIGHT.name) == 0  # +1 submitted, -1 ended
    [polls] = mcpobs_telemetry.points(S.CLIENT_TASK_POLLS.name)
    assert polls.attributes == {S.GEN_AI_TOOL_NAME: "slow", S.TASK_OUTCOME: "ok"}
    assert polls.sum == len(named(found, "tasks/get", SpanKind.CLIENT))


async def test_a_failed_task_failed_on_both_sides(mcpobs_telemetry):
    import mcp.types as types

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        async with session_to(tasks_server()) as session:
            created = await session.experimental.call_tool_as_task("boom", {})
            task_id = created.task.taskId
            seen = [status.status async for status in session.experimental.poll_task(task_id)]
            assert seen[-1] == "failed"
            with pytest.raises(Exception):  # noqa: B017  # the SDK cannot parse a failed task's result
                await session.experimental.get_task_result(task_id, types.CallToolResult)
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process boom", SpanKind.CONSUMER))
    work = one(found, "process boom", SpanKind.CONSUMER)
    assert work.attributes[S.OUTCOME] == "tool_error"
    assert work.attributes[S.TASK_OUTCOME] == "tool_error"
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        assert one(found, "tools/call boom", kind).attributes[S.OUTCOME] == "ok"  # the submission
        result = one(found, "tasks/result", kind)
        assert result.attributes[S.OUTCOME] == "tool_error", kind  # not server_error/ValidationError
        assert result.attributes[S.TASK_OUTCOME] == "tool_error", kind
        assert result.context.trace_id == work.context.trace_id
    polls = named(found, "tasks/get", SpanKind.CLIENT)
    assert {p.context.trace_id for p in polls} == {work.context.trace_id}  # poll_task's polls too
    assert polls[-1].attributes[S.TASK_OUTCOME] == "tool_error"
    no_raw_id(found, [task_id])
    [duration] = mcpobs_telemetry.points(S.TASK_DURATION.name)
    assert duration.attributes[S.TASK_OUTCOME] == "tool_error"
    assert duration.attributes[S.ERROR_TYPE] == "tool_error"


async def test_a_cancelled_task_and_the_list(mcpobs_telemetry):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        async with session_to(tasks_server()) as session:
            created = await session.experimental.call_tool_as_task("forever", {})
            task_id = created.task.taskId
            listed = await session.experimental.list_tasks()
            assert [t.taskId for t in listed.tasks] == [task_id]
            cancelled = await session.experimental.cancel_task(task_id)
            assert cancelled.status == "cancelled"
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process forever", SpanKind.CONSUMER))
    submit = one(found, "tools/call forever", SpanKind.CLIENT)
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        cancel = one(found, "tasks/cancel", kind)
        assert cancel.context.trace_id == submit.context.trace_id
        assert cancel.attributes[S.TASK_OUTCOME] == "cancelled", kind
    work = one(found, "process forever", SpanKind.CONSUMER)
    assert work.attributes[S.OUTCOME] == "cancelled"
    assert S.TASK_OUTCOME not in work.attributes  # recorded once, where it ended: the cancel
    no_raw_id(found, [task_id])
    [duration] = mcpobs_telemetry.points(S.TASK_DURATION.name)
    assert duration.count == 1
    assert duration.attributes[S.TASK_OUTCOME] == "cancelled"
    assert duration.attributes[S.TASK_CANCELLED_BY] == "client"
    assert mcpobs_telemetry.total(S.TASKS_IN_FLIGHT.name) == 0


async def test_a_task_its_session_ends_under_is_cancelled_by_the_server(mcpobs_telemetry):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        async with session_to(tasks_server()) as session:
            await session.experimental.call_tool_as_task("forever", {})
            await asyncio.sleep(0.1)
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process forever", SpanKind.CONSUMER))
    work = one(found, "process forever", SpanKind.CONSUMER)
    assert work.attributes[S.OUTCOME] == "cancelled"
    assert work.attributes[S.TASK_OUTCOME] == "cancelled"
    assert work.attributes[S.TASK_CANCELLED_BY] == "server"
    assert mcpobs_telemetry.total(S.TASKS_IN_FLIGHT.name) == 0  # not left counted forever


async def test_the_in_task_elicitation_is_in_its_task(mcpobs_telemetry):
    import mcp.types as types

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        async with session_to(tasks_server()) as session:
            created = await session.experimental.call_tool_as_task("ask", {})
            task_id = created.task.taskId
            await until_terminal(session, task_id)
            result = await asyncio.wait_for(session.experimental.get_task_result(task_id, types.CallToolResult), 10)
            assert result.content[0].text == "ask: accept"
    found = await settled(mcpobs_telemetry, lambda f: named(f, "process ask", SpanKind.CONSUMER))
    trace_id = one(found, "tools/call ask", SpanKind.CLIENT).context.trace_id
    asked = [s for s in found if s.name.startswith("elicitation/create")]
    assert asked and {s.context.trace_id for s in asked} == {trace_id}
    assert one(found, "process ask", SpanKind.CONSUMER).attributes[S.TASK_OUTCOME] == "ok"
    no_raw_id(found, [task_id])
