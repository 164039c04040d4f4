"""mcpobs's own log lines: a peer cannot forge or flood them, and they never hold a secret.

5. Peer text in a log line (a server's name and version on the client's session line, a
   client's on the server's) is one line, bounded, its control characters escaped: a server
   named `"evil\\n2026-01-01 INFO mcpobs.session FORGED\\x1b[2J"` with a 200,000-character version
   used to yield one 200,172-character record with the newline and ESC kept.
6. mcpobs's warnings hold no key, password or caller's value: a second `instrument()` with
   another `session_id_key` logged both keys, an OTLP endpoint with userinfo was logged with
   its password, and a failure inside mcpobs was logged with its exception's message (a user
   hook's words, a `KeyError`'s key).
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from typing import Any

import pytest
from exiting import environment, run_short_script
from mcp import Client
from mcp_types import Implementation
from processes import free_port
from shop import create_server
from transports import serve_http

import mcpobs
from mcpobs._core.config import ConfigurationError
from mcpobs.testing import capture

EVIL = "evil\n2026-01-01 INFO mcpobs.session FORGED\x1b[2J"
HUGE = "9" * 200_000
LINE_BOUND = 2000
"""Characters a session line may reach: a few fields of at most 128 characters each (`text.for_log`)."""


def _lines(caplog: Any, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


def _assert_one_bounded_line(line: str) -> None:
    assert "\n" not in line and "\r" not in line, line[:300]
    assert "\x1b" not in line, line[:300]
    assert len(line) < LINE_BOUND, len(line)
    assert "evil\\n2026-01-01 INFO mcpobs.session FORGED\\x1b[2J" in line  # shown, escaped
    assert "…" in line  # the 200,000 characters were cut, and the line says so


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["auto", "legacy", "http"])
async def test_a_peers_name_and_version_stay_one_bounded_line_on_both_sides(mcpobs_telemetry, caplog, transport):
    server = create_server(name=EVIL, version=HUGE)
    client_info = Implementation(name=EVIL, version=HUGE)
    with caplog.at_level(logging.INFO, logger="mcpobs.session"):
        async with AsyncExitStack() as stack:
            if transport == "http":
                target: Any = stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp"
                client = Client(target, client_info=client_info)
            else:
                client = Client(server, mode=transport, client_info=client_info)
            async with client:
                await client.call_tool("get_order_status", {"order_id": "O-1873"})
    client_lines = _lines(caplog, "mcpobs.session.client")  # the server's name and version
    server_lines = _lines(caplog, "mcpobs.session")  # the client's
    assert client_lines and server_lines
    for line in client_lines + server_lines:
        _assert_one_bounded_line(line)


def test_for_log_escapes_every_control_and_bounds_the_field():
    from mcpobs._core.text import for_log

    assert for_log("get_order_status") == "get_order_status"
    assert for_log("a\r\n\tb") == "a\\r\\n\\tb"
    assert for_log("\x1b[31m\x7f\x85\u202e\u2066\u200b\u2028\ud800") == (
        "\\x1b[31m\\x7f\\x85\\u202e\\u2066\\u200b\\u2028\\ud800"
    )
    assert for_log("back\\slash") == "back\\\\slash"  # an escape a peer wrote cannot pass for ours
    assert for_log("naïve ☃ 😀") == "naïve ☃ 😀"
    cut = for_log("x" * 200_000)
    assert len(cut) == 128 and cut.endswith("…")
    assert len(for_log("\x1b" * 1000, 20)) <= 20


# -- 6. no secret in mcpobs's own warnings -----------------------------------------------------

KEY_IN_EFFECT = "first-session-key-0123456789"
OTHER_KEY = "second-session-key-9876543210"


def test_a_second_instrument_says_the_session_key_differs_never_what_it_is(caplog):
    mcpobs.uninstrument()
    try:
        capture(session_id_key=KEY_IN_EFFECT)
        with caplog.at_level(logging.WARNING, logger="mcpobs"):
            mcpobs.instrument(session_id_key=OTHER_KEY)
    finally:
        mcpobs.uninstrument()
    said = "\n".join(r.getMessage() for r in caplog.records if r.name == "mcpobs")
    assert "session_id_key" in said and "already called" in said
    assert KEY_IN_EFFECT not in said and OTHER_KEY not in said
    assert KEY_IN_EFFECT.encode().hex() not in said  # nor as the bytes the settings hold


def test_a_short_session_key_is_refused_without_showing_it():
    with pytest.raises(ConfigurationError) as raised:
        mcpobs.instrument(session_id_key="tiny-secret")
    assert "tiny-secret" not in str(raised.value) and "11 bytes" in str(raised.value)


def test_an_otlp_endpoint_with_userinfo_is_logged_without_it(tmp_path):
    """A real process configured from OTEL_* variables: a dead endpoint with a password, and headers."""
    port = free_port()
    env = environment(
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://otlpUSER:pa55SECRET@127.0.0.1:{port}",
        OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20HEADERSECRET",
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT="ftp://logUSER:l0gSECRET@127.0.0.1/v1/logs",  # not a URL mcpobs takes
        OTEL_LOGS_EXPORTER="otlp",
    )
    _, stderr = run_short_script(tmp_path, env)
    lines = [line for line in stderr.splitlines() if "mcpobs" in line]
    assert any("nothing answers at the OTLP endpoint" in line for line in lines), stderr
    assert any("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT" in line for line in lines), stderr
    for secret in ("otlpUSER", "pa55SECRET", "HEADERSECRET", "logUSER", "l0gSECRET"):
        assert secret not in stderr, f"{secret} in:\n{stderr}"
    assert f"REDACTED:REDACTED@127.0.0.1:{port}" in stderr  # which endpoint, all the same


@pytest.mark.anyio
async def test_a_failure_inside_mcpobs_is_logged_by_its_type_and_frames_never_its_message(caplog):
    secret = "-".join(["HOOK", "SECRET"])  # not in the source line the frames show

    def hook(span: Any, result: Any) -> None:
        raise KeyError(f"{secret} from the result")

    mcpobs.uninstrument()
    try:
        capture(client_response_hook=hook)
        with caplog.at_level(logging.DEBUG, logger="mcpobs"):
            async with Client(create_server()) as client:
                await client.call_tool("get_order_status", {"order_id": "O-1873"})
                await client.call_tool("get_order_status", {"order_id": "O-2001"})
    finally:
        mcpobs.uninstrument()
    records = [r for r in caplog.records if r.name == "mcpobs"]
    formatted = "\n".join(logging.Formatter().format(r) for r in records)
    assert "client_response_hook" in formatted and "KeyError" in formatted
    assert "in hook" in formatted  # where it was raised: kept
    assert "HOOK-SECRET" not in formatted
