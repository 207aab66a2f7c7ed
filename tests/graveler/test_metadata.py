"""Repository metadata: set adds or replaces keys, delete removes them, racing edits both land."""

from __future__ import annotations

import threading

import pytest

from kvlake.errors import InvalidInputError
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.metadata import MAX_BYTES, MAX_KEY
from kvlake.graveler.records import Repository
from kvlake.kv import Store


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def test_set_adds_and_replaces_keys_and_delete_removes_them(
    graveler: Graveler, repo: Repository
) -> None:
    assert graveler.metadata.get(repo) == {}
    graveler.metadata.set(repo, {"owner": "ada", "team": "lakes"})
    graveler.metadata.set(repo, {"team": "rivers", "tier": "gold"})
    assert graveler.metadata.get(repo) == {"owner": "ada", "team": "rivers", "tier": "gold"}
    graveler.metadata.delete(repo, ["team", "no-such-key"])
    assert graveler.metadata.get(repo) == {"owner": "ada", "tier": "gold"}


def test_bad_keys_and_oversized_metadata_change_nothing(
    graveler: Graveler, repo: Repository, kv: Store
) -> None:
    graveler.metadata.set(repo, {"kept": "1"})
    for bad in ({"": "v"}, {"k" * (MAX_KEY + 1): "v"}, {"big": "x" * MAX_BYTES}):
        with pytest.raises(InvalidInputError):
            graveler.metadata.set(repo, bad)
    assert graveler.metadata.get(repo) == {"kept": "1"}


def test_metadata_dies_with_its_repository(
    graveler: Graveler, repo: Repository, namespace: str
) -> None:
    graveler.metadata.set(repo, {"owner": "ada"})
    graveler.delete_repository("repo1")
    again = graveler.create_repository("repo1", storage_namespace=namespace + "-2")
    assert graveler.metadata.get(again) == {}


def test_racing_edits_of_different_keys_both_land(any_graveler: Graveler, namespace: str) -> None:
    graveler = any_graveler
    repo = graveler.create_repository("race", storage_namespace=namespace)
    start = threading.Barrier(8)

    def edit(i: int) -> None:
        start.wait()
        graveler.metadata.set(repo, {f"k{i}": str(i)})

    threads = [threading.Thread(target=edit, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert graveler.metadata.get(repo) == {f"k{i}": str(i) for i in range(8)}
