"""The registry against the official `opentelemetry-semantic-conventions` package.

Every name the registry calls a convention name must be one the package defines (or one the
pinned convention docs define and the package lacks, listed below with the reason); every MCP
name the package defines must be in the registry; and the registry must not spell a name the
package defines, so a renamed constant breaks the build rather than a dashboard.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import opentelemetry.semconv._incubating.attributes as incubating_attributes
import opentelemetry.semconv.attributes as stable_attributes
from conformance_survey import BUCKETS as SPEC_BUCKETS
from opentelemetry.semconv._incubating.attributes import mcp_attributes
from opentelemetry.semconv._incubating.metrics import mcp_metrics
from opentelemetry.semconv.schemas import Schemas

from mcpobs import semconv as S

IN_DOCS_NOT_IN_PACKAGE: dict[str, str] = {}
"""Convention names the pinned docs define that the package does not (name -> why it is used).
Empty today: every convention name mcpobs emits is in opentelemetry-semantic-conventions 0.65 and 0.66."""


def _constants(module: object) -> dict[str, str]:
    """UPPER_CASE string constants of a generated semconv module: constant name -> value."""
    return {k: v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}


def _package_attribute_names() -> set[str]:
    names: set[str] = set()
    for package in (stable_attributes, incubating_attributes):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            names.update(_constants(module).values())
    return names


PACKAGE_ATTRIBUTES = _package_attribute_names()
PACKAGE_MCP_ATTRIBUTES = set(_constants(mcp_attributes).values())
PACKAGE_MCP_METRICS = set(_constants(mcp_metrics).values())


def test_the_package_defines_what_this_test_reads():
    """A guard for the test itself: the package still has MCP attributes and metrics to check against."""
    assert {"mcp.method.name", "mcp.session.id"} <= PACKAGE_MCP_ATTRIBUTES
    assert len(PACKAGE_MCP_METRICS) == 4
    assert "error.type" in PACKAGE_ATTRIBUTES


def test_every_convention_attribute_is_defined_by_the_package_or_the_pinned_docs():
    claimed = {a.name for a in S.ATTRIBUTES.values() if a.origin == "convention"}
    unknown = sorted(claimed - PACKAGE_ATTRIBUTES - set(IN_DOCS_NOT_IN_PACKAGE))
    assert not unknown, f"the registry calls these convention names, the package does not define them: {unknown}"


def test_every_convention_metric_is_defined_by_the_package():
    claimed = {m.name for m in S.METRICS.values() if m.origin == "convention"}
    assert claimed <= PACKAGE_MCP_METRICS | set(IN_DOCS_NOT_IN_PACKAGE)


def test_every_mcp_name_the_package_defines_is_in_the_registry():
    assert set(S.ATTRIBUTES) >= PACKAGE_MCP_ATTRIBUTES
    assert set(S.METRICS) >= PACKAGE_MCP_METRICS


def test_convention_metrics_use_the_package_units_and_the_conventions_buckets():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("conformance")
    for name in PACKAGE_MCP_METRICS:
        factory = getattr(mcp_metrics, "create_" + name.replace(".", "_"))
        factory(meter).record(1.0)
    units = {
        m.name: m.unit for r in reader.get_metrics_data().resource_metrics for s in r.scope_metrics for m in s.metrics
    }
    for name, unit in units.items():
        assert S.METRICS[name].unit == unit
        assert S.METRICS[name].instrument == "histogram"
        assert list(S.METRICS[name].buckets) == SPEC_BUCKETS


def test_names_not_in_the_package_are_not_called_convention_names():
    """`otel.metric.overflow` is the metrics SDK's own attribute, not a semantic convention.

    The SDK applies it itself from 1.45 on (its cardinality limit); 1.44 has no limit, and only
    mcpobs's own counters (`tally.py`) use the name there."""
    from opentelemetry.sdk.metrics._internal import _view_instrument_match

    assert S.ATTRIBUTES[S.OTEL_METRIC_OVERFLOW].origin == "sdk"
    sdk_overflow = getattr(_view_instrument_match, "_OVERFLOW_ATTRIBUTES", {S.OTEL_METRIC_OVERFLOW: True})
    assert set(sdk_overflow) == {S.OTEL_METRIC_OVERFLOW}
    assert S.OTEL_METRIC_OVERFLOW not in PACKAGE_ATTRIBUTES


def test_mcpobs_names_stay_in_their_namespace():
    for spec in S.ATTRIBUTES.values():
        if spec.origin == "mcpobs":
            assert spec.name.startswith("mcpobs."), spec.name
            assert spec.name not in PACKAGE_ATTRIBUTES
    for metric in S.METRICS.values():
        if metric.origin == "mcpobs":
            assert metric.name.startswith("mcpobs."), metric.name


def test_the_schema_url_is_one_the_package_publishes():
    """From 0.66b0 the package publishes it; 0.65b0 (the oldest supported, beside the SDK 1.44)
    stops one schema short, and the URL is still the same one, spelled as the package spells its own."""
    published = {schema.value for schema in Schemas}
    if S.SCHEMA_URL not in published:
        newest = max(published, key=lambda url: tuple(int(n) for n in url.rpartition("/")[2].split(".")))
        assert newest.rpartition("/")[2] == "1.43.0", f"{S.SCHEMA_URL} is not published by this package"
        assert newest.replace("1.43.0", "1.44.0") == S.SCHEMA_URL


def test_the_registry_spells_no_name_the_package_defines():
    """Names come from the package's constants; a string literal would survive a rename unnoticed."""
    source = Path(S.__file__).read_text()
    literals = {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    spelled = sorted(literals & (PACKAGE_ATTRIBUTES | PACKAGE_MCP_METRICS))
    assert not spelled, f"import these from opentelemetry.semconv instead of spelling them: {spelled}"


def test_every_requirement_names_a_package_attribute_or_a_span_item():
    items = {S.SPAN_NAME, S.SPAN_KIND, S.SPAN_STATUS, S.PROPAGATION, S.INSTRUMENT}
    signals = {S.SERVER_SPAN, S.CLIENT_SPAN} | PACKAGE_MCP_METRICS
    for row in S.REQUIREMENTS:
        assert row.signal in signals, row
        assert row.item in items or row.item in PACKAGE_ATTRIBUTES, row


def test_every_attribute_a_convention_metric_carries_is_in_its_requirements():
    """What the registry says a metric carries and what the requirement table lists agree."""
    for metric in S.METRICS.values():
        if metric.origin != "convention":
            continue
        listed = {r.item for r in S.REQUIREMENTS if r.signal == metric.name}
        carried = {a for a in metric.attributes if S.ATTRIBUTES[a].origin == "convention"}
        assert carried <= listed, (metric.name, carried - listed)


def test_every_deviation_has_a_reason_and_is_listed():
    listed = dict(S.DEVIATIONS)
    for row in S.REQUIREMENTS:
        if row.deviation is not None:
            assert row.deviation.strip()
            assert listed[f"`{row.item}` on {row.signal}"] == row.deviation
