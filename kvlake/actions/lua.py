"""Lua hooks: lakeFS's embedded scripts, run in a sandboxed Lua 5.4 (lupa) inside the server.

A repository writer chooses the script, so it gets nothing of the server: no
file system, no `os`/`io`/`package`/`require`/`load`, no Python objects (the
event and the hook's `args` are copied into plain Lua tables). A script is
bounded in time (an instruction-count hook checks the deadline every few
thousand instructions, so even a tight loop stops) and in memory (lupa's
`max_memory` fails allocations past the limit), and each run gets a fresh
runtime, so one script never sees another's state. A script fails the hook
by raising (`error("...")`), as in lakeFS; what it prints is the hook's output.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final

import lupa

from kvlake.actions.records import LuaHook
from kvlake.actions.webhook import OUTPUT_LIMIT, HookFailedError

MAX_MEMORY: Final = 64 * 1024 * 1024
"""Bytes one Lua run may allocate; past it, allocations fail and the hook fails."""
_CHECK_EVERY: Final = 10_000
"""Instructions between two deadline checks: cheap, and a fraction of a millisecond apart."""
_REMOVED: Final = (
    "os", "io", "package", "require", "dofile", "loadfile", "load", "debug", "python",
    "collectgarbage", "coroutine",
)  # fmt: skip
"""Globals a script must not reach: the file system, processes, code loading, the host;
and coroutines, whose threads the deadline hook would not reach."""
_SANDBOX: Final = """
local deadline_passed, print_out, every, removed = ...
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
"""
"""Runs before the script: sets the deadline hook and print, makes pcall and xpcall
pass a timeout on (else a loop around pcall could catch it forever),
then removes the globals."""


def _to_lua(runtime: lupa.LuaRuntime, value: object) -> object:
    """A plain Lua value for JSON-like Python data (a table per mapping or list)."""
    if isinstance(value, Mapping):
        return runtime.table_from({str(k): _to_lua(runtime, v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return runtime.table_from([_to_lua(runtime, v) for v in value])
    return value


def _deny_attributes(obj: object, name: object, is_setting: bool) -> object:
    raise AttributeError("Lua hooks cannot reach Python objects")


def run_lua(hook: LuaHook, script: str, action: Mapping[str, Any]) -> str:
    """Run `script` with lakeFS's `action` and `args` globals; return what it printed.

    Raises:
        HookFailedError: the script does not compile, raised an error, ran past the
            hook's timeout or past MAX_MEMORY; the message says which.
    """
    printed: list[str] = []
    size = 0

    def print_out(line: str) -> None:
        nonlocal size
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
        register_eval=False,
        register_builtins=False,
        unpack_returned_tuples=True,
        attribute_filter=_deny_attributes,
        max_memory=MAX_MEMORY,
    )
    try:
        runtime.globals().action = _to_lua(runtime, action)
        runtime.globals().args = _to_lua(runtime, dict(hook.args))
        runtime.execute(
            _SANDBOX, deadline_passed, print_out, _CHECK_EVERY, runtime.table_from(_REMOVED)
        )
        try:
            compiled = runtime.compile(script)
        except lupa.LuaSyntaxError as exc:
            raise HookFailedError(f"lua script does not compile: {exc}") from None
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
        raise HookFailedError(f"lua script failed: {exc}", "\n".join(printed)) from None
    return "\n".join(printed)
