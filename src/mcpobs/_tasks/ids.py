"""`mcpobs.task.id_hash`: the one form a task id takes in telemetry.

A task id is a bearer credential on both FastMCP lines: whoever holds it, in any session, reads
the task's result, answers its input and cancels it. So it is never recorded raw, on any line, in
any signal. With `session_id_key` set, the hash is keyed (HMAC-SHA256), as for session ids: the
same value in every process that shares the key (client, server, worker), useless to replay or to
test a guess. Without a key it is the id's SHA-256: the ids the SDKs mint are random (122 to 256
bits), so the digest cannot be turned back, and processes still agree. An id an application chose
itself (the 1.x SDK lets it) may be guessable: set the key then (docs/privacy.md).
"""

from __future__ import annotations

import hashlib
import hmac

from mcpobs import semconv

_DOMAIN = semconv.TASK_ID_HASH.encode() + b"\x00"
"""Keeps a task id's digest apart from a session id's under the same key."""


def task_id_hash(task_id: object, key: bytes | None) -> str | None:
    """The value of `mcpobs.task.id_hash` for `task_id`, or None when it is not an id."""
    if not isinstance(task_id, str) or not task_id:
        return None
    data = _DOMAIN + task_id.encode("utf-8", "surrogatepass")
    digest = hmac.new(key, data, hashlib.sha256) if key is not None else hashlib.sha256(data)
    return digest.hexdigest()[: semconv.TASK_ID_HASH_LENGTH]
