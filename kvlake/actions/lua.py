"""Lua hooks: lakeFS's embedded scripts, run in a sandboxed Lua 5.4 (lupa) inside the server.

A repository writer chooses the script, so it gets nothing of the server: no
file system, no `os`/`io`/`package`/`require`/`load`, no Python objects (the
event and the hook's `args` are copied into plain Lua tables). A script is
bounded in time (an instruction-count hook checks the deadline every few
thousand instructions, so even a tight loop stops) and in memory (lupa's
`max_memory` fails allocations past the limit), and each run gets a fresh
runtime, so one script never sees another's state. A script fails the hook
by raising (`error("...")`), as in lakeFS; what it prints is the hook's output.

`require` loads only lakeFS's libraries (`lakefs`, `encoding/json`, `regexp`,
`strings`, `path`, the byte codecs, `time`: lua_libraries.py, lua_codecs.py,
lua_time.py, lua_lakefs.py), each function a Lua
closure over a guarded Python one, and the global `array(t)` marks a table as
a JSON array, as lakeFS's does.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Final

import lupa

from kvlake.actions.lua_codecs import codec_libraries
from kvlake.actions.lua_lakefs import LakefsClient
from kvlake.actions.lua_libraries import (
    LUA_ENCODING,
    Converter,
    guard_all,
    libraries,
    lua_bytes,
    utf8,
)
from kvlake.actions.lua_time import time_library
from kvlake.actions.records import LuaHook
from kvlake.actions.webhook import OUTPUT_LIMIT, HookFailedError

MAX_MEMORY: Final = 64 * 1024 * 1024
"""Bytes one Lua run may allocate; past it, allocations fail and the hook fails."""
MAX_NESTING: Final = 3
"""Lua runs one thread may hold at once: a hook's `lakefs.create_tag` runs the tag's
hooks inside it, and each run may allocate MAX_MEMORY, so a chain of hooks that
trigger each other stops here instead of exhausting the server."""
_NESTING: Final[ContextVar[int]] = ContextVar("kvlake_lua_nesting", default=0)
_CHECK_EVERY: Final = 10_000
"""Instructions between two deadline checks: cheap, and a fraction of a millisecond apart."""
_REMOVED: Final = (
    "os", "io", "package", "require", "dofile", "loadfile", "load", "debug", "python",
    "collectgarbage", "coroutine",
)  # fmt: skip
"""Globals a script must not reach: the file system, processes, code loading, the host;
and coroutines, whose threads the deadline hook would not reach."""
_SANDBOX: Final = """
local deadline_passed, print_out, every, removed, libraries, mark_array = ...
debug.sethook(function()
  if deadline_passed() then error("lua hook timed out", 0) end
end, "", every)
print = function(...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]) end
  print_out(table.concat(parts, "\\t", 1, parts.n))
end
local function rethrow_late(catching)
  return function(...)
    local results = table.pack(catching(...))
    if deadline_passed() then error("lua hook timed out", 0) end
    return table.unpack(results, 1, results.n)
  end
end
pcall, xpcall = rethrow_late(pcall), rethrow_late(xpcall)
for _, name in ipairs(removed) do _G[name] = nil end
string.dump = nil
local function checked(call)
  return function(...)
    local results = table.pack(call(...))
    if deadline_passed() then error("lua hook timed out", 0) end
    if not results[1] then error(results[2], 2) end
    return table.unpack(results, 2, results.n)
  end
end
local modules = {}
for module, functions in pairs(libraries) do
  local wrapped = {}
  for name, call in pairs(functions) do wrapped[name] = checked(call) end
  modules[module] = wrapped
end
local compile = modules.regexp.compile
modules.regexp.compile = function(pattern)
  local find_all, find_all_submatch, find, find_submatch = compile(pattern)
  return {find_all = checked(find_all), find_all_submatch = checked(find_all_submatch),
          find = checked(find), find_submatch = checked(find_submatch)}
end
array = function(t) return mark_array(t) end
local loaded = {}
require = function(name)
  if type(name) ~= "string" then
    error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
  end
  local module = loaded[name]
  if module == nil then
    module = modules[name]
    if module == nil then error("module '" .. name .. "' not found", 2) end
    local copy = {}
    for key, value in pairs(module) do copy[key] = value end
    module = copy
    loaded[name] = module
  end
  return module
end
"""
"""Runs before the script: sets the deadline hook and print, makes pcall and xpcall
pass a timeout on (else a loop around pcall could catch it forever), removes the
globals, then adds lakeFS's `require` over the libraries (each a Lua closure, the
Python function out of the script's reach) and `array`."""


