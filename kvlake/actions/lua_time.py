"""lakeFS's Lua `time` library: times as float nanoseconds since the epoch, formatted and
parsed with Go's reference-time layouts (`2006-01-02T15:04:05-07:00`).

`now`, `since`, `add(t, {hour=, minute=, second=})`, `format(t, layout, zone)`,
`formatISO(t [, zone])`, `parse(layout, value)`, `parseISO(value)` and `sleep(ns)` as
lakeFS's (formatting drops the fraction of a second, as lakeFS's does). `sleep` never
sleeps past the hook's deadline, which then fails the hook as any timeout does. Zones
are IANA names (`Europe/Paris`), `UTC` or empty for UTC, and `Local` for the server's.
Layouts take Go's elements but the day of the year (`002`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kvlake.actions.lua_libraries import Converter, Function, LuaCallError, text

ISO_LAYOUT: Final = "2006-01-02T15:04:05-07:00"
"""lakeFS's `Iso8601Format`."""
_ELEMENTS: Final = (
    "January", "Monday", "Jan", "Mon", "MST", "2006", "_2",
    "-07:00:00", "-070000", "-07:00", "-0700", "-07",
    "Z07:00:00", "Z070000", "Z07:00", "Z0700", "Z07",
    "01", "02", "03", "04", "05", "06", "15", "PM", "pm", "1", "2", "3", "4", "5",
)  # fmt: skip
"""Go's layout elements, longest first where one starts another."""
_FRACTION: Final = re.compile(r"[.,](0+|9+)(?!\d)")
_MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July",
                  "August", "September", "October", "November", "December")  # fmt: skip
_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _elements(layout: str) -> Iterator[str]:
    """The layout as Go reads it: elements, and literal text one character at a time."""
    i = 0
    while i < len(layout):
        fraction = _FRACTION.match(layout, i)
        if fraction:
            yield fraction.group(0)
            i = fraction.end()
            continue
        element = next((e for e in _ELEMENTS if layout.startswith(e, i)), None)
        if layout.startswith("_2006", i):
            element = None  # Go reads "_2006" as "_" and the year, not "_2" and "006"
        if element is None:
            if layout.startswith("002", i):
                raise LuaCallError("layout element 002 (day of the year) is not supported")
            yield "\0" + layout[i]
            i += 1
        else:
            yield element
            i += len(element)


def _offset(moment: datetime, element: str) -> str:
    delta = moment.utcoffset() or timedelta()
    seconds = int(delta.total_seconds())
    if element.startswith("Z") and seconds == 0:
        return "Z"
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    shape = element.lstrip("Z-")
    if shape == "07":
        return f"{sign}{hours:02d}"
    colon = ":" if ":" in shape else ""
    out = f"{sign}{hours:02d}{colon}{minutes:02d}"
    return out + (f"{colon}{secs:02d}" if shape in ("07:00:00", "070000") else "")


def format_time(moment: datetime, layout: str) -> str:
    """`moment` written with a Go layout."""
    hour12 = moment.hour % 12 or 12
    simple: dict[str, str] = {
        "January": _MONTHS[moment.month - 1], "Jan": _MONTHS[moment.month - 1][:3],
        "Monday": _DAYS[moment.weekday()], "Mon": _DAYS[moment.weekday()][:3],
        "MST": moment.tzname() or "UTC", "2006": f"{moment.year:04d}",
        "06": f"{moment.year % 100:02d}",
        "01": f"{moment.month:02d}", "1": str(moment.month), "02": f"{moment.day:02d}",
        "2": str(moment.day), "_2": f"{moment.day:2d}", "15": f"{moment.hour:02d}",
        "03": f"{hour12:02d}", "3": str(hour12), "04": f"{moment.minute:02d}",
        "4": str(moment.minute), "05": f"{moment.second:02d}", "5": str(moment.second),
        "PM": "PM" if moment.hour >= 12 else "AM", "pm": "pm" if moment.hour >= 12 else "am",
    }  # fmt: skip
    out: list[str] = []
    for element in _elements(layout):
        if element.startswith("\0"):
            out.append(element[1:])
        elif element in simple:
            out.append(simple[element])
        elif element[0] in ".,":
            digits = f"{moment.microsecond:06d}000"[: len(element) - 1]
            kept = digits if element[1] == "0" else digits.rstrip("0")  # 9s drop trailing 0s
            out.append(element[0] + kept if kept else "")
        else:
            out.append(_offset(moment, element))
    return "".join(out)


_PATTERNS: Final = {
    "January": "(?P<month_name>[A-Za-z]+)", "Jan": "(?P<month_abbr>[A-Za-z]{3})",
    "Monday": "[A-Za-z]+", "Mon": "[A-Za-z]{3}", "MST": "(?P<zone_name>[A-Z]{3,5})",
    "2006": r"(?P<year>\d{4})", "06": r"(?P<year2>\d{2})", "01": r"(?P<month>\d{2})",
    "1": r"(?P<month>\d{1,2})", "02": r"(?P<day>\d{2})", "2": r"(?P<day>\d{1,2})",
    "_2": r" ?(?P<day>\d{1,2})", "15": r"(?P<hour>\d{1,2})", "03": r"(?P<hour12>\d{2})",
    "3": r"(?P<hour12>\d{1,2})", "04": r"(?P<minute>\d{2})", "4": r"(?P<minute>\d{1,2})",
    "05": r"(?P<second>\d{2})", "5": r"(?P<second>\d{1,2})", "PM": "(?P<pm>AM|PM)",
    "pm": "(?P<pm>am|pm)",
}  # fmt: skip


