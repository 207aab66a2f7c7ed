"""lakeFS's Lua libraries over bytes: encoding/hex, encoding/base64, crypto/sha256,
crypto/md5, crypto/hmac, crypto/aes, encoding/parquet, encoding/yaml, encoding/z85,
and uuid and net/url beside them.

They take and return Lua strings as bytes (lua_libraries.raw), binary ones
included, so `hex.encode(sha256.digest(body))` and a Parquet file's schema read
from `lakefs.get_object` work as in lakeFS. `encoding/parquet.get_schema` lists
the file's leaf columns with their physical type (`INT64`, `BYTE_ARRAY`, ...); lakeFS
also lists the group nodes of nested columns, as `N/A`. `crypto/aes` is AES-CBC through
the `cryptography` package (never our own cipher code), with a random IV before the
ciphertext and PKCS#7 padding, as lakeFS's. `encoding/yaml` reads YAML with PyYAML's
safe loader (timestamps stay text, as Go's yaml.v3 leaves them in an untyped value) and
refuses a document that expands past `MAX_YAML_NODES` values through its aliases.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import io
import os
import uuid
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from kvlake.actions.lua_libraries import Converter, Function, LuaCallError, raw, text

MAX_YAML_NODES: Final = 1_000_000
"""Values a YAML document may hold once its aliases are expanded (a few aliases of
aliases would otherwise make billions: the "billion laughs")."""
_AES_BLOCK: Final = 16


class _YamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader with timestamps left as text, as yaml.v3 decodes them into an
    untyped value (a Lua table has no date)."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _YamlDumper(yaml.SafeDumper):
    """Lists indented under their key, as yaml.v3 writes them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _count_nodes(value: object, budget: list[int]) -> None:
    """Walk `value` (aliases expanded), failing once it holds more than MAX_YAML_NODES or
    a value Lua has no plain form for (a `!!set`): no Python object reaches a script."""
    budget[0] -= 1
    if budget[0] < 0:
        raise LuaCallError(f"document holds more than {MAX_YAML_NODES} values (aliases?)")
    if isinstance(value, Mapping):
        for item in value.values():
            _count_nodes(item, budget)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _count_nodes(item, budget)
    elif value is not None and not isinstance(value, (str, bytes, int, float)):
        raise LuaCallError(f"yaml: a {type(value).__name__} value has no Lua form")


_Z85: Final = (
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
)
_Z85_VALUE: Final = {char: value for value, char in enumerate(_Z85.encode())}


def z85_decode(data: bytes) -> bytes:
    """ZeroMQ's Z85 (RFC 32): every 5 characters are 4 bytes, big-endian, base 85."""
    if len(data) % 5:
        raise LuaCallError(f"z85: invalid length {len(data)}: not a multiple of 5")
    out = bytearray()
    for start in range(0, len(data), 5):
        number = 0
        for offset, char in enumerate(data[start : start + 5]):
            if char not in _Z85_VALUE:
                raise LuaCallError(f"z85: illegal character {chr(char)!r} at {start + offset}")
            number = number * 85 + _Z85_VALUE[char]
        if number >= 2**32:
            raise LuaCallError(f"z85: group at {start} is larger than 4 bytes")
        out += number.to_bytes(4, "big")
    return bytes(out)


def _cipher(key: bytes, iv: bytes) -> Cipher[modes.CBC]:
    if len(key) not in (16, 24, 32):
        raise LuaCallError(f"crypto/aes: invalid key size {len(key)}; use 16, 24 or 32 bytes")
    return Cipher(algorithms.AES(key), modes.CBC(iv))


def _decode_base64(value: bytes, decoder: Any, pad: bool) -> bytes:
    if pad and len(value) % 4:
        raise LuaCallError("illegal base64 data: its length is not a multiple of 4")
    try:
        return bytes(decoder(value + (b"" if pad else b"=" * (-len(value) % 4))))
    except (binascii.Error, ValueError) as exc:
        raise LuaCallError(f"illegal base64 data: {exc}") from None


