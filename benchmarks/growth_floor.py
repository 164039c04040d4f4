"""growth.py's floor: the telemetry mcpobs records per call, listing and progress report, by hand."""

from __future__ import annotations

import time

from harness.floor import payload

_OPS = {"tools/call": "call", "tools/list": "listing"}
"""The methods the floor's server middleware records, by the recipe's operation name."""


class Floor:
    """The telemetry mcpobs records, done with plain OpenTelemetry calls and no mcpobs code.

    `recipe` (from `describe`) holds, per operation (call, listing, progress report), the
    attributes of each span by (kind, method), and each metric record with its labels and how
    many times it is made per operation. Labels naming the described tool name the tool called.
    It is also the server's middleware: the server's records are made there, timed around the
    server's handling, the client's around the client's call.
    """

    def __init__(self, recipe: dict, tracer_provider, meter_provider) -> None:
        import threading

        from opentelemetry.trace import SpanKind

        from mcpobs import semconv as S

        self.recipe = recipe
        self.lock = threading.Lock()
        self.server_side = {S.SERVER_OPERATION_DURATION.name, S.SERVER_REQUESTS.name}
        self.tracer = tracer_provider.get_tracer("floor")
        self.kinds = SpanKind
        meter = meter_provider.get_meter("floor")
        self.instruments: dict[str, object] = {}
        self.totals: dict[str, dict[tuple, tuple[dict, list[float]]]] = {}
        for op in ("call", "listing", "report"):
            for name, kind, _labels, _times in recipe["metrics"][op]:
                if name not in self.instruments:
                    self.instruments[name] = self._instrument(meter, name, kind)
        self._labels: dict[tuple[str, str, str | None], list] = {}

        tracer_provider.add_span_processor(payload(recipe["spans"], by_method=True))

    def _instrument(self, meter, name: str, kind: str):
        """A histogram as mcpobs declares it (its buckets); a counter as the cheapest the SDK allows.

        A synchronous `Counter.add` re-validates and re-hashes its labels on every call; an
        `ObservableCounter` over running totals kept per label set exports the same cumulative
        sum for one dict update per record, so that is the floor's counter.
        """
        from opentelemetry.metrics import Observation

        from mcpobs import semconv as S

        if kind == "histogram":
            spec = next(
                (v for v in vars(S).values() if getattr(v, "name", None) == name and hasattr(v, "buckets")), None
            )
            if spec is None:
                return meter.create_histogram(name)
            return meter.create_histogram(name, unit=spec.unit, explicit_bucket_boundaries_advisory=list(spec.buckets))
        totals = self.totals[name] = {}

        def observe(options):
            return [Observation(cell[0], labels) for labels, cell in totals.values()]

        make = meter.create_observable_counter if kind == "sum" else meter.create_observable_up_down_counter
        return make(name, callbacks=[observe])

    def records(self, op: str, tool: str, side: str | None = None) -> list:
        """(histogram or None, labels, times per operation, running total or None) of one operation on `tool`.

        `side` ("server" or "client") keeps that side's records; None keeps all (a progress report).
        """
        key = (op, tool, side)
        found = self._labels.get(key)
        if found is None:
            described = self.recipe["tool"]
            found = []
            for name, kind, pairs, times in self.recipe["metrics"][op]:
                if side is not None and (name in self.server_side) != (side == "server"):
                    continue
                labels = {k: (tool if v == described else v) for k, v in pairs}
                if kind == "histogram":
                    found.append((self.instruments[name], labels, round(times), None))
                else:
                    totals = self.totals[name]
                    label_key = tuple(sorted(labels.items()))
                    if label_key not in totals:
                        totals[label_key] = (labels, [0.0])
                    found.append((None, labels, times, totals[label_key][1]))
            self._labels[key] = found
        return found

    def record(self, op: str, tool: str, seconds: float, side: str | None = None) -> None:
        for histogram, labels, times, cell in self.records(op, tool, side):
            if cell is not None:
                with self.lock:  # a library cannot assume one thread; overhead.py's floor counts so too
                    cell[0] += times
            elif times == 1:
                histogram.record(seconds, labels)
            else:
                for _ in range(times):
                    histogram.record(seconds, labels)

    async def __call__(self, ctx, call_next):
        """The server middleware: the server's records of a call or listing, timed around its handling."""
        start = time.perf_counter()
        result = await call_next(ctx)
        op = _OPS.get(ctx.method)
        if op is not None:
            tool = ctx.params.get("name", "") if op == "call" and ctx.params else ""
            self.record(op, tool, time.perf_counter() - start, "server")
        return result

    async def around(self, op: str, method: str, tool: str, call):
        """`call()` inside the CLIENT span mcpobs makes in mode auto, then the client's records."""
        attributes = self.recipe["spans"].get(f"CLIENT {method}")
        start = time.perf_counter()
        if attributes is None:
            result = await call()
        else:
            name = f"{method} {tool}" if tool else method
            with self.tracer.start_as_current_span(name, kind=self.kinds.CLIENT, attributes=attributes):
                result = await call()
        self.record(op, tool, time.perf_counter() - start, "client")
        return result

    def report(self, tool: str) -> None:
        """One progress report's span (a child of the request's span) and its count."""
        self.tracer.start_span(
            self.recipe["progress"], kind=self.kinds.INTERNAL, attributes=self.recipe["spans"].get("INTERNAL progress")
        ).end()
        self.record("report", tool, 0.0)
