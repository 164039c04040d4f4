"""The job a pydocket worker is running, as a task's leg needs it.

pydocket puts the W3C context that is current when a job is added (the `create` span, `hop.py`)
into the job's message with the global propagator, and its worker reads it back into the
running `Execution` (`trace_context`). A leg's `process` span takes it as parent and link, so
the leg joins its task's trace in whatever process it runs: nothing is added to the message.
The worker needs the same propagator as the server (W3C trace context, OpenTelemetry's
default) and an exporter of its own (docs/tasks.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opentelemetry.context import Context

from mcpobs._core import inventory as I


@dataclass(frozen=True, slots=True)
class Job:
    """The pydocket execution running in this context."""

    key: str
    """Its docket key (it holds the task id: never recorded as it is)."""
    context: Context | None
    """The context it was added in (None: it carried none)."""
    scheduled_ns: int | None
    """When it was due (wall clock): for a job added to run now, when it was added."""
    docket: Any
    """The `Docket` it came from (its store)."""


_execution_var: list[Any] = []
"""pydocket's `current_execution` contextvar, found at the first leg (pydocket is imported by then)."""


def current_job() -> Job | None:
    """The job this context runs, or None outside a pydocket execution."""
    if not _execution_var:
        found = I.resolve(I.PYDOCKET_EXECUTION)
        if found is None:
            return None
        _execution_var.append(getattr(*found))
    try:
        execution = _execution_var[0].get()
    except LookupError:
        return None
    when = getattr(execution, "when", None)
    return Job(
        key=str(execution.key),
        context=getattr(execution, "trace_context", None),
        scheduled_ns=int(when.timestamp() * 1e9) if isinstance(when, datetime) else None,
        docket=getattr(execution, "docket", None),
    )
