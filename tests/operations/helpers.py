"""A lake for the operations tests: a chosen KV store and blockstore, a clock tests move."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable

from kvlake.blockstore import BlockStore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import DeletionSettings, OperationsSettings, Settings
from kvlake.errors import RepositoryNotFoundError
from kvlake.graveler import Repository, keys
from kvlake.graveler.records import encode
from kvlake.kv import Store
from kvlake.lake import Lake
from kvlake.operations import (
    BulkDeleteDriver,
    BulkDeleteOptions,
    EngineContext,
    Operation,
    local_engine,
    parse_branch_path,
)
from kvlake.operations.bulk_delete_driver import HeldOperation
from kvlake.operations.records import Batch
from tests.support import FakeClock, backends


def make_lake(
    store: Store,
    blocks: BlockStore,
    *,
    batch_size: int = 10,
    clock: FakeClock | None = None,
    token_drop_delay: float = 0,
) -> Lake:
    settings = Settings(
        operations=OperationsSettings(batch_size=batch_size, lease_time=30.0),
        deletion=DeletionSettings(send_delay=0.0),
    )
    return Lake(
        settings, store, blocks, clock=clock or FakeClock(), token_drop_delay=token_drop_delay
    )


def populate(
    lake: Lake, paths: list[str], *, commit: bool = True, repository: str = "repo1"
) -> Repository:
    """A repository whose main holds one small object per path (committed, if asked)."""
    try:
        repo = lake.graveler.get_repository(repository)
    except RepositoryNotFoundError:
        namespace = backends.namespace(lake.blockstore, f"{repository}")
        repo = lake.graveler.create_repository(repository, storage_namespace=namespace)
    for path in paths:
        lake.catalog.upload(repo, "main", path, io.BytesIO(path.encode()))
    if commit and paths:
        lake.graveler.commit(repo, "main", committer="t", message="data")
    return repo


def fill(lake: Lake, repo: Repository, paths: list[str], *, commit: bool = True) -> None:
    """Stage an entry per path in one KV call (metadata only, no blobs), and commit: fast
    enough to give a commit many ranges."""
    entry = encode(
        to_value(ObjectEntry(address="data/x", size=1, checksum="c", mtime=1.0, content_type="x"))
    )
    token = lake.graveler.get_branch(repo, "main").staging_token
    lake.store.set_many(keys.staging_partition(token), ((p.encode(), entry) for p in paths))
    if commit:
        lake.graveler.commit(repo, "main", committer="t", message="filled")


def start(
    lake: Lake, uri: str, *, user: str = "alice", options: BulkDeleteOptions | None = None
) -> Operation:
    return lake.bulk_deletes.create(
        parse_branch_path(uri), options or BulkDeleteOptions(), created_by=user
    )


def run(lake: Lake, operation: Operation, *, owner: str = "server-1") -> Operation:
    """Run the operation with the local engine in this thread, to its end."""
    return local_engine(lake.engine_context(owner=owner)).run(operation.id, threading.Event())


def listed(lake: Lake, repo: Repository, prefix: str = "") -> list[str]:
    return [
        key.decode()
        for key, _ in lake.graveler.list(repo, "main")
        if key.decode().startswith(prefix)
    ]


class DropTheToken:
    """Commit main, let the real token-drop delay pass on the fake clock and run the
    cleaner, once: what a listing that stays open across a commit runs into."""

    def __init__(self, lake: Lake, clock: FakeClock) -> None:
        self.lake, self.clock = lake, clock
        self.dropped = False

    def __call__(self) -> None:
        if self.dropped:
            return
        self.dropped = True
        graveler = self.lake.graveler
        repo = graveler.get_repository("repo1")
        token = graveler.get_branch(repo, "main").staging_token
        graveler.commit(repo, "main", committer="bob", message="meanwhile")
        self.clock.advance(graveler.token_drop_delay + 1)
        self.lake.cleaner().clean_once()
        state = graveler.references.token_states(repo, [token])[token]
        assert state not in ("staging", "sealed"), f"token {token} is still {state}"


def committing_mid_listing(
    engine: Callable[[EngineContext], BulkDeleteDriver], hook: Callable[[], None]
) -> Callable[[EngineContext], BulkDeleteDriver]:
    """`engine` running `hook` after its driver writes each batch record of its
    enumeration (the listing of the branch still open)."""

    class Committing(BulkDeleteDriver):
        def _write_batch(
            self, held: HeldOperation, batch: Batch | None, cursor: str | None, *, final: bool
        ) -> bool:
            written: bool = super()._write_batch(held, batch, cursor, final=final)
            hook()
            return written

    return lambda context: Committing(context, engine(context).engine)
