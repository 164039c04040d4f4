"""fastmcp-tasks on FastMCP 4 (SEP-2663, `io.modelcontextprotocol/tasks`): where a task is
created, where its legs run, where it is cancelled. The task's telemetry is `_tasks`'s
(`TaskRun`); this module says when.

- Created: `create_task` mints the id, then enqueues the job (`add_component_to_docket`).
  Around the enqueue, the PRODUCER `create <tool>` span is current, so pydocket carries it
  into the job; the creating `tools/call` SERVER span gets the hashed id and `working` (its
  outcome stays `ok`: a submission that succeeded). `tasks/update` enqueues the next leg the
  same way, under its own SERVER span.
- A leg: fastmcp-tasks registers each task tool with docket wrapped in `reentrant_task_fn`
  (at the server's lifespan, in every process that serves or works). Around that wrapper, one
  CONSUMER `process <tool>` span per execution, parented on the job's context; inside it,
  around the tool's own body, which leg ending it was: the body asked for input (the leg is
  `pending_input`), raised (fastmcp-tasks masks it as an `isError` result: `tool_error`, the
  exception on the span through the privacy step), or returned. A leg that ends the task
  records the task's outcome and duration.
- Asked about: `tasks/get`, `tasks/update` and `tasks/cancel` SERVER spans get the task's hashed
  id, and `tasks/get` the status it answered.
- Cancelled: `mark_cancelled` runs only when `tasks/cancel` takes effect (not for a task
  already over): the `tasks/cancel` SERVER span takes `mcpobs.task.outcome=cancelled`,
  cancelled by the client, and the task's duration is recorded there. The worker's running leg
  ends `cancelled` and leaves the task's end to the cancel.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from mcpobs._core import inventory as I
from mcpobs._core.guard import guarded, report
from mcpobs._core.patches import Changes, Patch
from mcpobs._core.sdk import is_input_required
from mcpobs._core.telemetry import Telemetry
from mcpobs._server import state as _state
from mcpobs._tasks.outcome import is_error_result
from mcpobs._tasks.task import Leg, TaskRun, current_leg
from mcpobs._tasks.worker import current_job
from mcpobs.semconv import MessagingSystem, TaskCanceller, TaskOutcome, TaskStatus

_SYSTEM = MessagingSystem.PYDOCKET.value


def _found(seam: I.Seam) -> Any:
    place = I.resolve(seam)
    return getattr(*place) if place is not None else None


def _server_version() -> object:
    get_server = _found(I.FASTMCP_GET_SERVER)
    try:
        return getattr(get_server(), "version", None) if get_server is not None else None
    except RuntimeError:  # no server in this context
        return None


def _task_of(key: str) -> tuple[str | None, str | None, str | None, int]:
    """(scope, task id, tool, leg) of a docket key; Nones where fastmcp-tasks cannot read it."""
    parse, leg_of = _found(I.FASTMCP_TASKS_KEY), _found(I.FASTMCP_TASKS_LEG_NUMBER)
    if parse is None:
        return None, None, None, 1
    try:
        parts = parse(key)
    except (ValueError, KeyError):
        return None, None, None, 1
    return (
        parts.get("task_scope"),
        parts.get("client_task_id"),
        _tool_of(parts.get("component_identifier")),
        leg_of(key) if leg_of is not None else 1,
    )


def _tool_of(component: object) -> str | None:
    """`slow` of the component key `tool:slow@` (`tool:NAME@VERSION`)."""
    if not isinstance(component, str) or not component.startswith("tool:"):
        return None
    return component[len("tool:") :].rsplit("@", 1)[0] or None


async def _created_ns(docket: Any, scope: str | None, task_id: str) -> int | None:
    """When fastmcp-tasks created the task (its own record, wall clock), or None."""
    prefix = _found(I.FASTMCP_TASKS_PREFIX)
    if prefix is None or docket is None:
        return None
    async with docket.redis() as redis:
        raw = await redis.get(docket.key(f"{prefix(scope)}:{task_id}:created_at"))
    if not raw:
        return None
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    return int(datetime.fromisoformat(text).timestamp() * 1e9)


def patches(telemetry: Telemetry, changes: Changes) -> list[Patch]:
    async def enqueue(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        run: TaskRun | None = None
        leg = 1
        with guarded("task create"):
            component = args[0] if args else kwargs.get("component")
            _scope, task_id, tool, leg = _task_of(str(kwargs.get("task_key") or ""))
            if task_id is not None:
                name = getattr(component, "name", None) or tool
                run = TaskRun(telemetry, name, _SYSTEM, task_id, server_version=_server_version())
        if run is None:
            return await wrapped(*args, **kwargs)
        with run.creating(leg):
            execution = await wrapped(*args, **kwargs)
        if leg == 1:  # the task exists: its creating call says so (its answer will: `working`)
            with guarded("task create"):
                request = _state.current()
                if request is not None and request.method == "tools/call":
                    request.span.set_attributes(run.submission_attributes(TaskStatus.WORKING.value))
                run.submitted()
        return execution

    def leg_fn(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        if len(args) != 2 or kwargs:  # fastmcp-tasks calls it as `reentrant_task_fn(fn, name)`
            return wrapped(*args, **kwargs)
        fn, tool_name = args
        try:
            body = _observed_body(fn)
        except Exception as exc:
            report("task leg registration", exc)
            return wrapped(*args, **kwargs)
        inner = wrapped(body, tool_name)
        try:
            return _in_legs(telemetry, changes, inner, str(tool_name))
        except Exception as exc:
            report("task leg registration", exc)
            return inner

    async def cancelled(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        result = await wrapped(*args, **kwargs)
        with guarded("task cancel"):
            docket, scope, task_id = args[:3]
            tool, created = await _facts(docket, scope, task_id)
            run = TaskRun(telemetry, tool, _SYSTEM, task_id, created_ns=created, server_version=_server_version())
            request = _state.current()
            run.ended(TaskOutcome.CANCELLED, request.span if request is not None else None, TaskCanceller.CLIENT)
        return result

    async def about_a_task(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        result = await wrapped(*args, **kwargs)
        with guarded("task request"):
            request = _state.current()
            if request is not None and len(args) >= 2:
                attrs = TaskRun(telemetry, None, _SYSTEM, args[1]).submission_attributes(
                    getattr(result, "status", None)
                )
                request.span.set_attributes(attrs)
        return result

    return [
        *(Patch.of(seam, about_a_task) for seam in I.FASTMCP_TASKS_REQUESTS),
        Patch.of(I.FASTMCP_TASKS_ENQUEUE, enqueue),
        Patch.of(I.FASTMCP_TASKS_LEG, leg_fn),
        Patch.of(I.FASTMCP_TASKS_CANCEL, cancelled),
    ]


async def _facts(docket: Any, scope: str | None, task_id: str) -> tuple[str | None, int | None]:
    """A task's tool and creation time, from fastmcp-tasks' own record of it (one round trip)."""
    prefix = _found(I.FASTMCP_TASKS_PREFIX)
    if prefix is None:
        return None, None
    base = f"{prefix(scope)}:{task_id}"
    async with docket.redis() as redis:
        key, created = await redis.mget(docket.key(base), docket.key(f"{base}:created_at"))
    tool = _task_of(key.decode() if isinstance(key, bytes) else str(key))[2] if key else None
    created_ns = None
    if created:
        text = created.decode() if isinstance(created, bytes) else str(created)
        created_ns = int(datetime.fromisoformat(text).timestamp() * 1e9)
    return tool, created_ns


def _asks(result: object) -> bool:
    """Whether a task body's return asks the client for input (the guard pattern), as fastmcp-tasks
    reads it: an `InputRequiredResult`, bare or in FastMCP's wrapper, with requests in it."""
    asked = getattr(result, "input_required", None) if not is_input_required(result) else result
    return is_input_required(asked) and bool(getattr(asked, "input_requests", None))


