"""One garbage collection run per repository, across every process: a lease in the KV.

Two runs of one repository at once (two servers, or a server and `kvlake gc
run`) would each sweep with a mark the other's deletions make stale, and
report counts neither can trust. A run therefore holds the repository's lease
from before its mark to after its sweep: a record in the KV (partition
`gc_leases`, key `<repository>`) naming the run, its holder (host and process)
and when the lease expires. It is taken and renewed by compare-and-swap only,
so of two starts at once exactly one wins, and the other is refused with an
error naming the run that holds it. A holder renews it every third of
`LEASE_SECONDS` from a thread of its own while the run goes on, and at the start of
every phase; a process that dies stops renewing, and its lease expires, so a
crashed run never blocks the repository for longer than that. A holder whose
lease was taken over (it could not renew in time) learns it at its next phase
and stops, before deleting anything more.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Final, Protocol

import msgspec

from kvlake.errors import ConflictError, KvlakeError, PreconditionFailedError, TooManyTriesError
from kvlake.kv import Predicate, Store, get_or_none, update

log = logging.getLogger(__name__)

GC_LEASES: Final = b"gc_leases"
"""The KV partition of the leases, keyed by repository name."""
LEASE_SECONDS: Final = 60.0
"""How long a lease lasts unless renewed: how long a crashed run keeps others out."""
_MAX_TRIES: Final = 10
"""Lost races a start tolerates before it is refused (every lost race is another start)."""


class GcLease(msgspec.Struct, frozen=True, kw_only=True):
    """Who runs garbage collection on a repository, and until when unless renewed."""

    repository: str
    run_id: str
    holder: str
    started: float
    expires: float


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(GcLease).decode


def default_holder() -> str:
    """This process, as an error message names it: `host:pid`."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Waiter(Protocol):
    """`threading.Event`'s `wait`: True once stopped, False after `timeout` seconds."""

    def wait(self, timeout: float | None = None) -> bool: ...


class GcLeases:
    """Takes, renews and releases repositories' GC leases. Safe for many threads and
    processes: every change is one compare-and-swap."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], float] = time.time,
        lease_seconds: float = LEASE_SECONDS,
        holder: str | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._lease_seconds = lease_seconds
        self._holder = holder or default_holder()

    def current(self, repository: str) -> GcLease | None:
        """The live lease on the repository's garbage collection; None when none holds."""
        loaded = self._load(repository)
        if loaded is None or loaded[0].expires <= self._clock():
            return None
        return loaded[0]

    def acquire(self, repository: str, run_id: str) -> HeldGcLease:
        """Take the repository's lease for `run_id` (an expired or released one is taken
        over; a live one is refused, even for the same run id: a run retried elsewhere).

        Raises:
            ConflictError: another run holds the lease; the message names it.
        """

        def take(current: bytes | None) -> bytes:
            now = self._clock()
            if current is not None:
                lease = _decode(current)
                if lease.expires > now:
                    raise ConflictError(_busy(lease, now))
            return _encode(
                GcLease(
                    repository=repository,
                    run_id=run_id,
                    holder=self._holder,
                    started=now,
                    expires=now + self._lease_seconds,
                )
            )

        key = repository.encode()
        what = f"taking the garbage collection lease of repository {repository!r}"
        try:
            encoded = update(self._store, GC_LEASES, key, take, what=what, tries=_MAX_TRIES)
        except TooManyTriesError:
            raise ConflictError(f"{what} kept racing other runs; retry") from None
        assert encoded is not None, "take always writes a lease"
        return HeldGcLease(self, _decode(encoded), Predicate(encoded))

    def adopt(self, repository: str, run_id: str) -> HeldGcLease:
        """Take over the lease a start took for `run_id` (in whatever process), or take a
        free or expired one as `acquire` does: how the process that runs a server's GC run
        (kvlake/pipelines/gc/runs.py) holds the lease its start took.

        Raises:
            ConflictError: another run holds the lease; the message names it.
        """
        loaded = self._load(repository)
        now = self._clock()
        if loaded is None or loaded[0].run_id != run_id or loaded[0].expires <= now:
            return self.acquire(repository, run_id)
        current, predicate = loaded
        lease = msgspec.structs.replace(
            current, holder=self._holder, started=now, expires=now + self._lease_seconds
        )
        encoded = _encode(lease)
        try:
            self._store.set_if(GC_LEASES, repository.encode(), encoded, predicate)
        except PreconditionFailedError:  # taken meanwhile: a live holder is refused
            return self.acquire(repository, run_id)
        return HeldGcLease(self, lease, Predicate(encoded))

    def renew(self, held: HeldGcLease) -> None:
        """Extend the held lease by `lease_seconds` from now.

        Raises:
            ConflictError: the lease was taken over (it expired first) or released.
        """
        lease = msgspec.structs.replace(held.lease, expires=self._clock() + self._lease_seconds)
        encoded = _encode(lease)
        try:
            self._store.set_if(GC_LEASES, lease.repository.encode(), encoded, held.predicate)
        except PreconditionFailedError:
            loaded = self._load(lease.repository)
            raise ConflictError(_lost(held.lease, loaded[0] if loaded else None)) from None
        held.lease, held.predicate = lease, Predicate(encoded)

    def release(self, held: HeldGcLease) -> None:
        """Let the lease go now (it expires at once); a lease taken over is left alone."""
        released = msgspec.structs.replace(held.lease, expires=0.0)
        try:
            self._store.set_if(
                GC_LEASES, released.repository.encode(), _encode(released), held.predicate
            )
        except PreconditionFailedError:
            pass  # taken over after it expired: the new holder's, not ours to touch

    def _load(self, repository: str) -> tuple[GcLease, Predicate] | None:
        loaded = get_or_none(self._store, GC_LEASES, repository.encode())
        return None if loaded is None else (_decode(loaded[0]), loaded[1])


