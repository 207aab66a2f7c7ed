"""Body digests S3 clients send (Content-MD5, x-amz-checksum-*, the signed sha256), verified.

A client says what its body hashes to in a header, or (streaming) in a trailer
that arrives after the last byte. `VerifyingReader` hashes the body as the
blockstore pulls it and compares when the body ends, raising BadDigest (or
XAmzContentSHA256Mismatch) from that last read: the blockstore's put then fails
and disposes of its blob, so a corrupted upload is never staged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, Final, Protocol

from awscrt import checksums

from kvlake.gateway.errors import S3Error

CHECKSUM_PREFIX: Final = "x-amz-checksum-"


class _Hash(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...


class _Crc:
    """One of AWS's CRCs with hashlib's face; S3 sends it big-endian in base64."""

    def __init__(self, function: Callable[[bytes, int], int], width: int) -> None:
        self._function = function
        self._width = width
        self._value = 0

    def update(self, data: bytes, /) -> None:
        self._value = self._function(data, self._value)

    def digest(self) -> bytes:
        return self._value.to_bytes(self._width, "big")


ALGORITHMS: Final[dict[str, Callable[[], _Hash]]] = {
    "crc32": lambda: _Crc(checksums.crc32, 4),
    "crc32c": lambda: _Crc(checksums.crc32c, 4),
    "crc64nvme": lambda: _Crc(checksums.crc64nvme, 8),
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
}
"""The x-amz-checksum-* algorithms S3 defines, all verified (the CRCs by awscrt, AWS's own
native library, as fast as the clients that compute them)."""


def _unsupported(name: str) -> S3Error:
    known = ", ".join(a.upper() for a in sorted(ALGORITHMS))
    return S3Error(
        400,
        "InvalidRequest",
        f"checksum {name.upper()} is not supported by kvlake's gateway; use {known}",
    )


def algorithm_of(header: str) -> str:
    """The algorithm an `x-amz-checksum-<name>` header or trailer names; refused if unknown."""
    name = header[len(CHECKSUM_PREFIX) :].lower()
    if name not in ALGORITHMS:
        raise _unsupported(name)
    return name


def _b64(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise S3Error(400, "InvalidDigest", f"{what} {value!r} is not base64") from None


class Expected:
    """What the body must hash to: from headers now, and from trailers when the body ends."""

    def __init__(self, headers: Mapping[str, str], *, declared_trailer: str = "") -> None:
        self.md5: bytes | None = None
        self.sha256_hex = ""
        self.checksums: dict[str, bytes] = {}
        if "content-md5" in headers:
            self.md5 = _b64(headers["content-md5"], "Content-MD5")
            if len(self.md5) != 16:
                raise S3Error(400, "InvalidDigest", "Content-MD5 is not an MD5 digest")
        for name, value in headers.items():
            if name.startswith(CHECKSUM_PREFIX) and name != "x-amz-checksum-algorithm":
                if name == "x-amz-checksum-type":
                    continue
                self.checksums[algorithm_of(name)] = _b64(value, name)
        self.trailer = declared_trailer.strip().lower()
        if self.trailer:
            if not self.trailer.startswith(CHECKSUM_PREFIX):
                raise S3Error(400, "InvalidRequest", f"trailer {self.trailer!r} is not a checksum")
            algorithm_of(self.trailer)

    def algorithms(self) -> set[str]:
        names = set(self.checksums)
        if self.trailer:
            names.add(self.trailer[len(CHECKSUM_PREFIX) :])
        return names

    def take_trailers(self, trailers: Mapping[str, str]) -> None:
        """Add the checksums a streamed body's trailer carried."""
        for name, value in trailers.items():
            if name.startswith(CHECKSUM_PREFIX):
                self.checksums[algorithm_of(name)] = _b64(value, name)
        if self.trailer and self.trailer[len(CHECKSUM_PREFIX) :] not in self.checksums:
            raise S3Error(
                400, "IncompleteBody", f"the body's trailer lacks the declared {self.trailer}"
            )


class VerifyingReader(io.RawIOBase):
    """Hashes what passes through; at the end, checks it against `expected`.

    `trailers`, if given, returns the trailer of the decoded stream once it ended;
    `compute` names an algorithm to hash with even if the client sent no checksum
    of it (a multipart upload's, for every part).
    """

    def __init__(
        self,
        source: BinaryIO,
        expected: Expected,
        *,
        trailers: Callable[[], Mapping[str, str]] | None = None,
        length: int | None = None,
        compute: str = "",
    ) -> None:
        self._source = source
        self._expected = expected
        self._trailers = trailers
        self._length = length
        self._size = 0
        self._md5 = hashlib.md5() if expected.md5 is not None else None
        self._sha256 = hashlib.sha256() if expected.sha256_hex else None
        names = expected.algorithms() | ({compute} if compute else set())
        self._hashes = {name: ALGORITHMS[name]() for name in names}
        self._checked = False

    def readable(self) -> bool:
        return True

    def checksums(self) -> dict[str, str]:
        """The body's checksums, base64 by algorithm: those the client sent (all verified)
        and `compute`'s. Only once the body ended."""
        assert self._checked, "the body has not ended"
        return {name: base64.b64encode(h.digest()).decode() for name, h in self._hashes.items()}

    def read(self, size: int | None = -1) -> bytes:
        data = self._source.read(-1 if size is None else size)
        if data:
            self._size += len(data)
            for digest in (self._md5, self._sha256, *self._hashes.values()):
                if digest is not None:
                    digest.update(data)
        elif not self._checked:
            self._checked = True
            self._check()
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _check(self) -> None:
        expected = self._expected
        if self._length is not None and self._size != self._length:
            raise S3Error(
                400,
                "IncompleteBody",
                f"the body has {self._size} bytes; its headers declared {self._length}",
            )
        if self._trailers is not None:
            expected.take_trailers(self._trailers())
        if self._md5 is not None and self._md5.digest() != expected.md5:
            raise S3Error(400, "BadDigest", "the Content-MD5 does not match the body")
        if self._sha256 is not None and self._sha256.hexdigest() != expected.sha256_hex:
            raise S3Error(
                400,
                "XAmzContentSHA256Mismatch",
                "the x-amz-content-sha256 does not match the body",
            )
        for name, digest in self._hashes.items():
            if digest.digest() != expected.checksums.get(name):
                raise S3Error(
                    400, "BadDigest", f"the {name.upper()} checksum does not match the body"
                )


def checksum_type(value: str) -> str:
    """S3's x-amz-checksum-type of a stored checksum: a multipart upload's ends in `-N`."""
    return "COMPOSITE" if "-" in value else "FULL_OBJECT"


def checksum_headers(checksums: Mapping[str, str]) -> dict[str, str]:
    """A stored object's checksums as S3's response headers."""
    headers = {CHECKSUM_PREFIX + name: value for name, value in sorted(checksums.items())}
    if checksums:
        headers["x-amz-checksum-type"] = checksum_type(next(iter(checksums.values())))
    return headers


def composite(algorithm: str, part_checksums: list[str]) -> str:
    """S3's checksum of a multipart object: the algorithm over the parts' binary checksums,
    then `-<parts>`."""
    digest = ALGORITHMS[algorithm]()
    for value in part_checksums:
        digest.update(base64.b64decode(value))
    return f"{base64.b64encode(digest.digest()).decode()}-{len(part_checksums)}"
