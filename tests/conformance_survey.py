"""Run one conversation on a transport, and check each row of the conventions' requirement table.

`observe(transport)` drives the shop through a real `Client` (in process, over Streamable HTTP
on loopback, over stdio in a subprocess; handshake-era and 2026-07-28) and returns every MCP
span and metric point both sides recorded. `CHECKS` holds, for each (signal, item) of
`semconv.REQUIREMENTS`, a function saying whether that telemetry is what the row says mcpobs
emits. Names are taken from the `opentelemetry-semantic-conventions` package, not from the
registry, so the same checks run against an older mcpobs (see `main`).

    python tests/conformance_survey.py [--table path/to/semconv.py]

prints, per row, whether it conforms, deviates (as the row documents) or is missing, and the
totals: the before/after counts of issue 13.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent))

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.attributes import jsonrpc_attributes as jsonrpc
from opentelemetry.semconv._incubating.attributes import mcp_attributes as mcp
from opentelemetry.semconv._incubating.attributes import rpc_attributes as rpc
from opentelemetry.semconv._incubating.metrics import mcp_metrics
from opentelemetry.semconv.attributes import client_attributes as client
from opentelemetry.semconv.attributes import error_attributes as error
from opentelemetry.semconv.attributes import network_attributes as network
from opentelemetry.semconv.attributes import server_attributes as server
from shop import BROKEN_URI
from stdio_server import metric_points

TRANSPORTS = ("memory", "http", "http-legacy", "stdio", "stdio-legacy")
BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0]
"""The conventions' bucket boundaries, spelled from the spec text (not read from the registry)."""
SERVER_SPAN = "server span"
CLIENT_SPAN = "client span"
UNKNOWN_METHOD = "shop/unknown"


@dataclass
class Span:
    name: str
    kind: str
    status: str
    description: str | None
    attributes: dict[str, Any]
    span_id: str
    parent_id: str | None

    @property
    def method(self) -> Any:
        return self.attributes.get(mcp.MCP_METHOD_NAME)

    @property
    def tool(self) -> Any:
        return self.attributes.get(gen_ai.GEN_AI_TOOL_NAME)


@dataclass
class Observed:
    transport: str
    spans: list[Span] = field(default_factory=list)
    points: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    errors: dict[str, tuple[int, str]] = field(default_factory=dict)
    """What the client was told: broken read and unknown method -> (code, message)."""

    def side(self, signal: str) -> list[Span]:
        """MCP spans of one side; on the client, not the raw dispatcher call the SDK's client never makes."""
        kind = "SERVER" if signal == SERVER_SPAN else "CLIENT"
        return [
            s
            for s in self.spans
            if s.kind == kind and s.method is not None and (kind == "SERVER" or s.method != "_OTHER")
        ]

    @property
    def http(self) -> bool:
        return self.transport.startswith("http")

    @property
    def stdio(self) -> bool:
        return self.transport.startswith("stdio")

    @property
    def legacy(self) -> bool:
        return self.transport.endswith("legacy")


# -- the conversation ----------------------------------------------------------------------


async def _converse(client: Any, observed: Observed) -> None:
    from mcp.shared.exceptions import MCPError

    await client.list_tools()
    await client.call_tool("get_order_status", {"order_id": "O-1873"})
    await client.call_tool("get_order_status", {"order_id": "O-404"})  # the tool raises ToolError
    await client.call_tool("quote_refund", {"order_id": "O-1", "amount_cents": -5})  # the tool crashes
    await client.call_tool("invented_tool", {})  # not registered, not listed
    await client.list_prompts()  # a client names the prompts it listed
    await client.get_prompt("refund_reply", {"customer": "Ada"})
    await client.read_resource("shop://catalog")
    try:
        await client.read_resource(BROKEN_URI)  # the handler crashes
    except MCPError as exc:
        observed.errors["broken"] = (exc.error.code, exc.error.message)
    from transports import send_raw

    try:
        await send_raw(client, UNKNOWN_METHOD, {})
    except MCPError as exc:
        observed.errors["unknown"] = (exc.error.code, exc.error.message)


def _span(s: Any) -> Span:
    return Span(
        name=s.name,
        kind=s.kind.name,
        status=s.status.status_code.name,
        description=s.status.description,
        attributes=dict(s.attributes or {}),
        span_id=f"{s.context.span_id:016x}",
        parent_id=f"{s.parent.span_id:016x}" if s.parent else None,
    )


