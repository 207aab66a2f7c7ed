"""Previews of an object's content, each read within a byte budget.

The bytes come from the caller's `read(start, end)` (the API's getObject with a
Range, so the read is authorized as a download is). Text, CSV and JSON read
their first `TEXT_BYTES`; Parquet reads the footer and the first rows through
pyarrow over ranged reads, at most `PARQUET_BYTES` in all, so a preview of a
huge file never reads it whole. A file pyarrow cannot read says so.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import pyarrow as pa
import pyarrow.parquet as pq

TEXT_BYTES: Final = 64 * 1024
PARQUET_BYTES: Final = 8 * 1024 * 1024
ROWS: Final = 20
READ_BYTES: Final = 512 * 1024
"""At most this much per ranged read (the API answers up to 1 MiB in one body)."""
IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")

Read = Callable[[int, int], bytes]
"""`read(start, end)`: the object's bytes [start, end)."""


@dataclass
class Preview:
    """What the object page shows: a kind and its content (all escaped by the template)."""

    kind: str
    """"text", "table", "image", "parquet", "none" or "error"."""
    text: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    schema: list[tuple[str, str]] = field(default_factory=list)
    truncated: bool = False
    message: str = ""


def kind_of(path: str, content_type: str) -> str:
    lower = path.lower()
    if lower.endswith(".parquet"):
        return "parquet"
    if content_type in IMAGE_TYPES or lower.endswith((".png", ".jpg", ".jpeg", ".gif", ".webp")):
        return "image"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".json", ".jsonl", ".ndjson")):
        return "json"
    if content_type.startswith("text/") or lower.endswith((".txt", ".md", ".log", ".yaml")):
        return "text"
    return "none"


def preview(path: str, content_type: str, size: int, read: Read) -> Preview:
    kind = kind_of(path, content_type)
    if kind == "none" or size == 0:
        return Preview("none")
    if kind == "image":
        return Preview("image")
    if kind == "parquet":
        return _parquet(size, read)
    data = read(0, min(size, TEXT_BYTES))
    truncated = size > len(data)
    text = data.decode("utf-8", errors="replace")
    if kind == "csv":
        return _csv(text, truncated)
    if kind == "json" and not truncated:
        return _json(text)
    return Preview("text", text=text, truncated=truncated)


def _csv(text: str, truncated: bool) -> Preview:
    lines = text.splitlines()
    if truncated and lines:
        lines = lines[:-1]  # the last line may be cut
    rows = list(csv.reader(lines[: ROWS + 1]))
    if not rows:
        return Preview("text", text=text, truncated=truncated)
    return Preview(
        "table", columns=rows[0], rows=rows[1:], truncated=truncated or len(lines) > ROWS + 1
    )


def _json(text: str) -> Preview:
    try:
        value = json.loads(text)
    except ValueError:
        return Preview("text", text=text)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        columns = list(dict.fromkeys(k for row in value[:ROWS] for k in row))
        rows = [[_cell(row.get(c)) for c in columns] for row in value[:ROWS]]
        return Preview("table", columns=columns, rows=rows, truncated=len(value) > ROWS)
    return Preview("text", text=json.dumps(value, indent=2, ensure_ascii=False))


def _cell(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class BudgetExceededError(Exception):
    """A read would go over its budget: nothing more was read."""


class RangedFile(io.RawIOBase):
    """A seekable file over ranged reads that refuses to read past its budget."""

    def __init__(self, size: int, read: Read, budget: int) -> None:
        self._size, self._read, self._left, self._at = size, read, budget, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._at, 2: self._size}[whence]
        self._at = max(0, base + offset)
        return self._at

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes from the position, in ranged reads of at most READ_BYTES;
        refused before reading when the budget would be exceeded."""
        end = self._size if size < 0 else min(self._size, self._at + size)
        if end - self._at > self._left:
            raise BudgetExceededError
        parts = []
        while self._at < end:
            step = min(end, self._at + READ_BYTES)
            parts.append(self._read(self._at, step))
            self._left -= step - self._at
            self._at = step
        return b"".join(parts)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _parquet(size: int, read: Read) -> Preview:
    source = RangedFile(size, read, PARQUET_BYTES)
    try:
        parquet = pq.ParquetFile(pa.PythonFile(source, mode="r"))
        schema = [(f.name, str(f.type)) for f in parquet.schema_arrow]
        # One row group only: iter_batches reads ahead through the following ones.
        batch = parquet.read_row_group(0).slice(0, ROWS) if parquet.num_row_groups else None
    except BudgetExceededError:
        return Preview("error", message=f"the preview would read over {PARQUET_BYTES} bytes")
    except (pa.ArrowException, OSError, ValueError) as exc:
        return Preview("error", message=f"this Parquet file cannot be read: {exc}")
    rows: list[list[str]] = []
    if batch is not None:
        rows = [[_cell(row[c]) for c in batch.schema.names] for row in batch.to_pylist()]
    return Preview(
        "parquet",
        schema=schema,
        columns=[name for name, _ in schema],
        rows=rows,
        truncated=parquet.metadata.num_rows > len(rows),
        message=f"{parquet.metadata.num_rows} rows",
    )
