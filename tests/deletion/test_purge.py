"""Repository deletion with purge removes every blob of the namespace, and only that."""

from __future__ import annotations

import pytest

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.deletion import DeadLetters, Purges
from kvlake.deletion import keys as deletion_keys
from kvlake.deletion import purge as purge_module
from kvlake.deletion.records import PurgeRequest
from kvlake.errors import ConflictError, RepositoryNotFoundError, UnavailableError
from kvlake.graveler import keys
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import Lake


def purges(lake: Lake) -> Purges:
    return Purges(lake.log, lake.graveler, lake.blocks)


def fill(lake: Lake) -> set[str]:
    lake.upload("a", b"1")
    lake.upload("b", b"1")
    lake.commit()
    lake.upload("a", b"2")
    lake.upload("c", b"3")
    return set(lake.blocks.list_keys(lake.namespace))


def test_purge_deletes_every_blob_of_the_namespace_and_reports_it(lake: Lake) -> None:
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


def test_deleting_without_purge_keeps_the_data(lake: Lake) -> None:
    everything = fill(lake)
    assert purges(lake).delete_repository("repo1", purge=False) is None
    report = lake.settle()
    assert report.deleted == 0
    # The one overwritten staged blob, logged before the deletion, is kept too.
    assert set(lake.blocks.list_keys(lake.namespace)) == everything


def test_purge_is_refused_when_another_repository_shares_the_namespace(lake: Lake) -> None:
    lake.graveler.create_repository("repo2", storage_namespace=lake.namespace + "/inner")
    with pytest.raises(ConflictError, match="shares storage namespace .* with repository 'repo2'"):
        purges(lake).delete_repository("repo1", purge=True)
    assert lake.graveler.get_repository("repo1").state == "active"
    assert list(purges(lake).reports()) == []


def test_a_purged_namespace_reused_by_a_new_repository_is_not_deleted(lake: Lake) -> None:
    fill(lake)
    purges(lake).delete_repository("repo1", purge=True)
    lake.cleaner.clean_once()  # the blobs are logged
    lake.graveler.create_repository("repo2", storage_namespace=lake.namespace)
    lake.settle()
    letters = list(DeadLetters(lake.log).scan())
    assert letters and all("used by live repository 'repo2'" in x.reason for x in letters)
    assert lake.data_blobs()  # nothing deleted under the new repository


def test_a_crashed_namespace_listing_resumes_from_its_checkpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(purge_module, "CHECKPOINT_EVERY", 3)
    store = FaultyStore(MemoryStore())
    lake = Lake(store, MemoryBlockStore())
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


def test_a_purge_whose_deletion_crashed_is_finished_by_a_retry() -> None:
    store = FaultyStore(MemoryStore())
    lake = Lake(store, MemoryBlockStore())
    fill(lake)
    store.arm(Fault(op="set", partition=keys.DELETED_REPOSITORIES))
    with pytest.raises(UnavailableError):
        purges(lake).delete_repository("repo1", purge=True)
    assert lake.graveler.repositories.load("repo1")[0].state == "deleting"
    request = purges(lake).delete_repository("repo1", purge=True)
    assert request is not None
    with pytest.raises(RepositoryNotFoundError):
        purges(lake).delete_repository("repo1", purge=True)
    lake.settle()
    assert list(lake.blocks.list_keys(lake.namespace)) == []
