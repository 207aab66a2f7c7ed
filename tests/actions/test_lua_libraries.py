"""lakeFS's Lua libraries as hooks `require` them: names, arguments and results as in lakeFS.

The `lakefs` client module calls a real server: tests/api/test_lua_hooks.py.
"""

from __future__ import annotations

import json
import re

import pytest

from kvlake.actions import HookFailedError
from kvlake.actions.lua import run_lua
from kvlake.actions.records import LuaHook

METADATA_CHECK = """
regexp = require("regexp")
for k, props in pairs(args) do
  current_value = action.commit.metadata[k]
  if current_value == nil then
    error("missing mandatory metadata field: " .. k)
  end
  if props.pattern and not regexp.match(props.pattern, current_value) then
    error("current value for commit metadata field " .. k .. " does not match pattern: " .. props.pattern .. " - got: " .. current_value)
  end
end
"""  # noqa: E501 -- lakeFS's example, as its documentation prints it
"""lakeFS's "Ensure that a commit includes a mandatory metadata field" (docs/howto/hooks/lua.md)."""
METADATA_ARGS: tuple[tuple[str, object], ...] = (
    ("notebook_url", {"pattern": "my-jupyter.example.com/.*"}),
    ("spark_version", {}),
)


def _run(script: str, metadata: dict[str, str] | None = None, **args: object) -> str:
    action = {"event_type": "pre-commit", "commit": {"metadata": metadata or {}}}
    return run_lua(LuaHook(script="-", args=tuple(args.items()), timeout=5.0), script, action)


def _metadata_check(metadata: dict[str, str]) -> str:
    hook = LuaHook(script="-", args=METADATA_ARGS, timeout=5.0)
    return run_lua(hook, METADATA_CHECK, {"commit": {"metadata": metadata}})


def test_lakefs_s_metadata_example_passes_a_commit_with_its_fields() -> None:
    good = {"notebook_url": "https://my-jupyter.example.com/nb/1", "spark_version": "3.5"}
    assert _metadata_check(good) == ""


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        (
            {"notebook_url": "https://my-jupyter.example.com/x"},
            "missing mandatory metadata field: spark_version",
        ),  # noqa: E501
        (
            {"notebook_url": "https://other.example.com/", "spark_version": "3"},
            "current value for commit metadata field notebook_url does not match pattern:"
            " my-jupyter.example.com/.* - got: https://other.example.com/",
        ),
    ],
)
def test_lakefs_s_metadata_example_refuses_a_commit_without_them(
    metadata: dict[str, str], error: str
) -> None:
    with pytest.raises(HookFailedError) as caught:
        _metadata_check(metadata)
    assert str(caught.value).endswith(error)


def test_json_marshal_and_unmarshal_as_go_does() -> None:
    script = """
    local json = require("encoding/json")
    print(json.marshal({b = array({1, 2.0, "<&>"}), a = {x = true}, n = 1.5}))
    print(json.marshal({1, 2}))  -- a table not marked as an array is an object in lakeFS
    print(json.marshal({a = 1}, {prefix = "", indent = "  "}))
    local t = json.unmarshal('{"list": [1, "two", {"k": null}], "n": 3}')
    print(#t.list, t.list[2], t.n, json.marshal(t))
    """
    lines = _run(script).split("\n")
    assert lines[0] == '{"a":{"x":true},"b":[1,2,"\\u003c\\u0026\\u003e"],"n":1.5}'
    assert lines[2] == '{"1":1,"2":2}'
    assert "\n".join(lines[4:7]) == '{\n  "a": 1\n}'
    assert lines[8] == '3\ttwo\t3\t{"list":[1,"two",{}],"n":3}'
    assert json.loads(lines[0])["b"] == [1, 2, "<&>"]
    script = 'local j = require("encoding/json") print(j.marshal(j.unmarshal(\'{"k": "Zoë €"}\')))'
    assert _run(script) == '{"k":"Zoë €"}\n'


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ('require("encoding/json").unmarshal("{nope")', "unmarshal: "),
        (
            'require("encoding/json").marshal("text")',
            "marshal: need a table at index 1, got string",
        ),
        ("local t = {} t.t = t require('encoding/json').marshal(t)", "nested deeper than 100"),
        ('require("encoding/json").marshal({f = print})', "unsupported type function"),
        ('require("regexp").match("(", "x")', "match: error parsing regexp: missing ): ("),
        (
            'require("strings").split({}, ",")',
            "split: bad argument #1 (string expected, got table)",
        ),
        ('require("strings").replace("x", "", string.rep("y", 40000000), -1)', "longer than"),
    ],
)
def test_a_bad_library_call_fails_the_hook_with_a_clear_message(script: str, error: str) -> None:
    with pytest.raises(HookFailedError, match="lua script failed: .*" + re.escape(error)):
        _run(script)


