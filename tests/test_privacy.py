"""Private by default: the six ways text from outside reached telemetry (issue 27), one test each.

1. an exception's message (status description, `exception.message`, the stacktrace's last line);
2. `redact` bypassed by that path; 3. resource URIs with userinfo, tokens and signatures;
4. progress messages without `redact` or an opt-out; 5. the host's baggage sent to servers;
6. `server.address`/`server.port` unbounded on client metrics.
The end-to-end sweep over every path, host and transport is `test_privacy_everywhere.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pytest
from mcp import Client
from opentelemetry import baggage
from opentelemetry import context as otel_context
from secret_shop import SECRET_URI, create_server, masked, redact, secret, token, visible

import mcpobs
from mcpobs import semconv as S
from mcpobs.testing import CapturedTelemetry, capture

pytestmark = pytest.mark.anyio


@contextmanager
def instrumented(**options: Any) -> Iterator[CapturedTelemetry]:
    telemetry = capture(**options)
    try:
        yield telemetry
    finally:
        mcpobs.uninstrument()


def strings(telemetry: CapturedTelemetry) -> list[str]:
    """Every string the spans carry: names, descriptions, attributes, events."""
    found: list[str] = []
    for span in telemetry.spans():
        found.append(span.name)
        if span.status.description:
            found.append(span.status.description)
        for value in (span.attributes or {}).values():
            found.extend(v for v in (value if isinstance(value, tuple) else (value,)) if isinstance(v, str))
        for event in span.events:
            found.extend(v for v in (event.attributes or {}).values() if isinstance(v, str))
    return found


def anywhere(telemetry: CapturedTelemetry, text: str) -> list[str]:
    return [s for s in strings(telemetry) if text in s]


async def _fail_everywhere(client: Client) -> None:
    assert (await client.call_tool("charge", {"card_number": "4111"})).is_error
    with pytest.raises(Exception):  # noqa: B017 - the SDK's own error type for a failed read
        await client.read_resource("vault://v1")
    with pytest.raises(Exception):  # noqa: B017
        await client.get_prompt("greet", {"name": "n"})
    with pytest.raises(Exception):  # noqa: B017
        await client.call_tool("upstream", {"reason": "r"})


# -- 1. exception text --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_exceptions_message_is_not_recorded_by_default_only_its_type_and_frames(mode):
    with instrumented() as telemetry:
        async with Client(create_server(), mode=mode) as client:
            await client.list_tools()  # a client names spans by the tools it listed
            await _fail_everywhere(client)
        for path in ("tool_exception", "resource_exception", "prompt_exception", "mcp_error"):
            assert not anywhere(telemetry, masked(path)), path
        assert not anywhere(telemetry, "4111")  # the caller's argument, repeated by the message
        (server,) = [s for s in telemetry.spans_named("tools/call charge") if s.kind.name == "SERVER"]
        assert server.status.description == "ValueError"
        (event,) = [e for e in server.events if e.name == S.EVENT_EXCEPTION]
        assert event.attributes is not None
        assert event.attributes["exception.type"] == "ValueError"
        assert "exception.message" not in event.attributes
        stack = str(event.attributes["exception.stacktrace"])
        assert "secret_shop.py" in stack and "in charge" in stack  # where it was raised: kept
        assert stack.rstrip().endswith("ValueError")  # the message line, without the message
        (client_span,) = [s for s in telemetry.spans_named("tools/call upstream") if s.kind.name == "CLIENT"]
        assert client_span.status.description == "MCPError"


async def test_an_opted_in_message_is_recorded_through_redact():
    with instrumented(record_error_messages=True, redact=redact) as telemetry:
        async with Client(create_server()) as client:
            await _fail_everywhere(client)
        assert anywhere(telemetry, visible("tool_exception"))
        assert anywhere(telemetry, visible("mcp_error"))
        for path in ("tool_exception", "resource_exception", "prompt_exception", "mcp_error"):
            assert not anywhere(telemetry, masked(path)), path


def test_frames_only_keeps_every_frame_and_no_message_of_the_chain():
    from mcpobs._core.privacy import frames_only

    word = "-".join(["hidden", "word"])  # not in the source lines the frames show

    def inner() -> None:
        raise KeyError(f"{word}-inner")

    try:
        try:
            inner()
        except KeyError as exc:
            raise RuntimeError(f"{word}-outer") from exc
    except RuntimeError as exc:
        text = frames_only(exc)
    assert "hidden-word" not in text
    assert "in inner" in text and "KeyError" in text and "RuntimeError" in text
    assert "direct cause" in text


# -- 2. redact bypassed -------------------------------------------------------------------------


async def test_redact_is_not_bypassed_by_the_exception_path():
    """The captured arguments are masked; before, the same card number was on the span in full."""
    with instrumented(capture_content=True, redact=redact) as telemetry:
        async with Client(create_server()) as client:
            await client.call_tool("charge", {"card_number": secret("arguments")})
        (server,) = [s for s in telemetry.spans_named("tools/call charge") if s.kind.name == "SERVER"]
        assert "***" in str(server.attributes[S.GEN_AI_TOOL_CALL_ARGUMENTS])
        assert not anywhere(telemetry, masked("arguments"))


# -- 3. resource URIs ---------------------------------------------------------------------------


REDACTED_URI = "vault://REDACTED:REDACTED@vault.example/doc?token=REDACTED&X-Goog-Signature=REDACTED#REDACTED"


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # a path while legacy sessions send it
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_resource_uri_loses_its_userinfo_query_values_and_fragment(mode):
    with instrumented() as telemetry:
        async with Client(create_server(), mode=mode) as client:
            with pytest.raises(Exception):  # noqa: B017 - no such resource
                await client.read_resource(SECRET_URI)
            with suppress(Exception):  # refused or not, its span records the URI
                await client.subscribe_resource(SECRET_URI)
        for path in ("uri_userinfo", "uri_token", "uri_signature", "uri_fragment"):
            assert not anywhere(telemetry, token(path)), path
            assert not anywhere(telemetry, masked(path)), path
        reads = telemetry.spans_named("resources/read")
        assert {s.kind.name for s in reads} == {"CLIENT", "SERVER"}
        assert {s.attributes[S.MCP_RESOURCE_URI] for s in reads} == {REDACTED_URI}
        with_uri = [s for s in telemetry.spans() if S.MCP_RESOURCE_URI in (s.attributes or {})]
        assert any(s.attributes[S.MCP_METHOD_NAME] == "resources/subscribe" for s in with_uri)
        assert {s.attributes[S.MCP_RESOURCE_URI] for s in with_uri} == {REDACTED_URI}


async def test_raw_resource_uris_is_the_opt_in_and_redact_still_applies():
    with instrumented(raw_resource_uris=True, redact=redact) as telemetry:
        async with Client(create_server()) as client:
            with pytest.raises(Exception):  # noqa: B017
                await client.read_resource(SECRET_URI)
        recorded = {s.attributes[S.MCP_RESOURCE_URI] for s in telemetry.spans_named("resources/read")}
        assert recorded == {redact(SECRET_URI)}
        assert visible("uri_token") in recorded.pop()


def test_scrub_uri_follows_the_url_full_rule_for_every_query_key():
    from mcpobs._core.privacy import scrub_uri

    assert scrub_uri("shop://catalog") == "shop://catalog"
    assert scrub_uri("https://u:p@h.example:8443/a/b?x=1&sig=2&flag") == (
        "https://REDACTED:REDACTED@h.example:8443/a/b?x=REDACTED&sig=REDACTED&REDACTED"
    )
    assert scrub_uri("mailto:someone@example.com") == "mailto:someone@example.com"  # no authority: a path
    assert scrub_uri("file:///tmp/a#frag") == "file:///tmp/a#REDACTED"


# -- 4. progress messages -----------------------------------------------------------------------


async def test_a_progress_message_is_left_out_unless_opted_in_and_then_goes_through_redact():
    with instrumented(redact=redact, record_progress_messages=True) as telemetry:
        async with Client(create_server()) as client:
            await client.call_tool("report", {})
        (progress,) = telemetry.spans_named(S.PROGRESS_SPAN)
        assert progress.attributes[S.PROGRESS_MESSAGE] == f"{visible('progress')} ***"
        assert not anywhere(telemetry, masked("progress"))
    with instrumented() as telemetry:  # the default: text a tool wrote is not recorded
        async with Client(create_server()) as client:
            await client.call_tool("report", {})
        (progress,) = telemetry.spans_named(S.PROGRESS_SPAN)
        assert S.PROGRESS_MESSAGE not in (progress.attributes or {})
        assert progress.attributes[S.PROGRESS_VALUE] == 1.0
        assert not anywhere(telemetry, visible("progress"))


# -- 5. baggage ---------------------------------------------------------------------------------


@contextmanager
def host_baggage() -> Iterator[None]:
    token_ = otel_context.attach(baggage.set_baggage("enduser.email", "alice@example.com"))
    try:
        yield
    finally:
        otel_context.detach(token_)


@pytest.mark.parametrize("send", [False, True])
async def test_the_hosts_baggage_reaches_a_server_only_with_send_baggage(send):
    """Over JSON-RPC (the legacy in-memory transport) `_meta` is what a server receives."""
    with instrumented(**({"send_baggage": True} if send else {})):
        async with Client(create_server(), mode="legacy") as client:
            with host_baggage():
                result = await client.call_tool("echo_meta", {})
    received = result.content[0].text  # type: ignore[union-attr]
    assert "traceparent" in received  # the trace context still goes
    assert ("alice%40example.com" in received or "alice@example.com" in received) is send


# -- 6. server.address / server.port on client metrics -----------------------------------------


@contextmanager
def serving_on_many_ports(app: Any, count: int) -> Iterator[list[int]]:
    """One uvicorn server listening on `count` loopback ports: as many distinct servers to a client."""
    import socket
    import threading
    import time

    import uvicorn

    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sockets.append(sock)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        yield [sock.getsockname()[1] for sock in sockets]
    finally:
        server.should_exit = True
        thread.join(10)
        for sock in sockets:
            sock.close()


async def test_client_metric_labels_hold_a_bounded_number_of_servers_spans_keep_every_one():
    count = 40  # more servers than the bound (`MAX_SERVER_PEERS`, 32)
    with instrumented() as telemetry:
        with serving_on_many_ports(create_server().streamable_http_app(), count) as ports:
            for port in ports:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    await client.call_tool("report", {})
        labelled = {
            (p.attributes.get(S.SERVER_ADDRESS), p.attributes.get(S.SERVER_PORT))
            for name in (S.CLIENT_OPERATION_DURATION.name, S.CLIENT_REQUESTS.name, S.CLIENT_SESSION_DURATION.name)
            for p in telemetry.points(name)
        }
        servers = labelled - {(None, None)}
        assert len(servers) < count, f"{len(servers)} server label pairs for {count} servers"
        assert len(servers) == S.MAX_SERVER_PEERS + 1  # the first ones, then `_OTHER` for the rest
        assert (S.OTHER, None) in labelled
        on_spans = {s.attributes.get(S.SERVER_PORT) for s in telemetry.spans() if s.kind.name == "CLIENT"}
        assert set(ports) <= on_spans  # every span still says which server it called
