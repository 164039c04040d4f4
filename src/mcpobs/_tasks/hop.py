"""The queue hop as OpenTelemetry's messaging conventions draw it.

A PRODUCER span `create <tool>` where a task (or its next leg) is enqueued, a child of the
request that enqueued it and current while it is enqueued: the queue (pydocket) injects the
current context into the job, so the job carries this span to the worker, with no carrier of
our own. A CONSUMER span `process <tool>` per execution leg whose parent is the job's context
(one message per execution, so the conventions allow the parent) and which links to it too
(the link is what the conventions require; a backend that draws only links still joins them).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind

from mcpobs import semconv as S
from mcpobs._core.guard import report
from mcpobs._core.telemetry import Telemetry, end_once


def attributes(
    operation: Literal["create", "process"], tool: str, system: str, id_hash: str | None, leg: int | None
) -> dict[str, Any]:
    """A hop span's attributes: the messaging conventions' and the task's (its id hashed, never raw)."""
    attrs: dict[str, Any] = {
        S.MESSAGING_SYSTEM: system,
        S.MESSAGING_OPERATION_TYPE: operation,
        S.MESSAGING_OPERATION_NAME: operation,
        S.MESSAGING_DESTINATION_NAME: tool,
        S.GEN_AI_TOOL_NAME: tool,
    }
    if id_hash is not None:
        attrs[S.TASK_ID_HASH] = id_hash
    if leg is not None:
        attrs[S.TASK_LEG] = leg
    return attrs


def job_link(job_context: Context | None) -> list[Link]:
    """A link to the span the job was created under, when the job carried one."""
    if job_context is None:
        return []
    found = trace.get_current_span(job_context).get_span_context()
    return [Link(found)] if found.is_valid else []


def start_process(
    telemetry: Telemetry,
    tool: str,
    system: str,
    job_context: Context | None,
    id_hash: str | None,
    leg: int,
    start_time: int | None = None,
) -> Span:
    """The CONSUMER span of one leg, parented on the job's context (a root when it carried none:
    never the worker's ambient context, which belongs to no task)."""
    return telemetry.start_span(
        S.task_hop_span_name(S.HOP_PROCESS, tool),
        job_context if job_context is not None else Context(),
        SpanKind.CONSUMER,
        attributes(S.HOP_PROCESS, tool, system, id_hash, leg),
        job_link(job_context),
        start_time,
    )


class Creating:
    """`with Creating(...):` the PRODUCER `create <tool>` span, current while the job is enqueued.

    An exception that leaves the block (the queue refused the job) marks the span an error with
    its class as `error.type` and is re-raised unchanged.
    """

    __slots__ = ("_token", "span")

    def __init__(self, telemetry: Telemetry, tool: str, system: str, id_hash: str | None, leg: int | None) -> None:
        self.span = telemetry.start_span(
            S.task_hop_span_name(S.HOP_CREATE, tool),
            None,
            SpanKind.PRODUCER,
            attributes(S.HOP_CREATE, tool, system, id_hash, leg),
        )
        self._token: object | None = None

    def __enter__(self) -> Span:
        try:
            self._token = otel_context.attach(trace.set_span_in_context(self.span))
        except Exception as exc:
            report("task create span", exc)
        return self.span

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if self._token is not None:
                otel_context.detach(self._token)  # type: ignore[arg-type]
            if isinstance(exc, Exception):
                self.span.set_attribute(S.ERROR_TYPE, type(exc).__qualname__)
                self.span.set_status(trace.StatusCode.ERROR)
            self.span.end()
        except Exception as failure:
            report("task create span", failure)
            end_once(self.span)