async def observe(transport: str) -> Observed:
    """One conversation on `transport`, with content capture on, and all it recorded."""
    from mcp import Client
    from shop import add_broken_resource, create_server
    from transports import read_spans, serve_http, stdio_params

    import mcpobs
    from mcpobs.testing import capture

    observed = Observed(transport)
    telemetry = capture(capture_content=True)
    try:
        with ExitStack() as stack:
            mode = "legacy" if transport.endswith("legacy") else "auto"
            files: tuple[Path, Path] | None = None
            if transport.startswith("stdio"):
                folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
                files = (folder / "spans.jsonl", folder / "metrics.json")
                env = {
                    "MCPOBS_TEST_METRICS": str(files[1]),
                    "MCPOBS_TEST_BROKEN": "1",
                    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
                }
                target: Any = stdio_params(files[0], env=env)
            else:
                shop = create_server()
                add_broken_resource(shop)
                target = shop
                if transport.startswith("http"):
                    target = stack.enter_context(serve_http(shop.streamable_http_app())) + "/mcp"
            async with Client(target, mode=mode) as connected:
                await _converse(connected, observed)
            await anyio.sleep(0.2)  # the server ends its spans a moment after answering
            observed.spans = [_span(s) for s in telemetry.spans()]
            observed.points = metric_points(telemetry.reader)
            if files is not None:
                for _ in range(100):  # the subprocess writes its metrics as it exits
                    if files[1].exists():
                        break
                    await anyio.sleep(0.05)
                for raw in read_spans(files[0]):
                    observed.spans.append(
                        Span(
                            raw["name"],
                            raw["kind"],
                            raw["status"],
                            raw.get("description"),
                            raw["attributes"],
                            raw["span_id"],
                            raw["parent_id"],
                        )
                    )
                if files[1].exists():
                    for name, points in json.loads(files[1].read_text()).items():
                        observed.points.setdefault(name, []).extend(points)
    finally:
        mcpobs.uninstrument()
        telemetry.tracer_provider.shutdown()
        telemetry.meter_provider.shutdown()
    return observed


# -- the checks ----------------------------------------------------------------------------

Check = Callable[[Observed, str], bool]
"""(what one transport recorded, signal) -> whether it is what the table's row says."""


def _all(items: Iterable[bool]) -> bool:
    items = list(items)
    return bool(items) and all(items)


def _calls(o: Observed, signal: str, tool: str | None = None) -> list[Span]:
    return [s for s in o.side(signal) if s.method == "tools/call" and (tool is None or s.tool == tool)]


def _crash_read(o: Observed, signal: str) -> list[Span]:
    return [s for s in o.side(signal) if s.attributes.get(mcp.MCP_RESOURCE_URI) == BROKEN_URI]


def _unknown(o: Observed, signal: str) -> list[Span]:
    """The request for a method nobody handles (on the client: sent raw, so in process it has no span)."""
    kind = "SERVER" if signal == SERVER_SPAN else "CLIENT"
    return [s for s in o.spans if s.kind == kind and s.method in (UNKNOWN_METHOD, "_OTHER")]


def _requests(o: Observed, signal: str) -> list[Span]:
    return [s for s in o.side(signal) if not str(s.method).startswith("notifications/")]


def span_name(o: Observed, signal: str) -> bool:
    def ok(s: Span) -> bool:
        target = s.attributes.get(gen_ai.GEN_AI_TOOL_NAME) or s.attributes.get(gen_ai.GEN_AI_PROMPT_NAME)
        return "://" not in s.name and s.name in {s.method, f"{s.method} {target}"}

    return _all(ok(s) for s in o.side(signal)) and _all(
        s.name == "tools/call" for s in _calls(o, signal, "invented_tool")
    )


def span_kind(o: Observed, signal: str) -> bool:
    return len(_calls(o, signal, "get_order_status")) == 2


