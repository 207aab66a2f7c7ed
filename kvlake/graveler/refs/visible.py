"""The index of visible (not hidden) branches, so listings skip hidden ones.

Hidden branches (lakeFS's transactions' ephemeral branches) share the branches'
key range; a listing of the visible ones that scanned it would read past every
hidden one (issue 33). It scans the instance's `visible_branches/<repo>-<uid>`
partition (a key per visible branch name) instead and reads
those branch records only (one `get_many` a page). A branch's `hidden` flag is
set at its creation and never changes, so only creations and deletions touch
the index: a creation writes the key before its record (a crash between the two
leaves a key without a branch, never a branch without its key), and after the
record reads the key and writes it again only if it is gone; a deletion deletes
the record, then the key, then reads the record again and puts the key back if a
creation of the same name raced in. So a visible branch always has its key: a key
taken out before the creation's read is written by the creation, and one taken
out after it is put back by whoever took it out, who reads the record after. A key
may name no branch (or a hidden one) for a moment or after a crash, and the
listing that meets it takes it out the same way. A repository
written before the index gets it built on first use (marker
`indexes/visible_branches` in its partition).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.records import Branch, decode_branch
from kvlake.kv import Store

PAGE: Final = 100
"""Branch records fetched in one `get_many`."""


class VisibleBranches:
    """The visible-branch index of repository instances. Thread-safe; its only in-process
    state is the instances it saw indexed (they stay indexed)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._indexed: set[bytes] = set()

    def add(self, partition: bytes, name: str) -> None:
        """Index a visible branch, before its record is written."""
        self.build(partition)
        self._store.set(_index(partition), name.encode(), b"")

    def keep(self, partition: bytes, name: str) -> None:
        """Once a visible branch's record is written: put its key back if a deletion or a
        listing took it out meanwhile. A read, not a second durable write, in the usual
        case where nothing did (a creation's writes are most of its cost)."""
        try:
            self._store.get(_index(partition), name.encode())
        except KeyNotFoundError:
            self._store.set(_index(partition), name.encode(), b"")

    def remove(self, partition: bytes, name: str) -> None:
        """Unindex a deleted (or hidden) branch, then put the key back if a visible branch
        of that name was created meanwhile."""
        self._store.delete(_index(partition), name.encode())
        try:
            raw, _ = self._store.get(partition, keys.branch_key(name))
        except KeyNotFoundError:
            return
        if not decode_branch(raw).hidden:
            self._store.set(_index(partition), name.encode(), b"")

    def branches(
        self, partition: bytes, first: bytes, start: bytes
    ) -> Iterator[tuple[str, Branch]]:
        """Visible branches whose names start with `first`, from the name `start` on."""
        self.build(partition)
        with self._store.scan(_index(partition), start) as scan:
            page: list[str] = []
            for key, _ in scan:
                if not key.startswith(first):
                    break
                page.append(key.decode())
                if len(page) == PAGE:
                    yield from self._page(partition, page)
                    page = []
            yield from self._page(partition, page)

    def _page(self, partition: bytes, names: Sequence[str]) -> Iterator[tuple[str, Branch]]:
        if not names:
            return
        found = self._store.get_many(partition, [keys.branch_key(n) for n in names])
        for name in names:
            raw = found.get(keys.branch_key(name))
            branch = None if raw is None else decode_branch(raw)
            if branch is not None and not branch.hidden:
                yield name, branch
            else:  # deleted, its unindexing cut short; or a creation's (it writes it again)
                self.remove(partition, name)

    def build(self, partition: bytes) -> None:
        """Index the visible branches of an instance written before the index, once."""
        if partition in self._indexed:
            return
        try:
            self._store.get(partition, keys.VISIBLE_BRANCHES_BUILT)
        except KeyNotFoundError:
            with self._store.scan(partition, keys.BRANCH_PREFIX) as scan:
                visible = []
                for key, raw in scan:
                    if not key.startswith(keys.BRANCH_PREFIX):
                        break
                    if not decode_branch(raw).hidden:
                        visible.append(key[len(keys.BRANCH_PREFIX) :].decode())
            self._store.set_many(_index(partition), ((n.encode(), b"") for n in visible))
            self._store.set(partition, keys.VISIBLE_BRANCHES_BUILT, b"")
        self._indexed.add(partition)


def _index(partition: bytes) -> bytes:
    """The visible-branch index partition of an instance partition
    (`keys.visible_branches_partition`)."""
    return keys.VISIBLE_BRANCHES_PREFIX + partition
