"""The tools a release offers, from its URL or its `module:attribute`: the latter listed without running
it and without its telemetry.

`contract snapshot`, `diff` and `replay` need the tools a release offers. Importing its module in
this process would run whatever the module runs when imported: a `mcp.run(...)` at module level
starts serving and the command never returns; an `mcpobs.instrument()` there exports the
listing's own spans (`server/discover`, `tools/list`) and metrics to whatever OTEL_* endpoint is
set, which in a CI job with production's service name is fake traffic in production's service.

So the module is imported, and its tools listed, in a child process:

- OpenTelemetry is off there: ``OTEL_SDK_DISABLED=true`` (every SDK provider, the module's own
  too, hands out no-op tracers and meters; `instrument()` configures nothing), every exporter
  ``none``, no ``OTEL_EXPORTER_*`` variable, and the import and listing run under
  `suppress_instrumentation()`. Nothing leaves the child.
- Serving is refused: `anyio.run` and `asyncio.run` (where the SDK's and FastMCP's `run` end)
  raise instead of running. The server the module had built is listed all the same, and one
  note on stderr names the line to put under ``if __name__ == "__main__":``.
- It has `BUDGET_S` seconds: a module that blocks some other way (its own loop, a socket) is
  stopped, with its process group, and one line says so.
- The module is looked up where this process would look it up (its `sys.path`). What it prints
  goes to the child's stderr; the answer comes back on stdout as JSON.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import signal
import subprocess
import sys
import traceback
from typing import Any, cast

from mcpobs._cli import CommandError
from mcpobs._cli.contract_cost import costed
from mcpobs._cli.render import printable
from mcpobs._core.contract import contract_fingerprint, schema_fingerprint, wire_tool

BUDGET_S = 60.0
"""How long importing a candidate and listing its tools may take."""
QUIET = {
    "OTEL_SDK_DISABLED": "true",
    "OTEL_TRACES_EXPORTER": "none",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
}
"""The child's OpenTelemetry settings (every ``OTEL_EXPORTER_*`` variable is dropped besides)."""
GUARD = 'if __name__ == "__main__":'
CLOSED_BY = "inputSchemasClosedBy"
"""A snapshot's key naming the framework that closed every input schema (`listing.closes_inputs`)."""


