"""What this process's sessions listed from each server: names, input schemas, required prompt arguments.

A framework that opens a session per call (llama-index does) lists in one session and calls in
the next: the catalog is kept per server, so a later session's calls to that server are named
and judged from what any earlier one listed. A server is where its sessions connect: a URL, a
stdio command line, an in-process server object. A session whose server is not known keeps a
catalog of its own.

Bounded three ways: `MAX_SERVERS` servers, `MAX_PER_SERVER` names of each kind per server and
`MAX_TOTAL` names in all; past a bound a name is not learned (it is then `_OTHER`, and no
verdict is drawn from its absence: `judge` only speaks for a listing it holds completely).

`judge` is the client's own verdict on a failed call when the server sent none: a tool or
prompt name the complete listing does not hold is `discovery`; arguments the listed input
schema refuses, or a listed required prompt argument left out, are `arguments`. Anything else
(a crash the server hid behind an `isError`, say) is left as the reply said.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Mapping
from typing import Any, cast

from mcpobs import semconv as S
from mcpobs._core import sdk
from mcpobs._core.guard import report
from mcpobs._core.outcome import Classification
from mcpobs.semconv import Boundary, Outcome

MAX_SERVERS = 64
MAX_PER_SERVER = 4096
MAX_TOTAL = 16384


class ServerCatalog:
    """One server's tools (name -> listed input schema) and prompts (name -> required arguments).

    Also what a call needs that its session may never have listed (a host that opens a session per
    call and lists in another: langchain-mcp-adapters' default): each tool as last listed, replaced
    by its (schema, contract) fingerprints when first called, and the release the listing came from.
    """

    __slots__ = ("__weakref__", "listed", "prompts", "prompts_complete", "release", "sizes", "tools", "tools_complete")

    def __init__(self) -> None:
        self.sizes: Any = None
        """Its listings' fingerprints and costs (`catalog_size.ListingSizes`), made on the first."""
        self.tools: dict[str, object] = {}
        self.listed: dict[str, Any] = {}
        """name -> the tool as last listed, or its fingerprints once called (`memory.fingerprints`);
        the same names as `tools`, so within the same bounds."""
        self.release: str | None = None
        """The bounded release (`mcpobs.catalog.release`) of the last listing that said one."""
        self.prompts: dict[str, frozenset[str]] = {}
        self.tools_complete = False
        """A listing's last page (no `nextCursor`) was seen and every name in it was kept."""
        self.prompts_complete = False


_by_key: dict[Hashable, ServerCatalog] = {}
_by_object: weakref.WeakKeyDictionary[Any, ServerCatalog] = weakref.WeakKeyDictionary()
_total = 0


def for_server(key: object) -> ServerCatalog | None:
    """The catalog shared by every session to the server `key` names (None past `MAX_SERVERS`).

    `key`: a string or tuple (a URL, a stdio command line), or an object (an in-process server,
    held weakly).
    """
    table: Any = _by_key if isinstance(key, str | tuple) else _by_object
    try:
        found = table.get(key)
    except TypeError:  # unhashable, or an object that takes no weak reference
        return None
    if found is None:
        if len(_by_key) + len(_by_object) >= MAX_SERVERS:
            return None
        found = ServerCatalog()
        try:
            table[key] = found
        except TypeError:
            return None
    return found


def server_key(server: object) -> object:
    """What identifies a server a session connects to: its URL, its stdio command line, or itself."""
    if isinstance(server, str):
        return server
    command = getattr(server, "command", None)
    if isinstance(command, str):  # StdioServerParameters (or a framework's stdio transport)
        args = getattr(server, "args", None) or ()
        return ("stdio", command, *(a for a in args if isinstance(a, str)))
    return server


def reset() -> None:
    """Forget every server (`uninstrument()`: the next instrumentation starts afresh)."""
    global _total
    _by_key.clear()
    _by_object.clear()
    _total = 0


def _room(catalog: ServerCatalog, held: Mapping[str, object]) -> bool:
    return len(held) < MAX_PER_SERVER and _total < MAX_TOTAL


def learn_tools(catalog: ServerCatalog, result: Any) -> None:
    """A tools/list page: each tool's name and input schema."""
    global _total
    tools = catalog.tools
    complete = True
    for tool in getattr(result, "tools", None) or ():
        name = getattr(tool, "name", None)
        if not isinstance(name, str):
            continue
        if name not in tools:
            if not _room(catalog, tools):
                complete = False
                continue
            _total += 1
        tools[name] = getattr(tool, sdk.INPUT_SCHEMA, None)
        catalog.listed[name] = tool
    if getattr(result, sdk.NEXT_CURSOR, None) is None:
        catalog.tools_complete = complete
    elif not complete:
        catalog.tools_complete = False


def learn_prompts(catalog: ServerCatalog, result: Any) -> None:
    """A prompts/list page: each prompt's name and the arguments it requires."""
    global _total
    prompts = catalog.prompts
    complete = True
    for prompt in getattr(result, "prompts", None) or ():
        name = getattr(prompt, "name", None)
        if not isinstance(name, str):
            continue
        if name not in prompts:
            if not _room(catalog, prompts):
                complete = False
                continue
            _total += 1
        required = frozenset(
            a.name for a in getattr(prompt, "arguments", None) or () if getattr(a, "required", False) is True
        )
        prompts[name] = required
    if getattr(result, sdk.NEXT_CURSOR, None) is None:
        catalog.prompts_complete = complete
    elif not complete:
        catalog.prompts_complete = False


UNLISTED = Classification(Outcome.CLIENT_ERROR, Boundary.DISCOVERY, S.TOOL_ERROR)
REFUSED_ARGUMENTS = Classification(Outcome.CLIENT_ERROR, Boundary.ARGUMENTS, S.TOOL_ERROR)


def judge(
    catalog: ServerCatalog | None, method: str, name: object, arguments: object, replied: Classification
) -> Classification | None:
    """The client's own verdict on a failed tools/call or prompts/get, where its listing proves one.

    `replied`: what the reply said; the verdict keeps its error type (`tool_error` for an
    `isError` result, the JSON-RPC code's label for an error reply) and its code.
    """
    if catalog is None or not isinstance(name, str):
        return None
    try:
        if method == "tools/call":
            if name not in catalog.tools:
                return _as(UNLISTED, replied) if catalog.tools_complete else None
            schema = catalog.tools[name]
            return _as(REFUSED_ARGUMENTS, replied) if _refused(schema, arguments) else None
        if method == "prompts/get":
            required = catalog.prompts.get(name)
            if required is None:
                return _as(UNLISTED, replied) if catalog.prompts_complete else None
            given: Mapping[str, object] = (
                cast("Mapping[str, object]", arguments) if isinstance(arguments, Mapping) else {}
            )
            return _as(REFUSED_ARGUMENTS, replied) if any(a not in given for a in required) else None
    except Exception as exc:
        report("client listing verdict", exc)
    return None


_judged: dict[tuple[Classification, Classification], Classification] = {}


def _as(found: Classification, replied: Classification) -> Classification:
    """`found`'s outcome and boundary with the reply's error type and code (made once per pair)."""
    key = (found, replied)
    made = _judged.get(key)
    if made is None:
        made = Classification(found.outcome, found.boundary, replied.error_type, replied.rpc_code)
        if len(_judged) < 256:
            _judged[key] = made
    return made


def _refused(schema: object, arguments: object) -> bool:
    """Whether the listed input schema refuses `arguments` (an unusable schema refuses nothing)."""
    if not isinstance(schema, Mapping):
        return False
    schema = cast("Mapping[str, Any]", schema)
    from jsonschema import exceptions, validators

    try:
        validator_class: Any = validators.validator_for(schema, default=validators.Draft202012Validator)
        validator_class.check_schema(schema)
    except exceptions.SchemaError:
        return False
    return not validator_class(schema).is_valid(arguments if arguments is not None else {})
