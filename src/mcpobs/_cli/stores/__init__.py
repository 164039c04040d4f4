"""What the command line reads from outside: Jaeger's query API, Prometheus's, and OTLP JSON files.

`show` and `contract replay` read the same stores, one module each (`jaeger`, `prometheus`,
`otlp_files`), over what they share: one GET (`query_api`), one careful reader of an answer or
a file (`reading`), and one decoder of OTLP JSON into `render.Span` rows (`otlp_json`), which
Jaeger's ``/api/v3/traces`` and a collector's `file` exporter both write.
"""
