"""An upload logs its blob's intent before storing a byte and withdraws it just before
staging (issue 22 f), so a blob whose entry never got staged is the deletion log's to
collect, not an orphan only garbage collection finds. (A process killed between the put
and the staging: tests/deletion/test_sigkill.py.) Local folder and S3."""

from __future__ import annotations

import io

import msgspec
import pytest

from kvlake.catalog import UPLOAD_SECONDS
from kvlake.errors import KvlakeError, PreconditionFailedError
from kvlake.kv.memory import MemoryStore
from tests.deletion.blockstores import BlobCall, FaultyBlockStore, When
from tests.deletion.helpers import DAY, DeletionLake


def test_a_put_that_stored_its_blob_but_failed_leaves_it_to_the_log(lake: DeletionLake) -> None:
    def fail_after_put(call: BlobCall) -> When | None:
        return "after" if call.op == "put" else None

    blocks = FaultyBlockStore(lake.blocks, fail_after_put)
    faulty = DeletionLake(lake.store, blocks, clock=lake.clock, create=False)
    with pytest.raises(KvlakeError):
        faulty.upload("a", b"stored, never staged")
    assert len(lake.data_blobs()) == 1 and lake.pending() == 1

    lake.settle()

    assert lake.data_blobs() == set() == lake.referenced() and lake.pending() == 0


def test_a_staged_upload_leaves_no_intent_behind(lake: DeletionLake) -> None:
    stat = lake.upload("a", b"body")
    assert lake.pending() == 0
    lake.settle()
    assert lake.data_blobs() == {stat.address} == lake.referenced()


class SlowBody(io.RawIOBase):
    """A body whose bytes arrive only after the intent fell due and a worker ran."""

    def __init__(self, lake: DeletionLake) -> None:
        self.lake, self.sent = lake, False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.sent:
            return b""
        self.lake.clock.advance(UPLOAD_SECONDS + DAY)
        self.lake.worker().run_once()  # finds no blob yet: "not found" counts as deleted
        self.sent = True
        return b"late"


def test_an_upload_outliving_its_intent_is_refused_and_leaves_nothing(lake: DeletionLake) -> None:
    with pytest.raises(PreconditionFailedError, match="upload again"):
        lake.catalog.upload(lake.repository, "main", "slow", SlowBody(lake))  # type: ignore[arg-type]
    assert lake.data_blobs() == set() and lake.pending() == 0
    assert lake.referenced() == set()


def test_an_upload_without_a_deletion_log_logs_nothing(lake_blocks: object) -> None:
    from kvlake.config import DeletionSettings

    with MemoryStore() as store:
        lake = DeletionLake(store, lake_blocks, settings=DeletionSettings(enabled=False))  # type: ignore[arg-type]
        lake.upload("a", b"x")
        assert lake.pending() == 0


def test_withdrawing_an_appended_intent_finds_it_even_where_its_bytes_changed(
    lake: DeletionLake,
) -> None:
    """An upload withdraws its intent with one delete_if on the bytes it appended; a
    record rewritten under the same key (other bytes) is still found and withdrawn."""
    log, repository = lake.log, lake.repository
    intent = log.new_record(repository, "data/a", "abandoned_upload", staging_token="t")
    log.append([intent])
    assert log.withdraw_appended(intent) is True and lake.pending() == 0

    log.append([msgspec.structs.replace(intent, path=b"rewritten")])
    assert lake.pending() == 1
    assert log.withdraw_appended(intent) is True and lake.pending() == 0
    assert log.withdraw_appended(intent) is False
