"""Fixed-width ids and due keys: the only place that encodes uids and due times.

Both encodings are on disk (in partition names, keys and blob paths), so they
must never change. A uid is always `UID_LENGTH` characters of Crockford's
base32 alphabet in lower case, and a due key always `DUE_WIDTH` decimal digits
of milliseconds: fixed widths let a key start with either and still split and
sort unambiguously. Due keys are clamped to the range they can represent (the
epoch to the year 2286), because one digit more or a minus sign would break
both the width and the byte order.
"""

from __future__ import annotations

import os
import time
from typing import Final

from kvlake.errors import InvalidInputError

UID_ALPHABET: Final = "0123456789abcdefghjkmnpqrstvwxyz"
UID_LENGTH: Final = 26
UID_BITS: Final = 5 * UID_LENGTH
"""The bits a uid holds (130): `encode_uid` takes numbers below 2**UID_BITS."""

_DIGIT_PAIRS: Final = tuple(first + second for first in UID_ALPHABET for second in UID_ALPHABET)
"""Every two-digit string, by the 10 bits it spells: a uid is 13 of them."""
_PAIR_SHIFTS: Final = tuple(range(UID_BITS - 10, -1, -10))

DUE_WIDTH: Final = 13
MAX_DUE_MS: Final = 10**DUE_WIDTH - 1


def encode_uid(number: int) -> str:
    """`number` as `UID_LENGTH` base32 digits, most significant first, zero-padded.

    Raises:
        InvalidInputError: `number` is negative or needs more than `UID_BITS` bits.
    """
    if not 0 <= number < 1 << UID_BITS:
        raise InvalidInputError(f"uid number {number} is outside 0..2**{UID_BITS}-1")
    # Ten bits at a time through a table: every uid of a deletion log record is made here.
    return "".join([_DIGIT_PAIRS[number >> shift & 1023] for shift in _PAIR_SHIFTS])


def new_uid() -> str:
    """A random, time-sortable uid: 48-bit milliseconds, then 80 random bits."""
    return encode_uid((time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big"))


def is_uid(text: str) -> bool:
    """Whether `text` is `UID_LENGTH` characters of the uid alphabet."""
    return len(text) == UID_LENGTH and all(char in UID_ALPHABET for char in text)


def due_key(due: float) -> bytes:
    """`due` (seconds since the epoch) as `DUE_WIDTH` digits of milliseconds.

    Keys starting with it sort in time order. Times before the epoch clamp to
    0 and times past `MAX_DUE_MS` to it, so the width never changes.
    """
    due_ms = min(max(int(due * 1000), 0), MAX_DUE_MS)
    return b"%0*d" % (DUE_WIDTH, due_ms)


def due_of(key: bytes) -> float:
    """The due time (seconds) of a key that starts with a `due_key`."""
    return int(key[:DUE_WIDTH]) / 1000
