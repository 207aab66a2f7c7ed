"""Acknowledged catalog writes survive racing commits and writers (invariant 2), and their
blobs survive the deletion workers (invariant 4), on every KV driver.

Races are forced step by step: the write under test runs on a `SteppingStore`
and the racing operations run inline at chosen KV calls of it.
"""

from __future__ import annotations

import io

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import ObjectEntry, ObjectStat
from kvlake.catalog.records import to_value
from kvlake.errors import NoChangesError, PreconditionFailedError, UnavailableError
from kvlake.graveler import keys
from kvlake.graveler.refs.store import partition_of
from kvlake.kv import Store
from kvlake.kv.faults import Call, Fault
from tests.deletion.helpers import DeletionLake
from tests.graveler.stepping import SteppingStore, calls_of, run_paused


def test_a_write_replaced_in_a_sealed_token_by_a_writer_that_died_is_written_again(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    """Issue 9, defect 6: W1 and W2 read the branch before a seal; W2 replaces W1's entry
    in the sealed token and dies; W1 must not count itself superseded."""
    stepping = SteppingStore(any_store)
    lake = DeletionLake(stepping, lake_blocks)
    repo = lake.repository
    lake.upload("filler", b"f")  # so the commit has something to seal
    sealed = lake.graveler.get_branch(repo, "main").staging_token
    staging = keys.staging_partition(sealed)
    branch_key = keys.branch_key("main")
    wrote: list[str] = []

    def race(call: Call) -> None:
        if call.op == "set_if" and call.partition == staging and not wrote:
            lake.commit()  # seals and reads the token before W1's write lands in it
        elif call.op == "get" and call.key == branch_key and wrote == ["W1"]:
            lake.blocks.put(repo.storage_namespace, "data/w2", io.BytesIO(b"w2"))
            w2 = ObjectEntry(
                address="data/w2", size=2, checksum="", mtime=lake.clock(), content_type="x"
            )
            stepping.arm(Fault(op="get", partition=partition_of(repo), key=branch_key))
            with pytest.raises(UnavailableError):  # W2 dies before writing again
                lake.graveler.set(repo, "main", b"a", to_value(w2), token=sealed)
        if call.op == "set_if" and call.partition == staging:
            wrote.append("W1")

    w1 = run_paused(stepping, lambda: lake.upload("a", b"w1"), at_each_call=race)
    assert wrote == ["W1"]
    assert lake.catalog.stat(lake.repository, "main", "a").address == w1.address
    # Written again after the seal: the blob may also be committed from the sealed
    # token, so replacing the new entry must leave it to garbage collection.
    assert w1.address in lake.shared_addresses()
    lake.settle()
    lake.commit()
    assert lake.catalog.stat(lake.repository, "main", "a").address == w1.address
    assert w1.address in lake.data_blobs()


def test_an_upload_deleted_before_a_commit_that_finds_nothing_is_deleted(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """Issue 9, defect 4: the deletion record of the blob waited for ever on a token the
    empty commit left sealed; the token is unsealed, so the worker deletes the blob."""
    lake = DeletionLake(any_store, lake_blocks)
    stat = lake.upload("a", b"1")
    lake.catalog.delete_object(lake.repository, "main", "a")
    with pytest.raises(NoChangesError):
        lake.commit()
    assert lake.graveler.get_branch(lake.repository, "main").sealed_tokens == ()
    lake.settle()  # fails if a record is still waiting after 40 rounds
    assert stat.address not in lake.data_blobs()


def test_a_commit_racing_a_hard_reset_leaves_every_referenced_blob_readable(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    """Issue 9, defect 5, with blobs: whether the commit wins or reports the reset, every
    object a branch's history references stays readable once the workers have run."""
    stepping = SteppingStore(any_store)
    lake = DeletionLake(stepping, lake_blocks)
    repo = lake.repository
    lake.graveler.create_branch(repo, "other", "main")
    lake.upload("probe", b"p")
    total = calls_of(stepping, lake.commit)
    results: list[str] = []
    reset = 0
    for n in range(total):
        lake.upload(f"other/{n}", b"o", branch="other")
        target = lake.commit("other")
        lake.upload(f"k{n}", b"%d" % n)
        try:
            results.append(
                run_paused(
                    stepping,
                    lake.commit,
                    at_call=n,
                    intruder=lambda: lake.graveler.resets.reset_hard(repo, "main", target),  # noqa: B023
                )
            )
        except PreconditionFailedError:
            reset += 1
        except NoChangesError:
            continue
    assert reset  # the reset landed while the commit ran, and the commit said so
    lake.settle()
    for ref in (*results, "main", "other"):
        listing = lake.catalog.list_objects(lake.repository, ref)
        for stat in listing.results:
            assert isinstance(stat, ObjectStat)
            assert stat.address in lake.data_blobs(), (ref, stat.path)
