"""FastMCP 3's `task=True` (SEP-1686 on pydocket): the hop, the work, and what it relays to its client.

- `submit_to_docket` (as `fastmcp.server.tasks.routing` calls it) is wrapped: the PRODUCER
  `create <tool>` span, a child of the tools/call SERVER span, is current while the job is added,
  so pydocket injects it into the job (it carries W3C context with every job: no carrier of ours).
- `FunctionTool.register_with_docket` is wrapped: FastMCP 3 registers the tool's own function
  with docket, which the worker then calls with nothing of FastMCP's around it; it is registered
  as the task's leg instead (a docket execution current, its key naming a FastMCP task): a
  CONSUMER `process <tool>` span whose parent is the job's context (and a link to it); the task's
  run is the one submitted in this process, or rebuilt from the job in another. Registration is
  in the server's lifespan: a server already serving when `instrument()` ran has no leg spans.
- `ensure_subscriber_running` starts the session's relay loop with `asyncio.create_task` in the
  first submission's context, so everything it relays would hang under that task's request: it
  starts it in an empty context, and `relay_elicitation` (an in-task `ctx.elicit` relayed to the
  client) sends under the context of the task that asked (its running leg, else its `create` span).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

import wrapt
from opentelemetry import context as otel_context
from opentelemetry.context import Context

from mcpobs import semconv as S
from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded, report
from mcpobs._core.patches import Patch
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import state as _state
from mcpobs._server.sdk1 import tasks as _tasks
from mcpobs._tasks.task import TaskRun

_DOCKET = S.MessagingSystem.PYDOCKET.value
_NS = 1_000_000_000


def _never_error(result: object) -> bool:
    """A FastMCP 3 tool's failure raises (docket marks the task failed): a returned result is not one."""
    return False


def patches(telemetry: Telemetry) -> list[Patch]:
    async def submit(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `submit_to_docket(task_type, key, component, ...)`: a tool's task, its `create` span."""
        found = None
        with guarded("task create"):
            task_type = args[0] if args else kwargs.get("task_type")
            if task_type == "tool":
                component = args[2] if len(args) > 2 else kwargs.get("component")
                found = _tasks.submitting(telemetry, getattr(component, "name", None), _DOCKET)
        if found is None:
            return await wrapped(*args, **kwargs)
        return await _tasks.enqueued(found, lambda: wrapped(*args, **kwargs))

    def register(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `FunctionTool.register_with_docket(docket)`: the function docket runs for the tool's
        tasks runs as the task's leg (FastMCP 3 registers the tool's own function: nothing of its own
        runs around it in the worker)."""
        docket = args[0] if args else kwargs.get("docket")
        try:
            registering = _Registering(docket, instance, telemetry)
        except Exception as exc:
            report("task leg registration", exc)
            return wrapped(*args, **kwargs)
        return wrapped(registering)

    async def subscriber(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ensure_subscriber_running`: the session's relay loop starts in no task's context."""
        tokens = None
        try:
            tokens = (otel_context.attach(Context()), _state.enter(None))
        except Exception as exc:
            report("task relay context", exc)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            if tokens is not None:
                _state.leave(tokens[1])
                otel_context.detach(tokens[0])

    async def relay(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `relay_elicitation(session, task_scope, task_id, ...)`: sent under the task that asked."""
        token = None
        with guarded("task relay context"):
            task_id = args[2] if len(args) > 2 else kwargs.get("task_id")
            submitted = _tasks.run_of(task_id, telemetry)
            if submitted is not None:
                context = submitted.leg_context or submitted.context
                if context is not None:
                    token = otel_context.attach(context)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            if token is not None:
                otel_context.detach(token)

    return [
        Patch.of(I.FASTMCP3_TASK_SUBMIT, submit),
        Patch.of(I.FASTMCP3_TASK_RUN, register),
        Patch.of(I.FASTMCP3_TASK_SUBSCRIBER, subscriber),
        Patch.of(I.FASTMCP3_TASK_RELAY, relay),
    ]


class _Registering:
    """The docket a tool registers with, its `register` handing docket the tool's function as a leg."""

    def __init__(self, docket: Any, tool: Any, telemetry: Telemetry) -> None:
        self._docket = docket
        self._tool = tool
        self._telemetry = telemetry

    def register(self, function: Any, names: Any = None) -> Any:
        leg = function
        with guarded("task leg registration"):
            leg = _as_leg(function, self._tool, self._telemetry)
        return self._docket.register(leg, names=names)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._docket, name)


def _as_leg(function: Any, tool: Any, telemetry: Telemetry) -> Any:
    """`function` (a tool's own, async) run as a task's leg in a docket worker; its signature is
    docket's to read (`functools.wraps`: docket resolves its dependencies from it)."""
    if not inspect.iscoroutinefunction(function):
        return function

    owner: object = getattr(tool, "__class__", None)

    @functools.wraps(function)
    async def leg(*args: Any, **kwargs: Any) -> Any:
        execution = _execution()
        submitted = None
        # docket keeps what was registered: once `uninstrument()` took the seam back, it records nothing
        if execution is not None and isinstance(inspect.getattr_static(owner, _REGISTER, None), wrapt.FunctionWrapper):
            try:
                submitted = _worker_run(telemetry, tool, execution)
            except Exception as exc:
                report("task leg start", exc)
        if submitted is None:
            return await function(*args, **kwargs)
        return await submitted.leg(lambda: function(*args, **kwargs), _never_error)

    return leg


_REGISTER = I.FASTMCP3_TASK_RUN.attribute
_current_execution: Any = None


def _execution() -> Any:
    """The docket execution running in this context (None outside a worker, or without pydocket)."""
    global _current_execution
    found = _current_execution
    if found is None:
        try:  # pydocket comes with `fastmcp[tasks]` only (and the dev venv's type checker has none)
            dependencies: Any = importlib.import_module("docket.dependencies")
        except ImportError:
            return None
        found = _current_execution = dependencies.current_execution
    return found.get(None)


def _worker_run(telemetry: Telemetry, tool: Any, execution: Any) -> _tasks.Submitted | None:
    """The task `execution` runs (a FastMCP task's key), as submitted here or rebuilt from the job."""
    context: Any = importlib.import_module("fastmcp.server.tasks.context")  # FastMCP 3's (4 has none)
    info: Any = context.get_task_context()
    if info is None:
        return None
    job_context = execution.trace_context
    submitted = _tasks.run_of(info.task_id, telemetry)
    if submitted is None:  # another process submitted it: its submission time is the job's
        when = getattr(execution, "when", None)
        created_ns = int(when.timestamp() * _NS) if when is not None else None
        run = TaskRun(telemetry, getattr(tool, "name", None), _DOCKET, info.task_id, created_ns=created_ns)
        submitted = _tasks.Submitted(run, job_context)
        submitted.remember()
    elif job_context is not None:
        submitted.context = job_context
    return submitted
