"""Wire model of a repository purge's progress (a kvlake extension: lakeFS has no purge)."""

from __future__ import annotations

from typing import Literal

import msgspec


class PurgeStatus(msgspec.Struct, frozen=True, kw_only=True):
    """The newest purge of a repository name.

    `state`: `requested` (the cleaner has not listed the namespace yet), `logged` (every
    blob is in the deletion log; workers delete them from `due` on), `done` (each logged
    blob deleted or dead-lettered; the namespace is free again).
    """

    repository: str
    instance_uid: str
    storage_namespace: str
    state: Literal["requested", "logged", "done"]
    requested: float
    due: float
    """When the logged blobs may be deleted: the request plus the send delay (readers finish)."""
    seconds_until_due: float
    logged: int
    deleted: int
    dead_lettered: int
