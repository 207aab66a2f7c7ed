"""Refs dump and restore: a round trip elsewhere gives identical commits and contents."""

from __future__ import annotations

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import ConfigError, InvalidInputError, NotFoundError
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.dump import dump_key
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import CommitRecord, Repository
from kvlake.graveler.refs.lineage import unstamped
from kvlake.graveler.refs.store import Refs
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import all_keys, contents, make_graveler, value
from tests.support import FakeClock


def _history(graveler: Graveler, namespace: str) -> Repository:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.set(repo, "main", b"a", value("1"))
    graveler.commit(repo, "main", committer="alice", message="one", metadata={"k": "v"})
    graveler.create_branch(repo, "dev", "main")
    graveler.set(repo, "dev", b"b", value("2"))
    graveler.commit(repo, "dev", committer="bob", message="two")
    graveler.create_tag(repo, "v1", "dev")
    graveler.set(repo, "main", b"c", value("3"))
    graveler.commit(repo, "main", committer="alice", message="three")
    graveler.merges.merge(repo, "dev", "main", committer="carol")
    graveler.set(repo, "main", b"staged", value("not dumped"))
    return repo


def _state(graveler: Graveler, repo: Repository) -> dict[str, object]:
    branches = {n: b.commit_id for n, b in graveler.list_branches(repo)}
    return {
        "branches": branches,
        "tags": dict(graveler.list_tags(repo)),
        # Walk fields are no part of the history: a restore leaves them unrecorded.
        "commits": {i: unstamped(c) for i, c in Refs(graveler.store).list_commits(repo)},
        "contents": {n: contents(graveler, repo, f"{n}@") for n in branches},
    }


def test_dump_restored_into_another_store_gives_identical_history_and_contents(
    lake_blocks: BlockStore, namespace: str
) -> None:
    blocks = lake_blocks
    source = make_graveler(MemoryStore(), FakeClock(), blocks)
    repo = _history(source, namespace)
    manifest = source.dumps.dump(repo)
    assert (manifest.branches, manifest.tags, manifest.commits) == (2, 1, 5)

    target = make_graveler(MemoryStore(), FakeClock(), blocks)
    bare = target.create_bare_repository("copy", storage_namespace=namespace)
    assert target.dumps.restore(bare, manifest.dump_id) == manifest
    assert _state(target, bare) == _state(source, repo)
    # Staging is not dumped: the restored branch is the source's committed state.
    assert contents(target, bare, "main") == contents(source, repo, "main@")
    log = [r.id for r in target.history.log(bare, "main").commits]
    assert log == [r.id for r in source.history.log(repo, "main").commits]
    target.set(bare, "main", b"new", value("works"))
    target.commit(bare, "main", committer="t", message="after restore")


def test_restore_refuses_a_repository_that_is_not_bare(graveler: Graveler, namespace: str) -> None:
    repo = _history(graveler, namespace)
    manifest = graveler.dumps.dump(repo)
    before = all_keys(graveler.store)
    with pytest.raises(InvalidInputError, match="bare"):
        graveler.dumps.restore(repo, manifest.dump_id)
    assert all_keys(graveler.store) == before


def test_inconsistent_or_missing_dumps_restore_nothing(
    lake_blocks: BlockStore, namespace: str
) -> None:
    blocks = lake_blocks
    graveler = make_graveler(MemoryStore(), FakeClock(), blocks)
    repo = _history(graveler, namespace)
    manifest = graveler.dumps.dump(repo)
    graveler.delete_repository(repo.name)  # its data stays: a bare repository may take it over
    bare = graveler.create_bare_repository("copy", storage_namespace=namespace)
    before = all_keys(graveler.store)
    with pytest.raises(NotFoundError, match="no complete refs dump"):
        graveler.dumps.restore(bare, "0" * 26)
    with pytest.raises(InvalidInputError):
        graveler.dumps.restore(bare, "../../etc")
    key = dump_key(manifest.dump_id, "commits.jsonl")
    lines = blocks.get(namespace, key).splitlines(keepends=True)
    record = msgspec.json.decode(lines[0], type=CommitRecord)
    forged = CommitRecord(id=record.id, commit=msgspec.structs.replace(record.commit, message="x"))
    blocks.put(namespace, key, msgspec.json.encode(forged) + b"\n" + b"".join(lines[1:]))
    with pytest.raises(InvalidInputError, match="does not match its content"):
        graveler.dumps.restore(bare, manifest.dump_id)
    blocks.put(namespace, key, b"".join(lines[1:]))  # a commit a ref may name is gone
    with pytest.raises(InvalidInputError, match="inconsistent"):
        graveler.dumps.restore(bare, manifest.dump_id)
    assert all_keys(graveler.store) == before


def test_dump_needs_a_blockstore(lake_blocks: BlockStore, namespace: str) -> None:
    blocks = lake_blocks
    graveler = Graveler(
        MemoryStore(), CommittedManager(blocks), check_namespace=blocks.check_namespace
    )
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    with pytest.raises(ConfigError, match="blockstore"):
        graveler.dumps.dump(repo)
