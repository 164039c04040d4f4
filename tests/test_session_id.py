"""`mcp.session.id` on a legacy Streamable HTTP session: the id, its keyed hash, or nothing; never a label."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from opentelemetry.trace import SpanKind
from shop import create_server
from transports import connected

import mcpobs
from mcpobs import semconv as S
from mcpobs._core.config import ConfigurationError, settings_from
from mcpobs.testing import capture

pytestmark = pytest.mark.anyio

KEY = "a-secret-of-at-least-16-bytes"


async def _session(**options):
    telemetry = capture(**options)
    try:
        async with connected("http-legacy", create_server()) as client:
            await client.call_tool("get_order_status", {"order_id": "O-1873"})
            await client.list_tools()
        return telemetry
    finally:
        mcpobs.uninstrument()


def _ids(telemetry, kind):
    spans = [s for s in telemetry.spans() if s.kind is kind and s.attributes.get(S.MCP_METHOD_NAME) != "initialize"]
    return {s.attributes.get(S.MCP_SESSION_ID) for s in spans if S.MCP_METHOD_NAME in s.attributes}


def _labels(telemetry):
    return {k for name in S.METRICS for p in telemetry.points(name) for k in p.attributes}


async def test_the_session_id_is_on_both_sides_and_never_a_label():
    telemetry = await _session()
    (server,) = _ids(telemetry, SpanKind.SERVER)
    assert _ids(telemetry, SpanKind.CLIENT) == {server}
    assert len(server) == 32  # the SDK's uuid4().hex
    assert S.MCP_SESSION_ID not in _labels(telemetry)


async def test_a_key_records_the_ids_keyed_hash_instead():
    plain = await _session()
    (raw,) = _ids(plain, SpanKind.SERVER)
    hashed = await _session(session_id_key=KEY)
    (value,) = _ids(hashed, SpanKind.SERVER)
    assert _ids(hashed, SpanKind.CLIENT) == {value}
    assert value != raw and len(value) == S.SESSION_ID_HASH_LENGTH
    assert all(raw not in str(s.attributes) for s in hashed.spans())
    int(value, 16)  # hex


def test_the_hash_is_an_hmac_of_the_id():
    from mcpobs._core.session_id import session_attribute

    settings = settings_from({"session_id_key": KEY}, environ={})
    expected = hmac.new(KEY.encode(), b"abc", hashlib.sha256).hexdigest()[: S.SESSION_ID_HASH_LENGTH]
    assert session_attribute("abc", settings) == expected
    assert session_attribute("abc", settings_from({"record_session_id": False}, environ={})) is None
    assert session_attribute("abc", settings_from({}, environ={})) == "abc"


async def test_record_session_id_false_leaves_it_out():
    telemetry = await _session(record_session_id=False)
    assert _ids(telemetry, SpanKind.SERVER) == {None}
    assert _ids(telemetry, SpanKind.CLIENT) == {None}


@pytest.mark.parametrize("key", ["short", b"", 12345])
def test_a_bad_key_is_a_clear_configuration_error(key):
    with pytest.raises(ConfigurationError, match="session_id_key"):
        settings_from({"session_id_key": key}, environ={})
