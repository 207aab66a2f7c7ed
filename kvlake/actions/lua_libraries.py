"""lakeFS's Lua libraries that hooks `require`: encoding/json, regexp, strings, path.

Each function keeps lakeFS's name, arguments and results (pkg/actions/lua in
lakeFS; Go's semantics where lakeFS wraps Go: `regexp` is RE2 through
google-re2, so a pattern runs in linear time and cannot stall the server the
way a backtracking engine would). The functions are Python, handed to the Lua
prelude (`lua.py`) that wraps each in a Lua closure: a script sees Lua
functions only, never a Python object. A function fails by returning
`(False, message)`, which the closure raises as a Lua error, so a bad call is
a failed hook with lakeFS's kind of message, never a Python exception.
Results are bounded by `MAX_RESULT`, so no call makes Python memory grow past
what the Lua runtime's own cap would allow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import lupa
import re2

MAX_RESULT: Final = 32 * 1024 * 1024
"""Characters a library call may return (a replaced string, an object's bytes)."""
MAX_DEPTH: Final = 100
"""Nesting of tables json.marshal follows: deeper is a cycle or an abuse."""
_GO_SPACE: Final = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # noqa: E501
"""Go's unicode.IsSpace, which strings.TrimSpace strips (Python's strip() takes more)."""
_GO_META: Final = frozenset("\\.+*?()|[]{}^$")
"""Characters Go's regexp.QuoteMeta escapes."""
_GO_HTML: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                   "\u2029": "\\u2029"}  # fmt: skip
"""Characters Go's JSON encoder escapes in strings (its default SetEscapeHTML(true))."""


LUA_ENCODING: Final = "latin-1"
"""How lupa turns Lua strings into Python text: byte for byte, so any Lua string (binary
too) reaches Python whole. `utf8` reads it as text, `raw` as bytes; text goes back to
Lua as its UTF-8 bytes (`lua_bytes`)."""


def utf8(value: str) -> str:
    """A Lua string lupa handed over (byte per character) read as UTF-8 text, as Go does:
    invalid sequences become U+FFFD."""
    return value.encode(LUA_ENCODING).decode("utf-8", "replace")


def raw(value: object, index: int) -> bytes:
    """A string argument's bytes, binary ones included."""
    if isinstance(value, str):
        return value.encode(LUA_ENCODING)
    if isinstance(value, bytes):
        return value
    return text(value, index).encode()


def lua_bytes(value: str) -> bytes:
    """Text for Lua: its UTF-8 bytes (lupa passes bytes through unchanged)."""
    return value.encode("utf-8")


def _to_lua_result(value: object) -> object:
    return lua_bytes(value) if isinstance(value, str) else value


class LuaCallError(Exception):
    """A library call's failure, raised in Lua with this message."""


Function = Callable[..., tuple[Any, ...]]


def guarded(name: str, function: Callable[..., tuple[Any, ...]]) -> Function:
    """`function` as the Lua prelude calls it: `(True, *results)` or `(False, message)`."""

    def call(*args: object) -> tuple[Any, ...]:
        try:
            return (True, *(_to_lua_result(result) for result in function(*args)))
        except LuaCallError as exc:
            return False, lua_bytes(f"{name}: {exc}")
        except (TypeError, ValueError, OverflowError, RecursionError, re2.error) as exc:
            return False, lua_bytes(f"{name}: {exc}")

    return call


