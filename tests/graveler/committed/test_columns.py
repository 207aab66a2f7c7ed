"""Range columns: the projected read, the vectorised comparison and splicing, against Python."""

from __future__ import annotations

from bisect import bisect_left

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvlake.blockstore import BlockStore
from kvlake.errors import RangeNotFoundError
from kvlake.graveler.committed import CommittedManager, RangeColumns, RowPair, compare_rows
from kvlake.graveler.committed.columns import RangeRows
from kvlake.graveler.committed.parquet import encode_range, encode_range_pieces
from kvlake.graveler.records import Value

from .helpers import entries

Rows = dict[bytes, bytes]
"""A range's rows as key -> identity (data is derived from both)."""

keys = st.integers(min_value=0, max_value=300).map(lambda i: b"k/%03d" % i)
identities = st.sampled_from([b"a", b"b", b"c"])
ranges = st.dictionaries(keys, identities, min_size=1, max_size=120)


def data_of(key: bytes, identity: bytes) -> bytes:
    return b"data:" + key + b":" + identity


def columns_of(rows: Rows) -> RangeColumns:
    ordered = sorted(rows.items())
    file = encode_range(
        [k for k, _ in ordered], [i for _, i in ordered], [data_of(k, i) for k, i in ordered]
    )
    return RangeColumns("0" * 64, file)


def python_compare(
    left: list[tuple[bytes, bytes]], right: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes | None, bytes | None]]:
    """The simple comparison: every key of either side whose identities differ."""
    before, after = dict(left), dict(right)
    return [
        (key, before.get(key), after.get(key))
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    ]


@settings(max_examples=300, deadline=None)
@given(left=ranges, right=ranges, data=st.data())
def test_compare_rows_finds_what_a_python_comparison_finds(
    left: Rows, right: Rows, data: st.DataObject
) -> None:
    left_columns, right_columns = columns_of(left), columns_of(right)
    left_span, right_span = _span(data, len(left)), _span(data, len(right))
    left_rows = sorted(left.items())[slice(*left_span)]
    right_rows = sorted(right.items())[slice(*right_span)]

    pairs = compare_rows(left_columns, left_span, right_columns, right_span)

    assert [_resolve(pair, left_columns, right_columns) for pair in pairs] == python_compare(
        left_rows, right_rows
    )


def _span(data: st.DataObject, size: int) -> tuple[int, int]:
    start, stop = sorted(data.draw(st.lists(st.integers(0, size), min_size=2, max_size=2)))
    return start, stop


def test_compare_rows_of_equal_keys_reports_only_changed_identities() -> None:
    left = {b"k/%03d" % i: b"a" for i in range(50)}
    right = dict(left) | {b"k/007": b"b", b"k/031": b"c"}

    pairs = compare_rows(columns_of(left), (0, 50), columns_of(right), (0, 50))

    assert pairs == [(7, 7), (31, 31)]


def _resolve(
    pair: RowPair, left: RangeColumns, right: RangeColumns
) -> tuple[bytes, bytes | None, bytes | None]:
    left_row, right_row = pair
    if left_row is None:
        assert right_row is not None
        return right.key(right_row), None, right.identity(right_row)
    right_identity = None if right_row is None else right.identity(right_row)
    return left.key(left_row), left.identity(left_row), right_identity


@settings(max_examples=100, deadline=None)
@given(rows=ranges, probes=st.lists(keys, max_size=20), picked=st.data())
def test_range_columns_read_keys_identities_and_values_of_chosen_rows(
    rows: Rows, probes: list[bytes], picked: st.DataObject
) -> None:
    columns = columns_of(rows)
    ordered = sorted(rows.items())
    chosen = picked.draw(st.lists(st.integers(0, len(ordered) - 1), max_size=10))

    assert len(columns) == len(ordered)
    assert columns.key_list() == [k for k, _ in ordered]
    for probe in probes:
        assert columns.bisect(probe) == bisect_left(columns.key_list(), probe)
    assert list(columns.entries(chosen)) == [
        (ordered[r][0], Value(identity=ordered[r][1], data=data_of(*ordered[r]))) for r in chosen
    ]
    assert list(columns.identities_at(chosen)) == [ordered[r] for r in chosen]


