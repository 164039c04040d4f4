"""A property test of the server's boundary: random hostile trace context, forwarded addresses and
names, over loopback HTTP, bounded and seeded.

Whatever a caller writes in `traceparent`, `tracestate`, `baggage` (as headers and in `_meta`),
`X-Forwarded-For` and the tool name: every request is answered as without mcpobs would answer it
(no 500), gets its server span (its sampled flag hides nothing), and nothing it wrote in them reaches the
exporter around the bounds: no `tracestate`, no secret, no span name or label past its cap.
"""

from __future__ import annotations

import json
import random
from typing import Any

import httpx2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.trace import SpanKind
from shop import create_server
from test_bounded_names import labels
from test_http_boundary import CALL_HEADERS, ENVELOPE, call, settle
from transports import serve_http

from mcpobs import semconv as S

SECRET = "4111111111111111"
_PIECES = ["", "00", "ff", "01", "-", "zz", "\x1b[2J", "\n", "\u202e", "é", SECRET, "=", ",", " ", "0" * 32, "a" * 300]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def traceparent(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.6:  # well formed, either flag (and an unknown one)
        return (
            f"{rng.choice(['00', '01', 'cc'])}-{_hex(rng, 32)}-{_hex(rng, 16)}-{rng.choice(['00', '01', '03', 'ff'])}"
        )
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 6)))


def tracestate(rng: random.Random) -> str:
    members = [f"{rng.choice(['v', 'card', 'x@y', 'K', ''])}={rng.choice(_PIECES)}" for _ in range(rng.randint(1, 40))]
    return ",".join(members)


def baggage(rng: random.Random) -> str:
    return ",".join(f"k{i}={rng.choice(_PIECES)}" for i in range(rng.randint(1, 20)))


def forwarded(rng: random.Random) -> str:
    return rng.choice(
        [
            "203.0.113.9",
            "::1",
            "1" * 4096,
            ", ".join("198.51.100.1" for _ in range(rng.randint(1, 400))),
            "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 30))),
            "[2001:db8::1]:80",
        ]
    )


def tool_name(rng: random.Random) -> str:
    return rng.choice(["get_order_status", "x" * 20_000, "\x1b]0;t\x07get_order_status", "a\nb", "no_such_tool"])


def _header_safe(value: str) -> bool:
    return value == value.strip() and value.isascii() and value.isprintable()


def test_random_hostile_context_never_hides_a_call_or_reaches_the_exporter_raw(mcpobs_telemetry):
    rng = random.Random(5454)
    count = 60
    sent_valid = 0
    with serve_http(create_server().streamable_http_app()) as base, httpx2.Client(timeout=10) as http:
        for _ in range(count):
            context = {"traceparent": traceparent(rng)}
            if rng.random() < 0.7:
                context["tracestate"] = tracestate(rng)
            if rng.random() < 0.5:
                context["baggage"] = baggage(rng)
            body: dict[str, Any] = call()
            body["params"]["name"] = tool_name(rng)
            headers = {**CALL_HEADERS, "mcp-name": body["params"]["name"], "x-forwarded-for": forwarded(rng)}
            headers = {k: v for k, v in headers.items() if _header_safe(v)}  # what an HTTP client can send
            if rng.random() < 0.5 or not all(_header_safe(v) for v in context.values()):
                body["params"]["_meta"] = {**ENVELOPE, **context}
            else:
                headers.update(context)
            response = http.post(base + "/mcp", headers=headers, content=json.dumps(body).encode())
            assert response.status_code < 500, response.text[:200]
            sent_valid += 1
        spans = settle(mcpobs_telemetry, sent_valid)
    server = [s for s in spans if s.kind is SpanKind.SERVER]
    assert len(server) == sent_valid  # no caller's flag hid its call
    exported = encode_spans(mcpobs_telemetry.spans()).SerializeToString()
    assert SECRET.encode() not in exported
    for span in mcpobs_telemetry.spans():
        assert not span.context.trace_state and all(not link.context.trace_state for link in span.links)
        assert len(span.name) <= 64 + S.MAX_TARGET_LENGTH
        address = (span.attributes or {}).get(S.CLIENT_ADDRESS)
        assert address is None or len(str(address)) <= 64
    assert all(len(value) <= S.MAX_TARGET_LENGTH for value in labels(mcpobs_telemetry))
