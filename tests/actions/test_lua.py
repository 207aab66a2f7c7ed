"""Lua hooks in their sandbox: lakeFS's globals, no way out, bounded time and memory."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Final

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


@pytest.mark.parametrize("name", ["os", "io", "debug", "package", "ffi", "lakefs/../os"])
def test_require_loads_only_lakefs_s_libraries(name: str) -> None:
    with pytest.raises(HookFailedError, match=f"module '{re.escape(name)}' not found"):
        run_lua(_hook(), f'require("{name}")', _ACTION)


def test_library_functions_are_lua_closures_not_python_objects() -> None:
    script = 'local s = require("strings") print(type(s.split)) return s.split.__globals__'
    with pytest.raises(HookFailedError, match="attempt to index a function value") as caught:
        run_lua(_hook(), script, _ACTION)
    assert caught.value.output == "function"


def test_text_round_trips_as_utf8_and_binary_strings_print_as_go_does() -> None:
    action = {"commit": {"metadata": {"owner": "Zoë €"}}}
    script = 'print(action.commit.metadata.owner, #action.commit.metadata.owner, "\\255x", "ñ")'
    assert run_lua(_hook(), script, action) == "Zoë €\t8\t\ufffdx\tñ"
    with pytest.raises(HookFailedError, match="lua script failed: .*: Zoë € missing"):
        run_lua(_hook(), 'error(action.commit.metadata.owner .. " missing")', action)


def test_error_fails_the_hook_with_its_message_and_keeps_the_printed_lines() -> None:
    with pytest.raises(HookFailedError, match="missing job_name") as caught:
        run_lua(_hook(), 'print("checking") error("missing job_name")', _ACTION)
    assert caught.value.output == "checking"


_ISOLATED: Final = """
import sys
from kvlake.actions import HookFailedError
from kvlake.actions.lua import run_lua
from kvlake.actions.records import LuaHook

try:
    run_lua(LuaHook(script="-", timeout=float(sys.argv[2])), sys.argv[1], {})
except HookFailedError as exc:
    print(f"failed: {exc}")
else:
    print("passed")
"""
_HANG_LIMIT: Final = 30.0
"""Wall-clock seconds after which a child running a script counts as hung. A hung script
spins inside lupa's C code, where neither pytest-timeout's alarm nor an exception raised
in the deadline callback can stop it, so only killing its process ends the test."""


def _run_isolated(script: str, *, timeout: float) -> str:
    """Run `script` as a Lua hook in a child process; its outcome line, or fail if it hangs."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _ISOLATED, script, str(timeout)],
            capture_output=True,
            text=True,
            timeout=_HANG_LIMIT,
        )
    except subprocess.TimeoutExpired:  # subprocess.run has killed the child
        pytest.fail(f"the lua script still ran after {_HANG_LIMIT:g}s: its timeout did not stop it")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_an_endless_loop_stops_at_the_timeout_even_under_pcall() -> None:
    outcome = _run_isolated(
        "while true do pcall(function() while true do end end) end", timeout=0.2
    )
    assert outcome == "failed: lua hook timed out after 0.2s"


def test_an_endless_loop_stops_at_the_timeout_even_under_xpcall() -> None:
    outcome = _run_isolated(
        "while true do xpcall(function() while true do end end, print) end", timeout=0.2
    )
    assert outcome == "failed: lua hook timed out after 0.2s"


def test_unbounded_allocation_fails_the_hook_not_the_process() -> None:
    with pytest.raises(HookFailedError, match="lua hook ran out of memory"):
        run_lua(_hook(), "local t = {} local i = 0 while true do i = i + 1 t[i] = {i} end", _ACTION)
    assert MAX_MEMORY < 1024**3
    assert run_lua(_hook(), "print(#string.rep('x', 1000))", _ACTION) == "1000"


def test_a_binary_chunk_is_refused() -> None:
    # Lua does not verify bytecode: a crafted chunk could reach memory outside the sandbox.
    with pytest.raises(HookFailedError, match="attempt to load a binary chunk"):
        run_lua(_hook(), "\x1bLuaT\x00\x19\x93\r\n\x1a\n", _ACTION)


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
