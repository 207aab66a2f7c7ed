"""Staged batches: many entries made visible on a branch in one swap, uncommitted.

The writer flow stages one key at a time, so a reader can see half of a batch
of writes. A batch job (a Spark job's files) instead fills a fresh staging
token that no branch references, then publishes it with one compare-and-swap
of the branch record (`Committer.publish_token`): the token becomes the newest
sealed token, above what was staged before, and the branch gets a fresh
staging token, as a commit's seal does. A reader of the branch sees all of the
batch or none; writers racing the swap write again to the fresh token
(invariant 2) and win over the batch; the branch's next commit takes the batch
like any sealed token. A batch that is never published leaves a partition no
branch references, which the cleaner's orphan sweep drops.

A batch that replaces a key range (an overwrite) holds a tombstone at every key
staged there; the blobs those staged entries reference are logged first
(`StagingHooks.before_unstage`, invariant 4), each with its own token and path,
so the deletion worker deletes them once the tombstones are committed over
them (or keeps them, if a commit took them first).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from kvlake.graveler import keys
from kvlake.graveler.history.commits import Committer
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import Repository, Value
from kvlake.graveler.staging.writer import Writer, check_key

LOG_BATCH: Final = 1000
"""Staged entries logged (and shadowed) per hook call."""


class Batches:
    """Fills and publishes staging tokens. Thread-safe; no in-process state."""

    def __init__(self, parts: Parts, *, committer: Committer, writer: Writer) -> None:
        self._refs, self._staging, self._protection = parts.refs, parts.staging, parts.protection
        self._committer = committer
        self._writer = writer

    @staticmethod
    def new_token(repository: Repository) -> str:
        """A fresh staging token for a batch (no branch references it until published)."""
        return keys.new_staging_token(repository.instance_uid)

    def fill(self, token: str, entries: Iterable[tuple[bytes, Value | None]]) -> None:
        """Write entries (None: a tombstone) into the batch's token, in KV batches.

        Raises:
            InvalidInputError: a key graveler cannot hold (nothing of that batch written).
        """

        def checked() -> Iterable[tuple[bytes, Value | None]]:
            for key, value in entries:
                check_key(key)
                yield key, value

        self._staging.set_many(token, checked())

    def shadow_staged(
        self, repository: Repository, branch: str, token: str, start: bytes, stop: bytes | None
    ) -> int:
        """Put a tombstone in `token` at every key the branch stages in [start, stop).

        Every token of the branch is read (staging and sealed), and each staged
        value's blob is logged with that token and key before its tombstone is
        written, so publishing `token` unstages them without losing a blob.
        Returns how many staged values were shadowed.

        Raises:
            BranchNotFoundError: no such branch.
            Whatever the hooks raise (the tombstones of that batch are not written).
        """
        branch_record, _ = self._refs.load_branch(repository, branch)
        count = 0
        for staged_token in branch_record.tokens():
            page: list[tuple[bytes, Value]] = []
            # Its values only: range tombstones hide committed keys, no staged value.
            staged = self._staging.read(repository.storage_namespace, [staged_token], ())
            for key, value in staged.scan(start):
                if stop is not None and key >= stop:
                    break
                if value is not None:
                    page.append((key, value))
                if len(page) == LOG_BATCH:
                    count += self._shadow(repository, staged_token, token, page)
                    page = []
            count += self._shadow(repository, staged_token, token, page)
        return count

    def _shadow(
        self,
        repository: Repository,
        staged_token: str,
        token: str,
        page: list[tuple[bytes, Value]],
    ) -> int:
        if not page:
            return 0
        hooks = self._writer.hooks
        if hooks is not None:  # invariant 4: logged before the tombstone can hide them
            hooks.before_unstage(repository, staged_token, page, None)
        self._staging.set_many(token, ((key, None) for key, _ in page))
        return len(page)

    def publish(self, repository: Repository, branch: str, token: str) -> str:
        """Make the filled token visible on the branch in one swap; return the head's id.

        Raises:
            ProtectedBranchError: a rule blocks staging writes to the branch.
            BranchNotFoundError: no such branch.
            TooManyTriesError: racing commits kept winning.
        """
        self._protection.check(repository, branch, "staging_write")
        return self._committer.publish_token(repository, branch, token)

    def is_empty(self, token: str) -> bool:
        """Whether the token holds nothing (a batch with nothing to publish)."""
        return self._staging.is_empty(token)
