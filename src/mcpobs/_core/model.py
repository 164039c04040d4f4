"""The model behind a client: the host says which one with `mcpobs.model(...)`.

mcpobs cannot see the model: it sits in the host, above the MCP client. A model upgrade is a
release like any other (it changes which tools are called, with which arguments), so the host
names it around the code that drives a client or one call, and the client spans inside record
it under the GenAI convention names. With ``send=True`` a tools/call carries it to the server
in ``_meta`` (`semconv.META_MODEL`), where the server span records it too. Span attributes
only, never metric labels: a model name is a free-form string.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from mcpobs import semconv as S
from mcpobs._core.config import ConfigurationError

if TYPE_CHECKING:
    from mcpobs._core.privacy import Privacy

_FIELDS = (("name", S.GEN_AI_REQUEST_MODEL), ("version", S.GEN_AI_RESPONSE_MODEL), ("provider", S.GEN_AI_PROVIDER_NAME))


class Model:
    """One model declaration: its span attributes, and what rides in `_meta` (None unless sent)."""

    __slots__ = ("attributes", "meta")

    def __init__(self, attributes: dict[str, str], meta: dict[str, str] | None) -> None:
        self.attributes = attributes
        self.meta = meta


_current: ContextVar[Model | None] = ContextVar("mcpobs_model", default=None)

current = _current.get
"""The model declared for this context, if any (the contextvar's own `get`)."""


def _checked(option: str, value: object, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(
            f"model({option}=...) must be a non-empty string such as 'claude-sonnet-4-5', got {value!r}"
        )
    return value[: S.MAX_MODEL_LENGTH]


@contextmanager
def model(name: str, *, version: str | None = None, provider: str | None = None, send: bool = False) -> Generator[None]:
    """Say which model drives the MCP client calls made inside this block.

    ``name`` is recorded as ``gen_ai.request.model``, ``version`` (the exact model the provider
    reported, e.g. a dated snapshot) as ``gen_ai.response.model``, ``provider`` as
    ``gen_ai.provider.name``, on every client span started inside; each is cut to
    `semconv.MAX_MODEL_LENGTH` characters. ``send=True`` also carries them to the server in a
    tools/call's ``_meta``. Blocks nest; the innermost wins. A bad value raises
    `ConfigurationError`.
    """
    values = {
        "name": _checked("name", name, True),
        "version": _checked("version", version, False),
        "provider": _checked("provider", provider, False),
    }
    given = {field: value for field, value in values.items() if value is not None}
    declared = Model({attr: given[field] for field, attr in _FIELDS if field in given}, given if send else None)
    token = _current.set(declared)
    try:
        yield
    finally:
        _current.reset(token)


def with_meta(kwargs: Any) -> Any:
    """`ClientSession.call_tool` keyword arguments with the declared model in `meta`, when it is sent."""
    declared = _current.get()
    if declared is None or declared.meta is None:
        return kwargs
    held: Mapping[str, Any] = kwargs.get("meta") or {}
    return {**kwargs, "meta": {S.META_MODEL: declared.meta, **held}}


def received(meta: Any, attrs: dict[str, Any], privacy: Privacy) -> None:
    """Server side: the model a client sent in `_meta`, as span attributes: strings only, through
    the privacy step (any client can write there), cut to `MAX_MODEL_LENGTH`."""
    # A plain dict is told apart before the abstract-class check (every request passes here).
    mapping = type(meta) is dict or isinstance(meta, Mapping)
    sent = cast("Mapping[str, object]", meta).get(S.META_MODEL) if mapping else None
    if sent is None or not isinstance(sent, Mapping):
        return
    model = cast("Mapping[str, object]", sent)
    for field, attr in _FIELDS:
        value = model.get(field)
        if isinstance(value, str) and value and (recorded := privacy.name(value, S.MAX_MODEL_LENGTH)) is not None:
            attrs[attr] = recorded
