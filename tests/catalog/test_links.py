"""Links (stageObject, linkPhysicalAddress) and the deletion log (docs/deletion.md, "Linked
blobs"): a linked blob is never deleted while an entry holds it, and a blob outside the
repository's namespace is never linked, so never deleted."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import ObjectStat
from kvlake.deletion import keys as deletion_keys
from kvlake.errors import (
    EntryNotFoundError,
    InvalidInputError,
    PreconditionFailedError,
    ProtectedBranchError,
)
from kvlake.kv import Store
from tests.deletion.blockstores import FaultyBlockStore
from tests.deletion.helpers import DAY, DeletionLake
from tests.support import backends


def _link(
    lake: DeletionLake, path: str, address: str, size: int, *, if_absent: bool = False
) -> ObjectStat:
    return lake.catalog.links.link(
        lake.repository,
        "main",
        path,
        f"{lake.namespace}/{address}",
        size=size,
        checksum="c",
        content_type="text/plain",
        metadata={"linked": "yes"},
        if_absent=if_absent,
    )


def _read(lake: DeletionLake, ref: str, path: str) -> bytes:
    _, reader = lake.catalog.open_object(lake.repository, ref, path)
    with reader:
        return reader.read()


def test_a_blob_written_into_the_namespace_is_linked_and_read(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    lake.blocks.put(lake.namespace, "imported/a.csv", b"a,b\n")
    stat = _link(lake, "tables/a.csv", "imported/a.csv", 4)
    assert (stat.address, stat.size, stat.metadata) == ("imported/a.csv", 4, {"linked": "yes"})
    commit = lake.commit()
    assert _read(lake, commit, "tables/a.csv") == b"a,b\n"


def test_a_linked_blob_outlives_the_overwrite_of_its_entry(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    lake.blocks.put(lake.namespace, "imported/a", b"data")
    _link(lake, "a", "imported/a", 4)
    lake.upload("a", b"replaced")
    lake.settle()
    assert lake.blocks.get(lake.namespace, "imported/a") == b"data"


def test_linking_a_committed_blob_elsewhere_then_deleting_it_keeps_the_commit_readable(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    stat = lake.upload("a", b"committed")
    commit = lake.commit()
    _link(lake, "second", stat.address, stat.size)
    lake.catalog.delete_object(lake.repository, "main", "second")  # logs the address
    lake.settle()
    assert stat.address in lake.data_blobs()
    assert _read(lake, commit, "a") == b"committed"


def test_relinking_a_blob_logged_for_deletion_keeps_it(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """The overwrite logged the blob at path `a`; the link at `b` is a reference the
    record's own path does not show, so only the shared mark keeps it."""
    lake = DeletionLake(any_store, lake_blocks)
    old = lake.upload("a", b"old")
    lake.upload("a", b"new")
    assert lake.pending() == 1
    _link(lake, "b", old.address, old.size)
    lake.settle()
    assert _read(lake, "main", "b") == b"old"


def test_a_blob_the_worker_deleted_is_not_linked(any_store: Store, lake_blocks: BlockStore) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    old = lake.upload("a", b"old")
    lake.upload("a", b"new")
    lake.settle()
    assert old.address not in lake.data_blobs()
    with pytest.raises(InvalidInputError, match="no blob"):
        _link(lake, "b", old.address, old.size)
    with pytest.raises(InvalidInputError, match="3 bytes"):
        lake.blocks.put(lake.namespace, "imported/x", b"abc")
        _link(lake, "b", "imported/x", 4)
    with pytest.raises(EntryNotFoundError):
        lake.catalog.stat(lake.repository, "main", "b")