def listed(target: str) -> dict[str, Any]:
    """The tools of the server `target` names (``module:attribute``), listed in a child process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_")} | QUIET
    env["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)  # found where this process finds it
    child = subprocess.Popen(
        [sys.executable, "-m", __name__, target],  # this module, run as the child
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: stopped whole, whatever the module started
    )
    try:
        out, err = child.communicate(timeout=BUDGET_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise CommandError(
            f"{target}: importing it and listing its tools took more than {BUDGET_S:g} s (in a child process, "
            f"telemetry off): does its module serve or wait when imported? Put that under `{GUARD}`"
        ) from None
    answer = _answer(out)
    if answer is None:
        said = err.decode(errors="replace").strip().splitlines()
        raise CommandError(
            f"{target}: the child process importing it exited with status {child.returncode}"
            + (f": {printable(said[-1])}" if said else "")
        )
    if "error" in answer:
        raise CommandError(printable(answer["error"], 1000))
    if answer.get("note"):
        print(f"mcpobs: note: {printable(answer['note'], 1000)}", file=sys.stderr)
    return cast(dict[str, Any], answer["snapshot"])


def _answer(out: bytes) -> dict[str, Any] | None:
    lines = out.decode(errors="replace").strip().splitlines()
    try:
        answer: object = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    return cast(dict[str, Any], answer) if isinstance(answer, dict) else None


# -- in this process (a URL; and, in the child, the module) -------------------------------------


async def snapshot(target: Any) -> dict[str, Any]:
    """The tools a server offers: `target` is a URL, a server, or `module:attribute` naming one (imported
    here: the command line lists a module's server in a child process, `listed`)."""
    from mcpobs._cli.listing import closes_inputs, list_tools

    source: Any = loaded(target) if isinstance(target, str) and "://" not in target else target
    tools = [wire_tool(t) for t in await list_tools(source)]
    for tool in tools:
        tool["schemaFingerprint"] = schema_fingerprint(tool.get("inputSchema"), tool.get("outputSchema"))
        tool["contractFingerprint"] = contract_fingerprint(tool)
    closed_by = closes_inputs(source)
    return costed(tools) | ({CLOSED_BY: closed_by} if closed_by else {})


def built(module: Any, attribute: str) -> Any:
    """The server `attribute` names in `module` (dotted), called first when it is a factory."""
    value: Any = module
    for part in attribute.split("."):
        value = getattr(value, part)
    return value() if callable(value) and not hasattr(value, "middleware") else value


def check_target(target: str) -> None:
    """A `CommandError` for what is no module:attribute at all, before any process is started."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CommandError(
            f"{target!r} is neither a snapshot file nor a server: name a server as module:attribute "
            "(e.g. shop.server:mcp, looked up from the current directory) or give its URL (http://...)"
        )


def loaded(target: str) -> Any:
    """The server `target` (module:attribute) names, imported in this process; a `CommandError` when it cannot be."""
    check_target(target)
    module_name, _, attribute = target.partition(":")
    try:
        return built(importlib.import_module(module_name), attribute)
    except ModuleNotFoundError as exc:
        raise CommandError(
            f"cannot import {exc.name or module_name!r} (for {target}): run from the folder that holds it, or put it on PYTHONPATH"
        ) from exc
    except AttributeError as exc:
        raise CommandError(f"{target}: module {module_name!r} has no {attribute!r}") from exc
    except Exception as exc:
        raise CommandError(f"{target}: importing or building the server failed: {reason(exc)}") from exc


def reason(exc: BaseException) -> str:
    """The innermost cause of `exc` in a few words (task groups wrap connection errors in groups)."""
    inner = _first_leaf(exc)
    return f"{type(inner).__name__}: {inner}" if str(inner) else type(inner).__name__


def _first_leaf(exc: BaseException) -> BaseException:
    inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
    return _first_leaf(inner[0]) if issubclass(type(exc), BaseExceptionGroup) and inner else exc


# -- in the child ------------------------------------------------------------------------------


class _Served(BaseException):
    """Raised where the module would start serving: not an `Exception`, so no handler of its own swallows it."""

    def __init__(self, server: Any, where: str) -> None:
        super().__init__(where)
        self.server = server
        self.where = where


def _refuse_serving(module_name: str, attribute: str) -> None:
    """`anyio.run` and `asyncio.run` raise `_Served`, carrying the server the module has built by then."""
    import asyncio

    import anyio

    resolving = False

    def refuse(*args: Any, **kwargs: Any) -> Any:
        nonlocal resolving
        for given in (*args, *kwargs.values()):
            if inspect.iscoroutine(given):
                given.close()  # never awaited: say nothing about it
        module = sys.modules.get(module_name)
        server = None
        if module is not None and not resolving:  # a factory that serves is not called twice
            resolving = True
            with contextlib.suppress(Exception):
                server = built(module, attribute)
        raise _Served(server, _where(module))

    anyio.run = refuse
    asyncio.run = refuse


def _where(module: Any) -> str:
    """The module's line that started serving, as `file:line (code)`."""
    path = getattr(module, "__file__", None)
    for frame in reversed(traceback.extract_stack()):
        if path and frame.filename == path:
            code = (frame.line or "").split("  #")[0].strip()
            return f"{os.path.basename(path)}:{frame.lineno} ({code})"
    return f"a call in {getattr(module, '__name__', 'its module')}"


def _listed(target: str) -> dict[str, Any]:
    import anyio
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    module_name, _, attribute = target.partition(":")
    run = anyio.run
    _refuse_serving(module_name, attribute)
    note = None
    with suppress_instrumentation():
        try:
            server = loaded(target)
        except _Served as served:
            if served.server is None:
                return {
                    "error": f"{target}: its module starts serving when imported, at {served.where}, before "
                    f"{attribute} can be listed: put that call under `{GUARD}`"
                }
            server = served.server
            note = (
                f"{module_name} starts serving when imported, at {served.where}: it was not run (the server it "
                f"had built was listed). Put that call under `{GUARD}` so the module can be imported."
            )
        except CommandError as error:
            return {"error": str(error)}
        try:
            listing = run(snapshot, server)
        except Exception as exc:
            return {"error": f"could not list the tools of the server {target}: {reason(exc)}"}
    return {"snapshot": listing, "note": note}


def _main() -> None:
    answer = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the module prints goes to stderr, not into the answer
    try:
        result = _listed(sys.argv[1])
    except BaseException as exc:  # the module's own doing (a SystemExit at import, say): said, not a traceback
        result = {"error": f"{sys.argv[1]}: importing it failed: {type(exc).__name__}: {printable(exc)}"}
    answer.write(json.dumps(result) + "\n")
    answer.flush()
    os._exit(0)  # threads the module started, and its exit handlers, are not waited for


if __name__ == "__main__":
    _main()
