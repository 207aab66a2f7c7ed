"""Property test: branch reads always match a plain dict model of the same operations."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvlake.blockstore import BlockStore
from kvlake.errors import EntryNotFoundError, NoChangesError
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler, value
from tests.support import FakeClock, backends

keys_ = st.binary(min_size=1, max_size=3).filter(lambda key: not key.startswith(b"\0"))
operations = st.lists(
    st.one_of(
        st.tuples(st.just("set"), keys_, st.text(max_size=3)),
        st.tuples(st.just("delete"), keys_, st.just("")),
        st.tuples(st.just("commit"), st.just(b""), st.just("")),
        st.tuples(st.just("branch"), st.just(b""), st.just("")),
    ),
    max_size=60,
)


# The examples share the test's blockstore (function_scoped_fixture), each with a fresh
# store and a namespace of its own there: no example reads range files another wrote.
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(operations)
def test_branch_view_and_commits_match_a_dict_model(
    lake_blocks: BlockStore, ops: list[tuple[str, bytes, str]]
) -> None:
    clock = FakeClock()
    graveler = make_graveler(MemoryStore(), clock, lake_blocks)
    namespace = backends.namespace(lake_blocks, uuid.uuid4().hex)
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    model: dict[bytes, str] = {}
    committed: dict[str, dict[bytes, str]] = {}
    head: dict[bytes, str] = {}  # what main's last commit holds
    for n, (op, key, text) in enumerate(ops):
        clock.advance(1)
        if op == "set":
            graveler.set(repo, "main", key, value(text))
            model[key] = text
        elif op == "delete":
            graveler.delete(repo, "main", key)
            model.pop(key, None)
        elif op == "commit":
            try:
                commit_id = graveler.commit(repo, "main", committer="t", message=str(n))
            except NoChangesError:
                continue
            head = dict(model)
            committed[commit_id] = head
        else:
            graveler.create_branch(repo, f"b{n}", "main")  # from main's commit, not its staging
            committed[f"b{n}"] = head
        assert [k for k, _ in graveler.list(repo, "main")] == sorted(model)
    assert dict(graveler.list(repo, "main")) == {k: value(t) for k, t in model.items()}
    for ref, snapshot in committed.items():
        assert dict(graveler.list(repo, ref)) == {k: value(t) for k, t in snapshot.items()}
    for key in {k for _, k, _ in ops if k}:
        if key in model:
            assert graveler.get(repo, "main", key) == value(model[key])
        else:
            try:
                graveler.get(repo, "main", key)
            except EntryNotFoundError:
                continue
            raise AssertionError(f"{key!r} should be absent")