def test_regexp_is_go_s() -> None:
    script = r"""
    local regexp = require("regexp")
    print(regexp.match("^v\\d+$", "v12"), regexp.match("^v\\d+$", "x"), regexp.quote_meta("a.b*c"))
    local re = regexp.compile("(\\w)(\\d)?")
    print(table.concat(re.find_all("a1 b c3", -1), ","), #re.find_all("a1 b c3", 2))
    local all = re.find_all_submatch("a1 b", -1)
    print(#all, all[1][1], all[1][2], all[1][3], all[2][3] == "")
    print(re.find("-- x9"), re.find("--") == "", #re.find_submatch("--"))
    print(table.concat(re.find_submatch("z7"), ","))
    """
    assert _run(script).split("\n") == [
        "true\tfalse\ta\\.b\\*c",
        "a1,b,c3\t2",
        "2\ta1\ta\t1\ttrue",
        "x9\ttrue\t0",
        "z7,z,7",
    ]


def test_a_pattern_that_backtracks_runs_in_linear_time() -> None:
    # RE2 has no backtracking: Python's re would take years on this.
    script = 'print(require("regexp").match("(a+)+$", string.rep("a", 50000) .. "b"))'
    assert _run(script) == "false"


def test_strings_are_go_s() -> None:
    script = """
    local strings = require("strings")
    local parts = strings.split("a,b,,c", ",")
    print(#parts, parts[3] == "", #strings.split("abc", ""), #strings.split("", ","))
    print("[" .. strings.trim("\\t x y \\n") .. "]", strings.replace("aaaa", "a", "b", 2))
    print(strings.replace("aaaa", "a", "b", -1), strings.replace("ab", "", "-", -1))
    print(strings.has_prefix("table/x", "table/"), strings.has_suffix("x.parquet", ".csv"))
    print(strings.contains("seafood", "foo"), strings.contains("seafood", "bar"))
    """
    assert _run(script).split("\n") == [
        "4\ttrue\t3\t1",
        "[x y]\tbbaa",
        "bbbb\t-a-b-",
        "true\tfalse",
        "true\tfalse",
    ]


def test_path_is_lakefs_s() -> None:
    script = """
    local path = require("path")
    local p = path.parse("a/b/c.csv")
    print(p.parent, p.base_name, path.parse("c.csv").parent == "", path.parse("a/b/").base_name)
    print(path.join("/", "path/", "/to", "a", "file.data"), path.join("/", "a/", "b/"))
    print(path.is_hidden("a/b/c"), path.is_hidden("a/b/_c"), path.is_hidden("a/_b/c"))
    print(path.is_hidden("a/b/_c/"), path.is_hidden("a/.b/c", "/", "."), path.default_separator())
    print(path.extract_dir_name("a/b/c.csv"), path.extract_dir_name("c.csv"))
    """
    assert _run(script).split("\n") == [
        "a/b/\tc.csv\ttrue\tb",
        "path/to/a/file.data\ta/b/",
        "false\ttrue\ttrue",
        "true\ttrue\t/",
        "a/b\t.",
    ]


def test_require_returns_one_module_per_run_and_a_script_cannot_change_another_s() -> None:
    script = """
    local a = require("strings")
    a.split = nil
    print(require("strings") == a, require("strings").split == nil)
    """
    assert _run(script) == "true\ttrue"
    assert _run('print(type(require("strings").split))') == "function"


def test_the_lakefs_module_without_an_api_fails_clearly() -> None:
    with pytest.raises(HookFailedError, match="get_object: this kvlake runs without its API"):
        _run('require("lakefs").get_object("repo", "main", "a.csv")')
