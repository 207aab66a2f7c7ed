"""aws-chunked bodies: decode S3's streaming uploads chunk by chunk, checking each signature.

boto3 and the AWS CLI (since early 2025) send uploads as
`STREAMING-UNSIGNED-PAYLOAD-TRAILER`: `<hex size>\\r\\n<bytes>\\r\\n` chunks, a
zero-size chunk, then trailer lines such as `x-amz-checksum-crc32:<base64>`.
Signed streams (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]`) add
`;chunk-signature=<hex>` to each size line, each signature chaining the one
before it from the request's seed signature, and sign the trailer too. A chunk
is held only while it is checked (at most `MAX_CHUNK` bytes), so memory stays
flat for any upload; a bad signature or malformed framing raises while the
body is read, so the blockstore's put fails and nothing is staged.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from typing import Any, BinaryIO, Final

from kvlake.gateway.errors import S3Error
from kvlake.gateway.sigv4 import EMPTY_SHA256, matches, sign

MAX_CHUNK: Final = 16 << 20
"""The largest chunk accepted: clients send 64 KiB to 8 MiB."""
_MAX_LINE: Final = 4096


def _malformed(what: str) -> S3Error:
    return S3Error(400, "IncompleteBody", f"the aws-chunked body is malformed: {what}")


@dataclass(frozen=True)
class ChunkSigner:
    """What a signed stream's chunks chain from: the day's key, scope, time and seed."""

    key: bytes
    amz_date: str
    scope: str
    seed: str

    def chunk(self, previous: str, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        return sign(
            self.key,
            f"AWS4-HMAC-SHA256-PAYLOAD\n{self.amz_date}\n{self.scope}\n{previous}\n"
            f"{EMPTY_SHA256}\n{digest}",
        )

    def trailer(self, previous: str, text: bytes) -> str:
        digest = hashlib.sha256(text).hexdigest()
        return sign(
            self.key,
            f"AWS4-HMAC-SHA256-TRAILER\n{self.amz_date}\n{self.scope}\n{previous}\n{digest}",
        )


class ChunkedReader(io.RawIOBase):
    """The decoded bytes of an aws-chunked body; `trailers` holds its trailer once read.

    With a `signer`, every chunk (and the trailer, when `trailer` is set) must
    carry its chained signature: SignatureDoesNotMatch otherwise.
    """

    def __init__(self, source: BinaryIO, *, signer: ChunkSigner | None, trailer: bool) -> None:
        self._source = source
        self._signer = signer
        self._trailer = trailer
        self._previous = signer.seed if signer is not None else ""
        self._buffer = b""
        self._pending = memoryview(b"")
        self._done = False
        self.trailers: dict[str, str] = {}

    def readable(self) -> bool:
        return True

    def _fill(self, size: int) -> bytes:
        while len(self._buffer) < size:
            data = self._source.read(max(size - len(self._buffer), 64 << 10))
            if not data:
                raise _malformed("the body ended inside a chunk")
            self._buffer += data
        taken, self._buffer = self._buffer[:size], self._buffer[size:]
        return taken

    def _line(self) -> bytes:
        while b"\r\n" not in self._buffer:
            if len(self._buffer) > _MAX_LINE:
                raise _malformed("a chunk header line is too long")
            data = self._source.read(_MAX_LINE)
            if not data:
                raise _malformed("the body ended before its last chunk")
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\r\n")
        return line

    def _next_chunk(self) -> bytes:
        header = self._line().decode("latin-1")
        size_text, _, extension = header.partition(";")
        try:
            size = int(size_text, 16)
        except ValueError:
            raise _malformed(f"chunk size {size_text!r} is not hexadecimal") from None
        if not 0 <= size <= MAX_CHUNK:
            raise _malformed(f"a chunk of {size} bytes is over {MAX_CHUNK}")
        data = self._fill(size) if size else b""
        if size and self._fill(2) != b"\r\n":
            raise _malformed("a chunk does not end with CRLF")
        if self._signer is not None:
            name, _, given = extension.partition("=")
            if name.strip() != "chunk-signature":
                raise S3Error(403, "SignatureDoesNotMatch", "a chunk carries no chunk-signature")
            expected = self._signer.chunk(self._previous, data)
            if not matches(expected, given.strip()):
                raise S3Error(
                    403, "SignatureDoesNotMatch", "a chunk's signature does not match its bytes"
                )
            self._previous = expected
        if size == 0:
            self._finish()
        return data

    def _finish(self) -> None:
        self._done = True
        if not self._trailer:
            return  # whatever follows the last chunk (a CRLF) carries nothing
        signed_lines: list[bytes] = []
        signature = ""
        while line := self._line():
            name, _, value = line.decode("latin-1").partition(":")
            name = name.strip().lower()
            if name == "x-amz-trailer-signature":
                signature = value.strip()
                continue
            signed_lines.append(line + b"\n")
            self.trailers[name] = value.strip()
        if self._signer is not None:
            expected = self._signer.trailer(self._previous, b"".join(signed_lines))
            if not matches(expected, signature):
                raise S3Error(
                    403, "SignatureDoesNotMatch", "the trailer's signature does not match"
                )

    def read(self, size: int | None = -1) -> bytes:
        while not self._pending and not self._done:
            self._pending = memoryview(self._next_chunk())
        if size is None or size < 0 or size >= len(self._pending):
            data, self._pending = bytes(self._pending), memoryview(b"")
        else:
            data, self._pending = bytes(self._pending[:size]), self._pending[size:]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