def text(value: object, index: int) -> str:
    """A string argument, as Lua's checkstring takes it (a number is its text)."""
    if isinstance(value, str):
        return utf8(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise LuaCallError(f"bad argument #{index} (string expected, got {_type(value)})")


def integer(value: object, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise LuaCallError(f"bad argument #{index} (number has no integer representation)")
    return int(value)


def _type(value: object) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return lupa.lua_type(value) or "userdata"


class Converter:
    """Python values to Lua tables and back, as lakeFS's DeepPush and PullTable do."""

    def __init__(self, runtime: lupa.LuaRuntime, array: Callable[[object], object]) -> None:
        self._runtime = runtime
        self._array = array
        self._is_array = runtime.eval(
            "function(t) local m = getmetatable(t) return m ~= nil and m._is_array == true end"
        )

    def push(self, value: object) -> object:
        """A Lua value for JSON-like data: a list becomes a table marked as an array."""
        if isinstance(value, Mapping):
            return self._runtime.table_from(
                {lua_bytes(str(k)): self.push(v) for k, v in value.items()}
            )
        if isinstance(value, (list, tuple)):
            return self._array(self._runtime.table_from([self.push(v) for v in value]))
        if isinstance(value, str):
            return lua_bytes(value)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
            return float(value)  # a Lua integer has 64 bits; Go pushes every number as a float
        return value

    def pull(self, value: object, depth: int = 0) -> object:
        """Plain Python data for a Lua value: a table is a dict, or a list if marked an array
        (lakeFS's `array(t)`, or a table a library returned as a list)."""
        if depth > MAX_DEPTH:
            raise LuaCallError(f"tables nested deeper than {MAX_DEPTH} levels (a cycle?)")
        kind = lupa.lua_type(value)
        if kind == "table":
            items = list(value.items())  # type: ignore[attr-defined]
            if self._is_array(value):
                size = max((k for k, _ in items if isinstance(k, int)), default=0)
                listed: list[object] = [None] * size
                for key, item in items:
                    if not isinstance(key, int) or key < 1:
                        raise LuaCallError(f"pull array: expected numeric index, got {key!r}")
                    listed[key - 1] = self.pull(item, depth + 1)
                return listed
            pulled: dict[str, object] = {}
            for key, item in items:
                if isinstance(key, bool) or not isinstance(key, (str, int, float)):
                    raise LuaCallError(f"key should be a string ({_type(key)})")
                pulled[text(key, 1)] = self.pull(item, depth + 1)
            return pulled
        if kind is not None:
            raise LuaCallError(f"pull table, unsupported type {kind}")
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
            return int(value)  # Go prints 1.0 as 1
        if isinstance(value, str):
            return utf8(value)
        return value


def json_library(convert: Converter) -> dict[str, Function]:
    """encoding/json: marshal(table [, {prefix=, indent=}]) and unmarshal(string)."""

    def marshal(value: object = None, options: object = None) -> tuple[str]:
        if value is not None and lupa.lua_type(value) != "table":
            raise LuaCallError(f"need a table at index 1, got {_type(value)}")
        data = convert.pull(value) if value is not None else None
        indent = prefix = ""
        if options is not None:
            settings = convert.pull(options)
            if not isinstance(settings, dict):
                raise LuaCallError("options must be a table with 'prefix' and 'indent'")
            prefix, indent = settings.get("prefix", ""), settings.get("indent", "")
            if not isinstance(prefix, str) or not isinstance(indent, str):
                raise LuaCallError("options 'prefix' and 'indent' must be strings")
        if prefix or indent:
            encoded = json.dumps(
                data, sort_keys=True, ensure_ascii=False, allow_nan=False, indent=indent,
                separators=(",", ": "),
            ).replace("\n", "\n" + prefix)  # fmt: skip
        else:
            encoded = json.dumps(
                data, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
            )
        for char, escaped in _GO_HTML.items():
            encoded = encoded.replace(char, escaped)
        return (encoded + "\n",)

    def unmarshal(payload: object) -> tuple[object]:
        return (convert.push(json.loads(text(payload, 1))),)

    return {"marshal": marshal, "unmarshal": unmarshal}


def _quote_meta(value: str) -> str:
    return "".join("\\" + c if c in _GO_META else c for c in value)


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a script's bad pattern is its error, not a server log line
    return options


_OPTIONS: Final = _options()


def _compile(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise LuaCallError(f"error parsing regexp: {reason}") from None


def regexp_library(convert: Converter) -> dict[str, Function]:
    """regexp: match, quote_meta, and compile's four finders (Go's regexp, RE2)."""

    def match(pattern: object, value: object) -> tuple[bool]:
        return (_compile(text(pattern, 1)).search(text(value, 2)) is not None,)

    def quote_meta(value: object) -> tuple[str]:
        return (_quote_meta(text(value, 1)),)

    def compile_pattern(pattern: object) -> tuple[Function, Function, Function, Function]:
        compiled = _compile(text(pattern, 1))

        def groups(found: Any) -> list[str]:
            return [found.group(0), *(g or "" for g in found.groups())]

        def limited(value: object, count: object) -> list[Any]:
            wanted = integer(count, 2)
            found: list[Any] = []
            for item in compiled.finditer(text(value, 1)):
                if 0 <= wanted <= len(found):
                    break
                found.append(item)
            return found

        def find_all(value: object, count: object) -> tuple[object]:
            return (convert.push([m.group(0) for m in limited(value, count)]),)

        def find_all_submatch(value: object, count: object) -> tuple[object]:
            return (convert.push([groups(m) for m in limited(value, count)]),)

        def find(value: object) -> tuple[str]:
            found = compiled.search(text(value, 1))
            return (found.group(0) if found is not None else "",)

        def find_submatch(value: object) -> tuple[object]:
            found = compiled.search(text(value, 1))
            return (convert.push(groups(found) if found is not None else []),)

        return (
            guarded("find_all", find_all),
            guarded("find_all_submatch", find_all_submatch),
            guarded("find", find),
            guarded("find_submatch", find_submatch),
        )

    return {"match": match, "quote_meta": quote_meta, "compile": compile_pattern}


def strings_library(convert: Converter) -> dict[str, Function]:
    """strings: split, trim, replace, has_prefix, has_suffix, contains (Go's strings)."""

    def split(value: object, separator: object) -> tuple[object]:
        whole, sep = text(value, 1), text(separator, 2)
        return (convert.push(list(whole) if sep == "" else whole.split(sep)),)

    def trim(value: object) -> tuple[str]:
        return (text(value, 1).strip(_GO_SPACE),)

    def replace(value: object, old: object, new: object, count: object) -> tuple[str]:
        whole, before, after = text(value, 1), text(old, 2), text(new, 3)
        limit = integer(count, 4)
        found = len(whole) + 1 if before == "" else whole.count(before)
        if limit >= 0:
            found = min(found, limit)
        if len(whole) + found * (len(after) - len(before)) > MAX_RESULT:
            raise LuaCallError(f"the result would be longer than {MAX_RESULT} characters")
        return (whole.replace(before, after, limit if limit >= 0 else -1),)

    def has_prefix(value: object, prefix: object) -> tuple[bool]:
        return (text(value, 1).startswith(text(prefix, 2)),)

    def has_suffix(value: object, suffix: object) -> tuple[bool]:
        return (text(value, 1).endswith(text(suffix, 2)),)

    def contains(value: object, part: object) -> tuple[bool]:
        return (text(part, 2) in text(value, 1),)

    return {
        "split": split,
        "trim": trim,
        "replace": replace,
        "has_prefix": has_prefix,
        "has_suffix": has_suffix,
        "contains": contains,
    }


def _parse_path(path: str, separator: str) -> dict[str, str]:
    if separator and path.endswith(separator):
        path = path[: -len(separator)]
    at = path.rfind(separator) if separator else -1
    if at == -1:
        return {"parent": "", "base_name": path}
    return {"parent": path[: at + len(separator)], "base_name": path[at + len(separator) :]}


def _clean(path: str) -> str:
    """Go's path.Clean, which filepath.Dir applies."""
    rooted = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part != ".." or not rooted:
            parts.append(part)
    cleaned = ("/" if rooted else "") + "/".join(parts)
    return cleaned or "."


def path_library(convert: Converter) -> dict[str, Function]:
    """path: parse, join (separator first, as lakeFS's code takes it), is_hidden,
    default_separator, extract_dir_name."""

    def parse(value: object, separator: object = "/") -> tuple[object]:
        sep = text(separator if separator is not None else "/", 2)
        return (convert.push(_parse_path(text(value, 1), sep)),)

    def join(separator: object, *parts: object) -> tuple[str]:
        sep = text(separator, 1)
        pieces = [text(part, i + 2) for i, part in enumerate(parts)]
        out: list[str] = []
        for i, piece in enumerate(pieces):
            if i != 0 and sep and piece.startswith(sep):
                piece = piece[len(sep) :]
            out.append(piece)
            if i != len(pieces) - 1 and not piece.endswith(sep):
                out.append(sep)
        return ("".join(out),)

    def is_hidden(value: object, separator: object = "/", prefix: object = "_") -> tuple[bool]:
        path = text(value, 1)
        sep = text(separator if separator is not None else "/", 2)
        hidden = text(prefix if prefix is not None else "_", 3)
        while path:
            parsed = _parse_path(path, sep)
            if parsed["base_name"].startswith(hidden):
                return (True,)
            if parsed["parent"] == path:
                break
            path = parsed["parent"]
        return (False,)

    def default_separator() -> tuple[str]:
        return ("/",)

    def extract_dir_name(value: object) -> tuple[str]:
        path = text(value, 1)
        return (_clean(path[: path.rfind("/") + 1]),)

    return {
        "parse": parse,
        "join": join,
        "is_hidden": is_hidden,
        "default_separator": default_separator,
        "extract_dir_name": extract_dir_name,
    }


def libraries(convert: Converter) -> dict[str, dict[str, Function]]:
    """Every library but `lakefs`, by the name a script requires, its functions guarded."""
    made = {
        "encoding/json": json_library(convert),
        "regexp": regexp_library(convert),
        "strings": strings_library(convert),
        "path": path_library(convert),
    }
    return guard_all(made)


def guard_all(made: dict[str, dict[str, Function]]) -> dict[str, dict[str, Function]]:
    """Every function of these libraries `guarded`, for the Lua prelude."""
    return {
        module: {name: guarded(name, function) for name, function in functions.items()}
        for module, functions in made.items()
    }
