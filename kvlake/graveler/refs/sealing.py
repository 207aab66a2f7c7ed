"""The index of staging tokens being sealed, so the deletion worker's in-use check learns
the sealed tokens without reading every branch record (issue 33, item 2).

The check must know which tokens are sealed (a commit in progress may hold their
entries' blobs); a scan of the branch records made one due record cost a row per
branch. Each instance partition holds `sealing/<token>` -> `<branch>\\0<anchor>` instead:

- A seal writes the entry of each token it seals *before* its compare-and-swap
  on the branch record (in the swap's change function, so every attempt does).
  So a token sealed at any moment has its entry at that moment: the index holds
  a superset of the sealed tokens.
- An entry goes only once its token has left its branch (neither the staging
  token nor sealed): a token is sealed once and never named again (tokens are
  fresh, their states only move forward), so it can never need the entry again.
  The reader below removes those it finds gone (after a publish, a reset, a branch
  deletion, an unseal, a crash). An entry also names its *anchor*: the branch's
  staging token when the seal read the branch. A plain seal's anchor is its token;
  a seal that puts a filled token above the staging (`Committer.publish_token`)
  indexes a token the branch does not name until its swap, so its entry stays
  while the anchor is still named (the swap needs the branch as read, anchor and
  all) and is removed with `delete_if` on the value read (a retry that wrote a new
  anchor meanwhile is kept).
- The reader (`read`) reads the entries, then the records of the branches they
  name in one `get_many`, and answers those branches' sealed tokens as that read
  found them. A branch no entry names had no sealed token when its entries would
  have been read (the index holds a superset), so each branch's tokens are as one
  read of its record found them, before any staging lookup, as a scan of every
  branch record would have found them (such a scan, paged, also reads each record
  at its own moment).

An instance written before the index gets it built on first use: one scan of its
branches writes the entries of their sealed tokens, then the marker
`indexes/sealing` in its partition (seals from then on write their own entries).
Every process writing to a store must run a version that keeps the index.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Final

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.records import Branch, decode_branch
from kvlake.kv import Store

SCAN_PAGE: Final = 16
"""First page of the index scan: a few commits run at once, and a bigger page would read
past the index into the instance's next keys (settings, tags)."""


@dataclass(slots=True)
class SealedRead:
    """What one read of the index found: the sealed tokens, and the branch records it read
    (those the index names and those the caller asked for), as that one `get_many` found
    them; a branch absent from `branches` had no record then."""

    sealed: set[str] = field(default_factory=set)
    branches: dict[str, Branch] = field(default_factory=dict)


def entry_value(branch: str, anchor: str) -> bytes:
    """`<branch>\0<anchor>`: branch names hold no NUL."""
    return branch.encode() + b"\0" + anchor.encode()


def parse_entry(token: str, raw: bytes) -> tuple[str, str]:
    """The branch and anchor of an entry (one without an anchor is a plain seal's)."""
    branch, _, anchor = raw.partition(b"\0")
    return branch.decode(), anchor.decode() or token


class SealingIndex:
    """The sealing index of repository instances (by instance partition). Thread-safe; its
    only in-process state is the instances it saw built (they stay built)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._built: set[bytes] = set()

    def add(self, partition: bytes, branch: str, anchor: str, tokens: Iterable[str]) -> None:
        """Index tokens a seal is about to swap in: call before the swap, on every attempt,
        with the branch's staging token as that attempt read it (`anchor`). (No build
        first: a build writes what the branches seal, this what they will.)"""
        value = entry_value(branch, anchor)
        self._store.set_many(partition, ((keys.sealing_key(t), value) for t in tokens))

    def read(self, partition: bytes, also: Collection[str] = ()) -> SealedRead:
        """The sealed tokens of every branch, each branch as read after this was called:
        the index first, then the branches it names and `also` in one `get_many` (two
        round trips, not one row per branch)."""
        self.build(partition)
        entries: dict[str, tuple[str, str]] = {}
        raws: dict[str, bytes] = {}
        start = keys.SEALING_PREFIX
        with self._store.scan(partition, start, batch_size=SCAN_PAGE) as scan:
            for key, raw in scan:
                if not key.startswith(keys.SEALING_PREFIX):
                    break
                token = key[len(keys.SEALING_PREFIX) :].decode()
                entries[token], raws[token] = parse_entry(token, raw), raw
        names = sorted({name for name, _ in entries.values()} | set(also))
        if not names:
            return SealedRead()
        found = self._store.get_many(partition, [keys.branch_key(name) for name in names])
        read = SealedRead()
        for name in names:
            record = found.get(keys.branch_key(name))
            if record is not None:
                read.branches[name] = decode_branch(record)
        for branch in read.branches.values():
            read.sealed.update(branch.sealed_tokens)
        for token, (name, anchor) in entries.items():
            named = read.branches[name].tokens() if name in read.branches else ()
            if token not in named and anchor not in named:
                # Left its branch, and no seal that read the branch as it is can put it
                # back (a retry rewrote the value, which delete_if keeps).
                self._store.delete_if(partition, keys.sealing_key(token), raws[token])
        return read

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
                    name = key[len(keys.BRANCH_PREFIX) :].decode()
                    entries.extend(
                        (keys.sealing_key(token), entry_value(name, token))
                        for token in decode_branch(raw).sealed_tokens
                    )
            self._store.set_many(partition, entries)
            self._store.set(partition, keys.SEALING_BUILT, b"")
        self._built.add(partition)
