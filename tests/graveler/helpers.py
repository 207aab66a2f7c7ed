"""Test helpers for graveler: values, a real graveler, commits and staging set up fast."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kvlake.blockstore import BlockStore
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.namespaces import Namespaces
from kvlake.graveler.lifecycle.repositories import Repositories
from kvlake.graveler.records import Commit, Repository, Value, encode
from kvlake.graveler.refs.store import Refs
from kvlake.kv import Store
from tests.support import FakeClock


def value(text: str) -> Value:
    """A graveler value whose identity and data are derived from `text`."""
    return Value(identity=text.encode(), data=text.encode())


def make_graveler(
    store: Store,
    clock: FakeClock,
    blocks: BlockStore,
    committed: CommittedManager | None = None,
    *,
    token_drop_delay: float = 0,
) -> Graveler:
    return Graveler(
        store,
        committed or CommittedManager(blocks),
        check_namespace=blocks.check_namespace,
        clock=clock,
        token_drop_delay=token_drop_delay,
        blockstore=blocks,
    )


def all_keys(store: Store) -> dict[bytes, list[bytes]]:
    """Every key of every partition: what a test expects to be left behind."""
    return {p: [k for k, _ in store.scan(p)] for p in store.partitions()}


def stage_many(
    graveler: Graveler, repository: Repository, branch: str, entries: Iterable[tuple[bytes, Value]]
) -> None:
    """Stage many entries at once, straight into the branch's staging token (fast set-up)."""
    token = graveler.get_branch(repository, branch).staging_token
    graveler.store.set_many(
        keys.staging_partition(token), ((key, encode(value)) for key, value in entries)
    )


def add_commit(
    graveler: Graveler,
    repository: Repository,
    parents: Sequence[str],
    *,
    message: str = "",
    date: int = 1_750_000_000,
) -> str:
    """Store a commit with these parents (and a correct generation); return its id."""
    generation = 1 + max(
        (graveler.get_commit(repository, p).generation for p in parents), default=0
    )
    return Refs(graveler.store).add_commit(
        repository,
        Commit(
            committer="t",
            message=message,
            metarange_id=graveler.committed.empty_metarange(repository.storage_namespace),
            creation_date=date,
            parents=tuple(parents),
            metadata={},
            generation=generation,
        ),
    )


def contents(graveler: Graveler, repository: Repository, ref: str) -> dict[bytes, Value]:
    return dict(graveler.list(repository, ref))


def lifecycle(graveler: Graveler) -> tuple[Repositories, Namespaces]:
    """Graveler's repository and namespace engines over its store, to stop a creation or a
    deletion between two of its steps (as a crash would)."""
    repositories = Repositories(graveler.store, clock=graveler.clock)
    return repositories, Namespaces(
        graveler.store, clock=graveler.clock, is_live=repositories.is_live
    )
