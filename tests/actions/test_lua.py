"""Lua hooks in their sandbox: lakeFS's globals, no way out, bounded time and memory."""

from __future__ import annotations

import pytest

from kvlake.actions import HookFailedError
from kvlake.actions.lua import MAX_MEMORY, run_lua
from kvlake.actions.parsing import ActionFileError, parse_action
from kvlake.actions.records import LuaHook

_ACTION = {"event_type": "pre-commit", "commit": {"message": "m", "metadata": {"a": "1"}}}


def _hook(timeout: float = 5.0, **args: object) -> LuaHook:
    return LuaHook(script="-", args=tuple(args.items()), timeout=timeout)


def test_globals_and_print_are_lakefs_s() -> None:
    output = run_lua(
        _hook(limit={"n": 2}),
        'print(action.event_type, action.commit.metadata.a, args.limit.n, "x")',
        _ACTION,
    )
    assert output == "pre-commit\t1\t2\tx"


@pytest.mark.parametrize(
    "script",
    [
        'os.execute("true")',
        'io.open("/etc/passwd")',
        'require("os")',
        'load("return 1")()',
        'dofile("/etc/passwd")',
        "debug.getinfo(1)",
        "python.eval('1')",
        "string.dump(print)",
        "coroutine.create(print)",
    ],
)
def test_no_way_out_of_the_sandbox(script: str) -> None:
    with pytest.raises(HookFailedError, match="lua script failed: .*nil"):
        run_lua(_hook(), script, _ACTION)


def test_error_fails_the_hook_with_its_message_and_keeps_the_printed_lines() -> None:
    with pytest.raises(HookFailedError, match="missing job_name") as caught:
        run_lua(_hook(), 'print("checking") error("missing job_name")', _ACTION)
    assert caught.value.output == "checking"


def test_an_endless_loop_stops_at_the_timeout_even_under_pcall() -> None:
    with pytest.raises(HookFailedError, match=r"lua hook timed out after 0.2s"):
        run_lua(
            _hook(timeout=0.2), "while true do pcall(function() while true do end end) end", _ACTION
        )


def test_unbounded_allocation_fails_the_hook_not_the_process() -> None:
    with pytest.raises(HookFailedError, match="lua hook ran out of memory"):
        run_lua(_hook(), "local t = {} local i = 0 while true do i = i + 1 t[i] = {i} end", _ACTION)
    assert MAX_MEMORY < 1024**3
    assert run_lua(_hook(), "print(#string.rep('x', 1000))", _ACTION) == "1000"


def test_syntax_error_is_named() -> None:
    with pytest.raises(HookFailedError, match="does not compile"):
        run_lua(_hook(), "if then", _ACTION)


def test_lua_properties_need_one_script() -> None:
    base = "name: gate\non:\n  pre-commit:\nhooks:\n  - id: h1\n    type: lua\n    properties:\n"
    with pytest.raises(ActionFileError, match="exactly one of 'script' and 'script_file'"):
        parse_action("a.yaml", (base + "      args: {}\n").encode())
    with pytest.raises(ActionFileError, match="exactly one of"):
        parse_action("a.yaml", (base + "      script: x\n      script_file: y\n").encode())
    action = parse_action(
        "a.yaml", (base + "      script_path: s.lua\n      args:\n        k: [1, 2]\n").encode()
    )
    assert action.hooks[0].lua == LuaHook(script_file="s.lua", args=(("k", [1, 2]),), timeout=60.0)
