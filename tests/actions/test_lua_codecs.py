"""lakeFS's byte libraries in Lua hooks: binary strings in and out, Parquet schemas."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kvlake.actions import HookFailedError, lua_codecs
from kvlake.actions.lua import run_lua
from kvlake.actions.records import LuaHook

PARQUET_GATE = """
local parquet = require("encoding/parquet")
local seen = {}
for _, column in ipairs(parquet.get_schema(action.payload)) do
  print(column.name, column.type)
  seen[column.name] = true
end
for _, wanted in ipairs(args.required) do
  if not seen[wanted] then error("the table has no column " .. wanted) end
end
"""


def _run(script: str, **action: object) -> str:
    hook = LuaHook(script="-", args=(("required", ["user_id"]),), timeout=5.0)
    return run_lua(hook, script, action)


def _parquet(**columns: list[object]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def test_a_parquet_gate_reads_the_schema_of_binary_bytes() -> None:
    good = _parquet(user_id=[1, 2], name=["a", "b"])
    assert _run(PARQUET_GATE, payload=good) == "user_id\tINT64\nname\tBYTE_ARRAY"
    with pytest.raises(HookFailedError, match="the table has no column user_id"):
        _run(PARQUET_GATE, payload=_parquet(name_id=[1]))
    with pytest.raises(HookFailedError, match="get_schema: not a Parquet file"):
        _run(PARQUET_GATE, payload=b"PAR1 nope")


def test_digests_and_encodings_are_go_s() -> None:
    body = bytes(range(256))
    script = """
    local hex = require("encoding/hex")
    local b64 = require("encoding/base64")
    print(hex.encode(require("crypto/sha256").digest(action.body)))
    print(hex.encode(require("crypto/md5").digest("abc")))
    print(b64.encode(action.body) == args.b64, b64.url_encode("\\255\\254"))
    print(b64.decode(b64.encode(action.body)) == action.body, hex.decode("6869"))
    print(b64.url_decode("__4"), #require("uuid").new())
    """
    hook = LuaHook(
        script="-", args=(("b64", base64.standard_b64encode(body).decode()),), timeout=5.0
    )
    assert run_lua(hook, script, {"body": body}).split("\n") == [
        hashlib.sha256(body).hexdigest(),
        hashlib.md5(b"abc", usedforsecurity=False).hexdigest(),
        "true\t__4",
        "true\thi",
        "\ufffd\ufffd\t36",  # the bytes FF FE, printed as text
    ]


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ('require("encoding/hex").decode("zz")', "decode: encoding/hex: "),
        ('require("encoding/base64").decode("abc")', "decode: illegal base64 data"),
        ('require("encoding/base64").decode("ab!=")', "decode: illegal base64 data"),
    ],
)
def test_bad_encoded_input_fails_the_hook(script: str, error: str) -> None:
    with pytest.raises(HookFailedError, match=error):
        _run(script)


def test_hmac_signs_with_the_key() -> None:
    script = """
    local hmac, hex = require("crypto/hmac"), require("encoding/hex")
    print(hex.encode(hmac.sign_sha256("message", "key")), hex.encode(hmac.signsha1("m", "k")))
    """
    assert _run(script) == "\t".join(
        [
            hmac.new(b"key", b"message", hashlib.sha256).hexdigest(),
            hmac.new(b"k", b"m", hashlib.sha1).hexdigest(),
        ]
    )


def test_net_url_parses_as_go_does() -> None:
    script = """
    local u = require("net/url").parse("https://ana@example.com:8443/a%20b?p1=a#sec")
    print(u.scheme, u.host, u.path, u.query, u.fragment)
    """
    assert _run(script) == "https\texample.com:8443\t/a b\tp1=a\tsec"


def test_aes_cbc_round_trips_binary_data_and_refuses_a_wrong_key() -> None:
    script = """
    local aes = require("crypto/aes")
    local sealed = aes.encryptCBC(args.key, action.body)
    print(#sealed, aes.decryptCBC(args.key, sealed) == action.body)
    print(aes.encryptCBC(args.key, action.body) ~= sealed)  -- a fresh IV each time
    """
    hook = LuaHook(script="-", args=(("key", "k" * 32),), timeout=5.0)
    assert run_lua(hook, script, {"body": bytes(range(40))}) == "64\ttrue\ntrue"

    wrong = 'local aes = require("crypto/aes") aes.decryptCBC(string.rep("x", 16), action.sealed)'
    key = "k" * 16
    sealed = run_lua(
        LuaHook(script="-", args=(("key", key),), timeout=5.0),
        'print(require("encoding/hex").encode(require("crypto/aes").encryptCBC(args.key, "hi")))',
        {},
    )
    with pytest.raises(HookFailedError, match="decryptCBC: invalid padding"):
        _run(wrong, sealed=bytes.fromhex(sealed))
    with pytest.raises(HookFailedError, match="encryptCBC: crypto/aes: invalid key size 5"):
        _run('require("crypto/aes").encryptCBC("short", "x")')


def test_yaml_marshals_as_yaml_v3_and_reads_dates_as_text() -> None:
    script = """
    local yaml = require("encoding/yaml")
    local doc = yaml.unmarshal(action.doc)
    print(doc.name, doc.released, type(doc.released), doc.tags[2], doc.limits.rows)
    io_out = yaml.marshal({b = array({"x", "y"}), a = {c = 1}})
    print(io_out)
    """
    doc = "name: sales\nreleased: 2024-01-02\ntags: [raw, pii]\nlimits: {rows: 10}\n"
    assert _run(script, doc=doc) == (
        "sales\t2024-01-02\tstring\tpii\t10\na:\n    c: 1\nb:\n    - x\n    - y\n"
    )
    with pytest.raises(HookFailedError, match="unmarshal: yaml: "):
        _run('require("encoding/yaml").unmarshal("a: [")')
    with pytest.raises(HookFailedError, match="unmarshal: yaml: a set value has no Lua form"):
        _run('require("encoding/yaml").unmarshal("tags: !!set {a, b}")')


def test_yaml_aliases_that_expand_without_bound_fail_the_hook() -> None:
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in "bcdefg":
        previous = chr(ord(level) - 1)
        laughs.append(f"{level}: &{level} [" + ", ".join([f"*{previous}"] * 10) + "]")
    with pytest.raises(HookFailedError, match="holds more than 1000000 values"):
        _run('require("encoding/yaml").unmarshal(action.doc)', doc="\n".join(laughs))


def test_the_yaml_bound_counts_expanded_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound at a size unbounded expansion still finishes at quickly: the test above
    expands to ten million values, which without the bound does not return in time."""
    monkeypatch.setattr(lua_codecs, "MAX_YAML_NODES", 1_000)
    script = 'print(#require("encoding/yaml").unmarshal(action.doc).b)'

    def laughs(aliases: int) -> str:  # 10 values in a, each alias of it 11 more
        return "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: [" + ", ".join(["*a"] * aliases) + "]"

    with pytest.raises(HookFailedError, match="holds more than 1000 values"):
        _run(script, doc=laughs(100))
    assert _run(script, doc=laughs(10)) == "10"


def _z85(data: bytes) -> str:
    """ZeroMQ's Z85 encoding (RFC 32), for the test's inputs."""
    alphabet = (
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
    )
    out = ""
    for start in range(0, len(data), 4):
        number = int.from_bytes(data[start : start + 4], "big")
        out += "".join(alphabet[number // 85**power % 85] for power in range(4, -1, -1))
    return out


def test_z85_decodes_rfc_32s_example_and_lakefs_uuids() -> None:
    script = """
    local z85 = require("encoding/z85")
    print(require("encoding/hex").encode(z85.decode("HelloWorld")))
    print(z85.decode_uuid(action.id))
    """
    key = uuid.UUID("0190f1a3-5d2e-7c41-9b8a-1f2e3d4c5b6a")
    assert _run(script, id="repo-x/" + _z85(key.bytes)) == (f"864fd26fb559f75b\n{key}\trepo-x/")
    with pytest.raises(HookFailedError, match="decode: z85: invalid length 4"):
        _run('require("encoding/z85").decode("abcd")')
    with pytest.raises(HookFailedError, match="illegal character '~' at 1"):
        _run('require("encoding/z85").decode("a~cde")')
