"""The object address layout, `data/<hour>/<uid>`: the one module that spells it.

Every blob kvlake writes for an object (uploads, copies, direct uploads, the Spark
writers) lies under the repository's storage namespace at `data/<YYYYmmddTHH>/<uid>`,
the UTC hour the upload began. Garbage collection relies on that: it lists one hour
folder at a time and leaves alone the folders whose hour ended too recently (uploads
in flight, links to come), and anything that is not an hour folder. A producer and
a consumer that spelled the layout differently would let GC delete a blob a writer
is about to reference, so both go through this module (tests/catalog/test_layout.py
checks that no other module under kvlake/ spells it).
"""

from __future__ import annotations

import calendar
import re
import time
from typing import Final

from kvlake import ids
from kvlake.errors import InvalidInputError

DATA_FOLDER: Final = "data/"
"""The namespace folder that holds every hour folder."""
HOUR_FORMAT: Final = "%Y%m%dT%H"
"""The hour's spelling in a folder name (strftime/strptime, also pyarrow's `strptime`)."""
HOUR_START: Final = len(DATA_FOLDER)
HOUR_END: Final = HOUR_START + len("YYYYmmddTHH")
"""A key's hour is `key[HOUR_START:HOUR_END]` when `HOUR_KEY_PATTERN` matches it."""
_HOUR: Final = r"\d{8}T\d{2}"
HOUR_KEY_PATTERN: Final = f"^{DATA_FOLDER}{_HOUR}/"
"""Matches the start of a key in an hour folder (Python `re` and RE2/pyarrow alike)."""
HOUR_SECONDS: Final = 3600
MAX_DATA_HOURS: Final = 20 * 366 * 24
"""Hours `data_prefixes` spans at most (20 years): a list of them is still small."""

_HOUR_FOLDER: Final = re.compile(f"{DATA_FOLDER}({_HOUR})/")


def hour_folder(moment: float) -> str:
    """The hour folder (`data/<hour>/`) of addresses made at `moment` (seconds, UTC)."""
    return time.strftime(f"{DATA_FOLDER}{HOUR_FORMAT}/", time.gmtime(moment))


def new_address(now: float) -> str:
    """A fresh object address, grouped by hour so listings of the namespace stay shallow."""
    return hour_folder(now) + ids.new_uid()


def hour_folder_end(folder: str) -> float | None:
    """When the hour a `data/<YYYYmmddTHH>/` folder covers ended; None for other folders
    (garbage collection leaves those alone)."""
    match = _HOUR_FOLDER.fullmatch(folder)
    if match is None:
        return None
    try:
        return calendar.timegm(time.strptime(match.group(1), HOUR_FORMAT)) + HOUR_SECONDS
    except ValueError:  # 20251399T99: shaped like an hour, names none
        return None


def data_prefixes(since: float, until: float) -> list[str]:
    """The prefixes of the object addresses made in [since, until): one per hour, ascending.

    A garbage collector lists a namespace's objects by these time slices, several
    at once (`BlockStore.list_blobs(namespace, data_prefixes(a, b), parallel=8)`),
    and may skip the hours it has no business with (the last one, still written).
    Addresses are the catalog's clock's hours (UTC), uploads, copies and direct
    uploads alike; other blobs of a namespace (`_lakefs/` ranges) are not under them.

    Raises:
        InvalidInputError: `since` after `until`, or a span over MAX_DATA_HOURS.
    """
    if since > until or until - since > MAX_DATA_HOURS * HOUR_SECONDS:
        raise InvalidInputError(
            f"time slice [{since}, {until}) is invalid; since must not be after until, and"
            f" the span at most {MAX_DATA_HOURS} hours"
        )
    if since == until:
        return []
    first = int(since // HOUR_SECONDS)
    last = -int(-until // HOUR_SECONDS)  # the hour holding `until` only if until is past its start
    return [hour_folder(hour * HOUR_SECONDS) for hour in range(first, last)]
