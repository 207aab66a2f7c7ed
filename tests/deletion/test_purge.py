"""Repository deletion with purge removes every blob of the namespace, and only that."""

from __future__ import annotations

import msgspec
import pytest

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.deletion import DeadLetters, Purges
from kvlake.deletion import keys as deletion_keys
from kvlake.deletion import purge as purge_module
from kvlake.deletion.records import PurgeRequest
from kvlake.errors import (
    ConflictError,
    RepositoryNotFoundError,
    StorageNamespaceInUseError,
    UnavailableError,
)
from kvlake.graveler import keys
from kvlake.graveler.dump import dump_key
from kvlake.graveler.records import Repository, encode
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.blockstores import BlobCall, FaultyBlockStore
from tests.deletion.helpers import DeletionLake


def purges(lake: DeletionLake) -> Purges:
    return lake.purges


def fill(lake: DeletionLake) -> set[str]:
    lake.upload("a", b"1")
    lake.upload("b", b"1")
    lake.commit()
    lake.upload("a", b"2")
    lake.upload("c", b"3")
    return set(lake.blocks.list_keys(lake.namespace))


def test_purge_deletes_every_blob_of_the_namespace_and_reports_it(lake: DeletionLake) -> None:
    everything = fill(lake)
    assert any(key.startswith("_lakefs/") for key in everything)
    uid = lake.repository.instance_uid
    request = purges(lake).delete_repository("repo1", purge=True)
    assert isinstance(request, PurgeRequest) and request.state == "requested"
    with pytest.raises(RepositoryNotFoundError):
        lake.graveler.get_repository("repo1")
    lake.settle()
    assert list(lake.blocks.list_keys(lake.namespace)) == []
    report = purges(lake).report("repo1", uid)
    assert report is not None and report.request.state == "logged"
    assert report.request.logged == len(everything) == report.counts.deleted
    assert report.counts.dead_lettered == 0
    assert list(purges(lake).reports()) == [report]


def test_deleting_without_purge_keeps_the_data(lake: DeletionLake) -> None:
    everything = fill(lake)
    assert purges(lake).delete_repository("repo1", purge=False) is None
    report = lake.settle()
    assert report.deleted == 0
    # The one overwritten staged blob, logged before the deletion, is kept too.
    assert set(lake.blocks.list_keys(lake.namespace)) == everything


def test_purge_is_refused_when_a_repository_older_than_namespace_owners_overlaps(
    lake: DeletionLake,
) -> None:
    # Repositories created before namespaces had owners have no claim, so two may
    # share a namespace; purge still refuses to delete the other one's data.
    legacy = Repository(
        name="repo2",
        storage_namespace=lake.namespace + "/inner",
        default_branch="main",
        creation_date=0.0,
        state="active",
        instance_uid=ids.new_uid(),
    )
    lake.store.set(keys.REPOSITORIES, keys.repository_key("repo2"), encode(legacy))
    with pytest.raises(ConflictError, match="shares storage namespace .* with repository 'repo2'"):
        purges(lake).delete_repository("repo1", purge=True)
    assert lake.graveler.get_repository("repo1").state == "active"
    assert list(purges(lake).reports()) == []


def test_a_namespace_being_purged_is_refused_until_the_purge_finishes(lake: DeletionLake) -> None:
    fill(lake)
    purges(lake).delete_repository("repo1", purge=True)
    for create in (lake.graveler.create_repository, lake.graveler.create_bare_repository):
        with pytest.raises(StorageNamespaceInUseError, match="being purged"):
            create("repo2", storage_namespace=lake.namespace)
    lake.cleaner.clean_once()  # the blobs are logged: still purging
    with pytest.raises(StorageNamespaceInUseError, match="being purged"):
        lake.graveler.create_repository("repo2", storage_namespace=lake.namespace)
    lake.settle()
    assert list(lake.blocks.list_keys(lake.namespace)) == []
    repo2 = lake.graveler.create_repository("repo2", storage_namespace=lake.namespace)
    owner = lake.graveler.references.namespace_owner(lake.namespace)
    assert owner is not None and owner.instance_uid == repo2.instance_uid


def test_a_purge_record_retried_after_the_namespace_was_reused_deletes_nothing(
    lake: DeletionLake,
) -> None:
    fill(lake)
    purges(lake).delete_repository("repo1", purge=True)
    lake.cleaner.clean_once()  # the blobs are logged

    def refuse_deletes(call: BlobCall) -> str | None:
        return "before" if call.op.startswith("delete") else None

    # Every delete fails until the records are dead letters: the purge is finished.
    lake.settle(lake.worker(FaultyBlockStore(lake.blocks, refuse_deletes)))  # type: ignore[arg-type]
    letters = DeadLetters(lake.log)
    assert letters.count() > 0
    repo2 = lake.graveler.create_repository("repo2", storage_namespace=lake.namespace)
    everything = set(lake.blocks.list_keys(lake.namespace))
    letters.requeue()
    report = lake.settle()
    assert report.deleted == 0 and report.kept > 0
    assert set(lake.blocks.list_keys(lake.namespace)) == everything
    assert lake.graveler.get_repository("repo2") == repo2


