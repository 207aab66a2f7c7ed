"""lakeFS's Lua `time` library: nanoseconds since the epoch, Go's layouts, zones."""

from __future__ import annotations

import multiprocessing

import pytest

from kvlake.actions import HookFailedError
from kvlake.actions.lua import run_lua
from kvlake.actions.records import LuaHook

JAN_2 = 1704205845 * 10**9  # 2024-01-02T14:30:45Z


def _run(script: str, *, timeout: float = 5.0, **action: object) -> str:
    return run_lua(LuaHook(script="-", timeout=timeout), script, action)


def test_format_and_parse_use_go_layouts_and_zones() -> None:
    script = """
    local time = require("time")
    print(time.formatISO(action.at))
    print(time.formatISO(action.at, "Asia/Kolkata"))
    print(time.format(action.at, "Mon Jan _2 03:04:05PM 2006 MST", "America/New_York"))
    print(time.format(action.at, "2006/01/02 15h04 _2006 .999", "UTC"))
    print(time.parseISO("2024-01-02T20:00:45+05:30") == action.at)
    print(action.at - time.parse("02 Jan 06 15:04 -0700", "02 Jan 24 07:30 -0700"))
    local frac = time.parse("2006-01-02 15:04:05.000", "2024-01-02 14:30:45.250") - action.at
    print(math.abs(frac - 250e6) < 1e3)  -- float64 nanoseconds, as Go's: ~256 ns apart
    """
    assert _run(script, at=JAN_2).splitlines() == [
        "2024-01-02T14:30:45+00:00",
        "2024-01-02T20:00:45+05:30",
        "Tue Jan  2 09:30:45AM 2024 EST",
        "2024/01/02 14h30 _2024 ",
        "true",
        "45000000000.0",
        "true",
    ]


def test_add_and_since_count_nanoseconds() -> None:
    script = """
    local time = require("time")
    local later = time.add(action.at, {hour = 1, minute = 2, second = 3})
    print(time.formatISO(later), later - action.at)
    print(time.since(time.now()) >= 0, time.since(action.at) > 0)
    """
    assert _run(script, at=JAN_2).splitlines() == [
        "2024-01-02T15:32:48+00:00\t3723000000000.0",
        "true\ttrue",
    ]


def test_bad_times_and_zones_fail_the_hook_naming_them() -> None:
    with pytest.raises(HookFailedError, match='parseISO: parsing time "yesterday"'):
        _run('require("time").parseISO("yesterday")')
    with pytest.raises(HookFailedError, match="format: unknown time zone Mars/Olympus"):
        _run('require("time").format(0, "2006", "Mars/Olympus")')
    with pytest.raises(HookFailedError, match="names one field twice"):
        _run('require("time").parse("01 1", "01 1")')
    with pytest.raises(HookFailedError, match="day of the year"):
        _run('require("time").format(0, "2006.002", "UTC")')


def _sleep_past_the_deadline(results: multiprocessing.Queue[str]) -> None:
    try:
        _run('require("time").sleep(3600 * 1e9)', timeout=0.5)
        results.put("slept")
    except HookFailedError as exc:
        results.put(str(exc))


def test_sleep_ends_at_the_hooks_deadline() -> None:
    """Run in a child process killed after 30 s, as the other timeout tests are."""
    results: multiprocessing.Queue[str] = multiprocessing.get_context("spawn").Queue()
    child = multiprocessing.get_context("spawn").Process(
        target=_sleep_past_the_deadline, args=(results,)
    )
    child.start()
    child.join(30)
    if child.is_alive():
        child.kill()
    assert results.get(timeout=1) == "lua hook timed out after 0.5s"
