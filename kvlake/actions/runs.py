"""Recorded runs: one KV partition per repository instance, hook output in its namespace.

| partition | key | value |
|---|---|---|
| `actions_runs/<instance uid>` | `<run id>` | the run and its hooks' results (msgpack) |

Run ids decrease with time (milliseconds to the year 3000, then random bits),
as lakeFS's do, so an ascending scan lists the newest run first. The partition
is the repository instance's, so a repository created again under an old name
sees none of the old one's runs (invariant 1). Each hook's output is written
where lakeFS writes it, `_lakefs/actions/log/<run id>/<hook run id>.log` in the
storage namespace, with the run's manifest beside it (`run.manifest`); the KV
record is written last, so a listed run always has its output.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Final

import msgspec

from kvlake import ids
from kvlake.actions.records import Run
from kvlake.blockstore import BlockStore
from kvlake.errors import NotFoundError
from kvlake.graveler import Repository
from kvlake.kv import Store, get_or_none

OUTPUT_FOLDER: Final = "_lakefs/actions/log"
"""Where lakeFS writes hook output in a storage namespace."""
_PARTITION_PREFIX: Final = b"actions_runs/"
_YEAR_3000_MS: Final = 32_503_680_000_000
_SCAN_BATCH: Final = 100
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Run).decode


class RunNotFoundError(NotFoundError):
    """The repository has no run (or hook run) with that id."""


def new_run_id(now: float) -> str:
    """A run id that sorts before every earlier run's: newest first in ascending scans."""
    left = max(_YEAR_3000_MS - int(now * 1000), 0)
    return ids.encode_uid(left << 80 | int.from_bytes(os.urandom(10), "big"))


def runs_partition(repository: Repository) -> bytes:
    return _PARTITION_PREFIX + repository.instance_uid.encode()


def output_key(run_id: str, hook_run_id: str) -> str:
    """The blob key (in the storage namespace) of a hook run's output, as lakeFS names it."""
    return f"{OUTPUT_FOLDER}/{run_id}/{hook_run_id}.log"


class RunStore:
    """Save, list and read runs of one lake. Thread-safe; everything is in the stores."""

    def __init__(self, store: Store, blockstore: BlockStore) -> None:
        self._store = store
        self._blockstore = blockstore

    def save(self, repository: Repository, run: Run, outputs: Sequence[tuple[str, str]]) -> None:
        """Write the hooks' output and the run's manifest, then the run record."""
        namespace = repository.storage_namespace
        for hook_run_id, output in outputs:
            self._blockstore.put(namespace, output_key(run.run_id, hook_run_id), output.encode())
        manifest = msgspec.json.encode(run)
        self._blockstore.put(namespace, f"{OUTPUT_FOLDER}/{run.run_id}/run.manifest", manifest)
        self._store.set(runs_partition(repository), run.run_id.encode(), _encode(run))

    def drop_instance(self, instance_uid: str) -> None:
        """Remove every run record of a deleted repository instance (the cleaner does, once
        the instance's own metadata is gone). Hook outputs stay with the storage namespace:
        a purge deletes them with the rest of it."""
        self._store.drop_partition(_PARTITION_PREFIX + instance_uid.encode())

    def get(self, repository: Repository, run_id: str) -> Run:
        """The run. Raises RunNotFoundError."""
        loaded = get_or_none(self._store, runs_partition(repository), run_id.encode())
        if loaded is None:
            raise RunNotFoundError(
                f"repository {repository.name!r} has no run {run_id!r}; list its runs"
            )
        return _decode(loaded[0])

    def scan(self, repository: Repository, *, after: str = "") -> Iterator[Run]:
        """Runs newest first, from the one after `after`."""
        start = after.encode() + b"\0" if after else b""
        for _, value in self._store.scan(runs_partition(repository), start, batch_size=_SCAN_BATCH):
            yield _decode(value)

    def output(self, repository: Repository, run_id: str, hook_run_id: str) -> bytes:
        """A hook run's output. Raises RunNotFoundError."""
        run = self.get(repository, run_id)
        if not any(hook.hook_run_id == hook_run_id for hook in run.hooks):
            raise RunNotFoundError(
                f"run {run_id!r} of repository {repository.name!r} has no hook run"
                f" {hook_run_id!r}; list the run's hooks"
            )
        return self._blockstore.get(repository.storage_namespace, output_key(run_id, hook_run_id))
