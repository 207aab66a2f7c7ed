"""The range-by-range comparison against a dict model: windows, ignored ranges, lookups."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvlake.blockstore import BlockStore
from kvlake.graveler.committed import Chunking, CommittedManager
from kvlake.graveler.history.compare import Difference, SortedLookup, compare, identity_of
from kvlake.graveler.records import Value
from tests.support import backends
from tests.support.backends import examples

# Ranges of ~4 entries, so that a few hundred keys make dozens of ranges to walk.
TINY = Chunking(target_entries=4, max_entries=10, max_bytes=600)

keys = st.integers(min_value=0, max_value=300).map(lambda i: b"k/%03d" % i)
values = st.sampled_from([b"a", b"b"]).map(lambda i: Value(identity=i, data=b"data-" + i))
contents = st.dictionaries(keys, values, max_size=150)
edits = st.dictionaries(keys, st.none() | values, max_size=60)
windows = st.tuples(st.none() | keys, st.none() | keys)


def _namespace(blocks: BlockStore, *, unique: bool = False) -> str:
    """The test's namespace on `blocks`; `unique`: one of a generated example's own."""
    return backends.namespace(blocks, "compare") + (f"-{uuid.uuid4().hex}" if unique else "")


def _apply(model: dict[bytes, Value], changes: dict[bytes, Value | None]) -> dict[bytes, Value]:
    result = dict(model)
    for key, value in changes.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def _model(
    left: dict[bytes, Value], right: dict[bytes, Value], start: bytes, stop: bytes | None
) -> list[Difference]:
    return [
        Difference(key, identity_of(left.get(key)), right.get(key))
        for key in sorted(left.keys() | right.keys())
        if key >= start
        and (stop is None or key < stop)
        and identity_of(left.get(key)) != identity_of(right.get(key))
    ]


# The examples (a tenth of them on S3: `examples`) share the test's blockstore, each writing
# under a namespace of its own, through a manager of its own: none reads what another wrote.
def test_compare_yields_what_a_dict_model_differs_in(lake_blocks: BlockStore) -> None:
    @settings(
        max_examples=examples(lake_blocks, 200),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(base=contents, changes=edits, window=windows, ignored=st.sets(st.integers(0, 40)))
    def check(
        base: dict[bytes, Value],
        changes: dict[bytes, Value | None],
        window: tuple[bytes | None, bytes | None],
        ignored: set[int],
    ) -> None:
        namespace = _namespace(lake_blocks, unique=True)
        committed = CommittedManager(lake_blocks, chunking=TINY)
        left = committed.write_metarange(namespace, sorted(base.items()))
        right = committed.apply(namespace, left, sorted(changes.items()))
        changed = _apply(base, changes)
        start, stop = window[0] or b"", window[1]
        right_ranges = committed.ranges(namespace, right)
        skipped = [info for n, info in enumerate(right_ranges) if n in ignored]

        found = list(
            compare(
                committed,
                namespace,
                left,
                right,
                start=start,
                stop=stop,
                ignore_ranges={info.id for info in skipped},
            )
        )

        expected = [
            difference
            for difference in _model(base, changed, start, stop)
            if not any(info.min_key <= difference.key <= info.max_key for info in skipped)
        ]
        assert found == expected

    check()


def test_compare_reads_only_the_ranges_that_differ(lake_blocks: BlockStore) -> None:
    namespace = _namespace(lake_blocks)
    committed = CommittedManager(lake_blocks, chunking=TINY)
    base = {b"k/%03d" % i: Value(identity=b"a", data=b"d") for i in range(300)}
    left = committed.write_metarange(namespace, sorted(base.items()))
    right = committed.apply(namespace, left, [(b"k/150", Value(identity=b"b", data=b"e"))])
    cold = CommittedManager(lake_blocks, chunking=TINY)
    left_ids = {info.id for info in cold.ranges(namespace, left)}
    right_ids = {info.id for info in cold.ranges(namespace, right)}

    found = list(compare(cold, namespace, left, right))

    assert found == [Difference(b"k/150", b"a", Value(identity=b"b", data=b"e"))]
    assert cold.stats.range_reads == len(left_ids ^ right_ids) <= 4


# Examples (a tenth on S3) share the test's blockstore, each in a namespace of its own.
def test_sorted_lookup_identity_agrees_with_get(lake_blocks: BlockStore) -> None:
    @settings(
        max_examples=examples(lake_blocks, 100),
        deadline=None,
    )
    @given(base=contents, probes=st.lists(keys, max_size=40))
    def check(base: dict[bytes, Value], probes: list[bytes]) -> None:
        namespace = _namespace(lake_blocks, unique=True)
        committed = CommittedManager(lake_blocks, chunking=TINY)
        metarange = committed.write_metarange(namespace, sorted(base.items()))
        by_identity = SortedLookup(committed, namespace, metarange)
        by_value = SortedLookup(committed, namespace, metarange)

        for probe in sorted(probes):
            assert by_identity.identity(probe) == identity_of(base.get(probe))
            assert by_value.get(probe) == base.get(probe)

    check()
