"""Metric label sets, built once per bounded key and shared by every request that has it.

Recording a metric is the per-request cost that cannot be sampled away, so the label dicts
are not rebuilt per call: every part of a key is already bounded (registered names,
`_OTHER`, outcome, boundary), and the cache is capped against a pathological mix anyway
(the oldest set is evicted, so the recent ones stay built).
The dicts are shared: never mutate one.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from mcpobs import semconv as S
from mcpobs._core.bounded import put
from mcpobs._core.methods import code_label
from mcpobs._core.outcome import Classification

_MAX = 4096

Labels = dict[str, Any]


class LabelSets:
    __slots__ = (
        "__weakref__",
        "_base",
        "_counter",
        "_counter_only",
        "_errors_only",
        "_known",
        "_outcome",
        "_split",
        "_with_boundary",
        "constant",
    )

    def __init__(
        self,
        counter: S.MetricSpec,
        *,
        errors_only: bool,
        duration: S.MetricSpec | None = None,
        constant: Labels | None = None,
        known: Callable[[], int] | None = None,
    ) -> None:
        """`errors_only`: put `error.type` on labels only for error outcomes (the server's rule).

        `duration`: the histogram recorded beside the counter; a label only the counter declares
        (the catalog's release) stays off it. `constant`: labels every request of this set
        carries (a server's own release). `known`: how many names the server registers; the
        sets kept grow to twice that past their floor, so a large catalog never cycles out.
        """
        self._known = known
        _every.add(self)
        self._counter = tuple(a for a in counter.attributes if a != S.FAILURE_BOUNDARY)
        self._with_boundary = S.FAILURE_BOUNDARY in counter.attributes
        self._counter_only: frozenset[str] = (
            frozenset(counter.attributes) - frozenset(duration.attributes) if duration is not None else frozenset()
        )
        self._errors_only = errors_only
        self.constant: Labels = constant or {}
        self._base: dict[tuple[Any, ...], Labels] = {}
        self._outcome: dict[tuple[Any, ...], tuple[Labels, Labels]] = {}
        self._split: dict[tuple[Any, ...], tuple[Labels, Labels]] = {}

    def base(self, key: tuple[Any, ...]) -> Labels:
        """The labels of a request of `key` (see `base_labels`) before its outcome is known."""
        labels = self._base.get(key)
        if labels is None:
            labels = base_labels(key)
            if self.constant:
                labels.update(self.constant)
            put(self._base, key, labels, _MAX, self._known)
        return labels

    def split(self, key: tuple[Any, ...]) -> tuple[Labels, Labels]:
        """`base(key)` as (what a span starts with, what its end batch adds): see `S.AT_SPAN_END`."""
        found = self._split.get(key)
        if found is not None:
            return found
        labels = self.base(key)
        later = S.AT_SPAN_END
        start = {k: v for k, v in labels.items() if k not in later}
        return put(self._split, key, (start, {k: v for k, v in labels.items() if k in later}), _MAX, self._known)

    def with_outcome(self, key: tuple[Any, ...], cls: Classification) -> tuple[Labels, Labels]:
        """(duration labels, counter labels) for a request of `key` classified as `cls`."""
        found = self._outcome.get((key, cls))
        if found is not None:
            return found
        labels = dict(self.base(key))
        labels[S.OUTCOME] = cls.outcome.value
        # A reply never written is labelled so whatever its outcome: the work was done, nobody told.
        if cls.error_type is not None and (
            cls.is_error or not self._errors_only or cls.error_type == S.REPLY_UNDELIVERED
        ):
            labels[S.ERROR_TYPE] = cls.error_type
        if cls.rpc_code is not None:
            labels[S.RPC_RESPONSE_STATUS_CODE] = code_label(cls.rpc_code)
        counted = {k: labels[k] for k in self._counter if k in labels}
        if self._with_boundary and cls.boundary is not None:
            counted[S.FAILURE_BOUNDARY] = cls.boundary.value
        for only in self._counter_only.intersection(labels):
            del labels[only]
        return put(self._outcome, (key, cls), (labels, counted), _MAX, self._known)


_every: weakref.WeakSet[LabelSets] = weakref.WeakSet()


def held() -> int:
    """Label dicts the live label sets hold: how many shared dicts `Tally.add_shared` can be handed."""
    return sum(len(sets._outcome) for sets in _every)  # pyright: ignore[reportPrivateUsage]


def base_labels(key: tuple[Any, ...]) -> Labels:
    """Labels of one bounded request key: (method, version, target attribute, target, `Network`)."""
    method, version, target_attr, target, network = key
    labels: Labels = {S.MCP_METHOD_NAME: method, S.MCP_PROTOCOL_VERSION: version}
    if method == "tools/call":
        labels[S.GEN_AI_OPERATION_NAME] = S.EXECUTE_TOOL
    if target_attr is not None:
        labels[target_attr] = S.bounded_target(target) if type(target) is str else target
    if network is not None:
        labels.update(network.labels)
    return labels


class Network:
    """The network labels of a connection (transport, HTTP version, the client's server), interned.

    One object per distinct set, compared and hashed by identity: a request key holding one
    costs no more to look up than one holding a string.
    """

    __slots__ = ("labels",)

    def __init__(self, labels: Labels) -> None:
        self.labels = labels


_networks: dict[tuple[tuple[str, Any], ...], Network] = {}

HTTP_VERSIONS = frozenset({"1.0", "1.1", "2", "3"})
"""`network.protocol.version` values recorded; another value is left out, never a new series."""


def network(labels: Labels) -> Network | None:
    """The interned `Network` for these labels (None for none). Called once per connection, not per request."""
    return _intern(labels) if labels else None


def _intern(labels: Labels) -> Network:
    items = tuple(sorted(labels.items()))
    found = _networks.get(items)
    if found is None:
        found = Network(dict(items))
        if len(_networks) < _MAX:
            _networks[items] = found
    return found


def http_network(version: object, extra: Labels | None = None) -> Network:
    """Streamable HTTP: tcp, http and the HTTP version when it is a known one."""
    labels: Labels = {S.NETWORK_TRANSPORT: "tcp", S.NETWORK_PROTOCOL_NAME: "http"}
    if version in HTTP_VERSIONS:
        labels[S.NETWORK_PROTOCOL_VERSION] = version
    if extra:
        labels.update(extra)
    return _intern(labels)


PIPE = _intern({S.NETWORK_TRANSPORT: "pipe"})


# --- Releases ---------------------------------------------------------------------------------


class _Releases:
    """The release values one label has carried in this process: at most `MAX_RELEASES`.

    A release is chosen by whoever deploys a server or a client, but a server hears client
    versions from any caller and a client hears server versions from any server it reaches:
    the first `MAX_RELEASES` distinct values are kept, later ones are `_OTHER`.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def bound(self, value: object) -> str | None:
        """The label value for `value` (None when there is no release to say)."""
        if not value or not isinstance(value, str):
            return None
        found = self._seen.get(value)
        if found is None:
            if len(value) > S.MAX_RELEASE_LENGTH or len(self._seen) >= S.MAX_RELEASES:
                return S.OTHER
            found = self._seen[value] = value
        return found

    def forget(self) -> None:
        self._seen.clear()


RELEASES: dict[str, _Releases] = {
    S.SERVER_VERSION: _Releases(),
    S.CLIENT_VERSION: _Releases(),
    S.CATALOG_RELEASE: _Releases(),
}
"""One bound per release label, shared by every server and client in the process."""


def forget_releases() -> None:
    """Start every release bound (and the server peers') afresh (at `uninstrument()`: the next
    instrumentation's series are its own)."""
    for releases in RELEASES.values():
        releases.forget()
    _server_peers.clear()


_server_peers: set[tuple[object, object]] = set()
_OTHER_PEER: Labels = {S.SERVER_ADDRESS: S.OTHER}


def server_peer(where: Labels) -> Labels:
    """A client's `server.address`/`server.port` as metric labels, bounded like a release.

    Whoever hands a client its URL chooses them (a gateway connects to its users' servers): the
    first `MAX_SERVER_PEERS` distinct pairs in the process are kept, later ones are
    `server.address=_OTHER` without a port. Called once per connection; spans keep the address.
    """
    if not where:
        return where
    pair = (where.get(S.SERVER_ADDRESS), where.get(S.SERVER_PORT))
    if pair in _server_peers:
        return where
    if len(_server_peers) >= S.MAX_SERVER_PEERS:
        return _OTHER_PEER
    _server_peers.add(pair)
    return where


def release(attribute: str, value: object) -> str | None:
    """`value` as a label of release `attribute` (one of `RELEASES`), bounded; None for no release."""
    return RELEASES[attribute].bound(value)


_extended: dict[tuple[Network | None, tuple[Any, ...]], Network] = {}


def extended(network: Network | None, extra: tuple[tuple[str, Any], ...]) -> Network | None:
    """`network` with the `extra` labels (bounded values) added, interned: a label key part like any other."""
    if not extra:
        return network
    key = (network, extra)
    found = _extended.get(key)
    if found is None:
        labels = dict(network.labels) if network is not None else {}
        labels.update(extra)
        found = _intern(labels)
        if len(_extended) < _MAX:
            _extended[key] = found
    return found


def release_labels(server: Any) -> Labels:
    """A server's own release as labels of its request metrics (none when it states no version)."""
    version = release(S.SERVER_VERSION, getattr(server, "version", None))
    return {S.SERVER_VERSION: version} if version is not None else {}
