"""The BlockStore contract, run unchanged on every adapter (see conftest.ADAPTERS)."""

from __future__ import annotations

import io
import random
import threading
import time

import pytest

from kvlake.blockstore import READ_CHUNK, BlockStore
from kvlake.errors import BlobNotFoundError, InvalidInputError

from .streams import PatternStream, SourceError, pattern

BAD_KEYS = ["", "/abs", "..", "a/../b", "a//b", "a/", "./a", "a/./b", "a\0b"]


def test_put_then_get_round_trips_bytes(blockstore: BlockStore, namespace: str) -> None:
    assert blockstore.put(namespace, "data/a", b"hello") == 5
    assert blockstore.get(namespace, "data/a") == b"hello"
    assert blockstore.size(namespace, "data/a") == 5
    assert blockstore.exists(namespace, "data/a")


def test_put_stores_an_empty_blob(blockstore: BlockStore, namespace: str) -> None:
    assert blockstore.put(namespace, "empty", b"") == 0
    assert blockstore.get(namespace, "empty") == b""
    assert list(blockstore.list_keys(namespace)) == ["empty"]


def test_put_reads_a_large_stream_in_read_chunk_pieces(
    blockstore: BlockStore, namespace: str
) -> None:
    size = 5 * READ_CHUNK // 2
    source = PatternStream(size)
    assert blockstore.put(namespace, "big", io.BufferedReader(source)) == size
    assert max(source.requests) <= READ_CHUNK
    assert len(source.requests) >= 3
    assert blockstore.size(namespace, "big") == size
    assert blockstore.get(namespace, "big") == pattern(0, size)


def test_put_replaces_a_blob_whole(blockstore: BlockStore, namespace: str) -> None:
    blockstore.put(namespace, "k", b"old contents")
    blockstore.put(namespace, "k", b"new")
    assert blockstore.get(namespace, "k") == b"new"


def test_failed_put_leaves_nothing_under_the_key(blockstore: BlockStore, namespace: str) -> None:
    source = PatternStream(3 * READ_CHUNK, fail_at=READ_CHUNK + 1)
    with pytest.raises(SourceError):
        blockstore.put(namespace, "data/torn", io.BufferedReader(source))
    assert not blockstore.exists(namespace, "data/torn")
    assert list(blockstore.list_keys(namespace)) == []


def test_failed_put_keeps_the_previous_blob(blockstore: BlockStore, namespace: str) -> None:
    blockstore.put(namespace, "k", b"previous")
    with pytest.raises(SourceError):
        blockstore.put(namespace, "k", io.BufferedReader(PatternStream(100, fail_at=0)))
    assert blockstore.get(namespace, "k") == b"previous"


@pytest.mark.parametrize("data", ["text", io.StringIO("text"), 42])
def test_put_refuses_data_that_is_not_binary(
    blockstore: BlockStore, namespace: str, data: object
) -> None:
    with pytest.raises(InvalidInputError, match="binary"):
        blockstore.put(namespace, "k", data)  # type: ignore[arg-type]
    assert not blockstore.exists(namespace, "k")


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, None, b"0123456789"),
        (3, None, b"3456789"),
        (0, 4, b"0123"),
        (2, 5, b"234"),
        (5, 5, b""),
        (10, None, b""),
        (10, 12, b""),
        (4, 100, b"456789"),
    ],
)
def test_open_reader_returns_the_range_clipped_to_the_blob(
    blockstore: BlockStore, namespace: str, start: int, end: int | None, expected: bytes
) -> None:
    blockstore.put(namespace, "digits", b"0123456789")
    with blockstore.open_reader(namespace, "digits", start=start, end=end) as reader:
        assert reader.read() == expected
        assert reader.read() == b""


@pytest.mark.parametrize(("start", "end"), [(-1, None), (5, 4), (11, None), (11, 20)])
def test_open_reader_refuses_a_bad_range(
    blockstore: BlockStore, namespace: str, start: int, end: int | None
) -> None:
    blockstore.put(namespace, "digits", b"0123456789")
    with pytest.raises(InvalidInputError, match="range"):
        blockstore.open_reader(namespace, "digits", start=start, end=end)


