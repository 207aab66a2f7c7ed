"""The sample's pictures, drawn here: PNG files written with zlib, no imaging library.

`lakes_map` plots every lake of the table on an equirectangular grid (one
pixel a degree-step), so the picture is generated from the same seed as the
data and is the same on every machine.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from typing import Final

WIDTH: Final = 720
HEIGHT: Final = 360
_WATER: Final = (14, 42, 71)
_GRID: Final = (32, 64, 96)
_LAKE: Final = (120, 210, 255)

Pixel = tuple[int, int, int]


def png(rows: Sequence[Sequence[Pixel]]) -> bytes:
    """An 8-bit RGB PNG of `rows` (all of one width)."""
    height, width = len(rows), len(rows[0])
    raw = b"".join(b"\0" + bytes(c for pixel in row for c in pixel) for row in rows)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def lakes_map(points: Iterable[tuple[float, float]]) -> bytes:
    """A world map (plate carrée) with a dot for each (latitude, longitude)."""
    rows = [
        [_GRID if x % 60 == 0 or y % 60 == 0 else _WATER for x in range(WIDTH)]
        for y in range(HEIGHT)
    ]
    for latitude, longitude in points:
        x = min(WIDTH - 1, int((longitude + 180.0) / 360.0 * WIDTH))
        y = min(HEIGHT - 1, int((90.0 - latitude) / 180.0 * HEIGHT))
        rows[y][x] = _LAKE
    return png(rows)
