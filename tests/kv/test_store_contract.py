"""The KV contract, run unchanged on every driver (tests/support/backends.py STORES)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kvlake.errors import (
    ClosedError,
    KeyNotFoundError,
    MissingArgumentError,
    PreconditionFailedError,
)
from kvlake.kv import MUST_EXIST, Store
from kvlake.kv.store import READ_CHUNK, WRITE_CHUNK

P = b"partition"
NONE: Any = None  # passed where the types forbid it, as careless callers do
BYTES: Any = b"before"  # a value where a predicate belongs
MANY = WRITE_CHUNK * 2 + 5000  # crosses two chunk boundaries


def keys(
    store: Store, partition: bytes = P, start: bytes = b"", batch_size: int = 1000
) -> list[bytes]:
    return [key for key, _ in store.scan(partition, start, batch_size=batch_size)]


def numbered(count: int) -> list[tuple[bytes, bytes]]:
    return [(b"key-%06d" % i, b"value-%d" % i) for i in range(count)]


# -- get / set -------------------------------------------------------------------


def test_get_returns_what_set_wrote(store: Store) -> None:
    store.set(P, b"k", b"v")
    assert store.get(P, b"k")[0] == b"v"


def test_set_over_an_existing_key_replaces_its_value(store: Store) -> None:
    store.set(P, b"k", b"old")
    store.set(P, b"k", b"new")
    assert store.get(P, b"k")[0] == b"new"
    assert keys(store) == [b"k"]


def test_get_of_a_missing_key_raises_key_not_found(store: Store) -> None:
    store.set(P, b"other", b"v")
    with pytest.raises(KeyNotFoundError, match="b'k'"):
        store.get(P, b"k")
    with pytest.raises(KeyNotFoundError):
        store.get(b"no such partition", b"other")


def test_values_may_be_empty_or_large_and_hold_any_byte(store: Store) -> None:
    large = bytes(range(256)) * 4096  # 1 MiB
    store.set(P, b"empty", b"")
    store.set(P, b"large", large)
    assert store.get(P, b"empty")[0] == b""
    assert store.get(P, b"large")[0] == large


def test_partitions_sharing_a_key_are_independent(store: Store) -> None:
    store.set(b"a", b"k", b"in a")
    store.set(b"b", b"k", b"in b")
    store.delete(b"a", b"k")
    assert store.get(b"b", b"k")[0] == b"in b"
    with pytest.raises(KeyNotFoundError):
        store.get(b"a", b"k")


# -- set_if ------------------------------------------------------------------------


def test_set_if_none_creates_a_missing_key(store: Store) -> None:
    store.set_if(P, b"k", b"v", None)
    assert store.get(P, b"k")[0] == b"v"


def test_set_if_none_on_an_existing_key_fails_and_writes_nothing(store: Store) -> None:
    store.set(P, b"k", b"old")
    with pytest.raises(PreconditionFailedError, match="absent"):
        store.set_if(P, b"k", b"new", None)
    assert store.get(P, b"k")[0] == b"old"


def test_set_if_with_the_predicate_from_get_writes(store: Store) -> None:
    store.set(P, b"k", b"old")
    _, predicate = store.get(P, b"k")
    store.set_if(P, b"k", b"new", predicate)
    assert store.get(P, b"k")[0] == b"new"


def test_set_if_with_a_stale_predicate_writes_nothing(store: Store) -> None:
    store.set(P, b"k", b"first")
    _, stale = store.get(P, b"k")
    store.set(P, b"k", b"second")
    with pytest.raises(PreconditionFailedError, match="value read earlier"):
        store.set_if(P, b"k", b"third", stale)
    assert store.get(P, b"k")[0] == b"second"


def test_set_if_with_the_predicate_of_a_deleted_key_writes_nothing(store: Store) -> None:
    store.set(P, b"k", b"v")
    _, predicate = store.get(P, b"k")
    store.delete(P, b"k")
    with pytest.raises(PreconditionFailedError):
        store.set_if(P, b"k", b"v2", predicate)
    assert keys(store) == []


def test_set_if_with_the_predicate_of_an_empty_value(store: Store) -> None:
    store.set(P, b"k", b"")
    value, predicate = store.get(P, b"k")
    assert value == b""
    with pytest.raises(PreconditionFailedError):
        store.set_if(P, b"k", b"x", None)  # the empty value exists: it is not "absent"
    store.set_if(P, b"k", b"x", predicate)
    assert store.get(P, b"k")[0] == b"x"
    with pytest.raises(PreconditionFailedError):
        store.set_if(P, b"k", b"y", predicate)  # b"" is a value, not a wildcard


def test_set_if_must_exist_updates_an_existing_key_whatever_its_value(store: Store) -> None:
    store.set(P, b"k", b"whatever")
    store.set_if(P, b"k", b"new", MUST_EXIST)
    assert store.get(P, b"k")[0] == b"new"


def test_set_if_must_exist_on_a_missing_key_creates_nothing(store: Store) -> None:
    with pytest.raises(PreconditionFailedError, match="to exist"):
        store.set_if(P, b"k", b"v", MUST_EXIST)
    with pytest.raises(KeyNotFoundError):
        store.get(P, b"k")
    assert list(store.partitions()) == []


# -- delete ------------------------------------------------------------------------


def test_delete_removes_only_that_key(store: Store) -> None:
    store.set(P, b"a", b"1")
    store.set(P, b"b", b"2")
    store.delete(P, b"a")
    assert keys(store) == [b"b"]


def test_delete_of_a_missing_key_is_not_an_error(store: Store) -> None:
    store.set(P, b"a", b"1")
    store.delete(P, b"missing")
    assert keys(store) == [b"a"]


def test_delete_in_a_missing_partition_is_not_an_error(store: Store) -> None:
    store.delete(b"no such partition", b"k")
    assert list(store.partitions()) == []


# -- delete_if -------------------------------------------------------------------------


def test_delete_if_removes_the_key_holding_the_expected_value(store: Store) -> None:
    store.set(P, b"a", b"1")
    store.set(P, b"b", b"2")
    assert store.delete_if(P, b"a", b"1") is True
    assert keys(store) == [b"b"]


def test_delete_if_keeps_a_value_replaced_between_read_and_delete(store: Store) -> None:
    store.set(P, b"k", b"read")
    seen, _ = store.get(P, b"k")
    store.set(P, b"k", b"written since")  # another writer, between the read and the delete
    assert store.delete_if(P, b"k", seen) is False
    assert store.get(P, b"k")[0] == b"written since"


def test_delete_if_keeps_a_key_deleted_and_written_again_with_another_value(
    store: Store,
) -> None:
    store.set(P, b"k", b"old")
    store.delete(P, b"k")
    store.set(P, b"k", b"new")
    assert store.delete_if(P, b"k", b"old") is False
    assert store.get(P, b"k")[0] == b"new"


def test_delete_if_of_a_missing_key_or_partition_is_false(store: Store) -> None:
    assert store.delete_if(P, b"k", b"v") is False
    store.set(P, b"other", b"v")
    assert store.delete_if(P, b"k", b"v") is False
    assert keys(store) == [b"other"]


def test_delete_if_tells_an_empty_value_from_another(store: Store) -> None:
    store.set(P, b"k", b"x")
    assert store.delete_if(P, b"k", b"") is False  # b"" is a value, not a wildcard
    store.set(P, b"k", b"")
    assert store.delete_if(P, b"k", b"x") is False
    assert store.delete_if(P, b"k", b"") is True
    assert list(store.partitions()) == []


def test_delete_if_of_the_last_key_leaves_no_partition(store: Store) -> None:
    store.set(P, b"k", b"v")
    assert store.delete_if(P, b"k", b"v") is True
    assert list(store.partitions()) == []
    store.set_if(P, b"k", b"again", None)  # the key is absent again, for set_if too
    assert store.get(P, b"k")[0] == b"again"


# -- scan ----------------------------------------------------------------------------


def test_scan_returns_every_entry_in_ascending_key_order(store: Store) -> None:
    items = numbered(50)
    for key, value in reversed(items):
        store.set(P, key, value)
    assert list(store.scan(P)) == items


def test_scan_of_a_missing_partition_is_empty(store: Store) -> None:
    assert list(store.scan(b"no such partition")) == []


@pytest.mark.parametrize(
    ("start", "expected"),
    [(b"b", [b"b", b"c"]), (b"bb", [b"c"]), (b"a", [b"a", b"b", b"c"]), (b"d", [])],
)
def test_scan_from_a_start_key_includes_it_and_what_follows(
    store: Store, start: bytes, expected: list[bytes]
) -> None:
    store.set_many(P, [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    assert keys(store, start=start) == expected


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7])
def test_scan_with_tiny_batches_sees_every_key_once(store: Store, batch_size: int) -> None:
    items = numbered(40)
    store.set_many(P, items)
    assert list(store.scan(P, batch_size=batch_size)) == items
    assert keys(store, start=b"key-000013", batch_size=batch_size) == [k for k, _ in items[13:]]


def test_scan_batches_yield_the_rest_of_the_scan(store: Store) -> None:
    items = numbered(30)
    store.set_many(P, items)
    with store.scan(P, batch_size=4) as scan:
        first = next(scan)
        pages = list(scan.batches())
    assert [first] + [item for page in pages for item in page] == items
    assert all(pages)


def test_scan_sees_only_its_partition_when_others_share_keys(store: Store) -> None:
    for partition in (b"a", b"b", b"c"):
        store.set_many(partition, [(b"k1", partition), (b"k2", partition)])
    assert list(store.scan(b"b", batch_size=1)) == [(b"k1", b"b"), (b"k2", b"b")]


def test_prefix_scan_starts_at_the_prefix_and_stops_after_it(store: Store) -> None:
    store.set_many(P, [(k, b"") for k in (b"a/1", b"b/1", b"b/2", b"b0", b"c/1", b"b/")])
    found = []
    for key, _ in store.scan(P, b"b/", batch_size=2):
        if not key.startswith(b"b/"):
            break
        found.append(key)
    assert found == [b"b/", b"b/1", b"b/2"]


def test_a_key_deleted_during_a_scan_is_either_seen_or_not(store: Store) -> None:
    items = numbered(10)
    store.set_many(P, items)
    seen = []
    with store.scan(P, batch_size=2) as scan:
        for key, value in scan:
            if key == b"key-000001":
                store.delete(P, b"key-000002")  # on the page already read
                store.delete(P, b"key-000007")  # on a page not read yet
            seen.append((key, value))
    must_see = [item for item in items if item[0] not in (b"key-000002", b"key-000007")]
    assert [item for item in seen if item in must_see] == must_see
    assert set(seen) - set(must_see) <= {items[2], items[7]}  # either outcome, never an error
    assert seen == sorted(seen)


def test_deleting_each_key_while_iterating_visits_every_key_once(store: Store) -> None:
    items = numbered(25)
    store.set_many(P, items)
    seen = []
    for key, _ in store.scan(P, batch_size=3):
        store.delete(P, key)
        seen.append(key)
    assert seen == [key for key, _ in items]
    assert keys(store) == []


def test_scan_after_the_store_is_closed_raises_closed(store: Store) -> None:
    store.set_many(P, numbered(5))
    scan = store.scan(P, batch_size=2)
    assert next(scan) == numbered(1)[0]
    store.close()
    with pytest.raises(ClosedError):
        list(scan)
    with pytest.raises(ClosedError):
        list(store.scan(P))


def test_a_closed_scan_raises_closed(store: Store) -> None:
    store.set_many(P, numbered(5))
    with store.scan(P, batch_size=2) as scan:
        next(scan)
    with pytest.raises(ClosedError):
        next(scan)


def test_binary_keys_and_partitions_sort_by_unsigned_bytes(store: Store) -> None:
    ordered = [
        b"\x00",
        b"\x00\x00",
        b"\x00\x01",
        b"\x01",
        b"a",
        b"a\x00",
        b"a\xff",
        b"\x7f",
        b"\x80",
        b"\xff",
    ]
    assert ordered == sorted(ordered)  # Python compares bytes as unsigned, like memcmp
    for partition in (b"\x00", b"\xff\x00", b"p\x00q"):
        store.set_many(partition, [(key, key + partition) for key in reversed(ordered)])
        assert list(store.scan(partition, batch_size=2)) == [(k, k + partition) for k in ordered]
        assert keys(store, partition, start=b"\x00\x00") == ordered[1:]
        assert keys(store, partition, start=b"a\x00") == ordered[5:]
        assert store.get(partition, b"\x00\x00")[0] == b"\x00\x00" + partition
    assert list(store.partitions()) == [b"\x00", b"p\x00q", b"\xff\x00"]


# -- batches and partitions ---------------------------------------------------------


def test_set_many_writes_every_item_across_chunks(store: Store) -> None:
    items = numbered(MANY)
    store.set_many(P, iter(items))
    assert list(store.scan(P)) == items


def test_set_many_keeps_the_last_value_of_a_repeated_key(store: Store) -> None:
    store.set(P, b"k", b"before")
    store.set_many(P, [(b"k", b"1"), (b"j", b"x"), (b"k", b"2")])
    assert list(store.scan(P)) == [(b"j", b"x"), (b"k", b"2")]


def test_set_many_with_a_bad_item_writes_nothing_of_its_chunk(store: Store) -> None:
    with pytest.raises(MissingArgumentError):
        store.set_many(P, [(b"a", b"1"), (b"b", NONE)])
    assert keys(store) == []


def test_get_many_returns_the_existing_keys_across_chunks_and_leaves_out_missing_ones(
    store: Store,
) -> None:
    items = numbered(READ_CHUNK * 2 + 5)
    store.set_many(P, items)
    store.set(b"other", items[0][0], b"elsewhere")
    store.set(P, b"empty", b"")
    wanted = [key for key, _ in items[::2]] + [b"missing", b"empty", b"\x00\xff"]
    assert store.get_many(P, iter(wanted)) == {**dict(items[::2]), b"empty": b""}
    first_two = [key for key, _ in items[:2]]  # the second only in P: not "other"'s
    assert store.get_many(b"other", first_two) == {items[0][0]: b"elsewhere"}
    assert store.get_many(P, []) == {}
    assert store.get_many(b"never existed", [b"a"]) == {}
    with pytest.raises(MissingArgumentError):
        store.get_many(P, [b"a", b""])


def test_get_across_reads_the_keys_in_many_partitions_and_leaves_out_missing_ones(
    store: Store,
) -> None:
    partitions = [b"p%05d" % n for n in range(READ_CHUNK + 3)]  # crosses a chunk boundary
    for number, partition in enumerate(partitions):
        if number % 2 == 0:
            store.set(partition, b"k", b"v%d" % number)
    store.set(partitions[1], b"other", b"not asked")
    store.set(partitions[2], b"empty", b"")
    found = store.get_across(iter(partitions + [b"never existed"]), [b"k", b"empty", b"missing"])
    expected = {p: {b"k": b"v%d" % n} for n, p in enumerate(partitions) if n % 2 == 0}
    expected[partitions[2]][b"empty"] = b""
    assert found == expected
    assert store.get_across(partitions, []) == {}
    assert store.get_across([], [b"k"]) == {}
    with pytest.raises(MissingArgumentError):
        store.get_across([P, b""], [b"k"])
    with pytest.raises(MissingArgumentError):
        store.get_across([P], [b"k", b""])


def test_delete_many_removes_the_keys_across_chunks_and_ignores_missing_ones(store: Store) -> None:
    items = numbered(MANY)
    store.set_many(P, items)
    doomed = [key for i, (key, _) in enumerate(items) if i % 3 != 0] + [b"missing"]
    store.delete_many(P, iter(doomed))
    assert keys(store) == [key for key, _ in items[::3]]


def test_drop_partition_removes_every_key_of_that_partition_only(store: Store) -> None:
    store.set_many(P, numbered(MANY))
    store.set_many(b"other", numbered(3))
    store.drop_partition(P)
    assert keys(store) == []
    assert keys(store, b"other") == [key for key, _ in numbered(3)]
    store.drop_partition(P)  # again: nothing left to do, not an error
    store.drop_partition(b"never existed")
    assert list(store.partitions()) == [b"other"]


def test_partitions_lists_the_non_empty_ones_in_ascending_order(store: Store) -> None:
    assert list(store.partitions()) == []
    for partition in (b"graveler", b"repo-1", b"\x01", b"deletion/0", b"operations"):
        store.set(partition, b"k", b"v")
    store.set(b"repo-1", b"k2", b"v")
    expected = [b"\x01", b"deletion/0", b"graveler", b"operations", b"repo-1"]
    assert list(store.partitions()) == expected
    store.delete(b"graveler", b"k")
    store.drop_partition(b"operations")
    assert list(store.partitions()) == [b"\x01", b"deletion/0", b"repo-1"]
    assert list(store.partitions(after=b"deletion/0")) == [b"repo-1"]
    assert list(store.partitions(after=b"d")) == [b"deletion/0", b"repo-1"]
    assert list(store.partitions(after=b"repo-1")) == []


# -- bad input and closed stores ---------------------------------------------------------

Call = Callable[[Store], object]

MISSING_ARGUMENTS: dict[str, Call] = {
    "get-partition-none": lambda s: s.get(NONE, b"k"),
    "get-partition-empty": lambda s: s.get(b"", b"k"),
    "get-key-none": lambda s: s.get(P, NONE),
    "get-key-empty": lambda s: s.get(P, b""),
    "set-partition-none": lambda s: s.set(NONE, b"k", b"v"),
    "set-partition-empty": lambda s: s.set(b"", b"k", b"v"),
    "set-key-none": lambda s: s.set(P, NONE, b"v"),
    "set-key-empty": lambda s: s.set(P, b"", b"v"),
    "set-value-none": lambda s: s.set(P, b"k", NONE),
    "set_if-partition-empty": lambda s: s.set_if(b"", b"k", b"v", None),
    "set_if-key-none": lambda s: s.set_if(P, NONE, b"v", None),
    "set_if-key-empty": lambda s: s.set_if(P, b"", b"v", MUST_EXIST),
    "set_if-value-none": lambda s: s.set_if(P, b"k", NONE, None),
    "set_if-predicate-bytes": lambda s: s.set_if(P, b"k", b"v", BYTES),
    "delete-partition-none": lambda s: s.delete(NONE, b"k"),
    "delete-key-empty": lambda s: s.delete(P, b""),
    "delete_if-partition-none": lambda s: s.delete_if(NONE, b"k", b"before"),
    "delete_if-key-empty": lambda s: s.delete_if(P, b"", b"before"),
    "delete_if-expected-none": lambda s: s.delete_if(P, b"k", NONE),
    "scan-partition-none": lambda s: s.scan(NONE),
    "scan-partition-empty": lambda s: s.scan(b""),
    "scan-start-none": lambda s: s.scan(P, NONE),
    "scan-batch-size-zero": lambda s: s.scan(P, batch_size=0),
    "set_many-partition-empty": lambda s: s.set_many(b"", [(b"k", b"v")]),
    "set_many-key-none": lambda s: s.set_many(P, [(NONE, b"v")]),
    "set_many-key-empty": lambda s: s.set_many(P, [(b"", b"v")]),
    "set_many-value-none": lambda s: s.set_many(P, [(b"k", NONE)]),
    "delete_many-partition-none": lambda s: s.delete_many(NONE, [b"k"]),
    "delete_many-key-empty": lambda s: s.delete_many(P, [b"k", b""]),
    "delete_many-key-none": lambda s: s.delete_many(P, [NONE]),
    "drop_partition-none": lambda s: s.drop_partition(NONE),
    "drop_partition-empty": lambda s: s.drop_partition(b""),
}


@pytest.mark.parametrize("call", MISSING_ARGUMENTS.values(), ids=MISSING_ARGUMENTS.keys())
def test_a_missing_argument_raises_and_changes_nothing(store: Store, call: Call) -> None:
    store.set(P, b"k", b"before")
    with pytest.raises(MissingArgumentError, match="KV|scan"):
        call(store)
    assert list(store.scan(P)) == [(b"k", b"before")]
    assert list(store.partitions()) == [P]


OPERATIONS: dict[str, Call] = {
    "get": lambda s: s.get(P, b"k"),
    "set": lambda s: s.set(P, b"k", b"v"),
    "set_if-none": lambda s: s.set_if(P, b"new", b"v", None),
    "set_if-must-exist": lambda s: s.set_if(P, b"k", b"v", MUST_EXIST),
    "delete": lambda s: s.delete(P, b"k"),
    "delete_if": lambda s: s.delete_if(P, b"k", b"v"),
    "scan": lambda s: list(s.scan(P)),
    "partitions": lambda s: list(s.partitions()),
    "set_many": lambda s: s.set_many(P, [(b"k", b"v")]),
    "delete_many": lambda s: s.delete_many(P, [b"k"]),
    "drop_partition": lambda s: s.drop_partition(P),
}


@pytest.mark.parametrize("call", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_every_operation_on_a_closed_store_raises_closed(store: Store, call: Call) -> None:
    store.set(P, b"k", b"v")
    store.close()
    with pytest.raises(ClosedError, match="closed"):
        call(store)
    store.close()  # closing twice is fine


# -- swap_many -------------------------------------------------------------------------


def test_swap_many_writes_the_unchanged_keys_and_names_the_others(store: Store) -> None:
    store.set_many(P, [(b"same", b"1"), (b"changed", b"2"), (b"gone", b"3"), (b"empty", b"")])
    store.set(P, b"changed", b"2 since")  # other writers, between the read and the swaps
    store.delete(P, b"gone")
    swaps = [
        (b"same", b"1", b"new 1"),
        (b"changed", b"2", b"new 2"),
        (b"gone", b"3", b"new 3"),
        (b"never", b"4", b"new 4"),
        (b"empty", b"", b"new 5"),  # b"" is a value to compare, not a wildcard
    ]
    assert sorted(store.swap_many(P, swaps)) == [b"changed", b"gone", b"never"]
    assert dict(store.scan(P)) == {b"same": b"new 1", b"changed": b"2 since", b"empty": b"new 5"}


def test_swap_many_goes_over_chunks(store: Store) -> None:
    store.set_many(P, ((b"%06d" % i, b"old") for i in range(MANY)))
    store.set(P, b"%06d" % (MANY - 1), b"raced")
    swaps = ((b"%06d" % i, b"old", b"new") for i in range(MANY))
    assert store.swap_many(P, swaps) == [b"%06d" % (MANY - 1)]
    assert sum(value == b"new" for _, value in store.scan(P)) == MANY - 1


def test_batch_helpers_given_lists_go_over_chunks(store: Store) -> None:
    # A list is cut into chunks by slicing, where an iterator is gathered an item at a time.
    items = numbered(MANY)
    store.set_many(P, items)
    assert list(store.scan(P)) == items
    store.set(P, items[-1][0], b"raced")
    swaps = [(key, value, b"new") for key, value in items]
    assert store.swap_many(P, swaps) == [items[-1][0]]
    assert [value for _, value in store.scan(P)] == [b"new"] * (MANY - 1) + [b"raced"]


def test_swap_many_refuses_a_key_named_twice_or_none_and_writes_nothing(store: Store) -> None:
    store.set(P, b"k", b"v")
    with pytest.raises(MissingArgumentError, match="names a key twice"):
        store.swap_many(P, [(b"k", b"v", b"1"), (b"k", b"v", b"2")])
    with pytest.raises(MissingArgumentError, match="has None"):
        store.swap_many(P, [(b"k", NONE, b"1")])
    assert store.get(P, b"k")[0] == b"v"
