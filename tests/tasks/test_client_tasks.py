"""A task, as the mcp 2.x client sees it (issue 51): fastmcp-tasks 4.1.4 on FastMCP 4.1.4.

A `fastmcp.Client` drives task tools the two ways fastmcp-tasks offers: the transparent
`call_tool` (its resolver polls `tasks/get` and answers input through `tasks/update`) and
`call_tool_task` (a `ToolTask`: `status`, `wait`, `result`, `cancel`). The server is real, in
memory or over Streamable HTTP on loopback, its tasks run by its own docket worker on
`memory://`. What a person reads in Jaeger: no client span is `_OTHER`; each task's requests
(client and server spans) are in the trace of its submission; the poll that sees the task end
says what happened; how many polls each task took; never a raw task id.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import fastmcp
import mcp_types
import pytest
from fastmcp import Context, FastMCP
from fastmcp_tasks import TasksExtension, call_tool_task
from fastmcp_tasks.context import get_task_context
from opentelemetry.context import Context as OtelContext
from opentelemetry.trace import SpanKind
from transports import serve_http

import mcpobs
from mcpobs import semconv as S
from mcpobs._tasks.ids import task_id_hash
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

TRANSPORTS = ["memory", "http"]
TASK_REQUESTS = ("tasks/get", "tasks/update", "tasks/cancel")


def _own_id() -> str:
    """The running task's id: a tool hands it back so the test knows every id to look for."""
    info = get_task_context()
    assert info is not None
    return info.task_id


def tasks_server() -> FastMCP:
    """Task tools for each way a task ends; built after `instrument()`, as in production."""
    mcp = FastMCP("tasks-client")
    mcp.add_extension(TasksExtension(url="memory://", name=f"tc-{uuid.uuid4().hex[:8]}"))

    @mcp.tool(task=True)
    async def slow(n: int, ctx: Context) -> str:
        """Reports progress each step."""
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1}")
            await asyncio.sleep(0.05)
        return f"done {_own_id()}"

    @mcp.tool(task=True)
    async def boom() -> str:
        """Raises: fastmcp-tasks ends it `completed` with an `isError` result."""
        await asyncio.sleep(0.05)
        raise ValueError("kaboom")

    @mcp.tool(task=True)
    async def ask(ctx: Context) -> str | mcp_types.InputRequiredResult:
        """Asks for confirmation (the task goes `input_required`), then finishes."""
        if not ctx.input_responses:
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            request = mcp_types.ElicitRequest(
                params=mcp_types.ElicitRequestFormParams(message="Proceed?", requested_schema=schema)
            )
            return mcp_types.InputRequiredResult(input_requests={"confirm": request})
        return f"answered {_own_id()}"

    @mcp.tool(task=True)
    async def forever() -> str:
        """Runs until cancelled."""
        await asyncio.sleep(30)
        return "never"

    return mcp


async def _elicit(message: Any, response_type: Any, params: Any, context: Any) -> dict[str, bool]:
    return {"ok": True}


@asynccontextmanager
async def tasks_client(transport: str) -> AsyncIterator[fastmcp.Client[Any]]:
    async with AsyncExitStack() as stack:
        server = tasks_server()
        target: Any = server
        if transport == "http":
            target = stack.enter_context(serve_http(server.http_app())) + "/mcp"
        client = await stack.enter_async_context(fastmcp.Client(target, elicitation_handler=_elicit))
        yield client


async def run_tasks(transport: str) -> dict[str, str]:
    """Every way a task ends, both client APIs; returns each scenario's task id."""
    ids: dict[str, str] = {}
    async with tasks_client(transport) as client:
        done = await client.call_tool("slow", {"n": 2})  # transparent: the resolver polls
        ids["slow"] = done.content[0].text.split()[-1]
        handle = await call_tool_task(client, "slow", {"n": 1})
        await handle.status()
        await handle.result()
        ids["slow_handle"] = handle.task_id
        handle = await call_tool_task(client, "boom", {}, raise_on_error=False)
        failed = await handle.result()
        assert failed.is_error
        ids["boom"] = handle.task_id
        answered = await client.call_tool("ask", {})  # input_required, answered by _elicit via tasks/update
        ids["ask"] = answered.content[0].text.split()[-1]
        handle = await call_tool_task(client, "forever", {})
        await asyncio.sleep(0.2)
        await handle.cancel()
        assert (await handle.wait(timeout=10)).status == "cancelled"
        ids["forever"] = handle.task_id
    return ids


