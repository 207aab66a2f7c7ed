"""The dead letters: records no worker retries, kept with the reason, until an operator acts.

Requeueing writes the record back into the log (attempts reset, due now)
before it removes the dead letter, so a crash between the two leaves a
duplicate intent, never a lost one. A requeued record is checked afresh: bad
input dead-letters again with the same reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

import msgspec

from kvlake.deletion import keys
from kvlake.deletion.log import DeletionLog
from kvlake.deletion.records import DeadLetter, decode_dead_letter
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.kv import get_or_none

PAGE: Final = 1000


class DeadLetters:
    """List, requeue and drop dead letters. Thread-safe; state lives in the KV."""

    def __init__(self, log: DeletionLog) -> None:
        self._log = log
        self._store = log.store

    def scan(self, *, after: str = "") -> Iterator[DeadLetter]:
        """Dead letters in id order, starting after the id `after`."""
        start = keys.dead_letter_key(after) + b"\0" if after else b""
        with self._store.scan(keys.DEAD_LETTERS, start) as scan:
            for page in scan.batches():
                for _, raw in page:
                    yield decode_dead_letter(raw)

    def count(self) -> int:
        with self._store.scan(keys.DEAD_LETTERS, batch_size=PAGE) as scan:
            return sum(len(page) for page in scan.batches())

    def get(self, record_id: str) -> DeadLetter:
        """Raises NotFoundError naming the id when there is no such dead letter."""
        loaded = get_or_none(self._store, keys.DEAD_LETTERS, keys.dead_letter_key(record_id))
        if loaded is None:
            raise NotFoundError(
                f"no dead letter with id {record_id!r}; `kvlake deletion dlq list` shows them"
            )
        return decode_dead_letter(loaded[0])

    def requeue(self, ids: Sequence[str] | None = None) -> int:
        """Put dead letters (all when `ids` is None) back in the log, due now; return the count.

        Raises:
            NotFoundError: an id names no dead letter (nothing was changed).
            InvalidInputError: an id names an undecodable record, which can only be dropped.
        """
        if ids is not None:
            letters = [self.get(record_id) for record_id in ids]  # all exist, or change nothing
            for letter in letters:
                if letter.record is None:
                    raise InvalidInputError(
                        f"dead letter {letter.id!r} holds a record that cannot be decoded;"
                        " it cannot be requeued, drop it"
                    )
            return self._requeue(letters)
        total = 0
        batch: list[DeadLetter] = []
        for letter in self.scan():
            if letter.record is not None:
                batch.append(letter)
            if len(batch) >= PAGE:
                total += self._requeue(batch)
                batch = []
        return total + self._requeue(batch)

    def _requeue(self, letters: list[DeadLetter]) -> int:
        now = self._log.clock()
        self._log.append(
            msgspec.structs.replace(
                letter.record, attempts=0, not_before=now, last_error=letter.reason
            )
            for letter in letters
            if letter.record is not None
        )
        self._store.delete_many(
            keys.DEAD_LETTERS, (keys.dead_letter_key(letter.id) for letter in letters)
        )
        return len(letters)

    def drop(self, ids: Sequence[str] | None = None) -> int:
        """Forget dead letters (all when `ids` is None); their blobs stay. Return the count.

        Raises:
            NotFoundError: an id names no dead letter (nothing was changed).
        """
        if ids is not None:
            for record_id in ids:
                self.get(record_id)
            self._store.delete_many(keys.DEAD_LETTERS, (keys.dead_letter_key(i) for i in ids))
            return len(ids)
        total = 0
        with self._store.scan(keys.DEAD_LETTERS, batch_size=PAGE) as scan:
            for page in scan.batches():
                self._store.delete_many(keys.DEAD_LETTERS, (key for key, _ in page))
                total += len(page)
        return total
