"""`service.version` on the resource mcpobs configured, from the first server's release.

`instrument()` configures providers (`autoconfig`) before any server exists, so the resource
cannot say the release yet. When the application stated none (`OTEL_RESOURCE_ATTRIBUTES`), the
first server that states a version gives it to the resource of every provider mcpobs made, the
way the SDK itself updates a resource after a fork. A resource the application built is never
touched; a process serving several servers takes the first's (each server's own is on its
spans and metrics as `mcpobs.server.version`).
"""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.resources import Resource

from mcpobs import semconv as S
from mcpobs._core.guard import guarded

_waiting: list[Any] = []
"""Providers mcpobs made whose resource states no `service.version`, until a server states one."""


def wait_for_release(resource: Resource, providers: list[Any]) -> None:
    """Called by `autoconfig.configure` with the resource and the providers it made."""
    if S.SERVICE_VERSION not in resource.attributes:
        _waiting[:] = providers


def adopt(version: object) -> None:
    """A server states `version`: the first one becomes the waiting providers' `service.version`."""
    if not _waiting or not isinstance(version, str) or not version:
        return
    providers = list(_waiting)
    _waiting.clear()
    update = Resource({S.SERVICE_VERSION: version[: S.MAX_RELEASE_LENGTH]})
    for provider in providers:
        with guarded("service.version on the resource"):
            provider._update_resource(update)  # SDK-private: how the SDK updates its resource after a fork
