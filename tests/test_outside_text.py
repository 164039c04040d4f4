"""Text from outside goes through the one privacy step, and a `redact` that fails is contained there.

Three ways caller text got around it (issue 40), one test each, searching every byte both sides
export (spans, events, metric labels and mcpobs's log records, OTLP-encoded:
`test_privacy_everywhere.Exported`):

2. a URI or URL whose userinfo holds `/`, `?` or `#` unescaped (base64 and typed passwords) was
   scrubbed only up to the first `/`, so the password reached `mcp.resource.uri` and the user
   name a client's `server.address`;
3. a `redact` that raised sent the caller's text into mcpobs's log (with its traceback), and
   the span lost its outcome and the call its metrics;
4. a string JSON-RPC id, the revision a client asked for, the model a client declares in
   `_meta` and a tool name that is not a string were recorded around `redact`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager, suppress
from typing import Any

import httpx2 as httpx
import pytest
from mcp import Client
from opentelemetry.trace import SpanKind
from secret_shop import create_server
from test_privacy_everywhere import Exported, instrumented
from transports import RAW_HEADERS, serve_http

from mcpobs import semconv as S

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:`LoggingHandler` in `opentelemetry-sdk`")]


class Records(logging.Handler):
    """Every record on the `mcpobs` loggers, formatted whole (message and traceback)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> str:
        return "\n".join(self.format(r) for r in self.records)


@contextmanager
def mcpobs_records() -> Iterator[Records]:
    handler = Records()
    logger = logging.getLogger("mcpobs")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _spans(exported: Exported) -> list[Any]:
    return list(exported.spans.get_finished_spans())


# -- 2. URIs and URLs with unescaped `/`, `?`, `#` in their userinfo ----------------------------

SHAPES = {
    "postgresql://svcUSERA:Zm9vSECRETA/YmFy+cXV4==@db.internal/prod": (
        "postgresql://REDACTED:REDACTED@db.internal/prod",
        ["svcUSERA", "Zm9vSECRETA", "YmFy+cXV4=="],
    ),
    "vault://aliceUSERB:pa55SECRETB/w0rdTAILB@vault/doc": (
        "vault://REDACTED:REDACTED@vault/doc",
        ["aliceUSERB", "pa55SECRETB", "w0rdTAILB"],
    ),
    "vault://aliceUSERC:pa55SECRETC?w0rdTAILC@vault/doc": (
        "vault://REDACTED:REDACTED@vault/doc",
        ["aliceUSERC", "pa55SECRETC", "w0rdTAILC"],
    ),
    "vault://aliceUSERD:pa55SECRETD#w0rdTAILD@vault/doc": (
        "vault://REDACTED:REDACTED@vault/doc",
        ["aliceUSERD", "pa55SECRETD", "w0rdTAILD"],
    ),
}
"""The issue's four shapes: what `mcp.resource.uri` records, and the words no exported byte may hold."""


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_the_four_uri_shapes_leave_no_credential_in_any_exported_byte(transport):
    with instrumented({}) as exported:
        async with AsyncExitStack() as stack:
            server = create_server()
            if transport == "memory":
                target: Any = server
            else:
                base = stack.enter_context(serve_http(server.streamable_http_app()))
                target = base + "/mcp"
                # A client URL written the same sloppy way: the SDK's HTTP client refuses it
                # ("Invalid port"), and what mcpobs recorded of it must hold no credential.
                for shape in ("http://urlUSERE:pa55SECRETE/w0rdTAILE@", "http://urlUSERF:pa55SECRETF?w0rdTAILF@"):
                    with suppress(Exception):
                        async with Client(base.replace("http://", shape)) as broken:
                            await broken.list_tools()
            async with Client(target) as client:
                for uri in SHAPES:
                    with suppress(Exception):  # no such resource: its spans record the URI all the same
                        await client.read_resource(uri)
        seen = exported.encoded()
        spans = _spans(exported)
    assert b"resources/read" in seen
    words = [w for _, secret in SHAPES.values() for w in secret]
    if transport == "http":
        words += ["urlUSERE", "pa55SECRETE", "w0rdTAILE", "urlUSERF", "pa55SECRETF", "w0rdTAILF"]
    leaked = [w for w in words if w.encode() in seen]
    assert not leaked, f"exported: {leaked}"
    recorded = {s.attributes[S.MCP_RESOURCE_URI] for s in spans if S.MCP_RESOURCE_URI in (s.attributes or {})}
    assert recorded == {scrubbed for scrubbed, _ in SHAPES.values()}
    kinds = {s.kind for s in spans if s.attributes.get(S.MCP_METHOD_NAME) == "resources/read"}
    assert kinds == {SpanKind.CLIENT, SpanKind.SERVER}
    addresses = {s.attributes.get(S.SERVER_ADDRESS) for s in spans if s.kind is SpanKind.CLIENT} - {None}
    assert addresses <= {"127.0.0.1"}, addresses  # never a user name


