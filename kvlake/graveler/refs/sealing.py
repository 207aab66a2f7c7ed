"""The index of staging tokens being sealed, so the deletion worker's in-use check learns
the sealed tokens without reading every branch record (issue 33, item 2).

The check must know which tokens are sealed (a commit in progress may hold their
entries' blobs); a scan of the branch records made one due record cost a row per
branch. Each instance partition holds `sealing/<token>` -> branch name instead:

- A seal writes the entry of each token it seals *before* its compare-and-swap
  on the branch record (in the swap's change function, so every attempt does).
  So a token sealed at any moment has its entry at that moment: the index holds
  a superset of the sealed tokens.
- An entry goes only once its token has left its branch (neither the staging
  token nor sealed): a token is sealed once and never named again (tokens are
  fresh, their states only move forward), so it can never need the entry again.
  A commit removes its tokens' entries after publishing them; the reader below
  removes those it finds gone (after a reset, a branch deletion, an unseal, a
  crash).
- The reader (`sealed`) reads the entries, then the records of the branches they
  name in one `get_many`, and answers those branches' sealed tokens as that read
  found them. A branch no entry names had no sealed token when its entries would
  have been read (the index holds a superset), so each branch's tokens are as one
  read of its record found them, before any staging lookup, as a scan of every
  branch record would have found them (such a scan, paged, also reads each record
  at its own moment). Entries whose token is neither its branch's staging token
  nor sealed (or whose branch is gone) are stale: removed.

An instance written before the index gets it built on first use: one scan of its
branches writes the entries of their sealed tokens, then the marker
`indexes/sealing` in its partition (seals from then on write their own entries).
Every process writing to a store must run a version that keeps the index.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.records import decode_branch
from kvlake.kv import Store

SCAN_PAGE: Final = 16
"""First page of the index scan: a few commits run at once, and a bigger page would read
past the index into the instance's next keys (settings, tags)."""


class SealingIndex:
    """The sealing index of repository instances (by instance partition). Thread-safe; its
    only in-process state is the instances it saw built (they stay built)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._built: set[bytes] = set()

    def add(self, partition: bytes, branch: str, tokens: Iterable[str]) -> None:
        """Index tokens a seal is about to swap in: call before the swap, on every attempt.
        (No build first: a build writes what the branches seal, this what they will.)"""
        self._store.set_many(partition, ((keys.sealing_key(t), branch.encode()) for t in tokens))

    def remove(self, partition: bytes, tokens: Iterable[str]) -> None:
        """Unindex tokens that have left their branch (call only after reading so)."""
        self._store.delete_many(partition, [keys.sealing_key(t) for t in tokens])

    def sealed(self, partition: bytes) -> set[str]:
        """The sealed tokens of every branch, each branch as read after this was called:
        the index first, then the branches it names (two round trips, not one row per
        branch)."""
        self.build(partition)
        entries: dict[str, str] = {}
        start = keys.SEALING_PREFIX
        with self._store.scan(partition, start, batch_size=SCAN_PAGE) as scan:
            for key, raw in scan:
                if not key.startswith(keys.SEALING_PREFIX):
                    break
                entries[key[len(keys.SEALING_PREFIX) :].decode()] = raw.decode()
        if not entries:
            return set()
        names = sorted(set(entries.values()))
        found = self._store.get_many(partition, [keys.branch_key(name) for name in names])
        branches = {
            name: decode_branch(found[keys.branch_key(name)])
            for name in names
            if keys.branch_key(name) in found
        }
        sealed: set[str] = set()
        for branch in branches.values():
            sealed.update(branch.sealed_tokens)
        gone = [
            token
            for token, name in entries.items()
            if name not in branches or token not in branches[name].tokens()
        ]
        if gone:  # left their branch: never sealed again (a seal indexes its token first)
            self.remove(partition, gone)
        return sealed

    def build(self, partition: bytes) -> None:
        """Index the sealed tokens of an instance written before the index, once."""
        if partition in self._built:
            return
        try:
            self._store.get(partition, keys.SEALING_BUILT)
        except KeyNotFoundError:
            entries: list[tuple[bytes, bytes]] = []
            with self._store.scan(partition, keys.BRANCH_PREFIX) as scan:
                for key, raw in scan:
                    if not key.startswith(keys.BRANCH_PREFIX):
                        break
                    name = key[len(keys.BRANCH_PREFIX) :]
                    entries.extend(
                        (keys.sealing_key(token), name)
                        for token in decode_branch(raw).sealed_tokens
                    )
            self._store.set_many(partition, entries)
            self._store.set(partition, keys.SEALING_BUILT, b"")
        self._built.add(partition)
