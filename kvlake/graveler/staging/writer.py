"""The writer flow: the one way a value is staged on a branch (invariant 2).

Every staging write (`Graveler.set` and `delete`, the catalog's uploads,
deletions and copies) runs this flow:
1. check the branch protection rules;
2. read the branch's staging token (or use the one the caller read moments ago);
3. replace the staged value at the key by compare-and-swap, calling
   `StagingHooks.before_unstage` first for the value it replaces, so a racing
   writer's value is never replaced unannounced (invariant 4 for the layer
   above, which logs its blob);
4. re-read the branch: if a commit sealed the token meanwhile, it may have
   read the token before our write, so write again to the new token, after
   `StagingHooks.before_restage` (the value is then in two tokens, and the
   sealed one may be committed). Always: a later writer may have replaced our
   value in the sealed token and died before writing its own again, so
   skipping the re-write could lose an acknowledged write.
A commit never blocks this flow: it costs at most two single-key writes plus
the re-reads when one seal races it (invariant 3).

`if_absent` makes the write a compare-and-swap on the path's absence: the
staged entry must be missing (or a tombstone) in the token written, and no
sealed token or the branch's commit may hold the path, so of many racing
conditional writes exactly one succeeds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol

import msgspec

from kvlake.errors import (
    EntryNotFoundError,
    InvalidInputError,
    KeyNotFoundError,
    PreconditionFailedError,
    TooManyTriesError,
)
from kvlake.graveler import keys
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import (
    Branch,
    BranchProtection,
    Repository,
    Value,
    decode_value,
    encode,
)
from kvlake.graveler.staging.range_tombstones import FIRST_PATH, RangeTombstone, stage_records
from kvlake.graveler.staging.store import TOMBSTONE
from kvlake.kv import Predicate

WRITE_TRIES: Final = 10
"""Seals a write may race (and compare-and-swaps it may lose) before giving up."""

SPAN_ROWS_PER_KEY: Final = 2
"""Rows a batch's range read may take per key of the batch before it looks the rest up
(`Writer._read_staged`): a range scan costs about a third of a lookup per row."""

Step = Callable[[str, Branch | None, bool], None]
"""One pass of an operation on a staging token: (token, branch read, again after a seal)."""


def check_key(key: bytes) -> None:
    """Refuse a key below `FIRST_PATH`: staging keeps range tombstones there.

    Raises:
        InvalidInputError: the key is empty or starts with NUL.
    """
    if key < FIRST_PATH:
        raise InvalidInputError(
            f"key {key!r} is empty or starts with NUL; graveler keys start with another byte"
        )


class StagingHooks(Protocol):
    """Called where a staged value loses its place or gains a second one.

    Graveler's values are opaque; a layer that knows what they reference
    (kvlake/deletion, for blobs) implements these. A hook that raises stops the
    operation before it changed anything.
    """

    def before_unstage(
        self,
        repository: Repository,
        token: str,
        entries: Sequence[tuple[bytes, Value]],
        replacement: Value | None,
    ) -> None:
        """Runs before these staged values leave `token` in place.

        `replacement` is the value written over each (None: a tombstone, or the
        entry is removed by a reset). Invariant 4: whatever they reference must
        be recorded for deletion here, durably, before the reference goes.
        """

    def before_restage(self, repository: Repository, values: Sequence[Value]) -> None:
        """Runs before values that may also be staged in a sealed token, or committed,
        are staged in another token (a writer's re-write after a seal, a reset
        staging committed values). What they reference is now held by two places,
        so replacing one must not delete it: mark it shared.
        """


class Writer:
    """Runs the writer flow for one graveler. Thread-safe; no in-process state."""

    def __init__(self, parts: Parts, *, hooks: StagingHooks | None) -> None:
        self._store, self._refs, self._staging = parts.store, parts.refs, parts.staging
        self._committed, self._protection = parts.committed, parts.protection
        self.hooks = hooks

    def write(
        self,
        repository: Repository,
        branch: str,
        key: bytes,
        value: Value | None,
        *,
        if_absent: bool = False,
        token: str = "",
        attempted: list[str] | None = None,
        protection: BranchProtection | None = None,
    ) -> None:
        """Stage `value` at `key` (None: a tombstone); durable and bound for a commit on return.

        `token` is the branch's staging token if the caller read it moments ago
        (it must be younger than the token drop delay), `protection` the rules it read
        with it (`Graveler.read_branch`). `attempted` collects the
        tokens a write was tried on: from the first try on, the value may be
        staged whatever the caller is told.

        Raises:
            ProtectedBranchError: a rule blocks writes to the branch (nothing written).
            PreconditionFailedError: `if_absent`, and the path holds an object.
            BranchNotFoundError: no such branch.
            TooManyTriesError: racing commits or writers kept winning; retry.
        """
        check_key(key)
        encoded = TOMBSTONE if value is None else encode(value)
        tried = [] if attempted is None else attempted

        def stage(token: str, current: Branch | None, again: bool) -> None:
            if again and value is not None and self.hooks is not None:
                # Also in the sealed token, which its commit may publish: shared now.
                self.hooks.before_restage(repository, [value])
            below = current if if_absent else None
            self._swap(repository, branch, token, key, value, encoded, below, tried)

        self.run(repository, branch, stage, token="" if if_absent else token, protection=protection)

    def write_tombstones(self, repository: Repository, branch: str, keys_: Sequence[bytes]) -> None:
        """Stage tombstones at many keys in one writer flow: a few KV calls per batch.

        Keys with a staged value are replaced as a single write replaces them
        (`before_unstage` first, for the whole batch at once, then a
        compare-and-swap each). Keys with nothing staged in the token get their
        tombstone in one blind `set_many`: a writer staging a blob there between
        our read and that write would be replaced unannounced, so the caller
        must keep such writers out while it runs. kvlake/operations does, with a
        delete lock every upload checks after taking its own write lock (see its
        locks module); a copy's blob is marked shared, so replacing one is safe.
        Repeating the call is harmless (a tombstone over a tombstone is skipped).

        Raises:
            ProtectedBranchError, BranchNotFoundError, TooManyTriesError: as `write`.
        """

        for key in keys_:
            check_key(key)

        def stage(token: str, current: Branch | None, again: bool) -> None:
            self._tombstone_batch(repository, branch, token, keys_)

        self.run(repository, branch, stage)

    def _tombstone_batch(
        self, repository: Repository, branch: str, token: str, keys_: Sequence[bytes]
    ) -> None:
        partition = keys.staging_partition(token)
        staged = self._read_staged(partition, keys_)
        absent = [key for key in keys_ if key not in staged]
        live = [(key, raw) for key, raw in staged.items() if raw != TOMBSTONE]
        if absent:
            self._store.set_many(partition, ((key, TOMBSTONE) for key in absent))
        if live and self.hooks is not None:
            # Invariant 4: announced before any of them is replaced (one append per batch).
            entries = [(key, decode_value(raw)) for key, raw in live]
            self.hooks.before_unstage(repository, token, entries, None)
        swaps = [(key, raw, TOMBSTONE) for key, raw in live]
        for key in self._store.swap_many(partition, swaps):
            # A racing writer replaced it: the single-write path announces the new value.
            self._swap(repository, branch, token, key, None, TOMBSTONE, None, [])

    def _read_staged(self, partition: bytes, keys_: Sequence[bytes]) -> dict[bytes, bytes]:
        """The values staged at `keys_` (missing keys left out), as `Store.get_many` reads
        them. Keys in ascending order (a bulk delete's batch lists them so) are read as
        the one range of the partition they span, a few times cheaper per row than a
        lookup each (SQLite: 1.5 against 4.6 us), while that range holds at most
        `SPAN_ROWS_PER_KEY` rows per key; the keys past that point by lookups."""
        if len(keys_) < 2 or not all(map(bytes.__lt__, keys_, keys_[1:])):
            return self._store.get_many(partition, keys_)
        wanted = set(keys_)
        found: dict[bytes, bytes] = {}
        last, budget = keys_[-1], SPAN_ROWS_PER_KEY * len(keys_)
        with self._store.scan(partition, keys_[0], batch_size=len(keys_)) as scan:
            for page in scan.batches():
                for key, raw in page:
                    if key in wanted:
                        found[key] = raw
                reached = page[-1][0]
                if reached >= last:
                    break
                budget -= len(page)
                if budget <= 0:  # mostly other keys: look the rest up one by one
                    rest = [key for key in keys_ if key > reached]
                    found.update(self._store.get_many(partition, rest))
                    break
        return found

    def stage_range_tombstones(
        self,
        repository: Repository,
        branch: str,
        records: Sequence[RangeTombstone],
        *,
        metarange_id: str,
    ) -> None:
        """Stage range tombstones: a tombstone at every key of each committed range
        (all of metarange `metarange_id`) but its `keep` keys, in one writer flow
        (kvlake/graveler/staging/range_tombstones.py).

        The token is listed in the branch's `tombstone_tokens` before its first record is
        written, so a reader never misses one. As with `write_tombstones`, the
        caller keeps writers off those keys while it runs (a key staged in the
        token meanwhile would win over the record). Repeating the call is harmless.

        Raises:
            ConflictError: the token holds records of another metarange, which these
                could overlap (nothing of that call written).
            ProtectedBranchError, BranchNotFoundError, TooManyTriesError: as `write`.
        """

        def stage(token: str, current: Branch | None, again: bool) -> None:
            if self._list_tombstone_token(repository, branch, token):
                stage_records(self._store, token, records, metarange_id=metarange_id)

        self.run(repository, branch, stage)

    def _list_tombstone_token(self, repository: Repository, name: str, token: str) -> bool:
        """Add `token` to the branch's `tombstone_tokens`; False if it is no longer the branch's."""

        def listed(branch: Branch) -> Branch | None:
            if token not in branch.tokens() or token in branch.tombstone_tokens:
                return None  # committed or reset meanwhile (`run` goes on), or listed
            return msgspec.structs.replace(
                branch, tombstone_tokens=(*branch.tombstone_tokens, token)
            )

        what = f"listing a bulk delete's token on branch {name!r}"
        branch = self._refs.update_branch(repository, name, listed, what=what)
        return token in branch.tokens() and token in branch.tombstone_tokens

    def update(
        self,
        repository: Repository,
        branch: str,
        key: bytes,
        change: Callable[[Value], Value],
    ) -> None:
        """Stage `change(value)` over the path's current value on the branch (lakeFS's
        `Update`): the staged value if any, else the sealed tokens' or the commit's.

        A compare-and-swap on the staged value read, so a racing write or deletion is
        never overwritten with a change of what it replaced: `change` is applied again
        to whatever won. A value taken from under the staging token (a sealed token,
        the commit) is then in two places, so `StagingHooks.before_restage` runs
        first, as for a writer's re-write after a seal. `change` must be idempotent:
        after a seal it runs again, on its own result in the sealed token.

        Raises:
            ProtectedBranchError: a rule blocks writes to the branch (nothing written).
            EntryNotFoundError: the path holds nothing on the branch (or a deletion).
            BranchNotFoundError: no such branch.
            TooManyTriesError: racing writers or commits kept winning; retry.
        """

        def stage(token: str, current: Branch | None, again: bool) -> None:
            assert current is not None, "run reads the branch when given no token"
            self._update_in(repository, branch, token, current, key, change)

        self.run(repository, branch, stage)

    def run(
        self,
        repository: Repository,
        branch: str,
        step: Step,
        *,
        token: str = "",
        check_protection: bool = True,
        protection: BranchProtection | None = None,
    ) -> None:
        """The writer flow's loop: run `step` on the branch's staging token until it ran on
        a token that was still the staging token after it (invariant 2).

        `step(token, branch, again)` gets the branch record it was read from (None
        for a `token` the caller read moments ago) and whether an earlier run's
        token was sealed meanwhile; it must be safe to repeat. Resets use it too.

        Raises:
            ProtectedBranchError: a rule blocks writes to the branch (nothing done),
                unless the caller checked already (`check_protection=False`).
            BranchNotFoundError: no such branch.
            TooManyTriesError: racing commits kept sealing the token; retry.
        """
        if check_protection:
            self._protection.check(repository, branch, "staging_write", rules=protection)
        current: Branch | None = None
        if not token:
            current = self._refs.load_branch(repository, branch)[0]
            token = current.staging_token
        again = False
        for _ in range(WRITE_TRIES):
            step(token, current, again)
            current = self._refs.load_branch(repository, branch)[0]
            if current.staging_token == token:
                return
            # Invariant 2: a commit sealed the token between our read and our step and
            # may have read it already (or a later writer replaced our value in it):
            # do it again on the new token. Always: that writer may die before it does.
            token, again = current.staging_token, True
        raise TooManyTriesError(
            f"writing to branch {branch!r} kept racing commits; retry the write"
        )

    def _swap(
        self,
        repository: Repository,
        branch: str,
        token: str,
        key: bytes,
        value: Value | None,
        encoded: bytes,
        below: Branch | None,
        tried: list[str],
    ) -> None:
        """Compare-and-swap the staged value at `key` in `token`, announcing what it replaces.

        With `below` (a conditional write), refuse when the path holds an object
        other than ours: in `token`, or under it in `below`'s sealed tokens and commit.
        """
        partition = keys.staging_partition(token)
        if below is None and self.hooks is None:
            # Nobody to tell what is replaced, and no condition: a blind write is the
            # same compare-and-swap the last writer would win, one KV call cheaper.
            tried.append(token)
            self._store.set(partition, key, encoded)
            return
        for _ in range(WRITE_TRIES):
            raw, expected = self._read(partition, key)
            if raw == encoded and expected is not None:
                return  # our own earlier try landed
            if below is not None:
                self._refuse_present(repository, branch, key, raw, expected, below, encoded)
            if raw and self.hooks is not None:
                self.hooks.before_unstage(repository, token, [(key, decode_value(raw))], value)
            tried.append(token)  # from here on the write may land, whatever we are told
            try:
                self._store.set_if(partition, key, encoded, expected)
                return
            except PreconditionFailedError:
                continue  # a racing writer replaced it first: announce what is there now
        raise TooManyTriesError(
            f"path {key.decode(errors='replace')!r} kept changing under racing writers; retry"
        )

    def _update_in(
        self,
        repository: Repository,
        branch: str,
        token: str,
        current: Branch,
        key: bytes,
        change: Callable[[Value], Value],
    ) -> None:
        partition = keys.staging_partition(token)
        for _ in range(WRITE_TRIES):
            raw, expected = self._read(partition, key)
            below = expected is None
            found = self._staged_or_committed(repository, current, key) if below else raw
            if not found:  # absent, or a tombstone here or under the token
                path = key.decode(errors="replace")
                raise EntryNotFoundError(f"path {path!r} not found on branch {branch!r}")
            value = change(decode_value(found))
            encoded = encode(value)
            if encoded == raw:
                return  # nothing changes (or our own earlier try landed)
            if self.hooks is not None:
                if below:
                    # Also held by a sealed token or the commit: shared from now on.
                    self.hooks.before_restage(repository, [value])
                else:
                    self.hooks.before_unstage(repository, token, [(key, decode_value(raw))], value)
            try:
                self._store.set_if(partition, key, encoded, expected)
                return
            except PreconditionFailedError:
                continue  # a racing writer won: change what is there now
        raise TooManyTriesError(
            f"path {key.decode(errors='replace')!r} kept changing under racing writers; retry"
        )

    def _read(self, partition: bytes, key: bytes) -> tuple[bytes, Predicate | None]:
        try:
            return self._store.get(partition, key)
        except KeyNotFoundError:
            return b"", None

    def _refuse_present(
        self,
        repository: Repository,
        branch: str,
        key: bytes,
        raw: bytes,
        expected: Predicate | None,
        below: Branch,
        encoded: bytes,
    ) -> None:
        if expected is None:  # nothing staged in this token: look under it
            raw = self._staged_or_committed(repository, below, key)
        if raw and raw != encoded:
            path = key.decode(errors="replace")
            raise PreconditionFailedError(
                f"object {path!r} already exists on branch {branch!r}; "
                "drop If-None-Match to overwrite it"
            )

    def _staged_or_committed(self, repository: Repository, branch: Branch, key: bytes) -> bytes:
        """The encoded value at `key` on the branch (the caller found nothing staged in its
        staging token), or b"" for none."""
        namespace = repository.storage_namespace
        try:
            staged = self._staging.read(namespace, branch.tokens(), branch.tombstone_tokens).get(
                key
            )
        except KeyNotFoundError:
            pass  # nothing staged: the commit's value
        else:
            return b"" if staged is None else encode(staged)
        metarange_id = self._refs.get_commit(repository, branch.commit_id).metarange_id
        try:
            committed = self._committed.get(repository.storage_namespace, metarange_id, key)
        except EntryNotFoundError:
            return b""
        return encode(committed)
