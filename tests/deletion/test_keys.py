"""The deletion key schema is unambiguous, ordered by due time, and refuses bad parts."""

from __future__ import annotations

import pytest

from kvlake.deletion import keys
from kvlake.errors import InvalidInputError
from kvlake.ids import new_uid


def test_pending_keys_sort_by_due_time_and_give_it_back() -> None:
    early = keys.pending_key(1_750_000_000.5, "zzz")
    late = keys.pending_key(1_750_000_001.0, "aaa")
    assert early < late
    assert keys.due_of(early) == 1_750_000_000.5
    assert early.startswith(b"1750000000500/")


def test_due_times_are_clamped_to_the_fixed_width() -> None:
    assert keys.pending_key(-5, "x") == b"0000000000000/x"
    assert keys.pending_key(1e20, "x") == b"9999999999999/x"


def test_partitions_never_collide_with_each_other_or_other_partitions() -> None:
    names = {keys.pending_partition(n) for n in range(200)}
    assert len(names) == 200
    assert all(name.startswith(b"deletion/") for name in names)
    assert not names & {keys.DEAD_LETTERS, keys.LEASES, keys.SHARED, keys.PURGES}
    with pytest.raises(InvalidInputError, match="negative"):
        keys.pending_partition(-1)


def test_partition_for_is_stable_and_in_range() -> None:
    spread = {keys.partition_for(f"data/x/{i}", 4) for i in range(100)}
    assert spread == {0, 1, 2, 3}
    assert keys.partition_for("data/a", 7) == keys.partition_for("data/a", 7)


def test_shared_and_purge_keys_are_unambiguous() -> None:
    uid = new_uid()
    assert keys.shared_key(uid, "data/1/x")[len(uid) + 1 :] == b"data/1/x"  # fixed-width uid
    assert keys.shared_key(uid, "data/1").startswith(uid.encode() + b"/")
    with pytest.raises(InvalidInputError, match="instance uid"):
        keys.shared_key("short", "data/1")
    request = keys.purge_key("repo1", uid)
    assert keys.purge_counts_key("repo1", uid).startswith(request + b"/")
    assert keys.purge_key("repo1-a", uid) != request


def test_stable_ids_depend_on_every_part_and_its_boundaries() -> None:
    assert keys.stable_record_id("ab", "c") != keys.stable_record_id("a", "bc")
    assert keys.stable_record_id("a", b"b") == keys.stable_record_id("a", "b")
    assert len(keys.stable_record_id("x")) == 26
    assert len(keys.new_record_id()) == 26
    # On disk as record keys: the encoding must never change.
    assert keys.stable_record_id("token", "t", b"k", "addr") == "yzv7ptdaawtyp2nnv0rhfv2xz9"