def _to_lua(runtime: lupa.LuaRuntime, value: object) -> object:
    """A plain Lua value for JSON-like Python data (a table per mapping or list, text as
    its UTF-8 bytes)."""
    if isinstance(value, Mapping):
        return runtime.table_from(
            {lua_bytes(str(k)): _to_lua(runtime, v) for k, v in value.items()}
        )
    if isinstance(value, (list, tuple)):
        return runtime.table_from([_to_lua(runtime, v) for v in value])
    if isinstance(value, str):
        return lua_bytes(value)
    return value


def _deny_attributes(obj: object, name: object, is_setting: bool) -> object:
    raise AttributeError("Lua hooks cannot reach Python objects")


def run_lua(
    hook: LuaHook,
    script: str,
    action: Mapping[str, Any],
    *,
    lakefs: LakefsClient | None = None,
) -> str:
    """Run `script` with lakeFS's `action`, `args` and `username` globals and libraries;
    return what it printed. `lakefs` is the client `require("lakefs")` gives (none: its calls fail).

    Raises:
        HookFailedError: the script does not compile, raised an error, ran past the
            hook's timeout or past MAX_MEMORY, or would nest past MAX_NESTING; the
            message says which.
    """
    depth = _NESTING.get()
    if depth >= MAX_NESTING:
        raise HookFailedError(
            f"lua hook not run: lua hooks nested {depth} deep (a hook's lakefs call"
            f" triggered an event whose hooks call lakefs again); at most {MAX_NESTING}"
        )
    token = _NESTING.set(depth + 1)
    try:
        return _execute(hook, script, action, lakefs)
    finally:
        _NESTING.reset(token)


def _execute(
    hook: LuaHook, script: str, action: Mapping[str, Any], lakefs: LakefsClient | None
) -> str:
    printed: list[str] = []
    size = 0

    def print_out(raw: str) -> None:
        nonlocal size
        line = utf8(raw)
        if size < OUTPUT_LIMIT:
            printed.append(line[: OUTPUT_LIMIT - size])
            size += len(line) + 1

    deadline = time.monotonic() + hook.timeout
    timed_out = False

    def deadline_passed() -> bool:
        nonlocal timed_out
        timed_out = timed_out or time.monotonic() > deadline
        return timed_out

    runtime = lupa.LuaRuntime(
        encoding=LUA_ENCODING,
        register_eval=False,
        register_builtins=False,
        unpack_returned_tuples=True,
        attribute_filter=_deny_attributes,
        max_memory=MAX_MEMORY,
    )
    try:
        mark_array = runtime.eval("function(t) return setmetatable(t, {_is_array = true}) end")
        convert = Converter(runtime, mark_array)

        def remaining() -> float:
            return deadline - time.monotonic()

        made = codec_libraries(convert) | {"time": time_library(convert, remaining)}
        modules = libraries(convert) | guard_all(made)
        modules["lakefs"] = (lakefs or LakefsClient(None, "")).functions(convert)
        runtime.globals().action = _to_lua(runtime, action)
        runtime.globals().args = _to_lua(runtime, dict(hook.args))
        runtime.globals().username = lua_bytes(lakefs.user_id if lakefs is not None else "")
        runtime.execute(
            _SANDBOX,
            deadline_passed,
            print_out,
            _CHECK_EVERY,
            runtime.table_from(_REMOVED),
            runtime.table_from({k: runtime.table_from(v) for k, v in modules.items()}),
            mark_array,
        )
        try:
            # Text only: a binary chunk (bytecode) is not verified by Lua and could escape.
            compiled = runtime.compile(lua_bytes(script), name="lua", mode="t")
        except lupa.LuaSyntaxError as exc:
            raise HookFailedError(f"lua script does not compile: {utf8(str(exc))}") from None
        compiled()
    except lupa.LuaMemoryError:
        raise HookFailedError(
            f"lua hook ran out of memory (limit {MAX_MEMORY // (1024 * 1024)} MiB)",
            "\n".join(printed),
        ) from None
    except lupa.LuaError as exc:
        if timed_out:
            raise HookFailedError(
                f"lua hook timed out after {hook.timeout:g}s", "\n".join(printed)
            ) from None
        raise HookFailedError(f"lua script failed: {utf8(str(exc))}", "\n".join(printed)) from None
    return "\n".join(printed)
