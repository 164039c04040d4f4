"""What a user's callback is handed: values it cannot use to change the call.

`redact` and the request and response hooks are the user's code, run on the call's own
values: a tool's arguments (in process, the caller's own dict), the result the host is about
to receive. A natural in-place `redact` (`value["card"] = "***"`) or a hook that tidies a
result would otherwise rewrite the business: the tool, the caller and the host would see the
edit. So `redact` gets a copy of captured content (only captured content is a container; a
text is immutable), and a hook a copy of a result or a client's request, or a read-only view of
the server's request context that copies an attribute the first time the hook reads it.
Nothing is copied when content capture is off and no hook is set.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from pydantic import BaseModel

_ATOMS = frozenset({str, int, float, bool, type(None), bytes})


def detached(value: Any) -> Any:
    """A deep copy of `value` (captured content, given to `redact`): plain JSON values copied
    by hand (the common case, several times faster than `copy.deepcopy`), anything else by
    `copy.deepcopy`, which may raise (the caller then records nothing)."""
    kind = cast("type[Any]", type(value))
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: detached(item) for key, item in value.items()}
    if kind is list:
        return [detached(item) for item in value]
    if kind is tuple:
        return tuple(detached(item) for item in value)
    if isinstance(value, BaseModel):
        return _model(value)
    return copy.deepcopy(value)


def _model(value: BaseModel) -> BaseModel:
    """A deep copy of a model: a shallow `model_copy` whose fields (and extras) are `detached`
    (a third of `model_copy(deep=True)`'s time, which copies through `copy.deepcopy`)."""
    new = value.model_copy()
    fields: dict[str, Any] = cast("dict[str, Any]", new.__dict__)  # a model's own dict, not a mapping proxy
    for name, item in fields.items():
        if type(item) not in _ATOMS:
            fields[name] = detached(item)
    extra = new.__pydantic_extra__
    if extra:
        object.__setattr__(new, "__pydantic_extra__", detached(extra))
    return new


def _data(value: Any) -> Any:
    """An attribute a hook reads: data (containers, models) copied; a live object (the session,
    the HTTP request, a method) handed as it is: it is not a value of the call."""
    kind = cast("type[Any]", type(value))
    if kind in _ATOMS:
        return value
    if kind is dict or kind is list or kind is tuple:
        return detached(value)
    if isinstance(value, BaseModel):
        return _model(value)
    if isinstance(value, dict | list):  # a subclass: still the call's data
        return copy.deepcopy(cast(Any, value))
    return value


class ReadOnly:
    """A read-only view of a request or a result for a hook: `view.params` is a copy (made when
    first read), `isinstance(view, CallToolResult)` holds, and setting an attribute raises
    (a hook's failure is logged, and the call goes on unchanged)."""

    __slots__ = ("_of", "_read")

    def __init__(self, of: Any) -> None:
        object.__setattr__(self, "_of", of)
        object.__setattr__(self, "_read", {})

    @property  # type: ignore[misc]
    def __class__(self) -> type[Any]:  # pyright: ignore[reportIncompatibleMethodOverride]
        of: Any = object.__getattribute__(self, "_of")
        return cast("type[Any]", type(of))

    def __getattr__(self, name: str) -> Any:
        read: dict[str, Any] = object.__getattribute__(self, "_read")
        if name in read:
            return read[name]
        found = _data(getattr(object.__getattribute__(self, "_of"), name))
        read[name] = found
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{name}: a hook is handed a read-only view of the call; set attributes on the span")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{name}: a hook is handed a read-only view of the call")

    def __repr__(self) -> str:
        return repr(object.__getattribute__(self, "_of"))


def for_hook(value: Any) -> Any:
    """What a hook is handed for `value`: an atom as it is; a container or a model (a result, a
    client's request: a hook may ask its type) a deep copy; any other object (the server's
    request context, which holds the live session) a `ReadOnly` view."""
    if type(value) in _ATOMS or isinstance(value, dict | list | tuple | BaseModel):
        return _data(value)
    return ReadOnly(value)