def test_a_link_refused_for_its_blob_leaves_no_mark(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """Issue 23: a mark is for good (the blob is never the log's again), so a link refused
    for a wrong size or a missing blob must not have marked it first."""
    lake = DeletionLake(any_store, lake_blocks)
    lake.blocks.put(lake.namespace, "imported/x", b"abc")
    with pytest.raises(InvalidInputError, match="3 bytes"):
        _link(lake, "b", "imported/x", 4)
    with pytest.raises(InvalidInputError, match="no blob"):
        _link(lake, "b", "imported/missing", 1)
    assert lake.shared_addresses() == set()


class _SizingBlocks(FaultyBlockStore):
    """Runs `after_size` once, just after the next size read (a link's first check)."""

    after_size: Callable[[], object] | None = None

    def _size(self, namespace: str, key: str) -> int:
        found = super()._size(namespace, key)
        hook, self.after_size = self.after_size, None
        if hook is not None:
            hook()
        return found


def test_a_blob_a_worker_deleted_between_the_check_and_the_mark_is_not_linked(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """The check before the mark is not enough: a worker that read the marks before ours
    and finished its delete (claim released) before we read the claims is caught only by
    the check after the mark."""
    blocks = _SizingBlocks(lake_blocks)
    lake = DeletionLake(any_store, blocks)
    old = lake.upload("a", b"old")
    lake.upload("a", b"new")  # logs the old blob
    lake.clock.advance(DAY)
    blocks.after_size = lambda: lake.worker().run_once()
    with pytest.raises(InvalidInputError, match="no blob"):
        _link(lake, "b", old.address, old.size)
    assert old.address not in lake.data_blobs()
    with pytest.raises(EntryNotFoundError):
        lake.catalog.stat(lake.repository, "main", "b")


@pytest.mark.parametrize(
    "address",
    [
        "{scheme}://lake/other/data/x",  # another namespace of the same blockstore
        "{scheme}://lake/repo1",  # the namespace itself
        "{scheme}://lake/repo10/x",  # a namespace that only starts alike
        "mem://lake/repo1/x",  # another scheme
        "{namespace}/_lakefs/range",  # graveler's own files
        "{namespace}/symlinks/repo1/main/symlink.txt",  # the symlink files
        "{namespace}/a/../../other/x",
        "{scheme}:///lake//other/./data/x",  # another namespace, spelled otherwise
    ],
)
def test_an_address_outside_the_namespace_is_refused_and_never_marked(
    any_store: Store, address: str, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    address = address.format(scheme=lake_blocks.scheme, namespace=lake.namespace)
    other = backends.namespace(lake_blocks, "other")
    lake.blocks.put(other, "data/x", b"theirs")
    # Refused for where it is, not for a missing blob it was looked for in our namespace.
    refusal = "outside the repository's storage namespace|one of kvlake's own files"
    with pytest.raises(InvalidInputError, match=refusal):
        lake.catalog.links.link(
            lake.repository,
            "main",
            "p",
            address,
            size=6,
            checksum="c",
            content_type="t",
            metadata={},
        )
    assert lake.shared_addresses() == set()
    assert lake.graveler.diffs.diff_uncommitted(lake.repository, "main").entries == []
    assert lake.blocks.get(other, "data/x") == b"theirs"


def test_the_local_triple_slash_spelling_is_the_same_address(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    lake.blocks.put(lake.namespace, "imported/a", b"x")
    stat = lake.catalog.links.link(
        lake.repository,
        "main",
        "a",
        f"{lake_blocks.scheme}:///lake/repo1/imported/a",
        size=1,
        checksum="c",
        content_type="t",
        metadata={},
    )
    assert stat.address == "imported/a"


def test_if_absent_refuses_an_existing_path(any_store: Store, lake_blocks: BlockStore) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    lake.upload("a", b"x")
    lake.blocks.put(lake.namespace, "imported/a", b"y")
    with pytest.raises(PreconditionFailedError):
        _link(lake, "a", "imported/a", 1, if_absent=True)
    assert _read(lake, "main", "a") == b"x"


def test_a_protected_branch_refuses_a_link_and_nothing_is_marked(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    lake.blocks.put(lake.namespace, "imported/a", b"x")
    lake.graveler.protection.set_rule(lake.repository, "main", ["staging_write"])
    with pytest.raises(ProtectedBranchError):
        _link(lake, "a", "imported/a", 1)
    assert lake.shared_addresses() == set()


class _PausingBlocks(FaultyBlockStore):
    """Runs `before_delete` once, just before the next batch delete (a worker's)."""

    before_delete: Callable[[], object] | None = None

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        hook, self.before_delete = self.before_delete, None
        if hook is not None:
            hook()
        return super().delete_many(namespace, keys)


def test_a_link_racing_a_worker_between_its_check_and_its_delete_is_refused(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """The worker read the marks before the link marked: its claim makes the link refuse,
    so no entry is staged over the blob it then deletes."""
    blocks = _PausingBlocks(lake_blocks)
    lake = DeletionLake(any_store, blocks)
    old = lake.upload("a", b"old")
    lake.upload("a", b"new")  # logs the old blob
    lake.clock.advance(DAY)
    refused: list[Exception] = []

    def link() -> None:
        try:
            _link(lake, "b", old.address, old.size)
        except PreconditionFailedError as exc:
            refused.append(exc)

    blocks.before_delete = link
    lake.worker().run_once()
    assert refused, "the link went ahead while the worker was deleting its blob"
    assert old.address not in lake.data_blobs()
    with pytest.raises(EntryNotFoundError):
        lake.catalog.stat(lake.repository, "main", "b")


def test_a_crashed_workers_claim_blocks_links_for_the_lease_time_only(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    lake.blocks.put(lake.namespace, "imported/a", b"x")
    lake.log.claim(lake.repository.instance_uid, ["imported/a"])
    with pytest.raises(PreconditionFailedError):
        _link(lake, "a", "imported/a", 1)
    lake.clock.advance(lake.log.settings.lease_time + 1)
    assert _link(lake, "a", "imported/a", 1).address == "imported/a"


def test_a_worker_leaves_no_claims_behind(any_store: Store, lake_blocks: BlockStore) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    lake.upload("a", b"old")
    lake.upload("a", b"new")
    lake.settle()
    assert list(any_store.scan(deletion_keys.CLAIMS)) == []
