"""The task instruments (registry: TASK_DURATION, TASK_QUEUE_WAIT, TASK_LEG_DURATION,
TASKS_IN_FLIGHT, CLIENT_TASK_POLLS), made once per instrumentation, and their bounded labels.

Labels are the task's tool (a registered tool, bounded as in span names), the queue
(`messaging.system`) and the server's release; never the task id, whose cardinality has no
bound (it is on spans, hashed).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from opentelemetry.metrics import Histogram, UpDownCounter

from mcpobs import semconv as S
from mcpobs._core.bounded import put
from mcpobs._core.labels import release
from mcpobs._core.telemetry import Telemetry


class TaskMetrics:
    """The task instruments of one `Telemetry`."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.duration: Histogram = telemetry.create_instrument(S.TASK_DURATION)
        self.queue_wait: Histogram = telemetry.create_instrument(S.TASK_QUEUE_WAIT)
        self.leg_duration: Histogram = telemetry.create_instrument(S.TASK_LEG_DURATION)
        self.in_flight: UpDownCounter = telemetry.create_instrument(S.TASKS_IN_FLIGHT)
        self.polls: Histogram = telemetry.create_instrument(S.CLIENT_TASK_POLLS)


_made: weakref.WeakKeyDictionary[Telemetry, TaskMetrics] = weakref.WeakKeyDictionary()


def of(telemetry: Telemetry) -> TaskMetrics:
    """The task instruments of `telemetry` (made at its first task: a process without tasks has none)."""
    found = _made.get(telemetry)
    if found is None:
        found = _made[telemetry] = TaskMetrics(telemetry)
    return found


_MAX_LABELS = 1024
_labels: dict[tuple[str, str, str | None], Mapping[str, Any]] = {}


def labels(tool: str, system: str, server_version: object = None) -> Mapping[str, Any]:
    """The labels every task instrument shares, one shared dict per (tool, queue, release)."""
    version = release(S.SERVER_VERSION, server_version)
    key = (tool, system, version)
    found = _labels.get(key)
    if found is None:
        made: dict[str, Any] = {S.GEN_AI_TOOL_NAME: tool, S.MESSAGING_SYSTEM: system}
        if version is not None:
            made[S.SERVER_VERSION] = version
        found = put(_labels, key, made, _MAX_LABELS)
    return found


def with_outcome(base: Mapping[str, Any], **more: Any) -> dict[str, Any]:
    """`base` and the given labels (by registry name), leaving out the ones that are None."""
    out = dict(base)
    out.update({name: value for name, value in more.items() if value is not None})
    return out