def parse_time(layout: str, value: str) -> datetime:
    """`value` read with a Go layout (a fraction of a second after the seconds is taken
    whether the layout names it or not, as Go does). Raises LuaCallError."""
    parts: list[str] = []
    elements = list(_elements(layout))
    for index, element in enumerate(elements):
        following = elements[index + 1] if index + 1 < len(elements) else ""
        if element.startswith("\0"):
            parts.append(re.escape(element[1:]))
        elif element in _PATTERNS:
            parts.append(_PATTERNS[element])
            if element in ("05", "5") and following[:1] not in (".", ","):
                parts.append(r"(?:[.,](?P<fraction>\d+))?")
        elif element[0] in ".,":
            parts.append(r"(?:[.,](?P<fraction>\d+))?")
        else:
            zulu = "Z|" if element.startswith("Z") else ""
            parts.append(rf"(?P<offset>{zulu}[+-]\d{{2}}(?::?\d{{2}}){{0,2}})")
    try:
        found = re.fullmatch("".join(parts), value)
    except re.error:
        raise LuaCallError(f'layout "{layout}" names one field twice') from None
    if found is None:
        raise LuaCallError(f'parsing time "{value}" as "{layout}": cannot parse')
    return _assemble(found.groupdict(), layout, value)


def _assemble(fields: dict[str, str | None], layout: str, value: str) -> datetime:
    def number(name: str, default: int) -> int:
        given = fields.get(name)
        return int(given) if given else default

    month = number("month", 1)
    name = fields.get("month_name") or fields.get("month_abbr")
    if name:
        matching = [i for i, m in enumerate(_MONTHS) if m.lower().startswith(name.lower())]
        if not matching or (fields.get("month_name") and _MONTHS[matching[0]] != name):
            raise LuaCallError(f'parsing time "{value}" as "{layout}": month out of range')
        month = matching[0] + 1
    year = number("year", 0) if fields.get("year") else 0
    if fields.get("year2"):
        short = int(fields["year2"] or 0)
        year = 1900 + short if short >= 69 else 2000 + short
    hour = number("hour", 0)
    if fields.get("hour12"):
        hour = number("hour12", 12) % 12 + (12 if (fields.get("pm") or "").lower() == "pm" else 0)
    zone: tzinfo = UTC
    offset = fields.get("offset")
    if offset and offset != "Z":
        digits = offset[1:].replace(":", "")
        seconds = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60 + int(digits[4:6] or 0)
        zone = timezone(timedelta(seconds=-seconds if offset[0] == "-" else seconds))
    micro = int(((fields.get("fraction") or "") + "000000")[:6])
    try:
        return datetime(
            max(year, 1), month, number("day", 1), hour, number("minute", 0),
            number("second", 0), micro, tzinfo=zone,
        )  # fmt: skip
    except ValueError as exc:
        raise LuaCallError(f'parsing time "{value}" as "{layout}": {exc}') from None


def _zone(name: str) -> tzinfo | None:
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return None  # astimezone(None): the server's zone
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise LuaCallError(f"unknown time zone {name}") from None


def _nanos(moment: datetime) -> float:
    whole = int(moment.timestamp() // 1)
    return float(whole * 1_000_000_000 + moment.microsecond * 1000)


def _moment(nanos: object, index: int) -> datetime:
    if isinstance(nanos, bool) or not isinstance(nanos, (int, float)):
        raise LuaCallError(f"bad argument #{index} (number expected)")
    return datetime.fromtimestamp(int(nanos) // 1_000_000_000, UTC)


def time_library(convert: Converter, remaining: Callable[[], float]) -> dict[str, Function]:
    """The `time` library; `remaining` says how many seconds the hook has left."""

    def now() -> tuple[float]:
        return (float(time.time_ns()),)

    def since(start: object) -> tuple[float]:
        if isinstance(start, bool) or not isinstance(start, (int, float)):
            raise LuaCallError("bad argument #1 (number expected)")
        return (float(time.time_ns()) - start,)

    def add(start: object, amount: object) -> tuple[float]:
        begun = _moment(start, 1)
        pulled = convert.pull(amount)
        if not isinstance(pulled, dict):
            raise LuaCallError("bad argument #2 (table expected)")
        steps = {key: pulled.get(key, 0) for key in ("hour", "minute", "second")}
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in steps.values()):
            raise LuaCallError("hour, minute and second must be whole numbers")
        delta = timedelta(hours=steps["hour"], minutes=steps["minute"], seconds=steps["second"])
        fraction = int(start) % 1_000_000_000  # type: ignore[call-overload]
        return (_nanos(begun + delta) + fraction,)

    def format_at(at: object, layout: object, zone: object) -> tuple[str]:
        moment = _moment(at, 1).astimezone(_zone(text(zone, 3)))
        return (format_time(moment, text(layout, 2)),)

    def format_iso(at: object, zone: object = "") -> tuple[str]:
        moment = _moment(at, 1).astimezone(_zone(text(zone, 2) if zone is not None else ""))
        return (format_time(moment, ISO_LAYOUT),)

    def parse(layout: object, value: object) -> tuple[float]:
        return (_nanos(parse_time(text(layout, 1), text(value, 2))),)

    def parse_iso(value: object) -> tuple[float]:
        return (_nanos(parse_time(ISO_LAYOUT, text(value, 1))),)

    def sleep(nanos: object) -> tuple[()]:
        if isinstance(nanos, bool) or not isinstance(nanos, (int, float)):
            raise LuaCallError("bad argument #1 (number expected)")
        time.sleep(max(0.0, min(nanos / 1e9, remaining() + 0.01)))
        return ()

    return {
        "now": now, "since": since, "add": add, "format": format_at, "formatISO": format_iso,
        "parse": parse, "parseISO": parse_iso, "sleep": sleep,
    }  # fmt: skip
