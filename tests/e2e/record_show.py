"""Record what real Jaeger and Prometheus answer `python -m mcpobs show`, for tests/test_show.py.

    .venv/bin/python tests/e2e/record_show.py

Starts the stack (tests/e2e/backends.py), runs the demo against it (every outcome, a client and
a server in one process), and saves Jaeger's ``/api/traces`` answer and Prometheus's answers
to the queries `show` sends into tests/show_answers.json. The unit tests render those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from backends import get, stack  # noqa: E402

from mcpobs import semconv as S  # noqa: E402
from mcpobs._cli import show  # noqa: E402

SERVICE = "shop-recorded"
OUT = HERE.parent / "show_answers.json"


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, stack(Path(tmp)) as backends:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env.update(
            OTEL_SERVICE_NAME=SERVICE,
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=backends.otlp_traces,
            OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=backends.otlp_metrics,
        )
        subprocess.run([sys.executable, "-m", "mcpobs", "demo"], env=env, check=True, capture_output=True, timeout=180)
        now_us = int(time.time() * 1e6)
        query = {"service": SERVICE, "start": now_us - 600_000_000, "end": now_us + 60_000_000, "limit": 50}
        deadline = time.monotonic() + 60
        while True:
            status, body = get(f"{backends.jaeger.url}/api/traces?{urllib.parse.urlencode(query)}")
            traces = json.loads(body).get("data") or [] if status == 200 else []
            if len(traces) >= 10:
                break
            assert time.monotonic() < deadline, (status, body[:500])
            time.sleep(1)
        recorded = json.loads(body)
        for trace in recorded["data"]:
            for span in trace["spans"]:
                span["logs"] = []  # the crash's stack trace names this machine's paths; `show` prints no events
        answers: dict[str, object] = {"service": SERVICE, "jaeger": recorded, "prometheus": {}}
        first = show.metric_query(S.prometheus_name(S.SERVER_REQUESTS), SERVICE, "15m")
        while not json.loads(get(f"{backends.prometheus.url}/api/v1/query", {"query": first})[1])["data"]["result"]:
            assert time.monotonic() < deadline, "no metrics in Prometheus"
            time.sleep(1)
        prometheus: dict[str, object] = {}
        for spec in (S.SERVER_REQUESTS, S.SERVER_OPERATION_DURATION, S.CLIENT_REQUESTS, S.CLIENT_OPERATION_DURATION):
            name = S.prometheus_name(spec)
            for suffix in ("_count", "_sum") if spec.instrument == "histogram" else ("",):
                expr = show.metric_query(name + suffix, SERVICE, "15m")
                _, raw = get(f"{backends.prometheus.url}/api/v1/query", {"query": expr})
                prometheus[expr] = json.loads(raw)
        answers["prometheus"] = prometheus
        OUT.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
        print(f"wrote {OUT} ({len(traces)} traces)")


if __name__ == "__main__":
    main()
