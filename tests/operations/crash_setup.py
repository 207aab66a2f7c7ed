"""Shared by the crash test and the process it kills: the lake, its data, the swap journal."""

from __future__ import annotations

import io

from kvlake.blockstore import BlockStore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import DeletionSettings, OperationsSettings, Settings
from kvlake.kv import Predicate, Store
from kvlake.lake import Lake
from kvlake.operations import Operation, keys
from kvlake.operations.records import decode_operation
from tests.support import FakeClock, backends

BATCH_SIZE = 100
LEASE_TIME = 30.0


def lake_over(store: Store, blocks: BlockStore, clock: FakeClock) -> Lake:
    settings = Settings(
        operations=OperationsSettings(batch_size=BATCH_SIZE, lease_time=LEASE_TIME),
        deletion=DeletionSettings(send_delay=0.0),
    )
    return Lake(settings, store, blocks, clock=clock, token_drop_delay=0)


def fill(lake: Lake, *, committed: int, staged: int, outside: list[str]) -> None:
    """`committed` objects under `del/` (blobs not written: only metadata matters here),
    then `staged` real uploads under `del/s/`, and the `outside` paths, committed."""
    namespace = backends.namespace(lake.blockstore, "repo1")
    repo = lake.graveler.create_repository("repo1", storage_namespace=namespace)
    for i in range(committed):
        entry = ObjectEntry(address=f"data/c{i}", size=1, checksum="c", mtime=1.0, content_type="x")
        lake.graveler.set(repo, "main", f"del/c{i:06d}".encode(), to_value(entry))
    for path in outside:
        lake.catalog.upload(repo, "main", path, io.BytesIO(b"o"))
    lake.graveler.commit(repo, "main", committer="t", message="data")
    for i in range(staged):
        lake.catalog.upload(repo, "main", f"del/s/{i:04d}", io.BytesIO(b"s"))


def record_swaps(lake: Lake, kv_url: str) -> None:
    """Append every operation record the ledger writes to `<kv file>.swaps` once it landed."""
    journal = journal_path(kv_url)
    store = lake.ledger.store
    original = store.set_if

    def set_if(partition: bytes, key: bytes, value: bytes, predicate: Predicate | None) -> None:
        original(partition, key, value, predicate)  # only what landed: a lost swap wrote nothing
        if partition == keys.OPERATIONS and keys.is_operation_key(key):
            with open(journal, "ab") as out:
                out.write(value.hex().encode() + b"\n")

    store.set_if = set_if  # type: ignore[method-assign]


def journal_path(kv_url: str) -> str:
    return kv_url.removeprefix("sqlite://") + ".swaps"


def journal(kv_url: str) -> list[Operation]:
    try:
        with open(journal_path(kv_url), "rb") as lines:
            return [
                decode_operation(bytes.fromhex(line.decode())) for line in lines if line.strip()
            ]
    except FileNotFoundError:
        return []