def span_status(o: Observed, signal: str) -> bool:
    """ERROR exactly when error.type is set; the description never the error.type and, by default, never
    the error's message (private by default: the exception's type says what failed)."""
    spans = o.side(signal)
    consistent = all((s.status == "ERROR") == (error.ERROR_TYPE in s.attributes) for s in spans)
    described = all(
        s.description != s.attributes.get(error.ERROR_TYPE) and len(s.description or "") <= 256
        for s in spans
        if s.status == "ERROR"
    )
    message = o.errors.get("broken", (0, ""))[1]
    told = _all(bool(message) and message not in (s.description or "") for s in _crash_read(o, signal))
    if signal == SERVER_SPAN:  # a tool that crashed: the exception's type, as in its exception event
        told = (
            told
            and _all(s.description == "RuntimeError" for s in _calls(o, signal, "quote_refund"))
            and _all(  # an isError result carries no JSON-RPC error; its text is content
                s.description is None for s in _calls(o, signal, "get_order_status") if s.status == "ERROR"
            )
        )
    return consistent and described and told


def propagation(o: Observed, signal: str) -> bool:
    clients = {s.span_id for s in _calls(o, CLIENT_SPAN)}
    return _all(s.parent_id in clients for s in _calls(o, SERVER_SPAN))


def method_name(o: Observed, signal: str) -> bool:
    kind = "SERVER" if signal == SERVER_SPAN else "CLIENT"
    spans = [s for s in o.spans if s.kind == kind]
    return _all(mcp.MCP_METHOD_NAME in s.attributes for s in spans)


def error_type(o: Observed, signal: str) -> bool:
    ok = _all(
        error.ERROR_TYPE not in s.attributes for s in _calls(o, signal, "get_order_status") if s.status != "ERROR"
    )
    tool_errors = [
        s for s in _calls(o, signal) if s.tool in ("get_order_status", "quote_refund") and s.status == "ERROR"
    ]
    tool = len(tool_errors) == 2 and all(s.attributes[error.ERROR_TYPE] == "tool_error" for s in tool_errors)
    code = str(o.errors.get("broken", ("?",))[0])
    crash = _all(s.attributes.get(error.ERROR_TYPE) == code for s in _crash_read(o, signal))
    if signal == SERVER_SPAN:  # the caller's mistake is no server error (#404)
        mistake = _all(error.ERROR_TYPE not in s.attributes for s in _unknown(o, signal))
    else:
        mistake = all(s.attributes.get(error.ERROR_TYPE) == "-32601" for s in _unknown(o, signal))
    return ok and tool and crash and mistake


def prompt_name(o: Observed, signal: str) -> bool:
    prompts = [s for s in o.side(signal) if s.method == "prompts/get"]
    return _all(s.attributes.get(gen_ai.GEN_AI_PROMPT_NAME) == "refund_reply" for s in prompts)


def tool_name(o: Observed, signal: str) -> bool:
    return len(_calls(o, signal)) == 4 and all(s.tool for s in _calls(o, signal))


def request_id(o: Observed, signal: str) -> bool:
    notes = [s for s in o.side(signal) if str(s.method).startswith("notifications/")]
    return _all(s.attributes.get(jsonrpc.JSONRPC_REQUEST_ID) for s in _requests(o, signal)) and not any(
        jsonrpc.JSONRPC_REQUEST_ID in s.attributes for s in notes
    )


def resource_uri(o: Observed, signal: str) -> bool:
    reads = [s for s in o.side(signal) if s.method == "resources/read"]
    return len(reads) == 2 and all(s.attributes.get(mcp.MCP_RESOURCE_URI) for s in reads)


def status_code(o: Observed, signal: str) -> bool:
    unknown = [s.attributes.get(rpc.RPC_RESPONSE_STATUS_CODE) == "-32601" for s in _unknown(o, signal)]
    mistake = _all(unknown) if signal == SERVER_SPAN else all(unknown)
    code = str(o.errors.get("broken", ("?",))[0])
    crash = _all(s.attributes.get(rpc.RPC_RESPONSE_STATUS_CODE) == code for s in _crash_read(o, signal))
    ok = not any(rpc.RPC_RESPONSE_STATUS_CODE in s.attributes for s in _calls(o, signal, "get_order_status"))
    return mistake and crash and ok


def client_address(o: Observed, signal: str) -> bool:
    spans = _requests(o, signal)
    if not o.http:
        return not any(client.CLIENT_ADDRESS in s.attributes for s in spans)
    return _all(s.attributes.get(client.CLIENT_ADDRESS) == "127.0.0.1" for s in spans)