def test_a_crashed_namespace_listing_resumes_from_its_checkpoint(
    monkeypatch: pytest.MonkeyPatch,
    lake_blocks: BlockStore,
) -> None:
    monkeypatch.setattr(purge_module, "CHECKPOINT_EVERY", 3)
    store = FaultyStore(MemoryStore())
    lake = DeletionLake(store, lake_blocks)
    for i in range(10):
        lake.upload(f"p{i}")
    everything = set(lake.blocks.list_keys(lake.namespace))
    uid = lake.repository.instance_uid
    purges(lake).delete_repository("repo1", purge=True)
    store.arm(Fault(op="set_if", partition=deletion_keys.PURGES, skip=1))
    assert lake.cleaner.clean_once().failures  # the second checkpoint failed
    loaded = purges(lake).load("repo1", uid)
    assert loaded is not None and loaded[0].logged == 3 and loaded[0].last_key
    lake.settle()
    report = purges(lake).report("repo1", uid)
    assert report is not None and report.request.logged == len(everything)
    assert list(lake.blocks.list_keys(lake.namespace)) == []


def test_a_purge_whose_deletion_crashed_is_finished_by_a_retry(lake_blocks: BlockStore) -> None:
    store = FaultyStore(MemoryStore())
    lake = DeletionLake(store, lake_blocks)
    fill(lake)
    store.arm(Fault(op="set", partition=keys.DELETED_REPOSITORIES))
    with pytest.raises(UnavailableError):
        purges(lake).delete_repository("repo1", purge=True)
    record = lake.graveler.references.repository_record("repo1")
    assert record is not None and record.state == "deleting"
    request = purges(lake).delete_repository("repo1", purge=True)
    assert request is not None
    with pytest.raises(RepositoryNotFoundError):
        purges(lake).delete_repository("repo1", purge=True)
    lake.settle()
    assert list(lake.blocks.list_keys(lake.namespace)) == []


def _keep_and_take_over(lake: DeletionLake, name: str) -> tuple[set[str], Repository]:
    """repo1 with committed data, deleted without purge; a bare `name` on its namespace."""
    lake.upload("a", b"kept")
    lake.commit()
    kept = set(lake.blocks.list_keys(lake.namespace))
    purges(lake).delete_repository("repo1", purge=False)
    lake.settle()
    bare = lake.graveler.create_bare_repository(name, storage_namespace=lake.namespace)
    return kept, bare


@pytest.mark.parametrize("name", ["repo1", "repo2"])
def test_purging_a_bare_repository_on_a_kept_namespace_keeps_the_kept_data(
    lake: DeletionLake, name: str
) -> None:
    """Issue 23 #7: the kept repository's blobs are referenced by no ref of the bare one."""
    kept, bare = _keep_and_take_over(lake, name)
    with pytest.raises(ConflictError) as refused:
        purges(lake).delete_repository(name, purge=True)
    message = str(refused.value)
    assert f"deleted repository 'repo1' (instance {lake_uid(lake, 'repo1')})" in message
    assert f"Restore that repository's refs dump into {name!r}" in message
    assert purges(lake).load(name, bare.instance_uid) is None  # nothing was recorded
    assert lake.graveler.get_repository(name).instance_uid == bare.instance_uid
    lake.settle()
    assert set(lake.blocks.list_keys(lake.namespace)) == kept
    purges(lake).delete_repository(name, purge=False)  # what the refusal offers
    lake.settle()
    assert set(lake.blocks.list_keys(lake.namespace)) == kept


def test_a_kept_namespace_passed_on_unrestored_still_refuses_the_purge(lake: DeletionLake) -> None:
    kept, _ = _keep_and_take_over(lake, "repo2")
    purges(lake).delete_repository("repo2", purge=False)
    lake.settle()
    lake.graveler.create_bare_repository("repo3", storage_namespace=lake.namespace)
    with pytest.raises(ConflictError, match="deleted repository 'repo1' .*, 'repo2'"):
        purges(lake).delete_repository("repo3", purge=True)
    lake.settle()
    assert set(lake.blocks.list_keys(lake.namespace)) == kept


def test_a_purge_after_the_kept_refs_were_restored_deletes_the_namespace(
    lake: DeletionLake,
) -> None:
    lake.upload("a", b"kept")
    lake.commit()
    dump = lake.graveler.dumps.dump(lake.repository)
    purges(lake).delete_repository("repo1", purge=False)
    lake.settle()
    bare = lake.graveler.create_bare_repository("repo1", storage_namespace=lake.namespace)
    lake.graveler.dumps.restore(bare, dump.dump_id)
    owner = lake.graveler.references.namespace_owner(lake.namespace)
    assert owner is not None and owner.kept == ()
    purges(lake).delete_repository("repo1", purge=True)
    lake.settle()
    assert list(lake.blocks.list_keys(lake.namespace)) == []


def lake_uid(lake: DeletionLake, name: str) -> str:
    """The uid of the deleted instance of `name` the namespace's claim names as kept."""
    owner = lake.graveler.references.namespace_owner(lake.namespace)
    assert owner is not None
    return next(k.rpartition("/")[2] for k in owner.kept if k.rpartition("/")[0] == name)


def test_a_dump_made_before_dumps_named_their_instance_is_matched_by_name(
    lake: DeletionLake,
) -> None:
    lake.upload("a", b"kept")
    lake.commit()
    dump = lake.graveler.dumps.dump(lake.repository)
    manifest = msgspec.json.decode(msgspec.json.encode(dump), type=dict[str, object])
    del manifest["instance_uid"]  # as dumps were written before the field existed
    key = dump_key(dump.dump_id, "manifest.json")
    lake.blocks.put(lake.namespace, key, msgspec.json.encode(manifest))
    purges(lake).delete_repository("repo1", purge=False)
    lake.settle()
    bare = lake.graveler.create_bare_repository("repo1", storage_namespace=lake.namespace)
    lake.graveler.dumps.restore(bare, dump.dump_id)
    owner = lake.graveler.references.namespace_owner(lake.namespace)
    assert owner is not None and owner.kept == ()
