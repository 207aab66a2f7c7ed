"""kvlake's own `pre-bulk-delete` event: a gate read from the branch's action files that can
refuse a bulk delete before anything is recorded."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import HookAbortedError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Filters, parse_branch_path
from tests.support import backends
from tests.support.lakes import lake_on

GATE = b"""name: keep raw data
on:
  pre-bulk-delete:
    branches: [main]
hooks:
  - id: refuse_main
    type: lua
    properties:
      script: |
        if action.committer ~= "admin" then
          error("only admin bulk-deletes on " .. action.branch_id .. ", not " .. action.committer)
        end
"""


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[Lake]:
    with lake_on(lake_blocks) as lake:
        yield lake


def _repository(lake: Lake) -> Repository:
    scheme = lake.blockstore.scheme
    repository = lake.graveler.create_repository(
        "repo", storage_namespace=backends.namespace(scheme, "b")
    )
    lake.catalog.upload(repository, "main", "_lakefs_actions/gate.yaml", io.BytesIO(GATE))
    lake.catalog.upload(repository, "main", "raw/1", io.BytesIO(b"1"))
    lake.graveler.commit(repository, "main", committer="admin", message="gate and data")
    lake.graveler.create_branch(repository, "dev", "main")  # with the gate file too
    return repository


def test_a_failing_pre_bulk_delete_hook_refuses_the_request_recording_nothing(
    lake: Lake,
) -> None:
    repository = _repository(lake)
    with pytest.raises(HookAbortedError) as refused:
        lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo/main/raw/"), BulkDeleteOptions(), created_by="ana"
        )
    message = str(refused.value)
    assert message.startswith("pre-bulk-delete hook aborted, run id '")
    assert (
        "hook run id '0000_0000' failed on action 'keep raw data' hook 'refuse_main':"
        " action failed: lua script failed:" in message
    )
    assert "only admin bulk-deletes on main, not ana" in message
    assert list(lake.ledger.list()) == []  # nothing started
    (run,) = lake.actions.runs.scan(repository)
    assert (run.event_type, run.branch, run.passed) == ("pre-bulk-delete", "main", False)

    # The gate passes its own rule, and matches only the branches it names.
    admin = lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo/main/raw/"), BulkDeleteOptions(), created_by="admin"
    )
    other = lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo/dev/raw/"), BulkDeleteOptions(), created_by="ana"
    )
    assert {op.id for op in lake.ledger.list()} == {admin.id, other.id}


PATH_GATE = b"""name: keep raw data whole
on:
  pre-bulk-delete:
hooks:
  - id: refuse_raw
    type: lua
    properties:
      script: |
        local wide = string.sub(action.prefix, 1, 4) == "raw/" and action.filters.glob == nil
        if wide and not action.dry_run then
          error("delete only named files under raw/, not all of " .. action.prefix)
        end
"""


def test_a_pre_bulk_delete_hook_refuses_by_prefix_and_filters(lake: Lake) -> None:
    scheme = lake.blockstore.scheme
    repository = lake.graveler.create_repository(
        "repo", storage_namespace=backends.namespace(scheme, "p")
    )
    lake.catalog.upload(repository, "main", "_lakefs_actions/gate.yaml", io.BytesIO(PATH_GATE))
    lake.graveler.commit(repository, "main", committer="admin", message="gate")
    raw = parse_branch_path("lakefs://repo/main/raw/2024/")
    with pytest.raises(HookAbortedError, match="not all of raw/2024/"):
        lake.bulk_deletes.create(raw, BulkDeleteOptions(), created_by="admin")
    assert list(lake.ledger.list()) == []

    allowed = [
        lake.bulk_deletes.create(
            raw, BulkDeleteOptions(filters=Filters(glob="*.tmp")), created_by="admin"
        ),
        lake.bulk_deletes.create(raw, BulkDeleteOptions(dry_run=True), created_by="admin"),
        lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo/main/tmp/"), BulkDeleteOptions(), created_by="admin"
        ),
    ]
    assert {op.id for op in lake.ledger.list()} == {op.id for op in allowed}
