"""Render deploy/tail-sampling.yaml from the registry: the collector keeps every failure and slow call.

Head sampling decides before a call has run, so at 1% it drops 99% of the failures too. Tail
sampling decides once a trace's spans have arrived: the collector holds them for
`decision_wait` and keeps the trace when any span failed, or it was slow, or it carries a
tool-call shape's definition (the corpus `contract replay` reads: one span per distinct shape
per process, and again as its count doubles), or it falls in the fraction kept of the rest. The attribute and its values come from `mcpobs.semconv`, so the
policy can never name an outcome the code does not emit. `python -m mcpobs tail-sampling >
deploy/tail-sampling.yaml` regenerates it; a test fails when the committed file differs.
"""

from __future__ import annotations

from mcpobs import semconv as S

KEPT_OUTCOMES: tuple[S.Outcome, ...] = tuple(o for o in S.Outcome if o is not S.Outcome.OK)
"""Every outcome but ok. pending_input is a round waiting on a human, rare and slow, so kept too."""

DEFAULT_KEEP_PERCENT = 10
DEFAULT_SLOW_MS = 2000
DEFAULT_DECISION_WAIT = "10s"


def render() -> str:
    outcomes = ", ".join(o.value for o in KEPT_OUTCOMES)
    return f"""\
# Tail sampling for mcpobs: keep every trace in which a call failed or was slow, every trace that
# carries a tool-call shape's definition (so `mcpobs contract replay` sees every distinct shape),
# and a fraction of the rest. Generated from src/mcpobs/semconv.py by `python -m mcpobs tail-sampling`; do not
# edit by hand.
#
# Layered over deploy/jaeger.yaml (the collector merges --config files in order, this one last):
#   jaeger --config deploy/jaeger.yaml --config deploy/tail-sampling.yaml
# `scripts/stack --tail-sampling` does that, and so does
#   docker compose -f docker-compose.yml -f deploy/compose.tail-sampling.yaml up
# In any OpenTelemetry Collector with the contrib tail_sampling processor, the `processors` block
# works as it is. Applications record every span (the default parent-based always-on sampler)
# and export in batches; metrics never pass through this sampler (docs/production.md).
#
#   MCPOBS_TAIL_KEEP_PERCENT ({DEFAULT_KEEP_PERCENT})     per cent of the other traces kept (by trace id)
#   MCPOBS_TAIL_SLOW_MS ({DEFAULT_SLOW_MS})         a trace lasting at least this long is kept
#   MCPOBS_TAIL_DECISION_WAIT ({DEFAULT_DECISION_WAIT})  how long a trace's spans are held: longer than
#                                    your longest call plus the exporters' batch delay
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [tail_sampling, batch]
      exporters: [jaeger_storage_exporter]

processors:
  tail_sampling:
    decision_wait: ${{env:MCPOBS_TAIL_DECISION_WAIT:-{DEFAULT_DECISION_WAIT}}}
    num_traces: 100000
    decision_cache:  # a span arriving after its trace was decided follows that decision
      sampled_cache_size: 200000
      non_sampled_cache_size: 200000
    policies:
      - name: failed-calls  # any span whose outcome is not ok, on the client or the server
        type: string_attribute
        string_attribute:
          key: {S.OUTCOME}
          values: [{outcomes}]
      - name: errors  # span status ERROR, from mcpobs or from anything else in the trace
        type: status_code
        status_code:
          status_codes: [ERROR]
      - name: stale-schema  # a client calling with a tool schema the server has since changed
        type: boolean_attribute
        boolean_attribute:
          key: {S.TOOL_SCHEMA_STALE}
          value: true
      - name: tool-call-shapes  # a call carrying a shape the process saw first (or its count): the corpus
        type: string_attribute
        string_attribute:
          key: {S.TOOL_SHAPE_RECORDER}
          values: [".+"]
          enabled_regex_matching: true
      - name: slow
        type: latency
        latency:
          threshold_ms: ${{env:MCPOBS_TAIL_SLOW_MS:-{DEFAULT_SLOW_MS}}}
      - name: the-rest
        type: probabilistic
        probabilistic:
          sampling_percentage: ${{env:MCPOBS_TAIL_KEEP_PERCENT:-{DEFAULT_KEEP_PERCENT}}}
"""