def client_port(o: Observed, signal: str) -> bool:
    spans = _requests(o, signal)
    if not o.http:
        return not any(client.CLIENT_PORT in s.attributes for s in spans)
    return _all(isinstance(s.attributes.get(client.CLIENT_PORT), int) for s in spans)


def operation_name(o: Observed, signal: str) -> bool:
    calls = _calls(o, signal)
    others = [s for s in o.side(signal) if s.method != "tools/call"]
    return _all(s.attributes.get(gen_ai.GEN_AI_OPERATION_NAME) == "execute_tool" for s in calls) and not any(
        gen_ai.GEN_AI_OPERATION_NAME in s.attributes for s in others
    )


def jsonrpc_version(o: Observed, signal: str) -> bool:
    return not any(jsonrpc.JSONRPC_PROTOCOL_VERSION in s.attributes for s in o.side(signal))


def protocol_version(o: Observed, signal: str) -> bool:
    return _all(s.attributes.get(mcp.MCP_PROTOCOL_VERSION) for s in o.side(signal))


def session_id(o: Observed, signal: str) -> bool:
    spans = [s for s in _requests(o, signal) if s.method != "initialize"]
    if not (o.http and o.legacy):  # stdio and 2026-07-28 connections have no session id
        return not any(mcp.MCP_SESSION_ID in s.attributes for s in spans)
    ids = {s.attributes.get(mcp.MCP_SESSION_ID) for s in spans}
    other = {
        s.attributes.get(mcp.MCP_SESSION_ID)
        for s in _requests(o, CLIENT_SPAN if signal == SERVER_SPAN else SERVER_SPAN)
    }
    return len(ids) == 1 and None not in ids and ids <= other  # one session, the same id on both sides


def _network(o: Observed, spans: list[Span], key: str, http: Any, stdio: Any) -> bool:
    if o.http:
        return _all(s.attributes.get(key) == http for s in spans)
    if o.stdio:
        return _all(s.attributes.get(key) == stdio for s in spans)
    return not any(key in s.attributes for s in spans)


def protocol_name(o: Observed, signal: str) -> bool:
    return _network(o, _calls(o, signal), network.NETWORK_PROTOCOL_NAME, "http", None)


def http_version(o: Observed, signal: str) -> bool:
    return _network(o, _calls(o, signal), network.NETWORK_PROTOCOL_VERSION, "1.1", None)


def transport(o: Observed, signal: str) -> bool:
    return _network(o, _calls(o, signal), network.NETWORK_TRANSPORT, "tcp", "pipe")


def server_address(o: Observed, signal: str) -> bool:
    return _network(o, _calls(o, signal), server.SERVER_ADDRESS, "127.0.0.1", None)


def server_port(o: Observed, signal: str) -> bool:
    spans = _calls(o, signal)
    if o.http:
        return _all(isinstance(s.attributes.get(server.SERVER_PORT), int) for s in spans)
    return not any(server.SERVER_PORT in s.attributes for s in spans)


def arguments(o: Observed, signal: str) -> bool:
    spans = _calls(o, signal, "get_order_status")
    sent = [json.loads(s.attributes.get(gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS, "null")) for s in spans]
    return sorted(map(str, sent)) == [str({"order_id": "O-1873"}), str({"order_id": "O-404"})]


def result(o: Observed, signal: str) -> bool:
    spans = [s for s in _calls(o, signal, "get_order_status") if s.status != "ERROR"]
    return _all("O-1873" in s.attributes.get(gen_ai.GEN_AI_TOOL_CALL_RESULT, "") for s in spans)


# -- metrics


def _metric(o: Observed, signal: str) -> list[dict[str, Any]]:
    return [p["attributes"] for p in o.points.get(signal, [])]


def _applies(o: Observed, signal: str) -> bool:
    """A server session exists only on a handshake connection (stdio or HTTP, legacy)."""
    return not (signal == mcp_metrics.MCP_SERVER_SESSION_DURATION and not o.legacy)


def instrument(o: Observed, signal: str) -> bool:
    points = o.points.get(signal, [])
    if not _applies(o, signal):
        return not points
    return _all(p["unit"] == "s" and p["bounds"] == BUCKETS for p in points)


