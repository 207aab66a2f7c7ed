"""The cleaner reads its queues in bounded batches and still empties them in one pass."""

from __future__ import annotations

import pytest

from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle import cleaner as cleaner_module
from kvlake.graveler.lifecycle.cleaner import Cleaner
from tests.graveler.helpers import value


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cleaner_module, "BATCH", 3)


def test_more_due_tokens_than_a_batch_are_all_dropped_in_one_pass(
    graveler: Graveler, namespace: str
) -> None:
    repository = graveler.create_repository("repo1", storage_namespace=namespace)
    for n in range(10):
        graveler.create_branch(repository, f"b{n}", "main")
        graveler.set(repository, f"b{n}", b"k", value(str(n)))
        graveler.delete_branch(repository, f"b{n}")
    report = Cleaner(graveler).clean_once()
    assert report.tokens_dropped == 10
    assert list(graveler.store.scan(keys.DROPPED_TOKENS)) == []


def test_more_deleted_repositories_than_a_batch_are_all_cleaned_in_one_pass(
    graveler: Graveler, namespace: str
) -> None:
    for n in range(7):
        graveler.create_repository(f"repo{n}", storage_namespace=f"{namespace}{n}")
        graveler.delete_repository(f"repo{n}")
    report = Cleaner(graveler).clean_once()
    assert report.repositories_cleaned == 7
    assert list(graveler.store.scan(keys.DELETED_REPOSITORIES)) == []
