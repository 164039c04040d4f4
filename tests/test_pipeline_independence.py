"""Metrics and spans fail independently: a broken trace pipeline leaves the counts exact, and the reverse.

A span processor whose `on_start` or `on_end` raises, or a sampler whose `should_sample` does,
is a bug in the application's tracing setup; it must not erase mcpobs's request counts and
latency histograms (they are what the dashboards and alerts read). A metric pipeline that
raises on every measurement (here an exemplar filter) must not cost a span. And a span is
ended exactly once: the SDK's "Calling end() on an ended span" warning is never logged.
Driven on both sides (server middleware and client spans), in memory and over HTTP.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from opentelemetry.sdk.metrics import ExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Sampler
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import connected

import mcpobs
from mcpobs import semconv as S

pytestmark = pytest.mark.anyio

CALLS = 12
TOOL = {S.MCP_METHOD_NAME: "tools/call", S.GEN_AI_TOOL_NAME: "get_order_status"}


class RaisingProcessor(SpanProcessor):
    def __init__(self, hook: str) -> None:
        self.hook = hook

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.hook == "on_start":
            raise RuntimeError("processor on_start is broken")

    def on_end(self, span: Any) -> None:
        if self.hook == "on_end":
            raise RuntimeError("processor on_end is broken")


class RaisingSampler(Sampler):
    def should_sample(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("sampler is broken")

    def get_description(self) -> str:
        return "RaisingSampler"


class RaisingExemplarFilter(ExemplarFilter):
    def should_sample(self, *args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("exemplar filter is broken")


def total(reader: InMemoryMetricReader, metric: str, wanted: dict[str, Any]) -> float:
    data = reader.get_metrics_data()
    found = 0.0
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for m in scope.metrics:
                if m.name != metric:
                    continue
                for point in m.data.data_points:
                    if all(point.attributes.get(k) == v for k, v in wanted.items()):
                        found += getattr(point, "count", None) or getattr(point, "value", 0)
    return found


async def run(fault: str, transport: str) -> tuple[InMemorySpanExporter, InMemoryMetricReader | None]:
    exporter = InMemorySpanExporter()
    sampler = RaisingSampler() if fault == "should_sample" else ALWAYS_ON
    tracer_provider = TracerProvider(sampler=sampler)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    if fault in ("on_start", "on_end"):
        tracer_provider.add_span_processor(RaisingProcessor(fault))
    reader = InMemoryMetricReader()
    exemplars = RaisingExemplarFilter() if fault == "exemplar_filter" else None
    meter_provider = MeterProvider(metric_readers=[reader], exemplar_filter=exemplars)
    mcpobs.uninstrument()
    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        async with connected(transport, create_server()) as client:
            for _ in range(CALLS):
                result = await client.call_tool("get_order_status", {"order_id": "O-1873"})
                assert not result.is_error  # the call itself is never touched
    finally:
        mcpobs.uninstrument()
    return exporter, reader


def no_double_end(caplog: Any) -> None:
    ended_twice = [r for r in caplog.records if "on an ended span" in r.getMessage()]
    assert not ended_twice, f"{len(ended_twice)} duplicate end() warnings"


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
@pytest.mark.parametrize("fault", ["on_start", "on_end", "should_sample"])
async def test_a_trace_pipeline_that_raises_leaves_the_metrics_exact(fault, transport, caplog):
    with caplog.at_level(logging.DEBUG):
        _, reader = await run(fault, transport)
    for side in ("server", "client"):
        requests = S.SERVER_REQUESTS if side == "server" else S.CLIENT_REQUESTS
        duration = S.SERVER_OPERATION_DURATION if side == "server" else S.CLIENT_OPERATION_DURATION
        labels = TOOL if side == "client" else {**TOOL}
        assert reader is not None
        counted = total(reader, requests.name, labels)
        timed = total(reader, duration.name, labels)
        assert (counted, timed) == (CALLS, CALLS), f"{side}: {counted} counted, {timed} timed of {CALLS} calls"
    no_double_end(caplog)


@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_a_metric_pipeline_that_raises_leaves_the_spans_whole(transport, caplog):
    with caplog.at_level(logging.DEBUG):
        exporter, _ = await run("exemplar_filter", transport)
    spans = exporter.get_finished_spans()
    for kind in (SpanKind.SERVER, SpanKind.CLIENT):
        calls = [s for s in spans if s.kind is kind and s.name == "tools/call get_order_status"]
        assert len(calls) == CALLS, f"{kind.name}: {len(calls)} of {CALLS}"
        assert all(s.attributes.get(S.OUTCOME) == "ok" for s in calls)
    no_double_end(caplog)