def test_the_uri_rule_reads_each_shape_as_documented():
    from mcpobs._core.uri import address, scrub

    assert scrub("shop://catalog") == "shop://catalog"
    assert scrub("file:///home/bob@corp/x") == "file:///home/bob@corp/x"  # no authority: a path
    assert scrub("vault://vault.example/users/bob@corp") == "vault://vault.example/users/bob@corp"
    assert scrub("vault://vault/doc?owner=bob@corp#by@alice") == "vault://vault/doc?owner=REDACTED#REDACTED"
    assert scrub("vault://bob@host:8200/u/a@b") == "vault://REDACTED:REDACTED@host:8200/u/a@b"
    assert scrub("vault://alice@corp.com:pw@vault/doc") == "vault://REDACTED:REDACTED@vault/doc"
    assert scrub("http://u:p@[::1]:8080/x") == "http://REDACTED:REDACTED@[::1]:8080/x"
    # a password and an `@` further on: hidden at the price of the host (docs/privacy.md)
    assert scrub("vault://a:pw@vault/doc?owner=bob@corp") == "vault://REDACTED:REDACTED@corp"
    assert address("http://alice:pa55/w0rd@Vault.Example:8443/mcp") == ("vault.example", 8443)
    assert address("https://[::1]/mcp") == ("::1", 443)
    assert address("http://h:99999/mcp") == ("h", None)
    assert address("stdio") == (None, None)


# -- 3. a `redact` that raises or answers a text with something else ---------------------------


def _raising(value: Any) -> Any:
    raise ValueError(f"cannot redact {value!r}")  # its message holds the very value


def _not_a_string(value: Any) -> Any:
    return {"masked": True}  # a fine answer for captured content; for a text, not a string


REDACTING = {
    "capture_content": True,
    "record_error_messages": True,
    "record_progress_messages": True,
    "raw_resource_uris": True,
    "record_shapes": True,
}
CALLER = "CALLER-TEXT"


@pytest.mark.parametrize("redact", [_raising, _not_a_string], ids=["raises", "returns-a-dict"])
@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_redact_that_fails_is_contained_in_the_privacy_step(transport, redact):
    calls = [
        ("charge", {"card_number": f"{CALLER}-card"}),  # a crash whose message repeats the argument
        ("refuse", {"reason": f"{CALLER}-reason"}),  # a ToolError
        ("report", {}),  # a progress message
        ("echo_meta", {}),  # succeeds
    ]
    from mcpobs._core import privacy

    getattr(privacy, "_warned", set()).clear()  # said once per process: say it again here
    with mcpobs_records() as logs, instrumented({**REDACTING, "redact": redact}) as exported:
        async with AsyncExitStack() as stack:
            server = create_server()
            target: Any = server
            if transport == "http":
                target = stack.enter_context(serve_http(server.streamable_http_app())) + "/mcp"
            async with Client(target) as client:
                await client.list_tools()
                for name, arguments in calls:
                    await client.call_tool(name, arguments)
                with suppress(Exception):
                    await client.read_resource(f"vault://{CALLER}-uri")
        seen = exported.encoded()
        spans = _spans(exported)
        server_calls = sum(
            p.value
            for p in _points(exported, S.SERVER_REQUESTS.name)
            if p.attributes.get(S.MCP_METHOD_NAME) == "tools/call"
        )
    logged = logs.text()
    assert CALLER not in logged, logged
    assert CALLER.encode() not in seen
    said = [r.getMessage() for r in logs.records if "redact " in r.getMessage()]
    kind = "raised ValueError" if redact is _raising else "returned a dict"
    assert said and all(kind in line for line in said), said
    assert len(said) == 1  # once
    if redact is _not_a_string:
        captured = [s.attributes.get(S.GEN_AI_TOOL_CALL_ARGUMENTS) for s in spans]
        assert '{"masked": true}' in captured  # captured content may be any JSON redact returns
    tool_spans = [s for s in spans if s.attributes.get(S.MCP_METHOD_NAME) == "tools/call"]
    assert len(tool_spans) == 2 * len(calls)
    assert all(S.OUTCOME in s.attributes for s in tool_spans), [s.name for s in tool_spans]
    outcomes = sorted(s.attributes[S.OUTCOME] for s in tool_spans if s.kind is SpanKind.SERVER)
    assert outcomes == ["ok", "ok", "server_error", "tool_error"]
    assert server_calls == len(calls)  # each call counted


def _points(exported: Exported, name: str) -> list[Any]:
    data = exported.reader.get_metrics_data()
    found = []
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    found.extend(metric.data.data_points)
    return found


