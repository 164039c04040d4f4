"""`mcpobs.semconv.__all__` lists every public name of the registry, and nothing else."""

from __future__ import annotations

import types
import typing

from mcpobs import semconv


def public_names(module: types.ModuleType) -> set[str]:
    """Names defined by the module itself: not underscored, not an imported module, class or function."""
    found = set()
    for name, value in vars(module).items():
        if name.startswith("_") or name == "annotations" or isinstance(value, types.ModuleType):
            continue
        if getattr(typing, name, None) is value:  # Final, Literal, ...
            continue
        if isinstance(value, type | types.FunctionType) and value.__module__ != module.__name__:
            continue  # imported (Schemas, dataclass, ...)
        found.add(name)
    return found


def test_all_lists_every_public_name():
    assert set(semconv.__all__) == public_names(semconv)
    assert len(semconv.__all__) == len(set(semconv.__all__))
