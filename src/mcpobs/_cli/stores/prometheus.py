"""Prometheus's HTTP API: where it is, and an instant query's samples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpobs._cli import CommandError
from mcpobs._cli.render import printable
from mcpobs._cli.stores.query_api import Store, base_url
from mcpobs._cli.stores.reading import describe

DEFAULT_PROMETHEUS = "127.0.0.1:9090"
"""Where `scripts/stack` serves Prometheus (``PROMETHEUS_LISTEN``)."""
PROMETHEUS_OTLP = "/api/v1/otlp/v1/metrics"


def prometheus_base(env: Mapping[str, str]) -> str:
    """Prometheus's address: from the metrics endpoint scripts/stack prints, else PROMETHEUS_LISTEN, else its default."""
    from opentelemetry.sdk.environment_variables import OTEL_EXPORTER_OTLP_METRICS_ENDPOINT

    endpoint = env.get(OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, "").strip()
    if endpoint.endswith(PROMETHEUS_OTLP):
        return endpoint.removesuffix(PROMETHEUS_OTLP)
    return base_url(env.get("PROMETHEUS_LISTEN", "").strip() or DEFAULT_PROMETHEUS)


class Prometheus(Store):
    what = "Prometheus"

    def vector(self, expr: str) -> list[dict[str, Any]]:
        """The samples of an instant query: each its labels (strings) and its value (a number as text)."""
        reading = self.reading("/api/v1/query")
        answer = reading.object(reading.json(self.get("/api/v1/query", {"query": expr}) or b""), ())
        if answer.get("status") != "success":
            error = answer.get("error")
            said = printable(error) if type(error) is str else describe(error)
            raise CommandError(f"Prometheus at {self.base} refused {printable(expr)!r}: {said}")
        data = reading.object(answer.get("data"), ("data",))
        if data.get("resultType") != "vector":
            reading.expected(("data", "resultType"), data.get("resultType"), '"vector"')
        samples: list[dict[str, Any]] = []
        for i, sample in reading.objects(data.get("result"), ("data", "result")):
            here = ("data", "result", i)
            labels = reading.object(sample.get("metric") or {}, (*here, "metric"))
            for name, label in labels.items():
                reading.text(label, (*here, "metric", name))
            pair = reading.array(sample.get("value"), (*here, "value"))
            if len(pair) != 2 or type(pair[1]) is not str or not _is_number(pair[1]):
                reading.expected((*here, "value"), pair, '[time, "value"]')
            samples.append({"metric": labels, "value": pair})
        return samples


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