def _of_kind(spans: Sequence[Any], kind: SpanKind) -> list[Any]:
    return [s for s in spans if s.kind is kind]


def _submission(spans: Sequence[Any], id_hash: str) -> Any:
    found = [
        s
        for s in _of_kind(spans, SpanKind.CLIENT)
        if s.name.startswith("tools/call") and s.attributes.get(S.TASK_ID_HASH) == id_hash
    ]
    assert len(found) == 1, [(s.name, dict(s.attributes)) for s in _of_kind(spans, SpanKind.CLIENT)]
    return found[0]


def _requests(spans: Sequence[Any], id_hash: str, method: str | None = None) -> list[Any]:
    """The CLIENT spans of one task's tasks/* requests, in the order they ended."""
    return [
        s
        for s in _of_kind(spans, SpanKind.CLIENT)
        if s.name in TASK_REQUESTS and s.attributes.get(S.TASK_ID_HASH) == id_hash and method in (None, s.name)
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_task_requests_are_named_and_sent_in_their_task_trace(mcpobs_telemetry, transport):
    ids = await run_tasks(transport)
    spans = mcpobs_telemetry.spans()
    clients = _of_kind(spans, SpanKind.CLIENT)
    assert not [s.name for s in clients if s.name == S.OTHER or s.attributes.get(S.MCP_METHOD_NAME) == S.OTHER]
    by_id = {s.context.span_id: s for s in spans}
    for name, task_id in ids.items():
        id_hash = task_id_hash(task_id, None)
        submission = _submission(spans, id_hash)
        assert submission.attributes[S.OUTCOME] == S.Outcome.OK, name  # a submission that succeeded
        assert submission.attributes[S.TASK_STATUS] == S.TaskStatus.WORKING, name
        requests = _requests(spans, id_hash)
        assert requests, name
        for request in requests:
            # Sent as a child of the submission: its traceparent carries the task's trace.
            assert request.context.trace_id == submission.context.trace_id, (name, request.name)
            assert request.parent.span_id == submission.context.span_id, (name, request.name)
    # Every server span of a task request continues its client span, so it is in the task's trace.
    server_requests = [s for s in _of_kind(spans, SpanKind.SERVER) if s.name in TASK_REQUESTS]
    assert len(server_requests) == sum(len(_requests(spans, task_id_hash(i, None))) for i in ids.values())
    for server in server_requests:
        client = by_id[server.parent.span_id]
        assert client.kind is SpanKind.CLIENT and client.name == server.name
        assert server.context.trace_id == client.context.trace_id
        assert client.attributes.get(S.TASK_ID_HASH) in {task_id_hash(i, None) for i in ids.values()}
    # One trace per task, beside the session's own requests (discover, the listing).
    traces = {s.context.trace_id for s in spans if s.name.startswith(("tools/call", *TASK_REQUESTS))}
    assert len(traces) == len(ids)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_poll_that_sees_a_task_end_says_what_happened(mcpobs_telemetry, transport):
    ids = await run_tasks(transport)
    spans = mcpobs_telemetry.spans()
    expected = {
        "slow": S.TaskOutcome.OK,
        "slow_handle": S.TaskOutcome.OK,
        "boom": S.TaskOutcome.TOOL_ERROR,  # completed + isError: the tool raised
        "ask": S.TaskOutcome.OK,
        "forever": S.TaskOutcome.CANCELLED,
    }
    for name, outcome in expected.items():
        polls = _requests(spans, task_id_hash(ids[name], None), "tasks/get")
        ended = [p for p in polls if S.TASK_OUTCOME in p.attributes]
        assert len(ended) == 1, (name, [dict(p.attributes) for p in polls])  # once, where it ended
        assert ended[0] is polls[-1], name
        assert ended[0].attributes[S.TASK_OUTCOME] == outcome, name
        assert ended[0].attributes[S.TASK_STATUS] == ("cancelled" if name == "forever" else "completed")
        assert all(p.attributes[S.OUTCOME] == S.Outcome.OK for p in polls), name  # each poll itself succeeded
        assert all(p.attributes.get(S.GEN_AI_TOOL_NAME) == name.split("_")[0] for p in polls), name
        # Both sides say the same: the server's side records it once, where the task ended.
        where_it_ended = [
            s.attributes[S.TASK_OUTCOME]
            for s in spans
            if s.kind is not SpanKind.CLIENT
            and s.attributes.get(S.TASK_ID_HASH) == task_id_hash(ids[name], None)
            and S.TASK_OUTCOME in s.attributes
        ]
        assert where_it_ended == [outcome], name
    # The input round: a poll saw `input_required`, the answer went in tasks/update, in the task's trace.
    ask = task_id_hash(ids["ask"], None)
    statuses = [p.attributes[S.TASK_STATUS] for p in _requests(spans, ask, "tasks/get")]
    assert S.TaskStatus.INPUT_REQUIRED in statuses
    assert statuses.index(S.TaskStatus.INPUT_REQUIRED) < len(statuses) - 1
    (update,) = _requests(spans, ask, "tasks/update")
    assert update.attributes[S.OUTCOME] == S.Outcome.OK
    (cancel,) = _requests(spans, task_id_hash(ids["forever"], None), "tasks/cancel")
    assert cancel.context.trace_id == _submission(spans, task_id_hash(ids["forever"], None)).context.trace_id


async def test_polls_per_task_are_counted_when_the_task_ends(mcpobs_telemetry):
    ids = await run_tasks("memory")
    spans = mcpobs_telemetry.spans()
    points = mcpobs_telemetry.points(S.CLIENT_TASK_POLLS.name)
    assert sum(p.count for p in points) == len(ids)  # one record per task, when it ended
    for name, outcome in (("boom", "tool_error"), ("forever", "cancelled")):
        (point,) = [p for p in points if p.attributes.get(S.TASK_OUTCOME) == outcome]
        assert point.attributes.get(S.GEN_AI_TOOL_NAME) == name
        assert point.sum == len(_requests(spans, task_id_hash(ids[name], None), "tasks/get"))
        assert set(point.attributes) <= {S.GEN_AI_TOOL_NAME, S.TASK_OUTCOME}  # bounded: never an id
    ok = [p for p in points if p.attributes.get(S.TASK_OUTCOME) == "ok"]
    total = sum(len(_requests(spans, task_id_hash(ids[n], None), "tasks/get")) for n in ("slow", "slow_handle", "ask"))
    assert sum(p.sum for p in ok) == total


def _values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def _exported_text(captured: Any) -> list[str]:
    """Every string mcpobs exported: span names, attributes, events, links, statuses, metric labels."""
    texts: list[str] = []
    for span in captured.spans():
        texts.append(span.name)
        texts.append(span.status.description or "")
        for attributes in (span.attributes, *(e.attributes for e in span.events), *(k.attributes for k in span.links)):
            for key, value in (attributes or {}).items():
                texts += [key, *_values(value)]
    data = captured.reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    for key, value in point.attributes.items():
                        texts += [key, *_values(value)]
    return texts


@pytest.mark.parametrize("key", [None, "a secret of sixteen bytes or more"])
async def test_a_task_id_is_recorded_only_as_its_hash(key):
    captured = capture(session_id_key=key) if key else capture()
    try:
        ids = await run_tasks("http")
    finally:
        mcpobs.uninstrument()
    texts = _exported_text(captured)
    for name, task_id in ids.items():
        assert not [t for t in texts if task_id in t], name
        id_hash = task_id_hash(task_id, key.encode() if key else None)
        assert id_hash in texts, name  # correlation: the hash, keyed when a key is set
        assert len(id_hash) == S.TASK_ID_HASH_LENGTH


async def test_the_sdk_client_with_the_tasks_extension_sends_its_polls_in_the_task_trace(mcpobs_telemetry):
    """`mcp.Client` resolves the claimed result itself (inside its own `call_tool` operation)."""
    from fastmcp_tasks.client import TasksClientExtension
    from mcp import Client

    with serve_http(tasks_server().http_app()) as base:
        async with Client(base + "/mcp", extensions=[TasksClientExtension()]) as client:
            assert not (await client.call_tool("slow", {"n": 1})).is_error
            assert (await client.call_tool("boom", {})).is_error
    spans = mcpobs_telemetry.spans()
    submissions = [s for s in spans if s.kind is SpanKind.CLIENT and S.TASK_ID_HASH in s.attributes]
    submissions = [s for s in submissions if s.name.startswith("tools/call")]
    assert len(submissions) == 2
    outcomes = set()
    for submission in submissions:
        polls = _requests(spans, submission.attributes[S.TASK_ID_HASH], "tasks/get")
        assert polls and all(p.parent.span_id == submission.context.span_id for p in polls)
        outcomes.add(polls[-1].attributes[S.TASK_OUTCOME])
    assert outcomes == {S.TaskOutcome.OK, S.TaskOutcome.TOOL_ERROR}
    assert not [s for s in spans if s.name == S.OTHER]


async def test_a_poll_sent_under_another_span_joins_its_task_and_links_the_caller(mcpobs_telemetry):
    """A host that checks a task later, inside its own span of another trace: the poll is the task's,
    the host's span a link."""
    tracer = mcpobs_telemetry.tracer_provider.get_tracer("host")
    async with tasks_client("memory") as client:
        with tracer.start_as_current_span("submit"):
            handle = await call_tool_task(client, "slow", {"n": 1})
        with tracer.start_as_current_span("check later", context=OtelContext()) as later:
            await handle.wait(timeout=10)
    spans = mcpobs_telemetry.spans()
    id_hash = task_id_hash(handle.task_id, None)
    submission = _submission(spans, id_hash)
    polls = _requests(spans, id_hash, "tasks/get")
    assert polls and all(p.parent.span_id == submission.context.span_id for p in polls)
    assert all([link.context.span_id for link in p.links] == [later.get_span_context().span_id] for p in polls)


async def test_past_the_bound_the_oldest_task_is_forgotten_and_its_polls_trace_on_their_own(
    mcpobs_telemetry, monkeypatch
):
    monkeypatch.setattr(S, "MAX_CLIENT_TASKS", 1, raising=False)
    async with tasks_client("memory") as client:
        first = await call_tool_task(client, "slow", {"n": 1})
        second = await call_tool_task(client, "slow", {"n": 1})
        await first.wait(timeout=10)
        await second.wait(timeout=10)
    spans = mcpobs_telemetry.spans()
    forgotten, kept = (task_id_hash(t.task_id, None) for t in (first, second))
    assert _requests(spans, forgotten, "tasks/get") and _requests(spans, kept, "tasks/get")
    for poll in _requests(spans, forgotten, "tasks/get"):
        assert poll.parent is None  # its own trace, still named and hashed
        assert poll.attributes[S.TASK_ID_HASH] == forgotten
    assert all(p.parent.span_id == _submission(spans, kept).context.span_id for p in _requests(spans, kept))


class _Request(mcp_types.Request[mcp_types.RequestParams | None, str]):
    """A request the typed clients of mcp 2.x no longer send: SEP-2663 removed tasks/list and tasks/result."""

    method: str


async def test_the_1x_task_methods_are_named_on_a_2x_client_too(mcpobs_telemetry):
    """A 2.x client talking to a server that still serves SEP-1686's tasks/list and tasks/result."""
    from mcp.shared.exceptions import MCPError

    async with tasks_client("memory") as client:
        for method in ("tasks/list", "tasks/result"):
            with pytest.raises(MCPError):  # fastmcp-tasks (SEP-2663) serves neither
                await client.session.send_request(_Request(method=method, params=None), mcp_types.Result)
    for method in ("tasks/list", "tasks/result"):
        span = mcpobs_telemetry.client_span(method)
        assert span.attributes[S.MCP_METHOD_NAME] == method
        assert S.TASK_ID_HASH not in span.attributes  # it names no task
    assert not mcpobs_telemetry.spans_named(S.OTHER, SpanKind.CLIENT)
