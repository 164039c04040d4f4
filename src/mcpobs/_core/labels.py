"""Metric label sets, built once per bounded key and shared by every request that has it.

Recording a metric is the per-request cost that cannot be sampled away, so the label dicts
are not rebuilt per call: every part of a key is already bounded (registered names,
`_OTHER`, outcome, boundary), and the cache is capped against a pathological mix anyway.
The dicts are shared: never mutate one.
"""

from __future__ import annotations

from typing import Any

from mcpobs import semconv as S
from mcpobs._core.methods import code_label
from mcpobs._core.outcome import Classification

_MAX = 4096

Labels = dict[str, Any]


class LabelSets:
    __slots__ = ("_base", "_counter", "_errors_only", "_outcome", "_with_boundary")

    def __init__(self, counter: S.MetricSpec, *, errors_only: bool) -> None:
        """`errors_only`: put `error.type` on labels only for error outcomes (the server's rule)."""
        self._counter = tuple(a for a in counter.attributes if a != S.FAILURE_BOUNDARY)
        self._with_boundary = S.FAILURE_BOUNDARY in counter.attributes
        self._errors_only = errors_only
        self._base: dict[tuple[Any, ...], Labels] = {}
        self._outcome: dict[tuple[Any, ...], tuple[Labels, Labels]] = {}

    def base(self, key: tuple[Any, ...]) -> Labels:
        """The labels of a request of `key` (see `base_labels`) before its outcome is known."""
        labels = self._base.get(key)
        if labels is None:
            if len(self._base) > _MAX:
                self._base.clear()
            labels = self._base[key] = base_labels(key)
        return labels

    def with_outcome(self, key: tuple[Any, ...], cls: Classification) -> tuple[Labels, Labels]:
        """(duration labels, counter labels) for a request of `key` classified as `cls`."""
        found = self._outcome.get((key, cls))
        if found is not None:
            return found
        labels = dict(self.base(key))
        labels[S.OUTCOME] = cls.outcome.value
        if cls.error_type is not None and (cls.is_error or not self._errors_only):
            labels[S.ERROR_TYPE] = cls.error_type
        if cls.rpc_code is not None:
            labels[S.RPC_RESPONSE_STATUS_CODE] = code_label(cls.rpc_code)
        counted = {k: labels[k] for k in self._counter if k in labels}
        if self._with_boundary and cls.boundary is not None:
            counted[S.FAILURE_BOUNDARY] = cls.boundary.value
        if len(self._outcome) > _MAX:
            self._outcome.clear()
        self._outcome[(key, cls)] = found = (labels, counted)
        return found


def base_labels(key: tuple[Any, ...]) -> Labels:
    """Labels of one bounded request key: (method, version, target attribute, target, `Network`)."""
    method, version, target_attr, target, network = key
    labels: Labels = {S.MCP_METHOD_NAME: method, S.MCP_PROTOCOL_VERSION: version}
    if method == "tools/call":
        labels[S.GEN_AI_OPERATION_NAME] = S.EXECUTE_TOOL
    if target_attr is not None:
        labels[target_attr] = target
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
