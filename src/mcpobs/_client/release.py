"""Which release answered a client call, which release its catalog came from, and the model behind it.

During a rolling deploy a client's calls land on replicas of different releases, and the SDK
validates each result against the listing it holds, perhaps listed from another release (or
served from its response cache). A 2026-07-28 server stamps its name and version on every
result (`semconv.META_SERVER_INFO`); an older one says it once, at the handshake. Once the
reply is in, `answered` folds the answering release, the client's own version and (on
tools/call) the catalog's release into the call's label key, so the request counter and the
duration carry them, and writes them on the span with the schema fingerprint the client held
and the declared model. Every value is bounded (`labels.release`).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, cast

from opentelemetry.trace import Span

from mcpobs import semconv as S
from mcpobs._client import memory
from mcpobs._core import inventory as I
from mcpobs._core import labels as _labels
from mcpobs._core import model as _model
from mcpobs._core.guard import guarded
from mcpobs._core.patches import Patch
from mcpobs._core.privacy import DEFAULT, Privacy


class _Held:
    """Per session: its own client version, its catalog's release, and the last key it made."""

    __slots__ = ("catalog", "client_version", "last", "server_info")

    def __init__(self, session: Any) -> None:
        info = getattr(session, I.CLIENT_INFO.attribute, None)  # what the client sends
        self.client_version = _labels.release(S.CLIENT_VERSION, getattr(info, "version", None))
        self.catalog: str | None = None
        self.server_info: object = None
        """What the server said of itself at the handshake, for a session that keeps none (mcp 1.x)."""
        self.last: tuple[Any, ...] = ()
        """(network in, server release, catalog release, network out): most calls repeat the last."""


_sessions: weakref.WeakKeyDictionary[Any, _Held] = weakref.WeakKeyDictionary()


def _held(session: Any) -> _Held:
    held = _sessions.get(session)
    if held is None:
        held = _sessions[session] = _Held(session)
    return held


def stamped_release(result: Any, session: Any, privacy: Privacy = DEFAULT, held: _Held | None = None) -> str | None:
    """The release that produced `result`: its `_meta` stamp, else what the handshake said.

    The server's own words: through the privacy step, then bounded as a label (`labels.release`).
    """
    meta = getattr(result, "meta", None)
    # A plain dict is told apart before the abstract-class check (every result passes here).
    mapping = type(meta) is dict or isinstance(meta, Mapping)
    info: object = cast("Mapping[str, object]", meta).get(S.META_SERVER_INFO) if mapping else None
    if info is None and held is not None:
        info = held.server_info
    if info is None:
        try:
            info = session.server_info
        except Exception:  # not connected yet, or a session without the property
            return None
    version: object = (
        cast("Mapping[str, object]", info).get("version")
        if type(info) is dict or isinstance(info, Mapping)
        else getattr(info, "version", None)
    )
    return _labels.release(S.SERVER_VERSION, privacy.name(version))


def answered(
    session: Any,
    method: str,
    key: tuple[Any, ...],
    span: Span,
    result: Any,
    privacy: Privacy = DEFAULT,
    peer: bool = True,
) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
    """A call's label `key` with the releases folded in, and what its span should say of them
    (written with the outcome, in the span's one attribute batch). `result` None: no reply.
    `peer` False (`omit_attributes` names it): the labels keep the releases, the span does not."""
    if session is None:
        return key, None
    held = _held(session)
    server = stamped_release(result, session, privacy, held)
    catalog = held.catalog if method == "tools/call" else None
    if catalog is None and method == "tools/call":
        catalog = _server_catalog_release(session)
    network = key[4]
    last = held.last
    if last and last[0] is network and last[1] == server and last[2] == catalog:
        extended = last[3]
    else:
        extra: list[tuple[str, Any]] = []
        if server is not None:
            extra.append((S.SERVER_VERSION, server))
        if held.client_version is not None:
            extra.append((S.CLIENT_VERSION, held.client_version))
        if catalog is not None:
            extra.append((S.CATALOG_RELEASE, catalog))
        extended = _labels.extended(network, tuple(extra))
        held.last = (network, server, catalog, extended)
    if extended is not network:
        key = (*key[:4], extended)
    if not span.is_recording():
        return key, None
    attrs: dict[str, Any] = {}
    if peer:
        if server is not None:
            attrs[S.SERVER_VERSION] = server
        if catalog is not None:
            attrs[S.CATALOG_RELEASE] = catalog
    declared = _model.current()
    if declared is not None:
        attrs.update(declared.attributes)
    return key, attrs or None


def patches(privacy: Privacy = DEFAULT) -> list[Patch]:
    def absorb_listing(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        """Wraps `ClientSession._absorb_tool_listing`, which every listing passes, a cache hit too.

        A listing served from the SDK's response cache sends no request, so this is the one place
        the client learns which release its catalog came from (the cached result keeps its stamp)
        and which schemas it holds.
        """
        result = wrapped(*args, **kwargs)
        with guarded("client catalog release"):
            listed(instance, result, privacy)
        return result

    return [Patch.of(I.TOOL_LISTING, absorb_listing)]


def listed(session: Any, result: Any, privacy: Privacy = DEFAULT) -> None:
    """A tools/list result the session took: the release its catalog came from, and its schemas."""
    held = _held(session)
    catalog = stamped_release(result, session, privacy, held)
    if catalog is not None:
        held.catalog = _labels.release(S.CATALOG_RELEASE, catalog)
        memory.catalog_of(session).release = held.catalog
    memory.remember_listing(session, result)


def _server_catalog_release(session: Any) -> str | None:
    """The release of the catalog another session to the same server listed (this one listed none)."""
    remembered = memory.remembered(session)
    found = remembered.catalog if remembered is not None else None
    return found.release if found is not None else None


def remember_server(session: Any, info: object) -> None:
    """What the server said of itself at the handshake, for a session that keeps none (mcp 1.x)."""
    if info is not None:
        _held(session).server_info = info
