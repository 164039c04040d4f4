"""Counters are added up in process and read by the SDK at collection: same data, bounded, exact."""

from __future__ import annotations

import threading

import pytest
from mcp import Client
from opentelemetry.sdk.metrics import MeterProvider, ObservableCounter
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import connected

import mcpobs
from mcpobs import semconv as S
from mcpobs._core.tally import tally
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio


def _points(reader: InMemoryMetricReader, name: str) -> list:
    data = reader.get_metrics_data()
    return [
        point
        for resource in (data.resource_metrics if data else ())
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]


def test_label_sets_past_the_limit_are_counted_under_the_overflow_series():
    reader = InMemoryMetricReader()
    counter = tally(MeterProvider(metric_readers=[reader]).get_meter("t"), S.SERVER_REQUESTS)
    for i in range(S.MAX_COUNTER_SERIES + 500):
        counter.add(1, {S.MCP_METHOD_NAME: f"m{i}"})
    counter.add(2, {S.MCP_METHOD_NAME: "m0"})
    points = _points(reader, S.SERVER_REQUESTS.name)
    assert len(points) == S.MAX_COUNTER_SERIES + 1
    by_labels = {tuple(sorted(p.attributes.items())): p.value for p in points}
    assert by_labels[((S.OTEL_METRIC_OVERFLOW, True),)] == 500
    assert by_labels[((S.MCP_METHOD_NAME, "m0"),)] == 3
    assert sum(by_labels.values()) == S.MAX_COUNTER_SERIES + 502


def test_a_delta_reader_gets_deltas_and_a_cumulative_reader_totals():
    delta = InMemoryMetricReader(preferred_temporality={ObservableCounter: AggregationTemporality.DELTA})
    cumulative = InMemoryMetricReader()
    counter = tally(MeterProvider(metric_readers=[delta, cumulative]).get_meter("t"), S.CLIENT_REQUESTS)
    labels = {S.MCP_METHOD_NAME: "tools/call"}
    counter.add(3, labels)
    assert [p.value for p in _points(delta, S.CLIENT_REQUESTS.name)] == [3]
    assert [p.value for p in _points(cumulative, S.CLIENT_REQUESTS.name)] == [3]
    counter.add(4, labels)
    assert [p.value for p in _points(delta, S.CLIENT_REQUESTS.name)] == [4]
    assert [p.value for p in _points(cumulative, S.CLIENT_REQUESTS.name)] == [7]


def test_concurrent_adds_from_threads_are_all_counted():
    reader = InMemoryMetricReader()
    counter = tally(MeterProvider(metric_readers=[reader]).get_meter("t"), S.SERVER_REQUESTS)
    labels = [{S.OUTCOME: outcome.value} for outcome in S.Outcome]

    def work() -> None:
        for i in range(20_000):
            counter.add(1, labels[i % len(labels)])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(p.value for p in _points(reader, S.SERVER_REQUESTS.name)) == 8 * 20_000


async def test_instrumenting_again_on_the_same_providers_keeps_one_running_count():
    telemetry = capture()
    try:
        async with Client(create_server()) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
        mcpobs.uninstrument()
        mcpobs.instrument(tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider)
        async with Client(create_server()) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
        calls = {S.MCP_METHOD_NAME: "tools/call"}
        assert telemetry.total(S.SERVER_REQUESTS.name, calls) == 2
        assert telemetry.total(S.CLIENT_REQUESTS.name, calls) == 2
        assert len(telemetry.points(S.SERVER_REQUESTS.name)) == len(
            {tuple(sorted(p.attributes.items())) for p in telemetry.points(S.SERVER_REQUESTS.name)}
        )
    finally:
        mcpobs.uninstrument()
        telemetry.tracer_provider.shutdown()
        telemetry.meter_provider.shutdown()


@pytest.mark.parametrize("transport", ["legacy", "http-legacy"])
async def test_requests_count_requests_and_notifications_are_counted_as_notifications(mcpobs_telemetry, transport):
    """A client that opens a session per call sends `notifications/initialized` each time: no request."""
    server = create_server()
    for _ in range(3):
        async with connected(transport, server) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
    requests = {p.attributes[S.MCP_METHOD_NAME] for p in mcpobs_telemetry.points(S.SERVER_REQUESTS.name)}
    assert "notifications/initialized" not in requests
    assert mcpobs_telemetry.total(S.SERVER_REQUESTS.name, {S.MCP_METHOD_NAME: "initialize"}) == 3
    initialized = {S.MCP_METHOD_NAME: "notifications/initialized", S.OUTCOME: "ok"}
    assert mcpobs_telemetry.total(S.SERVER_NOTIFICATIONS.name, initialized) == 3
    assert len(mcpobs_telemetry.spans_named("notifications/initialized", SpanKind.SERVER)) == 3  # still a span each
    sent = {p.attributes[S.MCP_METHOD_NAME] for p in mcpobs_telemetry.points(S.CLIENT_REQUESTS.name)}
    assert "notifications/initialized" not in sent  # nor on the client's side
    assert mcpobs_telemetry.total(S.CLIENT_NOTIFICATIONS.name, initialized) == 3