def test_entries_make_values_a_batch_at_a_time_across_batches() -> None:
    rows = {b"k/%05d" % i: b"id" for i in range(2500)}
    columns = columns_of(rows)

    found = list(columns.entries(range(2500)))

    assert [key for key, _ in found] == sorted(rows)
    assert found[-1][1] == Value(identity=b"id", data=data_of(b"k/02499", b"id"))


changes = st.dictionaries(
    keys, st.none() | identities.map(lambda i: Value(identity=b"new-" + i, data=b"x" * 3))
)


@settings(max_examples=300, deadline=None)
@given(rows=ranges, changed=changes)
def test_with_changes_matches_a_dict_model(rows: Rows, changed: dict[bytes, Value | None]) -> None:
    ordered = sorted(rows.items())
    base = RangeRows(columns_of(rows).arrays())
    model = {k: Value(identity=i, data=data_of(k, i)) for k, i in ordered}
    for key, value in changed.items():
        if value is None:
            model.pop(key, None)
        else:
            model[key] = value

    result = base.with_changes(sorted(changed.items()))

    expected = sorted(model.items())
    assert result.keys == [k for k, _ in expected]
    arrays = result.slice(0, len(result.keys))
    assert [a.to_pylist() for a in arrays] == [
        [k for k, _ in expected],
        [v.identity for _, v in expected],
        [v.data for _, v in expected],
    ]
    sizes = [len(k) + len(v.identity) + len(v.data) for k, v in expected]
    assert result.offsets == [sum(sizes[:i]) for i in range(len(sizes) + 1)]


def test_with_changes_builds_many_changes_with_one_take() -> None:
    rows = {b"k/%03d" % i: b"a" for i in range(0, 300, 2)}
    base = RangeRows(columns_of(rows).arrays())
    changed = [(b"k/%03d" % i, Value(identity=b"n", data=b"d")) for i in range(1, 300, 2)]

    result = base.with_changes(changed)  # 300 runs: past the splicing limit

    assert result.keys == [b"k/%03d" % i for i in range(300)]
    assert result.slice(0, 300)[1].to_pylist() == [b"a", b"n"] * 150


def test_range_bytes_do_not_depend_on_how_the_rows_were_cut_into_pieces() -> None:
    # Data large enough for several data pages: page cuts must not follow piece cuts.
    count = 3000
    key_list = [b"k/%06d" % i for i in range(count)]
    id_list = [b"id-%d" % i for i in range(count)]
    data_list = [bytes([i % 251]) * 1000 for i in range(count)]
    whole = encode_range(key_list, id_list, data_list)
    arrays = [pa.array(column, type=pa.binary()) for column in (key_list, id_list, data_list)]

    pieces = [
        [array.slice(0, 1000) for array in arrays],
        (key_list[1000:1001], id_list[1000:1001], data_list[1000:1001]),
        [array.slice(1001, 1999) for array in arrays],
    ]

    assert encode_range_pieces(pieces) == whole


def test_manager_range_columns_reads_a_stored_range_once(
    blockstore: BlockStore, namespace: str
) -> None:
    manager = CommittedManager(blockstore)
    written = entries(300)
    info = manager.ranges(namespace, manager.write_metarange(namespace, written))[0]

    columns = manager.range_columns(namespace, info.id)
    again = manager.range_columns(namespace, info.id)

    assert again is columns
    assert (manager.stats.range_reads, manager.stats.range_cache_hits) == (1, 1)
    assert list(columns.entries(range(len(columns)))) == written[: info.count]
    with pytest.raises(RangeNotFoundError):
        manager.range_columns(namespace, "f" * 64)