def _observed_body(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """The tool's body as fastmcp-tasks wraps it, telling the running leg how the body ended."""

    @functools.wraps(fn)
    async def body(*args: Any, **kwargs: Any) -> Any:
        try:
            result = await fn(*args, **kwargs)
        except Exception as exc:
            leg = current_leg()
            if leg is not None:
                leg.tool_raised(exc)
            raise
        leg = current_leg()
        if leg is not None:
            with guarded("task leg"):
                if _asks(result):
                    leg.asked_input()
        return result

    body.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]  # docket injects by it
    return body


def _in_legs(
    telemetry: Telemetry, changes: Changes, inner: Callable[..., Awaitable[Any]], tool: str
) -> Callable[..., Awaitable[Any]]:
    """`inner` (what docket runs per execution) with one `process` span per run."""

    @functools.wraps(inner)
    async def leg_run(*args: Any, **kwargs: Any) -> Any:
        leg: Leg | None = None
        if changes.active:  # registered once: a pass-through after `uninstrument()`
            with guarded("task leg start"):
                leg = await _start(telemetry, tool)
        if leg is None:
            return await inner(*args, **kwargs)
        with leg:
            try:
                result = await inner(*args, **kwargs)
            except BaseException as exc:
                leg.fail(exc)
                raise
            leg.stop(is_error=is_error_result(result))
        return result

    leg_run.__signature__ = inspect.signature(inner)  # type: ignore[attr-defined]
    return leg_run


async def _start(telemetry: Telemetry, tool: str) -> Leg | None:
    job = current_job()
    if job is None:
        return None
    scope, task_id, _tool, number = _task_of(job.key)
    created = job.scheduled_ns if number == 1 else None
    if created is None and task_id is not None:
        try:  # a later leg: when the task was created, for its duration (one read)
            created = await _created_ns(job.docket, scope, task_id)
        except Exception as exc:  # the leg is still recorded, its task's duration not
            report("task creation time", exc)
    run = TaskRun(telemetry, tool, _SYSTEM, task_id, created_ns=created, server_version=_server_version())
    return run.leg(number, job.context)


def quiet_pydocket(changes: Changes) -> None:
    """Switch pydocket's own tracers off while instrumented, as FastMCP's spans are inside a request.

    pydocket names every span it makes with the job's key (`docket.key`), and fastmcp-tasks puts
    the task id in that key: a bearer credential on every `docket.add` and worker span. mcpobs
    records the same hop itself (`create` and `process`, the id hashed). A no-op tracer still
    hands the current context through, so pydocket carries mcpobs's `create` span into the job.
    Undone at `uninstrument()`; a module imported later is switched off when it is imported.
    """
    import sys

    import wrapt
    from opentelemetry.trace import NoOpTracer

    def quiet(seam: I.Seam, module: Any) -> None:
        if not changes.active:
            return
        with guarded("pydocket tracer"):
            own = getattr(module, seam.attribute)
            setattr(module, seam.attribute, NoOpTracer())
            changes.on_undo("pydocket tracer", lambda: setattr(module, seam.attribute, own))

    for seam in I.PYDOCKET_TRACERS:
        if not I.applies(seam):
            continue
        if seam.module in sys.modules:
            quiet(seam, sys.modules[seam.module])
        else:
            wrapt.register_post_import_hook(functools.partial(quiet, seam), seam.module)
