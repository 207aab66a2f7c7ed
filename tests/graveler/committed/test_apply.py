"""CommittedManager.apply: changes at range edges, reuse of untouched ranges, bad input."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import Change, CommittedManager
from kvlake.graveler.records import Value

from .helpers import UNSORTED_CHANGES, UNSORTED_IDS, entries, value

Model = dict[bytes, Value]


def check(manager: CommittedManager, namespace: str, metarange_id: str, model: Model) -> None:
    """The metarange holds exactly the model, cut exactly as a fresh write would cut it."""
    expected = sorted(model.items())
    assert list(manager.scan(namespace, metarange_id)) == expected
    assert manager.write_metarange(namespace, expected) == metarange_id


def apply_to_model(model: Model, changes: list[Change]) -> Model:
    result = dict(model)
    for key, new in changes:
        if new is None:
            result.pop(key, None)
        else:
            result[key] = new
    return result


@pytest.fixture
def base(manager: CommittedManager, namespace: str) -> tuple[str, Model]:
    written = entries(300)
    return manager.write_metarange(namespace, written), dict(written)


def edge_keys(
    manager: CommittedManager, namespace: str, metarange_id: str
) -> dict[str, list[bytes]]:
    """Keys at interesting places: range edges, range middles and the gaps between ranges."""
    ranges = manager.ranges(namespace, metarange_id)
    picked = [ranges[0], ranges[len(ranges) // 2], ranges[-1]]
    middles = []
    for info in picked:
        inside = [key for key, _ in manager.scan_range(namespace, info.id)]
        middles.append(inside[len(inside) // 2])
    return {
        "first keys": [info.min_key for info in picked],
        "last keys": [info.max_key for info in picked],
        "middle keys": middles,
    }


@pytest.mark.parametrize("where", ["first keys", "last keys", "middle keys"])
@pytest.mark.parametrize("kind", ["insert", "update", "delete"])
def test_apply_at_range_edges_and_middles(
    manager: CommittedManager, base: tuple[str, Model], where: str, kind: str, namespace: str
) -> None:
    base_id, model = base
    targets = edge_keys(manager, namespace, base_id)[where]
    changes: list[Change]
    if kind == "insert":  # just before and just after each key: new keys in every gap
        changes = [(k, value(k, 9)) for key in targets for k in (key[:-1], key + b"+")]
    elif kind == "update":
        changes = [(key, value(key, 9)) for key in targets]
    else:
        changes = [(key, None) for key in targets]
    changes.sort()

    new_id = manager.apply(namespace, base_id, changes)

    assert new_id != base_id
    check(manager, namespace, new_id, apply_to_model(model, changes))


def test_apply_mixed_changes_repeatedly(
    manager: CommittedManager, base: tuple[str, Model], namespace: str
) -> None:
    metarange_id, model = base
    for round_ in range(1, 6):
        changes: list[Change] = []
        for i in range(round_, 3100, 37):
            key = b"path/to/file-%07d" % i
            changes.append((key, None if i % 3 == 0 else value(key, round_)))
        metarange_id = manager.apply(namespace, metarange_id, iter(changes))
        model = apply_to_model(model, changes)
        check(manager, namespace, metarange_id, model)


def test_deleting_everything_gives_the_empty_metarange(
    manager: CommittedManager, base: tuple[str, Model], namespace: str
) -> None:
    base_id, model = base
    changes: list[Change] = [(key, None) for key in sorted(model)]

    assert manager.apply(namespace, base_id, changes) == manager.empty_metarange(namespace)


@pytest.mark.parametrize("kind", ["no changes", "same values", "absent deletes"])
def test_apply_that_changes_nothing_returns_the_base(
    manager: CommittedManager, base: tuple[str, Model], kind: str, namespace: str
) -> None:
    base_id, model = base
    same: list[Change] = list(sorted(model.items())[::3])
    absent: list[Change] = [(b"a", None), (b"path/to/file-0000015", None), (b"zz", None)]
    changes = {"no changes": [], "same values": same, "absent deletes": absent}[kind]
    files_before = manager.stats.files_written

    assert manager.apply(namespace, base_id, changes) == base_id
    assert manager.stats.files_written == files_before


def test_apply_onto_the_empty_metarange_equals_write_metarange(
    manager: CommittedManager, namespace: str
) -> None:
    written = entries(250)
    empty = manager.empty_metarange(namespace)

    assert manager.apply(namespace, empty, iter(written)) == manager.write_metarange(
        namespace, written
    )


def test_apply_consumes_changes_lazily(
    manager: CommittedManager, base: tuple[str, Model], namespace: str
) -> None:
    base_id, model = base
    consumed: list[bytes] = []

    def changes() -> Iterator[Change]:
        for i in range(5, 3000, 50):
            key = b"path/to/file-%07d" % i
            consumed.append(key)
            yield key, value(key, 1)

    new_id = manager.apply(namespace, base_id, changes())

    assert len(consumed) == 60
    assert manager.get(namespace, new_id, consumed[-1]) == value(consumed[-1], 1)


@pytest.mark.parametrize("changes", UNSORTED_CHANGES, ids=UNSORTED_IDS)
def test_apply_refuses_unsorted_changes(
    manager: CommittedManager, base: tuple[str, Model], changes: list[Change], namespace: str
) -> None:
    with pytest.raises(InvalidInputError, match="key"):
        manager.apply(namespace, base[0], changes)


@pytest.fixture
def large(blockstore: BlockStore, namespace: str) -> tuple[BlockStore, str, str]:
    """100k entries cut by the default chunking (~25 ranges) on the run's blockstore: the
    blockstore, the namespace, the metarange's id."""
    written = ((b"path/to/file-%07d" % i, value(b"%d" % i)) for i in range(0, 1_000_000, 10))
    return blockstore, namespace, CommittedManager(blockstore).write_metarange(namespace, written)


@pytest.mark.parametrize(
    ("change", "most_reads"),
    [
        ((b"path/to/file-0500000", value(b"new")), 1),  # update in a range's middle
        ((b"path/to/file-0500005", value(b"new")), 1),  # insert in a range's middle
        ((b"path/to/file-0500000", None), 1),  # delete in a range's middle
        (None, 2),  # delete a range's last key: the writer must read on into the next range
    ],
    ids=["update", "insert", "delete", "delete last key"],
)
def test_apply_of_one_change_reads_only_the_ranges_it_touches(
    large: tuple[BlockStore, str, str], change: Change | None, most_reads: int
) -> None:
    blockstore, namespace, base_id = large
    manager = CommittedManager(blockstore)  # cold cache: every read is counted
    base_ranges = manager.ranges(namespace, base_id)
    if change is None:
        change = (base_ranges[len(base_ranges) // 2].max_key, None)

    new_id = manager.apply(namespace, base_id, [change])

    assert len(base_ranges) > 10
    assert manager.stats.range_reads == most_reads
    new_ranges = manager.ranges(namespace, new_id)
    reused = {info.id for info in base_ranges} & {info.id for info in new_ranges}
    assert len(reused) >= len(base_ranges) - most_reads
    assert manager.stats.ranges_reused == len(new_ranges) - manager.stats.files_written + 1
    if change[1] is None:
        with pytest.raises(LookupError):
            manager.get(namespace, new_id, change[0])
    else:
        assert manager.get(namespace, new_id, change[0]) == change[1]