def test_range_reader_stops_at_end_across_chunks(blockstore: BlockStore, namespace: str) -> None:
    blockstore.put(namespace, "big", io.BufferedReader(PatternStream(3 * READ_CHUNK)))
    start, end = READ_CHUNK - 10, 2 * READ_CHUNK + 10
    pieces = []
    with blockstore.open_reader(namespace, "big", start=start, end=end) as reader:
        while piece := reader.read(READ_CHUNK // 3):
            pieces.append(piece)
    assert b"".join(pieces) == pattern(start, end - start)


def test_missing_blob_raises_not_found(blockstore: BlockStore, namespace: str) -> None:
    with pytest.raises(BlobNotFoundError, match="'nope'"):
        blockstore.open_reader(namespace, "nope")
    with pytest.raises(BlobNotFoundError):
        blockstore.size(namespace, "nope")
    with pytest.raises(BlobNotFoundError):
        blockstore.get(namespace, "dir/nope")
    assert not blockstore.exists(namespace, "nope")


def test_copy_makes_a_blob_of_its_own(blockstore: BlockStore, namespace: str) -> None:
    size = 5 * READ_CHUNK // 2
    blockstore.put(namespace, "data/src", io.BufferedReader(PatternStream(size)))
    blockstore.put(namespace, "data/dst", b"replaced whole")
    assert blockstore.copy(namespace, "data/src", "data/dst") == size
    blockstore.delete(namespace, "data/src")
    assert blockstore.get(namespace, "data/dst") == pattern(0, size)
    assert blockstore.copy(namespace, "data/dst", "empty-src") == size
    blockstore.put(namespace, "empty", b"")
    assert blockstore.copy(namespace, "empty", "empty-copy") == 0
    assert blockstore.get(namespace, "empty-copy") == b""


def test_copy_of_a_missing_blob_raises_not_found_and_stores_nothing(
    blockstore: BlockStore, namespace: str
) -> None:
    with pytest.raises(BlobNotFoundError, match="no blob under key 'missing'"):
        blockstore.copy(namespace, "missing", "dst")
    assert not blockstore.exists(namespace, "dst")
    with pytest.raises(InvalidInputError):
        blockstore.copy(namespace, "a/../b", "dst")


def test_delete_is_idempotent(blockstore: BlockStore, namespace: str) -> None:
    blockstore.put(namespace, "data/a", b"x")
    blockstore.delete(namespace, "data/a")
    assert not blockstore.exists(namespace, "data/a")
    blockstore.delete(namespace, "data/a")
    blockstore.delete(f"{blockstore.scheme}://never/used", "data/a")


def test_delete_many_deletes_the_rest_and_reports_failures(
    blockstore: BlockStore, namespace: str
) -> None:
    for key in ("a", "b", "c"):
        blockstore.put(namespace, key, b"x")
    failures = blockstore.delete_many(namespace, ["a", "../escape", "b", "missing"])
    assert list(failures) == ["../escape"]
    assert isinstance(failures["../escape"], InvalidInputError)
    assert list(blockstore.list_keys(namespace)) == ["c"]
    assert blockstore.delete_many(namespace, ["c", "c"]) == {}


def test_delete_many_refuses_a_bad_namespace_at_once(blockstore: BlockStore) -> None:
    with pytest.raises(InvalidInputError, match="namespace"):
        blockstore.delete_many("other://lake", ["a"])


KEYS = ["a/b/d", "a/c", "a-b", "a0", "a.txt", "b", "data/00/x", "data/01/y", "z/é", "z/z"]


def test_list_keys_is_ascending_like_a_flat_sort(blockstore: BlockStore, namespace: str) -> None:
    for key in random.Random(7).sample(KEYS, len(KEYS)):
        blockstore.put(namespace, key, key.encode())
    assert list(blockstore.list_keys(namespace)) == sorted(KEYS)


@pytest.mark.parametrize("prefix", ["", "a", "a/", "a/b", "a/b/", "a-", "data/0", "data/01/", "zz"])
def test_list_keys_filters_by_prefix(blockstore: BlockStore, namespace: str, prefix: str) -> None:
    for key in KEYS:
        blockstore.put(namespace, key, b"")
    expected = sorted(key for key in KEYS if key.startswith(prefix))
    assert list(blockstore.list_keys(namespace, prefix)) == expected


@pytest.mark.parametrize(
    ("prefix", "folders"),
    [("a/", ["a/b/"]), ("data/", ["data/00/", "data/01/"]), ("z/", []), ("none/", [])],
)
def test_list_folders_gives_the_next_segments_with_keys_below(
    blockstore: BlockStore, namespace: str, prefix: str, folders: list[str]
) -> None:
    for key in KEYS:
        blockstore.put(namespace, key, b"")
    assert list(blockstore.list_folders(namespace, prefix)) == folders
    with pytest.raises(InvalidInputError, match="ending in '/'"):
        list(blockstore.list_folders(namespace, "data"))


def test_list_level_gives_a_folders_own_blobs_and_folders_the_rest(
    blockstore: BlockStore, namespace: str
) -> None:
    for key in ("a", "d/x", "d/y/z", "d-e", "d/w", "e/f"):
        blockstore.put(namespace, key, b"1")
    assert [b.key for b in blockstore.list_level(namespace)] == ["a", "d-e"]
    assert [b.key for b in blockstore.list_level(namespace, "d/")] == ["d/w", "d/x"]
    assert list(blockstore.list_folders(namespace, "")) == ["d/", "e/"]
    assert [b.size for b in blockstore.list_level(namespace, "d/y/")] == [1]
    assert list(blockstore.list_level(namespace, "none/")) == []
    with pytest.raises(InvalidInputError, match="ending in '/'"):
        list(blockstore.list_level(namespace, "d"))


def test_folder_exists_where_keys_are_below_it(blockstore: BlockStore, namespace: str) -> None:
    blockstore.put(namespace, "data/2026/a", b"")
    assert blockstore.folder_exists(namespace, "data/") and blockstore.folder_exists(namespace)
    assert blockstore.folder_exists(namespace, "data/2026/")
    assert not blockstore.folder_exists(namespace, "dat/")
    assert not blockstore.folder_exists(namespace, "data/2026/a/")
    with pytest.raises(InvalidInputError, match="ending in '/'"):
        blockstore.folder_exists(namespace, "data")


def test_list_blobs_gives_keys_sizes_and_mtimes_in_key_order(
    blockstore: BlockStore, namespace: str
) -> None:
    before = time.time()
    for key, body in (("data/b", b"22"), ("data/a", b"1"), ("data-x", b""), ("other", b"333")):
        blockstore.put(namespace, key, body)
    after = time.time()
    blobs = list(blockstore.list_blobs(namespace, ("data/",)))
    assert [(b.key, b.size) for b in blobs] == [("data/a", 1), ("data/b", 2)]
    # Not timing: only that mtime is the put's wall-clock time (S3's is whole seconds).
    assert all(before - 2 <= b.mtime <= after + 2 for b in blobs)
    assert [b.key for b in blockstore.list_blobs(namespace)] == list(
        blockstore.list_keys(namespace)
    )


def test_list_blobs_of_many_prefixes_in_parallel_keeps_their_order(
    blockstore: BlockStore, namespace: str
) -> None:
    hours = [f"data/2024010{day}T0{hour}/" for day in (1, 2) for hour in range(4)]
    for number, hour in enumerate(hours):
        for item in range(number % 3):
            blockstore.put(namespace, f"{hour}{item}", b"x" * item)
    blockstore.put(namespace, "data/elsewhere", b"")
    prefixes = [*reversed(hours), "data/20240109T00/"]  # any order, and an empty slice
    expected = [
        (f"{hour}{item}", item)
        for number, hour in reversed(list(enumerate(hours)))
        for item in range(number % 3)
    ]
    for parallel in (1, 3, 64):
        listed = blockstore.list_blobs(namespace, prefixes, parallel=parallel)
        assert [(b.key, b.size) for b in listed] == expected, parallel


def test_list_blobs_refuses_bad_arguments_at_once(blockstore: BlockStore, namespace: str) -> None:
    with pytest.raises(InvalidInputError, match="use 1 to 64"):
        blockstore.list_blobs(namespace, ("a/", "b/"), parallel=0)
    with pytest.raises(InvalidInputError, match="without NUL"):
        blockstore.list_blobs(namespace, ("a/", "b\0"), parallel=2)


def test_a_parallel_listing_closed_early_stops(blockstore: BlockStore, namespace: str) -> None:
    for item in range(5):
        blockstore.put(namespace, f"a/{item}", b"")
        blockstore.put(namespace, f"b/{item}", b"")
    listing = blockstore.list_blobs(namespace, ("a/", "b/"), parallel=2)
    assert next(listing).key == "a/0"
    listing.close()  # type: ignore[attr-defined]  # a generator: stops its threads
    assert not [t for t in threading.enumerate() if t.name.startswith("kvlake-listing")]


def test_list_keys_sees_only_its_namespace(blockstore: BlockStore) -> None:
    first, second = f"{blockstore.scheme}://lake/repo1", f"{blockstore.scheme}://lake/repo10"
    blockstore.put(first, "a", b"1")
    blockstore.put(second, "b", b"2")
    assert list(blockstore.list_keys(first)) == ["a"]
    assert list(blockstore.list_keys(second)) == ["b"]
    assert list(blockstore.list_keys(f"{blockstore.scheme}://empty")) == []


def test_nested_namespaces_name_the_same_blobs(blockstore: BlockStore) -> None:
    blockstore.put(f"{blockstore.scheme}://lake", "repo1/data/a", b"shared")
    assert blockstore.get(f"{blockstore.scheme}://lake/repo1", "data/a") == b"shared"


def test_check_namespace_normalises_a_trailing_slash(blockstore: BlockStore) -> None:
    scheme = blockstore.scheme
    assert blockstore.check_namespace(f"{scheme}://lake/repo1/") == f"{scheme}://lake/repo1"


def test_a_leading_slash_names_the_same_namespace(blockstore: BlockStore) -> None:
    """Clients build `{prefix}/{name}` from the `local://` prefix /config/storage reports."""
    scheme = blockstore.scheme
    assert blockstore.check_namespace(f"{scheme}:///lake/repo1") == f"{scheme}://lake/repo1"
    blockstore.put(f"{scheme}:///lake", "k", b"same")
    assert blockstore.get(f"{scheme}://lake", "k") == b"same"


SAME_PLACE = [
    "lake/repo1",
    "/lake/repo1",
    "lake//repo1",
    "lake/repo1/",
    "lake/./repo1",
    "./lake/repo1",
    "//lake/repo1",
    "lake/repo1/.",
]


@pytest.mark.parametrize("path", SAME_PLACE)
def test_every_spelling_of_a_place_is_one_namespace(blockstore: BlockStore, path: str) -> None:
    """kvlake/blockstore/addresses.py: the checks compare the form this adapter reads."""
    scheme = blockstore.scheme
    assert blockstore.check_namespace(f"{scheme}://{path}") == f"{scheme}://lake/repo1"
    blockstore.put(f"{scheme}://{path}", "k", b"same")
    assert blockstore.get(f"{scheme}://lake/repo1", "k") == b"same"


@pytest.mark.parametrize("path", [None, "", "/", "//", "..", "a/../b", "./.", "a\0b", "../../etc"])
def test_bad_namespaces_are_refused_everywhere(blockstore: BlockStore, path: str | None) -> None:
    namespace = "lake/repo1" if path is None else f"{blockstore.scheme}://{path}"
    with pytest.raises(InvalidInputError, match="namespace"):
        blockstore.check_namespace(namespace)
    with pytest.raises(InvalidInputError, match="namespace"):
        blockstore.put(namespace, "k", b"x")
    with pytest.raises(InvalidInputError, match="namespace"):
        blockstore.list_keys(namespace)


def test_namespace_of_another_scheme_is_refused(blockstore: BlockStore) -> None:
    other = "mem" if blockstore.scheme == "local" else "local"
    with pytest.raises(InvalidInputError, match=f"use a {blockstore.scheme}://"):
        blockstore.check_namespace(f"{other}://lake/repo1")


@pytest.mark.parametrize("key", BAD_KEYS)
def test_bad_keys_are_refused_everywhere(blockstore: BlockStore, namespace: str, key: str) -> None:
    with pytest.raises(InvalidInputError, match="key"):
        blockstore.put(namespace, key, b"x")
    with pytest.raises(InvalidInputError, match="key"):
        blockstore.open_reader(namespace, key)
    with pytest.raises(InvalidInputError, match="key"):
        blockstore.size(namespace, key)
    with pytest.raises(InvalidInputError, match="key"):
        blockstore.delete(namespace, key)
    assert list(blockstore.list_keys(namespace)) == []


def test_list_keys_refuses_a_nul_prefix(blockstore: BlockStore, namespace: str) -> None:
    with pytest.raises(InvalidInputError, match="prefix"):
        blockstore.list_keys(namespace, "a\0")


def test_concurrent_puts_all_land_whole(blockstore: BlockStore, namespace: str) -> None:
    def work(worker: int) -> None:
        for n in range(10):
            blockstore.put(namespace, f"w{worker}/{n}", bytes([worker]) * 1000)
            blockstore.put(namespace, "shared", bytes([worker]) * 5000)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    keys = list(blockstore.list_keys(namespace))
    assert keys == sorted([f"w{w}/{n}" for w in range(8) for n in range(10)] + ["shared"])
    shared = blockstore.get(namespace, "shared")
    assert len(shared) == 5000 and len(set(shared)) == 1


def test_close_can_be_called_twice(blockstore: BlockStore) -> None:
    blockstore.close()
    blockstore.close()
