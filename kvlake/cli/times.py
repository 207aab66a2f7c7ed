"""Points in time as users type them: `2026-11-01`, ISO 8601 times, or an age (`3d`, `12h`).

One parser for every command that takes a time, so a bad value always gets the same
one-line error naming the accepted forms (exit 2), never a traceback.
"""

from __future__ import annotations

import datetime
import re
from typing import Final

from kvlake.errors import InvalidInputError

_AGE: Final = re.compile(r"(\d+)([smhdw])")
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
FORMS: Final = (
    "a date (2026-11-01), an ISO 8601 time (2026-11-01T08:30:00Z) or an age (30m, 12h, 3d, 2w)"
)


def parse_time(
    text: str, *, option: str, now: datetime.datetime | None = None
) -> datetime.datetime:
    """`text` as an aware UTC datetime; an age counts back from `now`.

    Raises:
        InvalidInputError: none of the accepted forms, naming `option` and the forms.
    """
    now = now or datetime.datetime.now(datetime.UTC)
    value = text.strip()
    age = _AGE.fullmatch(value)
    if age is not None:
        return now - datetime.timedelta(seconds=int(age.group(1)) * _UNIT_SECONDS[age.group(2)])
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"{option} {text!r} is not a time; write {FORMS}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)  # a bare date or time is UTC
    return parsed.astimezone(datetime.UTC)