def codec_libraries(convert: Converter) -> dict[str, dict[str, Function]]:
    """The byte libraries by the name a script requires (functions not yet guarded)."""

    def hex_encode(value: object) -> tuple[str]:
        return (raw(value, 1).hex(),)

    def hex_decode(value: object) -> tuple[bytes]:
        try:
            return (bytes.fromhex(text(value, 1)),)
        except ValueError as exc:
            raise LuaCallError(f"encoding/hex: {exc}") from None

    def b64_encode(value: object) -> tuple[str]:
        return (base64.standard_b64encode(raw(value, 1)).decode(),)

    def b64_decode(value: object) -> tuple[bytes]:
        data = raw(value, 1)
        return (_decode_base64(data, lambda d: base64.b64decode(d, validate=True), True),)

    def b64_url_encode(value: object) -> tuple[str]:
        return (base64.urlsafe_b64encode(raw(value, 1)).rstrip(b"=").decode(),)

    def b64_url_decode(value: object) -> tuple[bytes]:
        return (_decode_base64(raw(value, 1), base64.urlsafe_b64decode, False),)

    def sha256_digest(value: object) -> tuple[bytes]:
        return (hashlib.sha256(raw(value, 1)).digest(),)

    def md5_digest(value: object) -> tuple[bytes]:
        return (hashlib.md5(raw(value, 1), usedforsecurity=False).digest(),)

    def sign_sha256(message: object, key: object) -> tuple[bytes]:
        return (hmac.new(raw(key, 2), raw(message, 1), hashlib.sha256).digest(),)

    def sign_sha1(message: object, key: object) -> tuple[bytes]:
        return (hmac.new(raw(key, 2), raw(message, 1), hashlib.sha1).digest(),)

    def get_schema(payload: object) -> tuple[object]:
        try:
            schema = pq.ParquetFile(io.BytesIO(raw(payload, 1))).schema
        except (pa.ArrowException, OSError) as exc:
            raise LuaCallError(f"not a Parquet file: {exc}") from None
        columns = [{"name": c.name, "type": c.physical_type} for c in schema]
        return (convert.push(columns),)

    def encrypt_cbc(key: object, plaintext: object) -> tuple[bytes]:
        iv = os.urandom(_AES_BLOCK)
        padder = padding.PKCS7(_AES_BLOCK * 8).padder()
        padded = padder.update(raw(plaintext, 2)) + padder.finalize()
        encryptor = _cipher(raw(key, 1), iv).encryptor()
        return (iv + encryptor.update(padded) + encryptor.finalize(),)

    def decrypt_cbc(key: object, ciphertext: object) -> tuple[bytes]:
        data = raw(ciphertext, 2)
        if len(data) < 2 * _AES_BLOCK or len(data) % _AES_BLOCK:
            raise LuaCallError(
                f"ciphertext of {len(data)} bytes is not an IV and whole 16-byte blocks"
            )
        decryptor = _cipher(raw(key, 1), data[:_AES_BLOCK]).decryptor()
        padded = decryptor.update(data[_AES_BLOCK:]) + decryptor.finalize()
        unpadder = padding.PKCS7(_AES_BLOCK * 8).unpadder()
        try:
            return (unpadder.update(padded) + unpadder.finalize(),)
        except ValueError:
            raise LuaCallError("invalid padding: wrong key, or not encryptCBC's output") from None

    def yaml_marshal(value: object = None) -> tuple[str]:
        data = convert.pull(value) if value is not None else None
        dumped = yaml.dump(
            data, Dumper=_YamlDumper, indent=4, sort_keys=True, allow_unicode=True, width=2**31
        )
        return ("null\n" if data is None else dumped,)

    def yaml_unmarshal(payload: object) -> tuple[object]:
        try:
            loaded = yaml.load(text(payload, 1), Loader=_YamlLoader)  # a SafeLoader: no objects
        except yaml.YAMLError as exc:
            raise LuaCallError(f"yaml: {exc}") from None
        _count_nodes(loaded, [MAX_YAML_NODES])
        return (convert.push(loaded),)

    def z85_uuid(value: object) -> tuple[str, bytes]:
        data = raw(value, 1)
        prefix, encoded = data[:-20], data[-20:]
        if len(encoded) != 20:
            raise LuaCallError(f"z85: a UUID is 20 characters, not {len(encoded)}")
        return (str(uuid.UUID(bytes=z85_decode(encoded))), prefix)

    def new_uuid() -> tuple[str]:
        return (str(uuid.uuid4()),)

    def parse_url(value: object) -> tuple[object]:
        try:
            parts = urlsplit(text(value, 1))
        except ValueError as exc:
            raise LuaCallError(f"parse {text(value, 1)!r}: {exc}") from None
        host = parts.netloc.rpartition("@")[2]  # Go's Host leaves out the user info
        return (
            convert.push(
                {
                    "host": host,
                    "path": unquote(parts.path),
                    "scheme": parts.scheme,
                    "query": parts.query,
                    "fragment": unquote(parts.fragment),
                }
            ),
        )

    return {
        "encoding/hex": {"encode": hex_encode, "decode": hex_decode},
        "encoding/base64": {
            "encode": b64_encode,
            "decode": b64_decode,
            "url_encode": b64_url_encode,
            "url_decode": b64_url_decode,
        },
        "crypto/sha256": {"digest": sha256_digest},
        "crypto/md5": {"digest": md5_digest},
        # lakeFS documents sign_sha256 and its code registers signsha256: both work.
        "crypto/hmac": {
            "sign_sha256": sign_sha256,
            "sign_sha1": sign_sha1,
            "signsha256": sign_sha256,
            "signsha1": sign_sha1,
        },
        "encoding/parquet": {"get_schema": get_schema},
        "crypto/aes": {"encryptCBC": encrypt_cbc, "decryptCBC": decrypt_cbc},
        "encoding/yaml": {"marshal": yaml_marshal, "unmarshal": yaml_unmarshal},
        "encoding/z85": {
            "decode": lambda value: (z85_decode(raw(value, 1)),),
            "decode_uuid": z85_uuid,
        },
        "uuid": {"new": new_uuid},
        "net/url": {"parse": parse_url},
    }
