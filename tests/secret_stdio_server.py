"""The secret shop over stdio, exporting spans, metrics and mcpobs's log records over OTLP.

Run by `test_privacy_everywhere.py` as a subprocess: argv[1] is the receiver's base URL,
MCPOBS_SECRET_HOST picks the server (`mcpserver` or `fastmcp`), MCPOBS_SECRET_OPTIN=1 turns on
the opt-ins with the tests' `redact`. Everything is flushed at exit. Nothing writes to stdout.
"""

import atexit
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import mcpobs


def main() -> None:
    base = sys.argv[1]
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{base}/v1/metrics"), 3_600_000)
    meter_provider = MeterProvider(metric_readers=[reader])
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{base}/v1/logs")))
    logging.getLogger("mcpobs").addHandler(LoggingHandler(logger_provider=logger_provider))
    logging.getLogger("mcpobs").setLevel(logging.INFO)

    def flush() -> None:
        tracer_provider.shutdown()
        meter_provider.shutdown()
        logger_provider.shutdown()

    atexit.register(flush)
    options: dict[str, object] = {}
    if os.environ.get("MCPOBS_SECRET_OPTIN"):
        from secret_shop import OPT_INS

        options.update(OPT_INS)
    mcpobs.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider, **options)
    from secret_shop import create_fastmcp, create_server

    if os.environ.get("MCPOBS_SECRET_HOST") == "fastmcp":
        create_fastmcp().run("stdio", show_banner=False)
    else:
        create_server().run("stdio")


if __name__ == "__main__":
    main()