class HeldGcLease:
    """A lease this process holds. A context manager: renewed from a thread while inside,
    released on the way out. `check` renews it, and raises once it was lost."""

    def __init__(self, leases: GcLeases, lease: GcLease, predicate: Predicate) -> None:
        self._leases = leases
        self.lease = lease
        self.predicate = predicate
        self._lost: ConflictError | None = None
        self._renewing = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def run_id(self) -> str:
        return self.lease.run_id

    def check(self) -> None:
        """Renew the lease now, or raise: a run that lost it must stop before it deletes
        anything more. Called at every phase, so a run whose renewal thread stalled past
        the expiry (a long pause of the process) finds out before its next step.

        Raises:
            ConflictError: the lease was taken over (now, or by a failed renewal before).
        """
        if self._lost is not None:
            raise self._lost
        self.renew()

    def renew(self) -> None:
        """Renew the lease; see `GcLeases.renew`. One renewal at a time: the thread's and
        a phase's would otherwise see each other's write as a taker's."""
        with self._renewing:
            self._leases.renew(self)

    def keep(self, stop: Waiter, every: float) -> None:
        """Renew every `every` seconds until `stop` says so, or a renewal fails (then
        `check` raises). The renewal thread's body; tests drive it with a fake `stop`."""
        while not stop.wait(every):
            try:
                self.renew()
            except ConflictError as exc:
                self._lost = exc
                return
            except KvlakeError as exc:  # the KV is down a moment: the next renewal retries
                log.warning("renewing the GC lease of %s failed: %s", self.lease.repository, exc)

    def __enter__(self) -> HeldGcLease:
        every = max(self.lease.expires - self.lease.started, 0.0) / 3
        self._thread = threading.Thread(
            target=self.keep,
            args=(self._stop, every),
            name=f"kvlake-gc-lease-{self.lease.repository}",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._leases.release(self)


def _busy(lease: GcLease, now: float) -> str:
    return (
        f"repository {lease.repository!r} has garbage collection run {lease.run_id!r} going"
        f" (held by {lease.holder}, started {now - lease.started:.0f} s ago); only one run per"
        " repository may go at a time: wait for it to finish (ask its status), or, if its"
        f" process stopped, for its lease to expire in {max(lease.expires - now, 0):.0f} s"
    )


def _lost(mine: GcLease, now_held: GcLease | None) -> str:
    taker = (
        f"run {now_held.run_id!r} (held by {now_held.holder}) holds it now"
        if now_held is not None and now_held.run_id != mine.run_id
        else "it was released"
    )
    return (
        f"garbage collection run {mine.run_id!r} of repository {mine.repository!r} lost its"
        f" lease ({taker}): it could not renew it in time, so it stops before deleting"
        " anything more; run garbage collection again"
    )
