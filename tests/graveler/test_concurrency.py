"""Writers and committers racing on one branch lose no acknowledged write (invariant 2)."""

from __future__ import annotations

import threading

from kvlake.blockstore import BlockStore
from kvlake.errors import NoChangesError
from kvlake.graveler.graveler import Graveler
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler, value
from tests.support import FakeClock

WRITERS = 4
WRITES_EACH = 150
COMMITTERS = 2


def test_racing_writers_and_committers_lose_no_acknowledged_write(
    lake_blocks: BlockStore, namespace: str
) -> None:
    graveler = make_graveler(MemoryStore(), FakeClock(), lake_blocks)
    _run_race(graveler, namespace)


def _run_race(graveler: Graveler, namespace: str) -> None:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    acknowledged: dict[bytes, str] = {}
    lock = threading.Lock()
    writers_done = threading.Event()
    errors: list[BaseException] = []
    commits: list[str] = []

    def writer(w: int) -> None:
        try:
            for i in range(WRITES_EACH):
                key = b"w%d/%04d" % (w, i % 100)  # overwrites too, not only new keys
                text = f"{w}-{i}"
                if i % 7 == 3:
                    graveler.delete(repo, "main", key)
                    with lock:
                        acknowledged[key] = ""
                else:
                    graveler.set(repo, "main", key, value(text))
                    with lock:
                        acknowledged[key] = text
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)

    def committer(c: int) -> None:
        n = 0
        try:
            while not writers_done.is_set():
                n += 1
                try:
                    commits.append(
                        graveler.commit(repo, "main", committer=f"c{c}", message=f"{c}-{n}")
                    )
                except NoChangesError:
                    pass
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    committers = [threading.Thread(target=committer, args=(c,)) for c in range(COMMITTERS)]
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for thread in committers + writers:
        thread.start()
    for thread in writers:
        thread.join()
    writers_done.set()
    for thread in committers:
        thread.join()
    assert errors == []
    # How many commits ran during the writes depends on scheduling; correctness
    # below must hold whatever that number is, including zero.

    expected = {k: value(t) for k, t in acknowledged.items() if t}
    assert dict(graveler.list(repo, "main")) == expected  # committed + staged view
    final = graveler.commit(repo, "main", committer="t", message="final", allow_empty=True)
    assert dict(graveler.list(repo, final)) == expected  # everything reached a commit
    _assert_linear_history(graveler, repo, final)


def _assert_linear_history(graveler: Graveler, repo: object, head: str) -> None:
    seen = set()
    commit_id = head
    while True:
        assert commit_id not in seen
        seen.add(commit_id)
        commit = graveler.get_commit(repo, commit_id)  # type: ignore[arg-type]
        if not commit.parents:
            return
        parent = graveler.get_commit(repo, commit.parents[0])  # type: ignore[arg-type]
        assert commit.generation == parent.generation + 1
        commit_id = commit.parents[0]