def _labels(o: Observed, signal: str, pick: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    return [a for a in _metric(o, signal) if pick(a)]


def m_method(o: Observed, signal: str) -> bool:
    return _all(mcp.MCP_METHOD_NAME in a for a in _metric(o, signal))


def m_error_type(o: Observed, signal: str) -> bool:
    if "session" in signal:  # every session here ends normally
        return _applies(o, signal) == bool(_metric(o, signal)) and not any(
            error.ERROR_TYPE in a for a in _metric(o, signal)
        )
    tools = _labels(o, signal, lambda a: a.get(gen_ai.GEN_AI_TOOL_NAME) in ("get_order_status", "quote_refund"))
    errors = {a.get(error.ERROR_TYPE) for a in tools}
    reads = _labels(o, signal, lambda a: a.get(mcp.MCP_METHOD_NAME) == "resources/read")
    expected = str(o.errors.get("broken", ("?",))[0])
    return errors == {None, "tool_error"} and {a.get(error.ERROR_TYPE) for a in reads} == {None, expected}


def m_prompt(o: Observed, signal: str) -> bool:
    prompts = _labels(o, signal, lambda a: a.get(mcp.MCP_METHOD_NAME) == "prompts/get")
    return _all(a.get(gen_ai.GEN_AI_PROMPT_NAME) == "refund_reply" for a in prompts)


def m_tool(o: Observed, signal: str) -> bool:
    calls = _labels(o, signal, lambda a: a.get(mcp.MCP_METHOD_NAME) == "tools/call")
    names = {a.get(gen_ai.GEN_AI_TOOL_NAME) for a in calls}
    return names == {"get_order_status", "quote_refund", "_OTHER"}


def m_status_code(o: Observed, signal: str) -> bool:
    coded = {a[rpc.RPC_RESPONSE_STATUS_CODE] for a in _labels(o, signal, lambda a: rpc.RPC_RESPONSE_STATUS_CODE in a)}
    expected = {str(o.errors.get("broken", ("?",))[0])}
    if "server" in signal:  # the raw request is no `ClientSession` request: the client does not count it
        expected.add("-32601")
    return coded == expected


def m_operation(o: Observed, signal: str) -> bool:
    metric = _metric(o, signal)
    return _all(
        (a.get(gen_ai.GEN_AI_OPERATION_NAME) == "execute_tool") == (a.get(mcp.MCP_METHOD_NAME) == "tools/call")
        for a in metric
    ) and any(gen_ai.GEN_AI_OPERATION_NAME in a for a in metric)


def m_jsonrpc_version(o: Observed, signal: str) -> bool:
    return not any(jsonrpc.JSONRPC_PROTOCOL_VERSION in a for a in _metric(o, signal))


def m_protocol_version(o: Observed, signal: str) -> bool:
    metric = _metric(o, signal)
    return (not _applies(o, signal) and not metric) or _all(mcp.MCP_PROTOCOL_VERSION in a for a in metric)


def _m_network(o: Observed, signal: str, key: str, http: Any, stdio: Any) -> bool:
    metric = _metric(o, signal)
    if not _applies(o, signal):
        return not metric
    if "operation" in signal:
        metric = [a for a in metric if a.get(mcp.MCP_METHOD_NAME) == "tools/call"]
    if o.http:
        return _all((a.get(key) == http) if http is not int else isinstance(a.get(key), int) for a in metric)
    if o.stdio and stdio is not None:
        return _all(a.get(key) == stdio for a in metric)
    return bool(metric) and not any(key in a for a in metric)


def m_protocol_name(o: Observed, signal: str) -> bool:
    return _m_network(o, signal, network.NETWORK_PROTOCOL_NAME, "http", None)


def m_http_version(o: Observed, signal: str) -> bool:
    return _m_network(o, signal, network.NETWORK_PROTOCOL_VERSION, "1.1", None)


def m_transport(o: Observed, signal: str) -> bool:
    return _m_network(o, signal, network.NETWORK_TRANSPORT, "tcp", "pipe")


def m_server_address(o: Observed, signal: str) -> bool:
    return _m_network(o, signal, server.SERVER_ADDRESS, "127.0.0.1", None)


def m_server_port(o: Observed, signal: str) -> bool:
    return _m_network(o, signal, server.SERVER_PORT, int, None)


def m_resource_uri(o: Observed, signal: str) -> bool:
    return not any(mcp.MCP_RESOURCE_URI in a for a in _metric(o, signal))


SPAN_CHECKS: dict[str, Check] = {
    "span name": span_name,
    "span kind": span_kind,
    "span status": span_status,
    "context propagation": propagation,
    mcp.MCP_METHOD_NAME: method_name,
    error.ERROR_TYPE: error_type,
    gen_ai.GEN_AI_PROMPT_NAME: prompt_name,
    gen_ai.GEN_AI_TOOL_NAME: tool_name,
    jsonrpc.JSONRPC_REQUEST_ID: request_id,
    mcp.MCP_RESOURCE_URI: resource_uri,
    rpc.RPC_RESPONSE_STATUS_CODE: status_code,
    client.CLIENT_ADDRESS: client_address,
    client.CLIENT_PORT: client_port,
    gen_ai.GEN_AI_OPERATION_NAME: operation_name,
    jsonrpc.JSONRPC_PROTOCOL_VERSION: jsonrpc_version,
    mcp.MCP_PROTOCOL_VERSION: protocol_version,
    mcp.MCP_SESSION_ID: session_id,
    network.NETWORK_PROTOCOL_NAME: protocol_name,
    network.NETWORK_PROTOCOL_VERSION: http_version,
    network.NETWORK_TRANSPORT: transport,
    server.SERVER_ADDRESS: server_address,
    server.SERVER_PORT: server_port,
    gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS: arguments,
    gen_ai.GEN_AI_TOOL_CALL_RESULT: result,
}

METRIC_CHECKS: dict[str, Check] = {
    "instrument": instrument,
    mcp.MCP_METHOD_NAME: m_method,
    error.ERROR_TYPE: m_error_type,
    gen_ai.GEN_AI_PROMPT_NAME: m_prompt,
    gen_ai.GEN_AI_TOOL_NAME: m_tool,
    rpc.RPC_RESPONSE_STATUS_CODE: m_status_code,
    gen_ai.GEN_AI_OPERATION_NAME: m_operation,
    jsonrpc.JSONRPC_PROTOCOL_VERSION: m_jsonrpc_version,
    mcp.MCP_PROTOCOL_VERSION: m_protocol_version,
    network.NETWORK_PROTOCOL_NAME: m_protocol_name,
    network.NETWORK_PROTOCOL_VERSION: m_http_version,
    network.NETWORK_TRANSPORT: m_transport,
    server.SERVER_ADDRESS: m_server_address,
    server.SERVER_PORT: m_server_port,
    mcp.MCP_RESOURCE_URI: m_resource_uri,
}


def check_for(signal: str, item: str) -> Check:
    checks = SPAN_CHECKS if signal in (SERVER_SPAN, CLIENT_SPAN) else METRIC_CHECKS
    return checks[item]


def verdicts(rows: Iterable[Any], observed: list[Observed]) -> list[tuple[Any, str, list[str]]]:
    """Per row: conforms, deviates (documented, and so emitted) or missing; and the transports that failed."""
    out = []
    for row in rows:
        check = check_for(row.signal, row.item)
        failed = [o.transport for o in observed if not check(o, row.signal)]
        verdict = "missing" if failed else ("deviates" if row.deviation else "conforms")
        out.append((row, verdict, failed))
    return out


def _load_table(path: str | None) -> Any:
    if path is None:
        from mcpobs import semconv

        return semconv.REQUIREMENTS
    import importlib.util

    spec = importlib.util.spec_from_file_location("_requirement_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.REQUIREMENTS


def main(argv: list[str]) -> None:
    table = _load_table(argv[argv.index("--table") + 1] if "--table" in argv else None)
    observed = [anyio.run(observe, t) for t in TRANSPORTS]
    import mcpobs

    print(f"mcpobs from {Path(mcpobs.__file__).parent}")
    counts: dict[str, int] = {}
    for row, verdict, failed in verdicts(table, observed):
        counts[verdict] = counts.get(verdict, 0) + 1
        print(f"{verdict:9} {row.signal:32} {row.item:28} {','.join(failed)}")
    print(counts)


if __name__ == "__main__":
    os.environ.setdefault("OTEL_SDK_DISABLED", "false")
    main(sys.argv[1:])