# -- 4. ids, versions, model names and names that are not strings ------------------------------

_MASK = re.compile(r"MASKED-[A-Za-z0-9_-]+")


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return _MASK.sub("***", value)
    return value


def _post(http: Any, url: str, headers: dict[str, str], message: dict[str, Any]) -> Any:
    reply = http.post(url, content=json.dumps(message), headers=headers)
    assert reply.status_code < 500, reply.text
    return reply


def _drive_raw(url: str) -> None:
    """A legacy session by hand: what the SDK's client never sends (string ids, a made-up revision,
    a tool name that is an object), and a declared model in `_meta`."""
    with httpx.Client(timeout=10) as http:
        init = {
            "jsonrpc": "2.0",
            "id": "MASKED-id-init",
            "method": "initialize",
            "params": {
                "protocolVersion": "MASKED-version",
                "capabilities": {},
                "clientInfo": {"name": "MASKED-client", "version": "MASKED-client-version"},
            },
        }
        reply = _post(http, url, RAW_HEADERS, init)
        answered = _body(reply)["result"]["protocolVersion"]
        session = {**RAW_HEADERS, "mcp-session-id": reply.headers["mcp-session-id"], "mcp-protocol-version": answered}
        _post(http, url, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        model = {"name": "MASKED-model", "version": "MASKED-model-version", "provider": "MASKED-provider"}
        _post(
            http,
            url,
            session,
            {
                "jsonrpc": "2.0",
                "id": "MASKED-id-call",
                "method": "tools/call",
                "params": {"name": "echo_meta", "arguments": {}, "_meta": {S.META_MODEL: model}},
            },
        )
        _post(
            http,
            url,
            session,
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": {"x": "MASKED-name"}}},
        )
        _post(
            http,
            url,
            session,
            {"jsonrpc": "2.0", "id": 8, "method": "prompts/get", "params": {"name": ["MASKED-prompt"]}},
        )


def _body(reply: Any) -> Any:
    text = reply.text
    if text.startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1])


@pytest.mark.parametrize("masking", [True, False], ids=["masking-redact", "defaults"])
def test_ids_versions_models_and_names_from_outside_pass_the_privacy_step(masking):
    options: dict[str, Any] = {"redact": _mask} if masking else {}
    with mcpobs_records() as logs, instrumented(options) as exported:
        with serve_http(create_server().streamable_http_app()) as base:
            _drive_raw(base + "/mcp")
        seen = exported.encoded()
        spans = _spans(exported)
    server = [s for s in spans if s.kind is SpanKind.SERVER]
    by_id = {s.attributes.get(S.JSONRPC_REQUEST_ID): s for s in server}
    (initialize,) = [s for s in server if s.attributes.get(S.MCP_METHOD_NAME) == "initialize"]
    (declared,) = [s for s in server if S.GEN_AI_REQUEST_MODEL in s.attributes]
    session_line = [r.getMessage() for r in logs.records if r.name == "mcpobs.session"]
    # a name that is not a string is a caller's value, never a name: recorded nowhere, redact or not
    assert b"MASKED-name" not in seen and b"MASKED-prompt" not in seen
    assert "MASKED-name" not in logs.text()
    nameless = [s for s in server if s.attributes.get(S.JSONRPC_REQUEST_ID) in ("7", "8")]
    assert len(nameless) == 2
    named = {s.attributes.get(S.GEN_AI_TOOL_NAME, s.attributes.get(S.GEN_AI_PROMPT_NAME)) for s in nameless}
    assert named == {S.OTHER}  # the bounded label, never the value
    if masking:
        assert b"MASKED-" not in seen, re.findall(rb"MASKED-[A-Za-z0-9_-]+", seen)
        assert "MASKED-" not in logs.text()
        assert initialize.attributes[S.JSONRPC_REQUEST_ID] == "***"
        assert initialize.attributes[S.SESSION_REQUESTED_VERSION] == "***"
        assert initialize.attributes[S.CLIENT_NAME] == "***"
        assert declared.attributes[S.JSONRPC_REQUEST_ID] == "***"
        assert declared.attributes[S.GEN_AI_REQUEST_MODEL] == "***"
        assert declared.attributes[S.GEN_AI_RESPONSE_MODEL] == "***"
        assert declared.attributes[S.GEN_AI_PROVIDER_NAME] == "***"
        assert session_line and "requested=***" in session_line[0] and "client=***/***" in session_line[0]
    else:  # identifiers a peer chose are recorded by default (docs/privacy.md), bounded
        assert "MASKED-id-init" in by_id and "MASKED-id-call" in by_id
        assert initialize.attributes[S.SESSION_REQUESTED_VERSION] == "MASKED-version"
        assert declared.attributes[S.GEN_AI_REQUEST_MODEL] == "MASKED-model"
