"""Property test: repeated applies of random sorted change batches behave like a dict."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvlake.blockstore import BlockStore
from kvlake.errors import EntryNotFoundError
from kvlake.graveler.committed import Change, Chunking, CommittedManager
from kvlake.graveler.records import Value
from tests.support import backends
from tests.support.backends import examples

# Tiny ranges and a byte cap that large values reach, so that examples of a
# few hundred keys cross hash boundaries, entry caps and byte caps.
TINY = Chunking(target_entries=4, max_entries=10, max_bytes=600)

keys = st.integers(min_value=0, max_value=400).map(lambda i: b"k/%04d" % i)
values = st.builds(
    lambda identity, data: Value(identity=identity, data=data),
    st.binary(min_size=1, max_size=8),
    st.binary(max_size=150),
)
batches = st.dictionaries(keys, st.none() | values, max_size=120).map(
    lambda changes: sorted(changes.items())
)


# The examples (a tenth of them on S3: `examples`) share the test's blockstore, each writing
# under a namespace of its own, through a manager of its own: none reads what another wrote.
def test_applies_match_a_dict_model(blockstore: BlockStore) -> None:
    @settings(
        max_examples=examples(blockstore, 150),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        initial=st.dictionaries(keys, values, max_size=200),
        rounds=st.lists(batches, min_size=1, max_size=6),
        probes=st.lists(keys, max_size=20),
    )
    def check(initial: dict[bytes, Value], rounds: list[list[Change]], probes: list[bytes]) -> None:
        namespace = backends.namespace(blockstore, uuid.uuid4().hex)
        manager = CommittedManager(blockstore, range_cache_size=4, chunking=TINY)
        model = dict(initial)
        metarange_id = manager.write_metarange(namespace, sorted(model.items()))
        for changes in rounds:
            previous_id, previous = metarange_id, dict(model)
            metarange_id = manager.apply(namespace, metarange_id, iter(changes))
            for key, new in changes:
                if new is None:
                    model.pop(key, None)
                else:
                    model[key] = new

            expected = sorted(model.items())
            assert list(manager.scan(namespace, metarange_id)) == expected
            assert (metarange_id == previous_id) == (model == previous)
            # Cut exactly as a fresh write of the same entries: boundaries resynchronise.
            assert manager.write_metarange(namespace, expected) == metarange_id
            for probe in probes:
                start = [entry for entry in expected if entry[0] >= probe]
                assert list(manager.scan(namespace, metarange_id, probe)) == start
                if probe in model:
                    assert manager.get(namespace, metarange_id, probe) == model[probe]
                else:
                    try:
                        manager.get(namespace, metarange_id, probe)
                    except EntryNotFoundError:
                        pass
                    else:
                        raise AssertionError(f"get found {probe!r}, which the model lacks")

    check()
