"""Typed views of wire values the SDK types as `Any` or a bare `dict`.

`isinstance(value, dict)` narrows an `Any` to `dict[Unknown, Unknown]`, which strict pyright flags at
every later read. These helpers do the same isinstance check and hand back a typed view (a `cast`, no
copy), or None when the value is not of that shape. For the per-request hot paths, use `cast` inline
after the isinstance check instead of calling these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast


def as_mapping(value: object) -> Mapping[str, object] | None:
    """`value` as a string-keyed mapping, or None when it is not a Mapping."""
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else None


def as_list(value: object) -> list[object] | None:
    """`value` as a list, or None when it is not a list."""
    return cast("list[object]", value) if isinstance(value, list) else None
