"""Streaming multipart/form-data uploads: the `content` part, never held whole.

lakeFS accepts an upload as a form with the file in the `content` field. The
parser is fed the body as it arrives and hands the file part's bytes on as they
are parsed, so a form of any size passes through a small buffer. Other fields
are ignored; a form without a `content` part is refused.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO, Final

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from kvlake.errors import InvalidInputError

_CHUNK: Final = 1 << 20
FILE_FIELD: Final = "content"


def boundary_of(content_type: str) -> bytes:
    """The form boundary, or InvalidInputError for a malformed Content-Type."""
    _, options = parse_options_header(content_type)
    boundary = options.get(b"boundary")
    if not boundary or len(boundary) > 200:
        raise InvalidInputError("multipart/form-data upload has no valid boundary parameter")
    return boundary


class MultipartFileReader(io.RawIOBase):
    """Reads the bytes of the form's `content` part from a multipart body stream."""

    def __init__(self, source: BinaryIO | io.RawIOBase, boundary: bytes) -> None:
        self._source = source
        self._out: list[bytes] = []
        self._header_field = b""
        self._headers: dict[bytes, bytes] = {}
        self._in_file = False
        self._seen_file = False
        self._file_done = False
        self._ended = False
        self.content_type: str | None = None
        callbacks: Any = {
            "on_part_begin": self._part_begin,
            "on_header_field": self._header_field_data,
            "on_header_value": self._header_value_data,
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
            "on_part_end": self._part_end,
            "on_end": self._end,
        }
        self._parser = MultipartParser(boundary, callbacks)

    def readable(self) -> bool:
        return True

    def start(self) -> None:
        """Parse up to the file part, so its content type is known before storing."""
        while not self._seen_file and not self._ended:
            self._feed()
        if not self._seen_file:
            raise InvalidInputError(f"multipart upload has no {FILE_FIELD!r} file part")

    def _feed(self) -> None:
        chunk = self._source.read(_CHUNK)
        if not chunk:
            if not self._ended:
                raise InvalidInputError("multipart upload body ended before its closing boundary")
            return
        try:
            self._parser.write(chunk)
        except FormParserError as exc:
            raise InvalidInputError(f"multipart upload body is malformed: {exc}") from None

    def read(self, size: int = -1) -> bytes:
        while not self._out and not self._file_done:
            self._feed()
        data = b"".join(self._out)
        self._out = []
        return data

    def readinto(self, buffer: Any) -> int:
        raise io.UnsupportedOperation("use read()")

    # -- parser callbacks ---------------------------------------------------------

    def _part_begin(self) -> None:
        self._headers = {}
        self._header_field = b""

    def _header_field_data(self, data: bytes, start: int, end: int) -> None:
        self._header_field += data[start:end]

    def _header_value_data(self, data: bytes, start: int, end: int) -> None:
        name = self._header_field.lower()
        self._headers[name] = self._headers.get(name, b"") + data[start:end]

    def _header_end(self) -> None:
        self._header_field = b""

    def _headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition", b""))
        is_file = options.get(b"name") == FILE_FIELD.encode() and not self._seen_file
        self._in_file = is_file
        if is_file:
            self._seen_file = True
            part_type = self._headers.get(b"content-type")
            self.content_type = part_type.decode("latin-1") if part_type else None

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self._in_file:
            self._out.append(bytes(data[start:end]))

    def _part_end(self) -> None:
        if self._in_file:
            self._file_done = True
            self._in_file = False

    def _end(self) -> None:
        self._ended = True
        self._file_done = True
