"""Resets drop staged objects without orphaning their blobs or deleting committed ones.

Issue 9, defect 3: `reset_key`, `reset_prefix` and a reset of all uncommitted
changes removed staged entries without logging their blobs, so they stayed on
storage for ever. Defect 1: a reset racing a commit could remove an entry from a
token the commit had just sealed (and read); its blob must then wait for the
commit, never be deleted under it. Every test ends with the workers and the
cleaner run to completion, and checks exactly which blobs are left.
"""

from __future__ import annotations

import threading

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import ObjectStat
from kvlake.errors import EntryNotFoundError, NoChangesError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.kv import Store
from kvlake.kv.faults import Call
from tests.deletion.helpers import DeletionLake
from tests.graveler.stepping import SteppingStore, calls_of, run_paused


def test_resets_of_a_key_a_folder_and_everything_log_the_blobs_they_drop(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    committed = lake.upload("kept", b"c")
    lake.commit()
    for path in ("a", "b/x", "b/y", "c", "kept"):
        lake.upload(path, b"staged " + path.encode())
    lake.graveler.resets.reset_key(repo, "main", b"a")
    lake.graveler.resets.reset_prefix(repo, "main", b"b")
    assert lake.pending() == 3  # logged before they left staging
    lake.graveler.resets.reset_branch(repo, "main")  # "c" and the staged "kept": the cleaner's
    lake.settle()
    assert lake.data_blobs() == {committed.address} == lake.referenced()
    assert lake.catalog.stat(lake.repository, "main", "kept").address == committed.address


def test_a_reset_of_a_key_at_any_point_of_a_commit_deletes_no_committed_blob(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    """The commit is paused at each of its KV calls; the reset and a worker run there."""
    stepping = SteppingStore(any_store)
    lake = DeletionLake(stepping, lake_blocks)
    repo = lake.repository
    lake.upload("probe", b"p")
    total = calls_of(stepping, lake.commit)
    heads: list[str] = []
    for n in range(total):
        path = f"k{n}"
        lake.upload(path, b"v")

        def reset_then_work(path: str = path) -> None:
            lake.graveler.resets.reset_key(repo, "main", path.encode())
            lake.clock.advance(3600)  # past the send delay: the worker decides now
            lake.worker().run_once()

        try:
            heads.append(run_paused(stepping, lake.commit, at_call=n, intruder=reset_then_work))
        except NoChangesError:
            continue
    lake.settle()
    for ref in (*heads, "main"):
        for stat in lake.catalog.list_objects(lake.repository, ref).results:
            assert isinstance(stat, ObjectStat)
            assert stat.address in lake.data_blobs(), (ref, stat.path)
    assert lake.data_blobs() == lake.referenced()


def test_a_reset_that_read_the_branch_before_a_seal_never_gets_a_committed_blob_deleted(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    """Defect 1: the reset read the branch, a commit sealed and read the token, the reset
    removed the entry from the sealed token (logging its blob), and a worker ran before
    the commit published. The sealed token must make the worker wait: the commit
    publishes that blob. The reset is paused at each of its KV calls in turn (in a
    thread, so the commit can run to just before its publish meanwhile, then wait)."""
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    resetting = SteppingStore(any_store)
    resetter = _graveler(lake, resetting)
    committing = SteppingStore(any_store)
    committer = _graveler(lake, committing)
    lake.upload("probe", b"p")
    total = calls_of(resetting, lambda: resetter.resets.reset_key(repo, "main", b"probe"))
    for n in range(total):
        path = f"k{n}".encode()
        lake.upload(path.decode(), b"v")
        lake.upload(f"other{n}", b"o")  # the commit has work whatever the reset does
        paused, resume = threading.Event(), threading.Event()
        first = len(resetting.calls)

        def pause_at_n(
            call: Call,
            first: int = first,
            n: int = n,
            paused: threading.Event = paused,
            resume: threading.Event = resume,
        ) -> None:
            if call.index - first == n:
                paused.set()
                resume.wait(60)

        resetting.at_call = pause_at_n
        errors: list[BaseException] = []

        def reset(path: bytes = path, errors: list[BaseException] = errors) -> None:
            try:
                resetter.resets.reset_key(repo, "main", path)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
                errors.append(exc)
            finally:
                paused.set()  # noqa: B023

        thread = threading.Thread(target=reset)
        thread.start()
        paused.wait(60)

        def before_publish(call: Call, thread: threading.Thread = thread) -> None:
            if call.op == "set_many" and call.partition == keys.DROPPED_TOKENS:
                committing.at_call = None
                resume.set()  # noqa: B023 - the reset finishes now, on the sealed token
                thread.join(60)
                lake.clock.advance(3600)  # past the send delay: the worker decides now
                lake.worker().run_once()

        committing.at_call = before_publish
        try:
            committer.commit(repo, "main", committer="t", message="m")
        except NoChangesError:
            pass
        committing.at_call = None
        resume.set()
        thread.join(60)
        resetting.at_call = None
        assert not errors, errors
        with pytest.raises(EntryNotFoundError):  # reset, whatever the commit published
            lake.catalog.stat(repo, "main", path.decode())
    lake.settle()
    for ref in [commit.id for commit in lake.graveler.history.log(repo, "main").commits]:
        for stat in lake.catalog.list_objects(lake.repository, ref).results:
            assert isinstance(stat, ObjectStat)
            assert stat.address in lake.data_blobs(), (ref, stat.path)


def _graveler(lake: DeletionLake, store: Store) -> Graveler:
    """Another graveler over the lake's data, its KV calls going through `store`."""
    return Graveler(
        store,
        lake.graveler.committed,
        check_namespace=lake.blocks.check_namespace,
        clock=lake.clock,
        token_drop_delay=0,
        staging_hooks=lake.graveler.staging_hooks,
    )


def test_a_committed_value_a_reset_restages_over_a_sealed_key_is_never_deleted(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    """A reset of a key a running commit sealed stages the committed value over it; that
    value then sits in a token no commit may consume, so its address is marked shared
    before: overwriting it later must leave the committed blob to garbage collection."""
    stepping = SteppingStore(any_store)
    lake = DeletionLake(stepping, lake_blocks)
    repo = lake.repository
    first = lake.upload("a", b"1")
    lake.commit()
    lake.upload("a", b"2")

    def reset_while_sealed(call: Call) -> None:
        if lake.graveler.get_branch(repo, "main").sealed_tokens:
            stepping.at_call = None
            lake.graveler.resets.reset_key(repo, "main", b"a")

    run_paused(stepping, lake.commit, at_each_call=reset_while_sealed)
    assert lake.catalog.stat(lake.repository, "main", "a").address == first.address  # the shadow
    assert first.address in lake.shared_addresses()
    lake.upload("a", b"3")  # replaces the shadow in place
    lake.settle()
    oldest = lake.graveler.history.log(repo, "main").commits[-2].id
    assert lake.catalog.stat(lake.repository, oldest, "a").address == first.address
    assert first.address in lake.data_blobs()
