"""A job's commit checks again what planning checked: a write lock, a bulk delete or a
protection rule that appeared while the tasks ran refuses the commit, and nothing of the
job becomes visible. Driven at the commit step itself (no Spark session needed): planning,
then the change, then `commit_job` with a file a task would have written."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from kvlake import ids
from kvlake.errors import LockedError, ProtectedBranchError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.dataset_commit import WrittenFile, commit_job, plan_write
from tests.pipelines.test_gc import namespace_of

URI = "lakefs://repo1/main/table/"

Change = Callable[[Lake, Repository], None]


def _write_lock(lake: Lake, repo: Repository) -> None:
    lake.locks.acquire(repo, "table/part-0.parquet", owner="someone-else", ttl=600)


def _bulk_delete(lake: Lake, repo: Repository) -> None:
    lake.locks.take_delete_lock(repo, ids.new_uid(), "main", "table/", lake.clock() + 600)


def _protection(lake: Lake, repo: Repository) -> None:
    lake.graveler.protection.set_rule(repo, "main", ["commit"])


@pytest.mark.parametrize("blockstore_kind", ["local"])  # about the commit's checks, not blobs
@pytest.mark.parametrize(
    ("change", "refused"),
    [
        (_write_lock, LockedError),
        (_bulk_delete, LockedError),
        (_protection, ProtectedBranchError),
    ],
    ids=["write-lock", "bulk-delete", "protection-rule"],
)
def test_what_appeared_during_the_job_refuses_its_commit(
    lake: Lake, change: Change, refused: type[Exception]
) -> None:
    repo = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    lake.catalog.upload(repo, "main", "README", io.BytesIO(b"hello"))
    head = lake.graveler.commit(repo, "main", committer="t", message="first")
    target = plan_write(
        lake, URI, {"commit_message": "the job"}, data_schema_json='{"type":"struct","fields":[]}'
    )
    address = f"data/20260101T00/{ids.new_uid()}"
    size = lake.blockstore.put(repo.storage_namespace, address, b"PAR1 rows PAR1")
    written = WrittenFile("table/part-0.parquet", address, size, "etag", lake.clock())

    change(lake, repo)
    with pytest.raises(refused):
        commit_job(lake, target, [written], overwrite=False, job_metadata={})

    assert lake.graveler.get_branch(repo, "main").commit_id == head
    assert [key for key, _ in lake.graveler.list(repo, "main")] == [b"README"]
