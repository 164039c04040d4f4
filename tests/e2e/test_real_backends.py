"""What a user sees in real Jaeger and Prometheus after `mcpobs.instrument()` and OTEL_* variables."""

from __future__ import annotations

import base64
import json
from collections import Counter

import pytest
from backends import get
from workload_session import CLIENT_SERVICE, SERVER_SERVICE, Session

from mcpobs import semconv as S

pytestmark = pytest.mark.e2e

SHOP_TOOLS = {
    "get_order_status",
    "quote_refund",
    "slow_export",
    "wait_for_stock",
    "approve_refund",
    "confirm_cancel",
    "restock",
    "check_stock",
    "release_check_stock",
    "override_refund_limit",
}
SPAN_KIND_SERVER, SPAN_KIND_CLIENT = 2, 3
REQUESTS = S.prometheus_name(S.SERVER_REQUESTS)
DURATION = S.prometheus_name(S.SERVER_OPERATION_DURATION)
OUTCOME = S.prometheus_label(S.OUTCOME)
TOOL = S.prometheus_label(S.GEN_AI_TOOL_NAME)


def kind(span) -> int:
    k = span.get("kind", 0)
    return k if isinstance(k, int) else {"SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3}.get(k, 0)


def server_spans(e2e: Session, name: str | None = None) -> list[dict]:
    spans = [s for s in e2e.traces(SERVER_SERVICE) if kind(s) == SPAN_KIND_SERVER]
    return [s for s in spans if name is None or s["name"] == name]


def client_spans(e2e: Session) -> list[dict]:
    """The client's own spans: Jaeger answers a service with whole traces, the server's spans in them too."""
    return [s for s in e2e.traces(CLIENT_SERVICE) if kind(s) == SPAN_KIND_CLIENT]


def test_server_spans_carry_the_resource_from_the_standard_variables(e2e):
    spans = server_spans(e2e, "tools/call get_order_status")
    assert len(spans) == 8  # 3 ok + 1 tool error, twice
    for span in spans:
        assert span["resource"]["service.name"] == SERVER_SERVICE
        assert span["resource"]["deployment.environment.name"] == "e2e"
        assert span["attributes"][S.MCP_METHOD_NAME] == "tools/call"


DRIVEN = {o.value for o in S.Outcome} - {S.Outcome.STOPPED.value}
"""Every outcome the workload reaches: `stopped` takes a server stopping mid-call, which would end this
session's server; tests/test_stops.py drives it through real servers to a real OTLP receiver."""


def test_every_outcome_of_the_taxonomy_reaches_jaeger(e2e):
    seen = {s["attributes"].get(S.OUTCOME) for s in server_spans(e2e)}
    assert seen >= DRIVEN


def test_every_outcome_of_the_taxonomy_is_counted_in_prometheus(e2e):
    rows = e2e.promql(f'sum by ({OUTCOME}) ({REQUESTS}{{job="{SERVER_SERVICE}"}})')
    counted = {r["metric"][OUTCOME]: float(r["value"][1]) for r in rows}
    assert set(counted) == DRIVEN
    assert counted["ok"] >= 6 and counted["tool_error"] == 2 and counted["server_error"] == 2
    assert counted["cancelled"] >= 2  # the two abandoned calls (closing the listen stream may add one)
    (waits,) = e2e.promql(f'sum({REQUESTS}{{job="{SERVER_SERVICE}", {OUTCOME}="cancelled", {TOOL}="wait_for_stock"}})')
    assert float(waits["value"][1]) == 2


def test_a_client_holding_the_old_schema_is_flagged_stale_across_a_live_release(e2e):
    stale = [s for s in server_spans(e2e, "tools/call check_stock") if s["attributes"].get(S.TOOL_SCHEMA_STALE)]
    assert len(stale) == 2  # one per pass: the client listed, then the server released
    client = [s for s in e2e.traces(CLIENT_SERVICE) if s["name"] == "tools/call check_stock"]
    assert sum(s["attributes"].get(S.ERROR_TYPE) == S.OUTPUT_VALIDATION for s in client) == 2
    (row,) = e2e.promql(f'sum({S.prometheus_name(S.STALE_CALLS)}{{job="{SERVER_SERVICE}", {TOOL}="check_stock"}})')
    assert float(row["value"][1]) == 2


def test_cancelled_and_pending_rounds_are_not_latency_samples(e2e):
    for outcome in ("cancelled", "pending_input"):
        assert not e2e.promql(f'{DURATION}_count{{job="{SERVER_SERVICE}", {OUTCOME}="{outcome}"}}')
    assert e2e.promql(f'{DURATION}_count{{job="{SERVER_SERVICE}", {OUTCOME}="ok"}}')


def test_latency_histogram_has_the_convention_buckets(e2e):
    rows = e2e.promql(f'{DURATION}_bucket{{job="{SERVER_SERVICE}", {TOOL}="get_order_status", {OUTCOME}="ok"}}')
    bounds = {float(r["metric"]["le"]) for r in rows}
    assert bounds == {*S.DURATION_BUCKETS, float("inf")}


def test_metric_labels_are_bounded_no_unknown_tool_name(e2e):
    tools = {r["metric"].get(TOOL) for r in e2e.promql(f'group by ({TOOL}) ({{job=~"mcpobs-e2e-.*", {TOOL}!=""}})')}
    assert S.OTHER in tools  # the unknown tool was counted, under _OTHER
    assert tools <= SHOP_TOOLS | {S.OTHER}
    assert not e2e.promql('{gen_ai_tool_name="billing__create_invoice"}')


def test_metric_labels_are_registry_attributes(e2e):
    allowed = {S.prometheus_label(a) for spec in S.METRICS.values() for a in spec.attributes}
    # Prometheus's own: the name, the service (job, instance), histogram bounds, the promoted resource attribute.
    allowed |= {"__name__", "job", "instance", "le", "deployment_environment_name"}
    series = e2e.promql('{job=~"mcpobs-e2e-.*", __name__=~"mcp_.*|mcpobs_.*"}')
    assert series
    names = {label for r in series for label in r["metric"]}
    assert names <= allowed, names - allowed


def test_client_and_server_spans_of_one_call_form_one_trace(e2e):
    client = [s for s in e2e.traces(CLIENT_SERVICE) if kind(s) == SPAN_KIND_CLIENT]
    by_id = {s["spanId"]: s for s in client}
    joined = [s for s in server_spans(e2e, "tools/call get_order_status") if s.get("parentSpanId") in by_id]
    assert len(joined) == 8
    for server in joined:
        parent = by_id[server["parentSpanId"]]
        assert parent["traceId"] == server["traceId"]
        assert parent["name"] == "tools/call get_order_status"
        assert parent["resource"]["service.name"] == CLIENT_SERVICE


def test_progress_reports_are_spans_under_the_tool_span_capped(e2e):
    spans = e2e.traces(SERVER_SERVICE)
    exports = server_spans(e2e, "tools/call slow_export")
    progress = [s for s in spans if S.PROGRESS_VALUE in s["attributes"]]
    per_call = {e["spanId"]: [p for p in progress if p.get("parentSpanId") == e["spanId"]] for e in exports}
    counts = sorted(len(children) for children in per_call.values())
    assert counts == [5, 5, S.DEFAULT_MAX_PROGRESS_SPANS, S.DEFAULT_MAX_PROGRESS_SPANS]
    capped = [e for e in exports if e["attributes"].get(S.PROGRESS_DROPPED)]
    assert sorted(e["attributes"][S.PROGRESS_DROPPED] for e in capped) == [30, 30]


def test_progress_metrics_count_every_report_and_capped_operations(e2e):
    reports = S.prometheus_name(S.PROGRESS_REPORTS)
    capped = S.prometheus_name(S.PROGRESS_CAPPED)
    rows = e2e.promql(f'sum({reports}{{job="{SERVER_SERVICE}", {TOOL}="slow_export"}})')
    assert float(rows[0]["value"][1]) == 2 * (5 + 230)
    (row,) = e2e.promql(f'sum({capped}{{job="{SERVER_SERVICE}"}})')
    assert float(row["value"][1]) == 2


def test_no_telemetry_failures_were_logged(e2e):
    for log in (e2e.server_log, e2e.client_log):
        assert "telemetry failed" not in log
        assert "Failed to export" not in log


def test_latency_exemplars_point_at_traces_in_jaeger(e2e):
    start, end = e2e.started.timestamp() - 60, e2e.started.timestamp() + 600
    params = {"query": f'{DURATION}_bucket{{job="{SERVER_SERVICE}"}}', "start": start, "end": end}
    status, body = get(f"{e2e.stack.prometheus.url}/api/v1/query_exemplars", params)
    assert status == 200, body
    trace_ids = {x["labels"]["trace_id"] for series in json.loads(body)["data"] for x in series["exemplars"]}
    assert trace_ids, "Prometheus stored no exemplars for the latency histogram"
    in_jaeger = {base64_or_hex(s["traceId"]) for s in server_spans(e2e)}
    assert trace_ids <= in_jaeger


def base64_or_hex(trace_id: str) -> str:
    """Jaeger's OTLP-JSON ids are hex; tolerate the base64 of the protobuf JSON mapping."""
    if len(trace_id) == 32:
        return trace_id.lower()
    return base64.b64decode(trace_id).hex()


def test_access_refusals_reach_jaeger_on_both_sides_joined_by_the_header(e2e):
    """The shop's billing endpoint refused a token it did not know (401) and one without the scope (403)."""
    refused = str(S.Boundary.ACCESS.value)
    status = S.HTTP_RESPONSE_STATUS_CODE
    client = [
        s for s in client_spans(e2e) if s["attributes"].get(S.FAILURE_BOUNDARY) == refused and status in s["attributes"]
    ]
    by_id = {s["spanId"]: s for s in client}
    # each attempt: server/discover refused, the SDK falls back to initialize, refused again; two passes
    assert Counter((s["name"], s["attributes"][status]) for s in client) == {
        (m, code): 2 for m in ("server/discover", "initialize") for code in (401, 403)
    }
    assert {s["attributes"][S.OUTCOME] for s in client} == {"client_error"}
    assert {s["attributes"][S.ERROR_TYPE] for s in client} == {"401", "403"}
    server = [s for s in server_spans(e2e) if s["attributes"].get(S.FAILURE_BOUNDARY) == refused]
    at_the_door = [s for s in server if status in s["attributes"]]
    assert Counter(s["attributes"][status] for s in at_the_door) == {401: 4, 403: 4}
    for span in at_the_door:
        assert span["attributes"][S.OUTCOME] == "client_error"
        parent = by_id[span["parentSpanId"]]  # the traceparent header rode along on the refused POST
        assert parent["attributes"][status] == span["attributes"][status]
    (tool,) = {s["name"] for s in server if s not in at_the_door}
    assert tool == "tools/call override_refund_limit"  # the PermissionError: the caller refused, not a bug
    assert len([s for s in server if s["name"] == tool]) == 2
    # the wire says only isError; the server's verdict tells the client what the server recorded
    seen = [s for s in client_spans(e2e) if s["name"] == tool]
    assert [
        (s["attributes"][S.OUTCOME], s["attributes"][S.FAILURE_BOUNDARY], s["attributes"][S.OUTCOME_SOURCE])
        for s in seen
    ] == [("client_error", refused, str(S.OutcomeSource.SERVER.value))] * 2
