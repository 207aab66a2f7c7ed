"""Post-event hooks queued durably: a server that dies mid-run has them run again later.

| partition | key | value |
|---|---|---|
| `actions_post` | `<queue id>` | event, repository instance, user, attempts, lease (msgpack) |

`Actions.post` writes the event here before it runs the hooks and deletes it
after the run is recorded, holding a lease while it runs. A background pass
(`PostQueue.take` through `Actions.run_queue`) takes every entry whose lease
expired (its process died or hung), claims it with compare-and-swap so one
process runs it, and runs the hooks again; an entry that was taken
`MAX_ATTEMPTS` times is not run again but recorded as a failed run whose
hook output says so. The window between an operation's last write and the
queue write is not covered: a crash there loses that event's post-hooks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import msgspec

from kvlake import ids
from kvlake.errors import KeyNotFoundError, PreconditionFailedError
from kvlake.graveler import Event
from kvlake.kv import Store

PARTITION: Final = b"actions_post"
MAX_ATTEMPTS: Final = 3
"""Runs of one queued event before it is recorded as failed instead."""
LEASE: Final = 30 * 60.0
"""Seconds a process holds a queued event while running its hooks: longer than any run
(a hook's timeout is at most 10 minutes; an action rarely has more than a few hooks)."""
_SCAN_BATCH: Final = 100


class PendingPost(msgspec.Struct, frozen=True, kw_only=True):
    """One post-event whose hooks have not finished running."""

    id: str
    repository: str
    instance_uid: str
    event: Event
    user: str = ""
    """Who triggered the event: the `lakefs` Lua module acts as this user on a re-run."""
    attempts: int = 1
    """Times a process took it to run (the first, in the request, included; 0 for an
    event queued for the background pass alone, `put_due`)."""
    owner: str
    lease_expires: float


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(PendingPost).decode


class PostQueue:
    """The queued post-events of one lake. Thread-safe; all state is in the KV."""

    def __init__(self, store: Store, *, owner: str, lease: float = LEASE) -> None:
        self._store = store
        self.owner = owner
        self.lease = lease

    def put(
        self, *, repository: str, instance_uid: str, event: Event, user: str, now: float
    ) -> PendingPost:
        """Queue the event, leased to this process. Raises UnavailableError."""
        pending = PendingPost(
            id=ids.new_uid(),
            repository=repository,
            instance_uid=instance_uid,
            event=event,
            user=user,
            owner=self.owner,
            lease_expires=now + self.lease,
        )
        self._store.set(PARTITION, pending.id.encode(), _encode(pending))
        return pending

    def put_due(
        self, *, key: str, repository: str, instance_uid: str, event: Event, user: str, now: float
    ) -> bool:
        """Queue the event for the next pass (`take`) to run, unleased and not yet run; a
        second put of the same `key` while the first waits or runs writes nothing.
        Returns whether this call queued it. Raises UnavailableError."""
        pending = PendingPost(
            id=key,
            repository=repository,
            instance_uid=instance_uid,
            event=event,
            user=user,
            attempts=0,
            owner="",
            lease_expires=now,
        )
        try:
            self._store.set_if(PARTITION, key.encode(), _encode(pending), None)
        except PreconditionFailedError:
            return False  # queued already (a pass retried after a crash, another runner)
        return True

    def drop_instance(self, instance_uid: str) -> int:
        """Forget every queued event of a repository instance (the cleaner removes it).
        Returns how many went."""
        gone = [
            key
            for key, value in self._store.scan(PARTITION, b"", batch_size=_SCAN_BATCH)
            if _decode(value).instance_uid == instance_uid
        ]
        for key in gone:
            self._store.delete(PARTITION, key)
        return len(gone)

    def done(self, pending: PendingPost) -> None:
        """The event's hooks ran and their run is recorded: forget it."""
        self._store.delete(PARTITION, pending.id.encode())

    def take(self, now: float) -> Iterator[PendingPost]:
        """Entries whose lease expired, each claimed for this process (attempts counted)."""
        for key, value in self._store.scan(PARTITION, b"", batch_size=_SCAN_BATCH):
            pending = _decode(value)
            if pending.lease_expires > now:
                continue
            claimed = msgspec.structs.replace(
                pending,
                owner=self.owner,
                lease_expires=now + self.lease,
                attempts=pending.attempts + 1,
            )
            try:
                current, predicate = self._store.get(PARTITION, key)
                if current != value:
                    continue  # another process took it since the scan
                self._store.set_if(PARTITION, key, _encode(claimed), predicate)
            except (KeyNotFoundError, PreconditionFailedError):
                continue  # another process took it, or finished it
            yield claimed
