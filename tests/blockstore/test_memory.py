"""MemoryBlockStore specifics: paged listings, closing, and a fresh store per open."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlake.blockstore import open_blockstore
from kvlake.blockstore.memory import LIST_PAGE, MemoryBlockStore
from kvlake.errors import ClosedError, InvalidInputError

NS = "mem://lake/repo1"


def test_listing_pages_through_many_keys_in_order() -> None:
    store = MemoryBlockStore()
    keys = [f"k{n:05d}" for n in range(2 * LIST_PAGE + 5)]
    for key in reversed(keys):
        store.put(NS, key, b"")
    store.put("mem://lake/repo2", "k", b"")
    assert list(store.list_keys(NS)) == keys
    assert list(store.list_keys(NS, "k01")) == [k for k in keys if k.startswith("k01")]


def test_listing_is_not_a_snapshot_but_never_repeats() -> None:
    store = MemoryBlockStore()
    for n in range(LIST_PAGE + 10):
        store.put(NS, f"k{n:05d}", b"")
    listing = store.list_keys(NS)
    first = next(listing)
    store.delete(NS, "k00001")
    store.put(NS, "k99999", b"")
    rest = list(listing)
    assert first == "k00000"
    assert rest == sorted(set(rest)) and rest[-1] == "k99999"


def test_each_open_is_a_new_empty_store() -> None:
    first, second = open_blockstore("mem://"), open_blockstore("mem://")
    first.put(NS, "k", b"x")
    assert not second.exists(NS, "k")


def test_closed_store_refuses_every_call() -> None:
    store = MemoryBlockStore()
    store.put(NS, "k", b"x")
    store.close()
    with pytest.raises(ClosedError, match="open a new one"):
        store.get(NS, "k")
    with pytest.raises(ClosedError):
        store.put(NS, "k", b"x")
    with pytest.raises(ClosedError):
        list(store.list_keys(NS))


def test_memory_and_local_blobs_have_no_presigned_urls(tmp_path: Path) -> None:
    for store in (MemoryBlockStore(), open_blockstore(f"local://{tmp_path}/blocks")):
        assert not store.presigns
        with pytest.raises(InvalidInputError, match="has no presigned URLs"):
            store.presign_read(f"{store.scheme}://lake", "k", expires=60)
        with pytest.raises(InvalidInputError, match="upload the object through the API"):
            store.presign_write(f"{store.scheme}://lake", "k", expires=60)
        if isinstance(store, MemoryBlockStore):  # local storage has uploads, never presigned
            with pytest.raises(InvalidInputError, match="upload the object through the API"):
                store.start_upload(f"{store.scheme}://lake", "k")
        else:
            upload = store.start_upload(f"{store.scheme}://lake", "k")
            with pytest.raises(InvalidInputError, match="upload the object through the API"):
                store.presign_upload_part(f"{store.scheme}://lake", "k", upload, 1, expires=60)
