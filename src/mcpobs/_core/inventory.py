"""The inventory: every SDK or framework function mcpobs wraps, and every private attribute it reads.

One row per seam, in one place, each with the releases it is known on and, where a release
moved it, its alternates. A wrapper is built on its row (`Patch.of(row, wrapper)`); a
private read names its row's `attribute`. `tests/test_inventory.py` resolves every row on
the installed versions and names the row that moved. A row that does not resolve is
warned about once; the rest of the instrumentation still works.

Every row is gated to the releases it belongs to (`releases`, a version specifier on its
package): mcp 2.x's seams and mcp 1.x's are rows side by side, and a row whose package is not
installed, or is installed at a release outside its gate, is silent: nothing of it can be in use.
The gates are read from installed distributions' metadata, in one place (`applies`); nothing
else in mcpobs compares SDK versions.

The mcp 1.x line's rows (gated `MCP_1` or `FASTMCP_3`: its server, FastMCP 1 and 3, its client)
sit between the lines `# <sdk1>` and `# </sdk1>`, each section headed by the line folder that
wraps or reads them (`_server/sdk1/`, `_hosts/sdk1/`, `_client/sdk1/`): retiring the line deletes
those blocks with the folders (scripts/check-without-sdk1 does so on a copy; `tests/test_inventory.py`
checks that the blocks hold exactly the 1.x rows).
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import metadata
from typing import Any, Literal

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from mcpobs._core import sdk
from mcpobs._core.guard import logger

MCP_TESTED = ("2.3.0", "2.2.0", "2.1.1", "2.0.1", "1.30.0", "1.24.0")
"""The `mcp` releases every row below is resolved on (the dev pin; the rest of the 2.x line and the
1.x line's two ends in scripts/test-sdk2's and scripts/test-sdk1's venvs; `tests/test_inventory.py`)."""

FASTMCP_TESTED = ("4.2.3", "4.1.7", "3.4.11")
"""The `fastmcp` releases the FastMCP rows are resolved on (4.1.x in a separate venv, see docs/fastmcp.md;
3.4.x beside mcp 1.x in scripts/test-sdk1's)."""

UVICORN_TESTED = ("0.55.0",)
"""The `uvicorn` release its rows (where a stop begins, `_core/stop_points.py`) are resolved on (the dev pin)."""
GRANIAN_TESTED = ("2.8.7",)
"""The `granian` release its row (where a granian worker's stop begins) is resolved on (the dev pin)."""
HYPERCORN_TESTED = ("0.18.0",)
"""The `hypercorn` release its row (where a hypercorn worker's stop begins) is resolved on (the dev pin)."""
UVICORN_WORKER_TESTED = ("0.4.0",)
"""The `uvicorn-worker` release its row (a gunicorn worker about to serve) is resolved on (the dev pin)."""
GUNICORN_TESTED = ("27.0.1",)
"""The `gunicorn` release its row (a worker's kill deadline) is resolved on (the dev pin)."""
FASTMCP_TASKS_TESTED = ("4.1.4",)
"""The `fastmcp-tasks` release its rows are resolved on (scripts/test-tasks): the newest, and the only one
that installs beside a FastMCP 4 (`fastmcp` 4.1.4; it pins `fastmcp-slim` exactly)."""
PYDOCKET_TESTED = ("0.27.2", "0.28.0")
"""The `pydocket` releases its rows (the job a worker runs) are resolved on: 0.28.0 in scripts/test-tasks and
scripts/mcp-venv (pinned there, so a new pydocket cannot change what CI tests), 0.27.2 in the benchmark's venv."""
"""The `hypercorn` release its row (where a hypercorn worker's stop begins) is resolved on (the dev pin)."""

SUPPORTED = {"mcp": ">= 1.24.0, < 3", "fastmcp": ">= 3.4, < 5"}
"""The ranges mcpobs declares: `mcp` is required (`MCPInstrumentor.instrumentation_dependencies`);
`fastmcp` is adapted to when installed."""

_DISTRIBUTIONS = {"mcp": ("mcp",), "fastmcp": ("fastmcp", "fastmcp-slim")}
"""The distributions that install each package (pydantic-ai brings `fastmcp-slim`)."""


def tested(package: str) -> tuple[str, ...]:
    return {
        "mcp": MCP_TESTED,
        "uvicorn": UVICORN_TESTED,
        "granian": GRANIAN_TESTED,
        "hypercorn": HYPERCORN_TESTED,
        "uvicorn-worker": UVICORN_WORKER_TESTED,
        "gunicorn": GUNICORN_TESTED,
        "fastmcp-tasks": FASTMCP_TASKS_TESTED,
        "pydocket": PYDOCKET_TESTED,
    }.get(package, FASTMCP_TESTED)


def untested(package: str, installed: str) -> str | None:
    """The warning for `installed`, a release of `package` outside the series tested here; else None.

    A line tested at its two ends (mcp 1.24 and 1.30) covers the minor series between them: 1.27
    is inside, 1.31 and 1.23 are not. The release suggested is the newest tested one of the
    installed line (a user on mcp 1.x is not told to take 2.x, which their framework may not allow).
    """

    def minor(version: str) -> tuple[int, ...]:
        try:
            return tuple(int(part) for part in version.split(".")[:2])
        except ValueError:
            return ()

    at = minor(installed)
    line = [minor(v) for v in tested(package) if minor(v)[:1] == at[:1]]
    if at and line and min(line) <= at <= max(line):
        return None
    same_line = [v for v in tested(package) if minor(v)[:1] == at[:1]] or list(tested(package))
    suggested = max(same_line, key=lambda v: tuple(int(p) for p in v.split(".") if p.isdigit()))
    return (
        f"mcpobs: {package} {installed} is installed, but mcpobs is tested with {package} "
        f"{', '.join(sorted(tested(package)))} (declared: {package} {SUPPORTED[package]}). "
        f"It may work (a seam it cannot find is named in a warning and left alone); to be sure, "
        f"install a tested release, e.g. pip install '{package}=={suggested}'."
    )


_version_warned: set[str] = set()


def warn_untested() -> None:
    """Warn once per package when the installed `mcp` or `fastmcp` is outside the tested series, or
    a package mcpobs observes (uvicorn, pydocket...) is outside its rows' gate.

    Reads installed distributions' metadata only: nothing is imported.
    """
    from importlib import metadata

    for package, distributions in _DISTRIBUTIONS.items():
        for distribution in distributions:
            try:
                release = metadata.version(distribution)
            except metadata.PackageNotFoundError:
                continue
            message = untested(package, release)
            if message is not None and package not in _version_warned:
                _version_warned.add(package)
                logger.warning("%s", message)
            break
    for package in sorted(_DEFAULT_RELEASES.keys() - _DISTRIBUTIONS.keys()):
        message = outside_gate(package, installed(package))
        if message is not None and package not in _version_warned:
            _version_warned.add(package)
            logger.warning("%s", message)


def outside_gate(package: str, release: Version | None) -> str | None:
    """The warning for `release` of a package mcpobs only observes (a server, a queue), installed
    at a release outside its rows' gate: those rows are left alone, silently but for this line."""
    if release is None or SpecifierSet(_DEFAULT_RELEASES[package]).contains(release, prereleases=True):
        return None
    return (
        f"mcpobs: {package} {release} is installed, but mcpobs is tested with {package} "
        f"{', '.join(tested(package))} and observes it only on {package} {_DEFAULT_RELEASES[package]}: "
        f"what mcpobs records through {package} is not recorded (docs/compatibility.md). "
        f"To have it, install a tested release, e.g. pip install '{package}=={tested(package)[-1]}'."
    )


Kind = Literal["wrap", "read"]

MCP_2 = ">=2.0,<3"
"""The mcp 2.x line's rows (revision 2026-07-28; its middleware chain, `Client`, `mcp_types`), from 2.0.
What moved between 2.0 and 2.3 is gated per row (`MCP_2_2`) or read where it is (docs/compatibility.md)."""
MCP_2_2 = ">=2.2,<3"
"""Rows of mcp 2.2 and later: `stream_within_origin`, where the 2.x client's POST gets its HTTP response."""
FASTMCP_4 = ">=4.1,<5"
"""FastMCP 4's rows (on mcp 2.x)."""
MCP_1 = ">=1.24,<2"
"""The mcp 1.x line's rows (1.24 to 1.30: `ClientSession` over its transport functions, `McpError`, `mcp.types`)."""
FASTMCP_3 = ">=3.4,<4"
"""FastMCP 3's rows (on mcp 1.x)."""
UVICORN = ">=0.30,<1"
"""uvicorn's rows: the releases whose `Server` handles SIGTERM in `handle_exit` and drains in `shutdown`."""
GRANIAN = ">=2.5,<3"
"""granian's rows: the releases whose python workers take SIGTERM through `_signals.set_loop_signals`."""
HYPERCORN = ">=0.16,<1"
"""hypercorn's rows: the releases whose workers learn of their stop by polling `check_multiprocess_shutdown_event`."""
UVICORN_WORKER = ">=0.2,<1"
"""uvicorn-worker's rows: the releases whose `UvicornWorker` runs uvicorn's `Server` under gunicorn's `cfg`."""
GUNICORN = ">=21,<28"
"""gunicorn's rows: the releases whose `Config` holds `graceful_timeout` among its settings."""
FASTMCP_TASKS = ">=4.1,<4.2"
"""fastmcp-tasks' rows (SEP-2663 tasks on FastMCP 4): its internals, none in its `__all__`, so one series."""
PYDOCKET = ">=0.26,<0.29"
"""pydocket's rows: the releases whose `Execution` carries the job's W3C context (`trace_context`)."""
_DEFAULT_RELEASES = {
    "mcp": MCP_2,
    "fastmcp": FASTMCP_4,
    "uvicorn": UVICORN,
    "granian": GRANIAN,
    "hypercorn": HYPERCORN,
    "uvicorn-worker": UVICORN_WORKER,
    "gunicorn": GUNICORN,
    "fastmcp-tasks": FASTMCP_TASKS,
    "pydocket": PYDOCKET,
}


@cache
def installed(package: str) -> Version | None:
    """The installed release of `package` (any of its distributions), or None when none is installed.

    A vendored `mcp` with no distribution metadata counts as the line its modules show (`sdk.LINE`).
    """
    for distribution in _DISTRIBUTIONS.get(package, (package,)):
        try:
            return Version(metadata.version(distribution))
        except (metadata.PackageNotFoundError, InvalidVersion):
            continue
    if package == "mcp":
        return Version(f"{sdk.LINE}.999")
    return None


def applies(seam: Seam) -> bool:
    """Whether the row belongs to what is installed: its package is, at a release inside its gate."""
    release = installed(seam.package)
    return release is not None and SpecifierSet(seam.releases).contains(release, prereleases=True)


@dataclass(frozen=True)
class Seam:
    """One thing mcpobs touches in someone else's code."""

    where: str
    """`module:Qualified.name`: the function wrapped, or the class and the attribute read."""
    kind: Kind
    job: str
    """Why mcpobs touches it (and which mcpobs module does)."""
    known_on: tuple[str, ...]
    alternates: tuple[str, ...] = ()
    """Other `module:Qualified.name` places a release keeps it, tried in order."""
    package: str = "mcp"
    releases: str = MCP_2
    """The releases of `package` the row belongs to (a version specifier): its version gate."""

    # Cached on the row (a frozen row never changes): read rows are read on every request.
    @cached_property
    def module(self) -> str:
        return self.where.split(":", 1)[0]

    @cached_property
    def name(self) -> str:
        return self.where.split(":", 1)[1]

    @cached_property
    def attribute(self) -> str:
        """The last name of the row (the private attribute a read row names)."""
        return self.where.rsplit(".", 1)[-1] if "." in self.name else self.name


INVENTORY: list[Seam] = []
"""Every row, in the order below."""


def _row(
    where: str,
    kind: Kind,
    job: str,
    *,
    package: str = "mcp",
    releases: str | None = None,
    alternates: tuple[str, ...] = (),
) -> Seam:
    releases = releases or _DEFAULT_RELEASES[package]
    gate = SpecifierSet(releases)
    known_on = tuple(f"{package} {v}" for v in tested(package) if gate.contains(v))
    seam = Seam(where, kind, job, known_on, alternates, package, releases)
    INVENTORY.append(seam)
    return seam


def wrap(where: str, job: str, **kw: Any) -> Seam:
    return _row(where, "wrap", job, **kw)


def read(where: str, job: str, **kw: Any) -> Seam:
    return _row(where, "read", job, **kw)


# -- server setup (_server/setup.py) --------------------------------------------------------------

SERVER_INIT = wrap("mcp.server.lowlevel.server:Server.__init__", "every lowlevel Server gets ServerMiddleware")
RUNNER_INIT = wrap(
    "mcp.server.runner:ServerRunner.__init__", "adopt a server built before instrument(); a session starts"
)
SERVER_HTTP_APP = wrap("mcp.server.lowlevel.server:Server.streamable_http_app", "the HTTP transport boundary")
OTEL_MIDDLEWARE = read(
    "mcp.server._otel:OpenTelemetryMiddleware", "the SDK's own span middleware, replaced by ServerMiddleware"
)
HANDLER_OWNER = read(
    "mcp.server.lowlevel.server:Server.get_request_handler",
    "the tools/call handler's bound `__self__` says which framework object owns a lowlevel Server",
)
BOUNDARY_SECURITY = read(
    "mcp.server.request_state:RequestStateBoundary._security", "the round codec (_server/rounds.py); no setter"
)

# -- MCPServer (_hosts/mcpserver.py) ---------------------------------------------------------------

MCPSERVER_INIT = wrap("mcp.server.mcpserver.server:MCPServer.__init__", "observed bus; names; round codec")
MCPSERVER_STDIO = wrap("mcp.server.mcpserver.server:MCPServer.run_stdio_async", "stdio: the transport labels (pipe)")
TOOL_MANAGER_CALL = wrap(
    "mcp.server.mcpserver.tools.tool_manager:ToolManager.call_tool", "why a tool failed, before it is flattened"
)
MCPSERVER_LOWLEVEL = read("mcp.server.mcpserver.server:MCPServer._lowlevel_server", "no public accessor")
MCPSERVER_TOOLS = read("mcp.server.mcpserver.server:MCPServer._tool_manager", "registered tool names")
MCPSERVER_PROMPTS = read("mcp.server.mcpserver.server:MCPServer._prompt_manager", "registered prompt names")
MCPSERVER_RESOURCES = read("mcp.server.mcpserver.server:MCPServer._resource_manager", "resource count")

# -- the lowlevel Server (_hosts/host.py) -----------------------------------------------------------

STDIO_SERVER = wrap("mcp.server.stdio:stdio_server", "stdio: the transport labels of a lowlevel Server served on it")

# -- FastMCP 4 (_hosts/fastmcp.py) -----------------------------------------------------------------

_FM = {"package": "fastmcp"}
FASTMCP_INIT = wrap("fastmcp.server.server:FastMCP.__init__", "names; round codec", **_FM)
FASTMCP_HTTP_APP = wrap(
    "fastmcp.server.mixins.transport:TransportMixin.http_app",
    "its Streamable HTTP app: the transport boundary",
    alternates=("fastmcp.server.server:FastMCP.http_app",),
    **_FM,
)
FASTMCP_STDIO = wrap(
    "fastmcp.server.mixins.transport:TransportMixin.run_stdio_async",
    "stdio: the transport labels",
    alternates=("fastmcp.server.server:FastMCP.run_stdio_async",),
    **_FM,
)
FASTMCP_CALL_TOOL = wrap("fastmcp.server.server:FastMCP.call_tool", "why a tool failed, before it is flattened", **_FM)
FASTMCP_PROGRESS = wrap("fastmcp.server.context:Context.report_progress", "progress spans", **_FM)
FASTMCP_MIDDLEWARE = wrap(
    "fastmcp.server.low_level:FastMCPServerMiddleware.__call__", "one SERVER span: FastMCP's suppressed", **_FM
)
FASTMCP_SUPPRESS = read(
    "fastmcp.telemetry:suppress_fastmcp_telemetry", "FastMCP's documented switch for its own spans", **_FM
)
FASTMCP_REF = read("fastmcp.server.low_level:LowLevelServer._fastmcp_ref", "the FastMCP a LowLevelServer serves", **_FM)
FASTMCP_LOWLEVEL = read("fastmcp.server.server:FastMCP._mcp_server", "its LowLevelServer (no public accessor)", **_FM)
FASTMCP_LOCAL_PROVIDER = read("fastmcp.server.server:FastMCP._local_provider", "its own components", **_FM)
FASTMCP_COMPONENTS = read(
    "fastmcp.server.providers.local_provider.local_provider:LocalProvider._components",
    "registered tool, prompt and resource names, live",
    **_FM,
)

# -- fastmcp-tasks on FastMCP 4 (_hosts/fastmcp_tasks.py) and the pydocket job (_tasks/worker.py) -------
#
# fastmcp-tasks imports these by name from one module into another: each row names the module
# whose global the caller looks up at call time (`creation` calls `add_component_to_docket`,
# `components` calls `reentrant_task_fn`, `handlers` calls `mark_cancelled`).

_FT = {"package": "fastmcp-tasks"}
FASTMCP_TASKS_ENQUEUE = wrap(
    "fastmcp_tasks.creation:add_component_to_docket",
    "a task (or its next leg) enqueued: the PRODUCER `create` span, current while pydocket injects it into the job",
    **_FT,
)
FASTMCP_TASKS_LEG = wrap(
    "fastmcp_tasks.components:reentrant_task_fn",
    "each task tool's callable as docket registers it (at the lifespan): one CONSUMER `process` span per leg",
    **_FT,
)
FASTMCP_TASKS_CANCEL = wrap(
    "fastmcp_tasks.handlers:mark_cancelled", "a task its client cancelled (tasks/cancel took effect)", **_FT
)
FASTMCP_TASKS_REQUESTS = tuple(
    wrap(f"fastmcp_tasks.extension:{name}", f"{method}: the task it is about (hashed) on its SERVER span", **_FT)
    for name, method in (("tasks_get", "tasks/get"), ("tasks_update", "tasks/update"), ("tasks_cancel", "tasks/cancel"))
)
FASTMCP_TASKS_KEY = read("fastmcp_tasks.keys:parse_task_key", "a task's id and tool, from its docket key", **_FT)
FASTMCP_TASKS_LEG_NUMBER = read("fastmcp_tasks.keys:leg_number_from_key", "which leg a docket key runs", **_FT)
FASTMCP_TASKS_PREFIX = read(
    "fastmcp_tasks.keys:task_redis_prefix", "where the task's creation time and docket key are kept", **_FT
)
FASTMCP_GET_SERVER = read(
    "fastmcp.server.dependencies:get_server",
    "the server a task runs for, in the worker too (its release: the task metrics' label)",
    **_FM,
)
PYDOCKET_TRACERS = (
    read(
        "docket.docket:tracer",
        "pydocket's own spans (`docket.add`: the raw task id), off while instrumented",
        package="pydocket",
    ),
    read(
        "docket.worker:tracer",
        "pydocket's own worker spans (the raw task id), off while instrumented",
        package="pydocket",
    ),
)
PYDOCKET_EXECUTION = read(
    "docket.dependencies:current_execution",
    "the job a worker runs: its W3C context (the create span), its key and when it was scheduled",
    package="pydocket",
)

# <sdk1>
# -- mcp 1.x server (_server/sdk1/; a server's own requests: _client/sdk1/asks.py) --------------------
#
# 1.x has no middleware chain: a request is observed where the lowlevel `Server` dispatches it, and
# its outcome where its responder answers (in the same task), before the answer is sent.

_S1 = {"releases": MCP_1}
SERVER1_HANDLE_REQUEST = wrap(
    "mcp.server.lowlevel.server:Server._handle_request", "one SERVER span per request (_server/sdk1/dispatch.py)", **_S1
)
SERVER1_RECEIVED_REQUEST = wrap(
    "mcp.server.session:ServerSession._received_request",
    "initialize's span, and a request refused before initialization (_server/sdk1/dispatch.py)",
    **_S1,
)
SERVER1_RESPOND = wrap(
    "mcp.shared.session:RequestResponder.respond",
    "the outcome read, and the verdict stamped, before the answer is sent (_server/sdk1/dispatch.py)",
    **_S1,
)
SERVER1_TOOL_ERROR_RESULT = wrap(
    "mcp.server.lowlevel.server:Server._make_error_result",
    "why a lowlevel tools/call failed, before its handler flattens it (_server/sdk1/tool_failures.py)",
    **_S1,
)
SERVER1_VALIDATE_REQUEST = wrap(
    "mcp.types:ClientRequest.model_validate",
    "a request the session refuses before any handler: unknown method, malformed params (_server/sdk1/refusals.py)",
    **_S1,
)
SERVER1_VALIDATE_NOTIFICATION = wrap(
    "mcp.types:ClientNotification.model_validate", "a cancel's reason (_server/sdk1/cancels.py)", **_S1
)
SERVER1_CANCEL = wrap(
    "mcp.shared.session:RequestResponder.cancel",
    "the request a cancel names: its reason (_server/sdk1/cancels.py)",
    **_S1,
)
SERVER1_REQUEST_HANDLERS = read(
    "mcp.server.lowlevel.server:Server.request_handlers",
    "which framework owns a lowlevel Server (_hosts/sdk1/fastmcp1.py)",
    **_S1,
)
SERVER1_TOOL_CACHE = read(
    "mcp.server.lowlevel.server:Server._tool_cache",
    "the tools a lowlevel Server listed itself (_hosts/sdk1/lowlevel.py)",
    **_S1,
)
SERVER1_RUN = wrap(
    "mcp.server.lowlevel.server:Server.run",
    "one session: its server, id, transport and duration (_server/sdk1/sessions.py)",
    **_S1,
)
SERVER1_INITIALIZATION_STATE = read(
    "mcp.server.session:ServerSession._initialization_state", "a session that never initialized is no session", **_S1
)
SERVER1_ASKS = wrap(
    "mcp.server.session:ServerSession.send_request",
    "a server's own request to its client: its CLIENT span and `_meta` (_client/sdk1/asks.py)",
    **_S1,
)
SERVER1_NEXT_REQUEST_ID = read(
    "mcp.server.session:ServerSession._request_id",
    "the id a server's own request goes out with (_client/sdk1/asks.py)",
    **_S1,
)
SERVER1_NOTIFY = wrap(
    "mcp.server.session:ServerSession.send_notification",
    "resources/updated and list_changed deliveries (_server/sdk1/notifications.py)",
    **_S1,
)
SERVER1_PROGRESS = wrap(
    "mcp.server.session:ServerSession.send_progress_notification", "progress spans (_server/sdk1/progress.py)", **_S1
)
SERVER1_STDIO = wrap("mcp.server.stdio:stdio_server", "stdio: the transport labels of a server served on it", **_S1)
SERVER1_HTTP_CONNECT = wrap(
    "mcp.server.streamable_http:StreamableHTTPServerTransport.connect",
    "a Streamable HTTP session's id and labels, from its start (_server/sdk1/http.py)",
    **_S1,
)
SERVER1_HTTP_HANDLE = wrap(
    "mcp.server.streamable_http_manager:StreamableHTTPSessionManager.handle_request",
    "the transport boundary of an app mcpobs did not build (a lowlevel Server's) (_server/sdk1/http.py)",
    **_S1,
)
SERVER1_SSE_CONNECT = wrap(
    "mcp.server.sse:SseServerTransport.connect_sse", "an SSE session's labels (_server/sdk1/http.py)", **_S1
)
SERVER1_SSE_POST = wrap(
    "mcp.server.sse:SseServerTransport.handle_post_message",
    "the boundary of an SSE message POST mcpobs did not build the app of (_server/sdk1/http.py)",
    **_S1,
)
SERVER1_RUN_TASK = wrap(
    "mcp.server.experimental.request_context:Experimental.run_task",
    "a task's create span, and its work's process span (_server/sdk1/tasks.py)",
    **_S1,
)
_QUEUED = "a request a task's work queues for its client carries the work's context (_server/sdk1/tasks.py)"
SERVER1_BUILD_ELICIT = wrap("mcp.server.session:ServerSession._build_elicit_form_request", _QUEUED, **_S1)
SERVER1_BUILD_ELICIT_URL = wrap("mcp.server.session:ServerSession._build_elicit_url_request", _QUEUED, **_S1)
SERVER1_BUILD_SAMPLING = wrap("mcp.server.session:ServerSession._build_create_message_request", _QUEUED, **_S1)

# -- FastMCP 1, `mcp.server.fastmcp` on mcp 1.x (_hosts/sdk1/fastmcp1.py) --------------------------

_F1 = "mcp.server.fastmcp.server:FastMCP"
FASTMCP1_STDIO = wrap(f"{_F1}.run_stdio_async", "stdio: the transport labels", **_S1)
FASTMCP1_HTTP_APP = wrap(f"{_F1}.streamable_http_app", "its Streamable HTTP app: the transport boundary", **_S1)
FASTMCP1_SSE_APP = wrap(f"{_F1}.sse_app", "its SSE app: the transport boundary", **_S1)
FASTMCP1_TOOL_CALL = wrap(
    "mcp.server.fastmcp.tools.tool_manager:ToolManager.call_tool", "why a tool failed, before it is flattened", **_S1
)
FASTMCP1_PROGRESS = wrap(
    "mcp.server.fastmcp.server:Context.report_progress", "progress spans, also when the caller asked for none", **_S1
)
FASTMCP1_LOWLEVEL = read(f"{_F1}._mcp_server", "its lowlevel Server (no public accessor)", **_S1)
FASTMCP1_TOOLS = read(f"{_F1}._tool_manager", "registered tool names", **_S1)
FASTMCP1_PROMPTS = read(f"{_F1}._prompt_manager", "registered prompt names", **_S1)
FASTMCP1_RESOURCES = read(f"{_F1}._resource_manager", "resource count", **_S1)

# -- FastMCP 3, `fastmcp` 3.x on mcp 1.x (_hosts/sdk1/fastmcp3.py) ----------------------------------

_FM3 = {"package": "fastmcp", "releases": FASTMCP_3}
FASTMCP3_RUN = wrap(
    "fastmcp.server.low_level:LowLevelServer.run",
    "one session (FastMCP 3 never calls Server.run): its server, id, transport and duration",
    **_FM3,
)
FASTMCP3_HTTP_APP = wrap(
    "fastmcp.server.mixins.transport:TransportMixin.http_app",
    "its Streamable HTTP and SSE apps: the transport boundary",
    **_FM3,
)
FASTMCP3_STDIO = wrap(
    "fastmcp.server.mixins.transport:TransportMixin.run_stdio_async", "stdio: the transport labels", **_FM3
)
FASTMCP3_CALL_TOOL = wrap(
    "fastmcp.server.server:FastMCP.call_tool", "why a tool failed, before it is flattened", **_FM3
)
FASTMCP3_PROGRESS = wrap(
    "fastmcp.server.context:Context.report_progress", "progress spans, also when the caller asked for none", **_FM3
)
FASTMCP3_SERVER_TRACER = wrap(
    "fastmcp.server.telemetry:get_tracer",
    "one SERVER span per request: FastMCP's own tracer is a no-op inside requests mcpobs records",
    **_FM3,
)
FASTMCP3_SAMPLING_TRACER = wrap(
    "fastmcp.server.sampling.run:get_tracer",
    "FastMCP's sampling spans: mcpobs's CLIENT span of the request is the one (no-op inside requests)",
    **_FM3,
)
FASTMCP3_TASK_SUBMIT = wrap(
    "fastmcp.server.tasks.routing:submit_to_docket",
    "a task's create span, current while docket adds the job (_hosts/sdk1/fastmcp3_tasks.py)",
    **_FM3,
)
FASTMCP3_TASK_RUN = wrap(
    "fastmcp.tools.function_tool:FunctionTool.register_with_docket",
    "the tool's function docket runs, run as a task's leg: its process span (_hosts/sdk1/fastmcp3_tasks.py)",
    **_FM3,
)
FASTMCP3_TASK_SUBSCRIBER = wrap(
    "fastmcp.server.tasks.notifications:ensure_subscriber_running",
    "the session's relay loop started in no task's context (_hosts/sdk1/fastmcp3_tasks.py)",
    **_FM3,
)
FASTMCP3_TASK_RELAY = wrap(
    "fastmcp.server.tasks.elicitation:relay_elicitation",
    "an in-task elicitation relayed under its own task (_hosts/sdk1/fastmcp3_tasks.py)",
    **_FM3,
)
FASTMCP3_REF = read(
    "fastmcp.server.low_level:LowLevelServer._fastmcp_ref", "the FastMCP a LowLevelServer serves", **_FM3
)
FASTMCP3_LOWLEVEL = read("fastmcp.server.server:FastMCP._mcp_server", "its LowLevelServer (no public accessor)", **_FM3)
FASTMCP3_LOCAL_PROVIDER = read("fastmcp.server.server:FastMCP._local_provider", "its own components", **_FM3)
FASTMCP3_COMPONENTS = read(
    "fastmcp.server.providers.local_provider.local_provider:LocalProvider._components",
    "registered tool, prompt and resource names, live",
    **_FM3,
)
# </sdk1>

# -- inside a request (_server/) -------------------------------------------------------------------

REPORT_PROGRESS = wrap("mcp.server.session:ServerSession.report_progress", "progress spans (_server/progress.py)")
SESSION_NOTIFY = wrap("mcp.server.session:ServerSession.send_notification", "delivery spans (_server/subscriptions.py)")
LISTEN_HANDLER = wrap("mcp.server.subscriptions:ListenHandler.__call__", "listen streams (_server/subscriptions.py)")
DISPATCH_NOTIFICATION = wrap(
    "mcp.shared.jsonrpc_dispatcher:JSONRPCDispatcher._dispatch_notification", "cancel reasons (_server/cancellation)"
)
SERVE_LOOP = wrap("mcp.server.streamable_http_manager:serve_loop", "a legacy HTTP session's labels")
SESSION_ASKS = wrap(
    "mcp.server.session:ServerSession.send_request", "the session of a request the server asks (_server/sessions.py)"
)
CONNECTION_ASKS = wrap(
    "mcp.server.connection:Connection.send_raw_request",
    "the session of a request the server asks on its standalone stream (_server/sessions.py)",
)
STREAM_CLASSIFY = wrap(
    "mcp.server.runner:classify_inbound_request", "stdio: envelope and version refusals (_server/transport.py)"
)
DISPATCHER_INIT = wrap(
    "mcp.shared.jsonrpc_dispatcher:JSONRPCDispatcher.__init__",
    "stdio: a line that is not JSON-RPC (_server/transport.py)",
)
HTTP_ASGI_APP = wrap(
    "mcp.server.streamable_http_manager:StreamableHTTPASGIApp.__call__", "warn of an app built before instrument()"
)
LIFESPAN_END = wrap(
    "mcp.server.streamable_http_manager:StreamableHTTPSessionManager.run",
    "the end of an HTTP app's lifespan: flush before a worker stops (_server/lifespan.py)",
)
# -- where a stop begins (_core/stop_points.py): any process uvicorn serves, MCP server or not ------

_UV = {"package": "uvicorn"}
UVICORN_EXIT = wrap(
    "uvicorn.server:Server.handle_exit",
    "SIGTERM (uvicorn, its --workers, gunicorn's uvicorn worker): export now, then end what still runs",
    **_UV,
)
UVICORN_SHUTDOWN = wrap(
    "uvicorn.server:Server.shutdown", "drained: export what ended since, before the worker re-raises SIGTERM", **_UV
)
GRANIAN_WORKER_SIGNALS = wrap(
    "granian._signals:set_loop_signals",
    "a granian worker's SIGTERM: export now, then end what still runs, inside --workers-kill-timeout",
    package="granian",
)
GUNICORN_UVICORN_WORKER = wrap(
    "uvicorn_worker._workers:UvicornWorker.run",
    "a gunicorn worker about to serve: gunicorn SIGKILLs it --graceful-timeout after SIGTERM (its kill deadline)",
    package="uvicorn-worker",
)
GUNICORN_SETTINGS = read(
    "gunicorn.config:Config.settings",
    "its graceful_timeout: the seconds gunicorn gives a worker between SIGTERM and SIGKILL",
    package="gunicorn",
)
GRANIAN_DURATION = read(
    "granian.cli:Duration",
    "granian's own reading of --workers-kill-timeout (a worker's kill deadline)",
    package="granian",
)
HYPERCORN_WORKER_STOP = wrap(
    "hypercorn.asyncio.run:check_multiprocess_shutdown_event",
    "a hypercorn worker told to stop (its main process's SIGTERM, passed as an event): export now, then end what"
    " still runs; on Python 3.12+ hypercorn then waits on open connections past --graceful-timeout",
    package="hypercorn",
)
SCHEMA_LISTING = wrap(
    "mcp.server._streamable_http_modern:_tool_input_schema",
    "the SDK's own tools/list behind Mcp-Param validation: not a client request",
)
SESSION_CONNECTION = read(
    "mcp.server.session:ServerSession._connection", "session id, initialized (_server/sessions.py, middleware.py)"
)
SESSION_OUTBOUND = read("mcp.server.session:ServerSession._request_outbound", "the dispatch context (_server/state.py)")
RUNNER_OUTBOUND_INNER = read(
    "mcp.server.runner:_NoServerRequestsDispatchContext._inner", "the dispatch context behind the runner's wrapper"
)
JSONRPC_PROGRESS_TOKEN = read(
    "mcp.shared.jsonrpc_dispatcher:_JSONRPCDispatchContext._progress_token", "did the caller ask for progress"
)
MODERN_PROGRESS_TOKEN = read(
    "mcp.server._streamable_http_modern:_SingleExchangeDispatchContext.progress_token",
    "did the caller ask for progress (2026-07-28 HTTP)",
)
DIRECT_ON_PROGRESS = read(
    "mcp.shared.direct_dispatcher:_DirectDispatchContext._on_progress", "did the caller ask for progress (memory)"
)
DISPATCHER_IN_FLIGHT = read(
    "mcp.shared.jsonrpc_dispatcher:JSONRPCDispatcher._in_flight", "the request a cancel names (_server/cancellation)"
)

# -- client (_client/) -----------------------------------------------------------------------------

_SESSION = "mcp.client.session:ClientSession"
_CLIENT = "mcp.client.client:Client"
_JSONRPC = "mcp.shared.jsonrpc_dispatcher"

SESSION_SEND_REQUEST = wrap(f"{_SESSION}.send_request", "client spans (_client/seams.py)")
SESSION_SEND_DISCOVER = wrap(f"{_SESSION}.send_discover", "client spans (_client/seams.py)")
SESSION_SEND_NOTIFICATION = wrap(f"{_SESSION}.send_notification", "client spans (_client/seams.py)")
SESSION_CALL_TOOL = wrap(f"{_SESSION}.call_tool", "client spans (_client/seams.py)")
SESSION_INITIALIZE = wrap(f"{_SESSION}.initialize", "client spans (_client/seams.py)")
SESSION_INPUT_REQUEST = wrap(f"{_SESSION}.dispatch_input_request", "client spans (_client/seams.py)")
CLIENT_BUILD_SESSION = wrap(
    f"{_CLIENT}._build_session", "the session a Client builds: its labels, its start (_client/seams.py, lifetime.py)"
)
CLIENT_LISTEN = wrap(f"{_CLIENT}.listen", "listen streams (_client/seams.py)")
CLIENT_CALL_TOOL = wrap(f"{_CLIENT}.call_tool", "client operations (_client/seams.py)")
CLIENT_GET_PROMPT = wrap(f"{_CLIENT}.get_prompt", "client operations (_client/seams.py)")
CLIENT_READ_RESOURCE = wrap(f"{_CLIENT}.read_resource", "client operations (_client/seams.py)")
CLIENT_ENTER = wrap(f"{_CLIENT}.__aenter__", "the session line once connected (_client/lifetime.py, describe.py)")
CLIENT_EXIT = wrap(f"{_CLIENT}.__aexit__", "session duration, its end (_client/lifetime.py)")
CLIENT_NEGOTIATE = wrap("mcp.client.client:negotiate_auto", "the server/discover probe (_client/negotiation.py)")
SDK_SEND_SPAN = wrap(f"{_JSONRPC}:otel_span", "the SDK's own send span, made a pass-through (_client/side_spans.py)")
SDK_INJECT = wrap(
    f"{_JSONRPC}:inject_trace_context", "the host's baggage kept out of `_meta` unless send_baggage (_client/wire.py)"
)
DISPATCHER_SEND = wrap(f"{_JSONRPC}:JSONRPCDispatcher.send_raw_request", "traceparent header (_client/seams.py)")
DISPATCHER_NOTIFY = wrap(f"{_JSONRPC}:JSONRPCDispatcher.notify", "notifications/cancelled carries the trace")
_HTTP_TRANSPORT = "mcp.client.streamable_http:StreamableHTTPTransport"
HTTP_TRANSPORT_INIT = wrap(f"{_HTTP_TRANSPORT}.__init__", "the transports a Client builds (_client/http.py)")
HTTP_SESSION_ID = wrap(
    f"{_HTTP_TRANSPORT}._maybe_extract_session_id_from_response", "a legacy session's id (_client/http.py)"
)
TOOL_LISTING = wrap(
    f"{_SESSION}._absorb_tool_listing", "every listing, a cache hit too: its release and schemas (_client/release.py)"
)
CLIENT_INFO = read(f"{_SESSION}._client_info", "the client's own version, a release label (_client/release.py)")
HTTP_POST = wrap(
    f"{_HTTP_TRANSPORT}._handle_post_request",
    "what a request's POST raised: an outage, not a cancellation (_client/http.py)",
)
HTTP_STATUS = wrap(
    "mcp.client.streamable_http:stream_within_origin",
    "a request's HTTP error status (_client/http.py); 2.0 and 2.1 stream on the HTTP client itself",
    releases=MCP_2_2,
)
SESSION_INIT = wrap(f"{_SESSION}.__init__", "a bare ClientSession: the transport it was built on (_client/bare.py)")
SESSION_ENTER = wrap(f"{_SESSION}.__aenter__", "a bare ClientSession's duration (_client/bare.py)")
SESSION_EXIT = wrap(f"{_SESSION}.__aexit__", "a bare ClientSession's duration (_client/bare.py)")
STDIO_SPAWN = wrap(
    "mcp.client.stdio:_create_platform_compatible_process",
    "the command line stdio_client spawns: a bare ClientSession's server (_client/bare.py)",
)
MEMORY_CONNECT = wrap(
    "mcp.client._memory:InMemoryTransport._connect", "an in-memory bare ClientSession's server (_client/bare.py)"
)
MEMORY_TRANSPORT_SERVER = read("mcp.client._memory:InMemoryTransport._server", "its server (_client/bare.py)")
SESSION_INITIALIZED = read(
    f"{_SESSION}._initialize_result", "an initialize the session already made (_client/seams.py)"
)

# -- fastmcp.Client (_client/fastmcp.py) -----------------------------------------------------------

FASTMCP_CLIENT_TRACER = wrap(
    "fastmcp.client.telemetry:get_tracer", "one CLIENT span per call: FastMCP's own suppressed", **_FM
)
FASTMCP_CLIENT_NEGOTIATE = wrap(
    "fastmcp.client.client:Client._negotiate", "where the session's server is (its transport); its start", **_FM
)
FASTMCP_CLIENT_RUNNER = wrap("fastmcp.client.client:Client._session_runner", "the session's end: its duration", **_FM)
FASTMCP_CLIENT_STATE = read("fastmcp.client.client:Client._session_state", "the session a Client holds", **_FM)

CLIENT_SESSION = read(f"{_CLIENT}._session", "session duration (_client/lifetime.py, describe.py)")
CLIENT_OUTPUT_SCHEMAS = read(f"{_SESSION}._tool_output_schemas", "the tool's listed schema (_client/spans.py)")

# <sdk1>
# -- mcp 1.x client (_client/sdk1/: session.py, transports.py, answers.py) -------------------------

_1 = {"releases": MCP_1}
_HTTP1 = "mcp.client.streamable_http:StreamableHTTPTransport"

SESSION1_SEND_REQUEST = wrap(f"{_SESSION}.send_request", "client spans; trace context in `_meta`", **_1)
SESSION1_SEND_NOTIFICATION = wrap(f"{_SESSION}.send_notification", "notification spans; `_meta`", **_1)
SESSION1_CALL_TOOL = wrap(f"{_SESSION}.call_tool", "the call's span covers output validation", **_1)
SESSION1_INITIALIZE = wrap(f"{_SESSION}.initialize", "the handshake's span covers the version check", **_1)
SESSION1_RECEIVED_REQUEST = wrap(
    f"{_SESSION}._received_request", "the client answering its server (_client/sdk1/answers.py)", **_1
)
SESSION1_SEND_RESPONSE = wrap(f"{_SESSION}._send_response", "what the client answered its server", **_1)
SESSION1_INIT = wrap(f"{_SESSION}.__init__", "the transport a session was built on (_client/bare.py)", **_1)
SESSION1_ENTER = wrap(f"{_SESSION}.__aenter__", "a session's duration (_client/bare.py)", **_1)
SESSION1_EXIT = wrap(f"{_SESSION}.__aexit__", "a session's duration (_client/bare.py)", **_1)
SESSION1_REQUEST_ID = read(
    "mcp.shared.session:BaseSession._request_id", "the id the next request goes out with (no public accessor)", **_1
)
SESSION1_OUTPUT_SCHEMAS = read(f"{_SESSION}._tool_output_schemas", "what the session listed (_client/names.py)", **_1)
SESSION1_CLIENT_INFO = read(f"{_SESSION}._client_info", "the client's own version (_client/release.py)", **_1)
STDIO1_SPAWN = wrap(
    "mcp.client.stdio:_create_platform_compatible_process", "the command line stdio_client spawns", **_1
)
MEMORY1_CONNECT = wrap(
    "mcp.shared.memory:create_connected_server_and_client_session", "an in-memory session's server", **_1
)
SSE1_CONNECT = wrap(
    "mcp.client.sse:sse_within_origin",
    "the URL and HTTP version sse_client connects to",
    alternates=("mcp.client.sse:aconnect_sse",),
    **_1,
)
SSE1_POST = wrap("mcp.client.sse:request_within_origin", "traceparent header on a message POST", releases=">=1.30,<2")
HTTP1_TRANSPORT_INIT = wrap(f"{_HTTP1}.__init__", "a host's Streamable HTTP transport: its URL", **_1)
HTTP1_SESSION_ID = wrap(
    f"{_HTTP1}._maybe_extract_session_id_from_response", "the session id and the HTTP version spoken", **_1
)
HTTP1_POST = wrap(
    f"{_HTTP1}._handle_post_request", "a request's POST, in the transport's task: its failure and status", **_1
)
HTTP1_HEADERS = wrap(f"{_HTTP1}._prepare_headers", "traceparent header on the POST being made", **_1)
HTTP1_SSE_RESPONSE = wrap(
    f"{_HTTP1}._handle_sse_response", "a POST's event stream: did it end without the answer (the server gone)", **_1
)
HTTP1_SSE_EVENT = wrap(f"{_HTTP1}._handle_sse_event", "an event of that stream: was it the answer", **_1)
HTTP1_POST_WRITER = wrap(
    f"{_HTTP1}.post_writer", "the streams a transport serves: its session, when built in another task", **_1
)
SESSION1_WRITE_STREAM = read(
    "mcp.shared.session:BaseSession._write_stream", "the stream a session writes to: its transport", **_1
)
HTTP1_TERMINATED = wrap(f"{_HTTP1}._send_session_terminated_error", "a 404: the session is gone", **_1)

# -- fastmcp.Client 3.x (_client/sdk1/fastmcp3.py) -------------------------------------------------

FASTMCP3_CLIENT_TRACER = wrap(
    "fastmcp.client.telemetry:get_tracer", "one CLIENT span per call: FastMCP's own made no-op", **_FM3
)
FASTMCP3_MEMORY = wrap(
    "fastmcp.client.transports.memory:FastMCPTransport.connect_session", "an in-memory session's server", **_FM3
)
# </sdk1>

# -- resolving -------------------------------------------------------------------------------------

_warned: set[str] = set()


def _locate(place: str) -> tuple[Any, str]:
    module, _, name = place.partition(":")
    owner: Any = importlib.import_module(module)
    *path, attribute = name.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, attribute


def resolve(seam: Seam) -> tuple[Any, str] | None:
    """Where a wrap row's function is now (`owner`, `attribute`), trying its alternates; None if moved.

    A row of a framework that is not installed, or of another release line (its gate), resolves
    to None without a warning.
    """
    if not applies(seam):
        return None
    failure: Exception | None = None
    for place in (seam.where, *seam.alternates):
        try:
            owner, attribute = _locate(place)
            getattr(owner, attribute)
        except (ImportError, AttributeError) as exc:
            failure = failure or exc
            continue
        return owner, attribute
    if seam.where not in _warned:
        _warned.add(seam.where)
        logger.warning(
            "mcpobs: cannot instrument %s (%s); this %s version may have moved it. "
            "The rest of the instrumentation still works.",
            seam.where,
            failure,
            seam.package,
        )
    return None


def defined(seam: Seam) -> bool:
    """Whether the installed release still has what the row names (used by the inventory test).

    An instance attribute is found on the class (a slot, a class attribute, a dataclass field)
    or as an assignment `self.<attribute> =` in the source of the class or one of its bases.
    """
    if seam.kind == "wrap" or "." not in seam.name:
        return resolve(seam) is not None
    for place in (seam.where, *seam.alternates):
        try:
            owner, attribute = _locate(place)
        except (ImportError, AttributeError):
            continue
        if _has(owner, attribute):
            return True
    return False


def _has(cls: Any, attribute: str) -> bool:
    if hasattr(cls, attribute):
        return True
    assigned = re.compile(rf"self\.{re.escape(attribute)}\s*(:[^=\n]+)?=")
    for klass in getattr(cls, "__mro__", ()):
        if attribute in getattr(klass, "__annotations__", {}):
            return True
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        if assigned.search(source):
            return True
    return False
