"""A stop never invents an outcome (issue 50): real servers stopped with 5 s calls in flight.

Issue 39 ended every call still running one second after a stop began. Most stops wait: a call
that finishes while the server drains is an ordinary call, `ok` on both sides, counted, a
latency sample. Only what the server abandons is `stopped`: what its own grace cancels
(uvicorn's `--timeout-graceful-shutdown`, hypercorn's `--graceful-timeout`), and what a kill
would take (gunicorn's `--graceful-timeout`, an orchestrator's SIGKILL after the grace the
operator told mcpobs, `OTEL_PYTHON_MCP_TERMINATION_GRACE`), ended and exported just before it. Both
sides say the same.

Each scenario runs its three servers at once (uvicorn, gunicorn's uvicorn worker with 2
workers, hypercorn), each with the clients of the test process (instrumented: the CLIENT
spans), exporting to one real OTLP receiver per server with exports held back until the end.
Before the change: three `stopped` server spans for the three answered calls under every
drain; the client `server_error` for hypercorn's abort; no deadline known but the guess.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from opentelemetry.trace import SpanKind
from otlp_receiver import OtlpReceiver
from shapes import APP, Served, serve

from mcpobs import semconv as S

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SLOW_APP = APP.replace(
    "app = server.streamable_http_app()",
    '''
@server.tool()
async def slow(seconds: float = 5.0) -> int:
    """A call still running when the server is told to stop."""
    import anyio

    await anyio.sleep(seconds)
    return os.getpid()


app = server.streamable_http_app()
''',
)

IN_FLIGHT = 3
CALL = 5.0
"""Seconds each call in flight takes (the issue's 5 s tool)."""
SIGTERM_AFTER = 1.5
"""Seconds after the calls start that SIGTERM comes: every call is in its handler, 3.5 s to go."""
SERVER = 2  # the OTLP span kind
OK, STOPPED = S.Outcome.OK.value, S.Outcome.STOPPED.value
TOOLS_CALL = {S.MCP_METHOD_NAME: "tools/call"}


@dataclass
class Stopped:
    """What one server recorded, and what its clients got, for a stop with calls in flight."""

    shape: str
    finished: int = 0
    """Quick calls answered before the stop (their spans and counts must arrive)."""
    got: list[str] = field(default_factory=list)
    """What each slow call's client got: `ok`, or the exception's class."""
    server: Counter[str] = field(default_factory=Counter)
    """Server `tools/call` spans received, by outcome."""
    counts: dict[str, float] = field(default_factory=dict)
    """Final `mcpobs.server.requests` for tools/call, by outcome."""
    samples: float = 0
    """Final `mcp.server.operation.duration` count for tools/call."""
    client: Counter[str] = field(default_factory=Counter)
    """CLIENT spans of the slow calls (in the test process), by outcome."""
    status: int | None = None
    port: int = 0

    def line(self) -> str:
        return (
            f"{self.shape}: clients got {Counter(self.got)}, server spans {dict(self.server)}, "
            f"counts {self.counts}, samples {self.samples:g} ({self.finished} quick calls before), "
            f"client spans {dict(self.client)}, exit {self.status}"
        )


SHAPES = {
    "uvicorn": "uvicorn",
    "gunicorn": "gunicorn",
    "hypercorn": "hypercorn --workers 2",
    "hypercorn, 1 worker": "hypercorn",
}
"""hypercorn 0.18's supervisor drains only until its first worker exits, then SIGTERMs the rest
(`run.py`: `wait(...sentinel...)`, then `terminate()`), and a worker has no SIGTERM handler of its
own: with two workers, a call on the worker that did not exit first is abandoned, and `stopped` on
both sides is what happened. Its drain is therefore tested with one worker."""


@dataclass(frozen=True)
class Scenario:
    shape: str
    options: tuple[str, ...] = ()
    kill_after: float | None = None
    """Seconds after SIGTERM the orchestrator SIGKILLs the process group (None: it never does)."""
    settings: tuple[tuple[str, str], ...] = ()
    """Variables the server runs with (the operator's `OTEL_PYTHON_MCP_TERMINATION_GRACE`)."""


async def stop_mid_calls(name: str, scenario: Scenario, tmp: Path) -> Stopped:
    """Serve the scenario's shape, answer a few quick calls, start `IN_FLIGHT` slow ones, SIGTERM the
    main process (and SIGKILL the group `kill_after` seconds later, as an orchestrator does)."""
    tmp.mkdir()
    receiver = OtlpReceiver()
    result = Stopped(name)
    shape = SHAPES[scenario.shape]
    with ExitStack() as stack:
        stack.enter_context(receiver.running())
        served: Served = stack.enter_context(
            serve(shape, receiver, tmp, SLOW_APP, scenario.options, **dict(scenario.settings))
        )
        await served.call(clients=2, each=2, workers=2 if scenario.shape == "gunicorn" else 1)
        result.finished = served.calls
        result.port = int(served.url.rsplit(":", 1)[1].split("/")[0])

        async def slow_call() -> None:
            with anyio.move_on_after(30):
                answered = False
                try:
                    async with Client(served.url) as client:
                        # the SDK lists the tools to check a result against its output schema: listed
                        # now, not after the answer, when the server no longer accepts connections
                        await client.list_tools()
                        await client.call_tool("slow", {"seconds": CALL})
                        answered = True
                        result.got.append(OK)
                except Exception as exc:  # closing a session with a server gone raises too
                    if not answered:
                        result.got.append(type(exc).__name__)

        def stop() -> None:
            served.process.send_signal(signal.SIGTERM)
            if scenario.kill_after is not None:
                time.sleep(scenario.kill_after)
                if served.process.poll() is None:
                    os.killpg(served.process.pid, signal.SIGKILL)
            served.process.wait(60)

        async with anyio.create_task_group() as group:
            for _ in range(IN_FLIGHT):
                group.start_soon(slow_call)
            await anyio.sleep(SIGTERM_AFTER)
            await anyio.to_thread.run_sync(stop)
        result.status = served.process.returncode
    time.sleep(0.3)
    with receiver.lock:
        spans = [s for s in receiver.received_spans if s.kind == SERVER]
    result.server = Counter(
        s.attributes[S.OUTCOME] for s in spans if s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
    )
    for outcome in (OK, STOPPED):
        totals = receiver.final_totals(S.SERVER_REQUESTS.name, **TOOLS_CALL, **{S.OUTCOME: outcome})
        result.counts[outcome] = sum(totals.values())
    result.samples = sum(receiver.final_totals(S.SERVER_OPERATION_DURATION.name, **TOOLS_CALL).values())
    return result


async def each_at_once(tmp_path: Path, telemetry: Any, scenarios: dict[str, Scenario]) -> dict[str, Stopped]:
    """Every scenario at once (a server each); what each recorded, with its clients' CLIENT spans."""
    results: dict[str, Stopped] = {}

    async def one(name: str, scenario: Scenario) -> None:
        results[name] = await stop_mid_calls(name, scenario, tmp_path / name)

    async with anyio.create_task_group() as group:
        for name, scenario in scenarios.items():
            group.start_soon(one, name, scenario)
    for span in telemetry.spans():
        attributes = span.attributes or {}
        if span.kind is SpanKind.CLIENT and span.name == "tools/call slow":
            for result in results.values():
                if attributes.get(S.SERVER_PORT) == result.port:
                    result.client[attributes.get(S.OUTCOME)] += 1
    for result in results.values():
        print(result.line())
    return results


async def test_a_drain_records_the_calls_it_finished_as_they_ended(tmp_path, mcpobs_telemetry):
    """(a) Default or generous grace: every call answers, and is an ordinary `ok` call on both sides."""
    results = await each_at_once(
        tmp_path,
        mcpobs_telemetry,
        {
            "uvicorn": Scenario("uvicorn"),  # uvicorn waits for its calls however long they take
            "gunicorn": Scenario("gunicorn"),  # gunicorn's default grace: 30 s
            "hypercorn": Scenario("hypercorn, 1 worker", ("--graceful-timeout", "20")),
        },
    )
    for result in results.values():
        assert result.got == [OK] * IN_FLIGHT, result.line()
        assert result.client == {OK: IN_FLIGHT}, result.line()
        assert result.server == {OK: result.finished + IN_FLIGHT}, result.line()
        assert result.counts == {OK: result.finished + IN_FLIGHT, STOPPED: 0}, result.line()
        assert result.samples == result.finished + IN_FLIGHT, result.line()


async def test_a_grace_shorter_than_the_calls_stops_them_the_same_on_both_sides(tmp_path, mcpobs_telemetry):
    """(b, c) The server's grace, or the orchestrator's kill the operator told mcpobs, ends before the
    calls: they are `stopped` on the server and on the client, and every call answered before arrives."""
    results = await each_at_once(
        tmp_path,
        mcpobs_telemetry,
        {
            "uvicorn": Scenario("uvicorn", ("--timeout-graceful-shutdown", "1")),  # uvicorn cancels them
            "gunicorn": Scenario("gunicorn", ("--graceful-timeout", "2")),  # gunicorn SIGKILLs its workers
            # hypercorn's main process SIGTERMs the worker still busy (twice, 3 ms apart) once the idle
            # one exited, and waits for it to die: the second used to kill it before its flush began
            "hypercorn": Scenario("hypercorn", ("--graceful-timeout", "1")),
            # one worker cuts its calls at its grace (hypercorn cancels them), on Python 3.11
            "hypercorn, 1 worker": Scenario("hypercorn, 1 worker", ("--graceful-timeout", "1")),
            "uvicorn, SIGKILL at 2 s": Scenario(
                "uvicorn", kill_after=2.0, settings=(("OTEL_PYTHON_MCP_TERMINATION_GRACE", "2"),)
            ),
        },
    )
    for name, result in results.items():
        if name.startswith("hypercorn") and sys.version_info >= (3, 12):
            # On 3.12+ hypercorn's grace starts only once every connection closed (pgjones/hypercorn#308,
            # `wait_closed`): a worker's calls run to their end and answer, `ok` on both sides. With two
            # workers, calls all on one are cut when the idle one exits (SIGTERMed: `stopped`); calls on
            # both run to their end. Either is what happened: the two sides and the counts must agree.
            answered = result.got.count(OK)
            ended = +Counter({OK: answered, STOPPED: IN_FLIGHT - answered})
            assert result.client == +ended, result.line()
            assert result.server == Counter({OK: result.finished}) + ended, result.line()
            assert result.counts == {OK: result.finished + ended[OK], STOPPED: ended[STOPPED]}, result.line()
            assert result.samples == result.finished + ended[OK], result.line()
            if name == "hypercorn, 1 worker":
                assert ended == {OK: IN_FLIGHT}, result.line()
            continue
        assert OK not in result.got, result.line()
        assert result.client == {STOPPED: IN_FLIGHT}, result.line()
        assert result.server == {OK: result.finished, STOPPED: IN_FLIGHT}, result.line()
        assert result.counts == {OK: result.finished, STOPPED: IN_FLIGHT}, result.line()
        assert result.samples == result.finished, result.line()
