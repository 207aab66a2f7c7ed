"""The quickstart sample: lakeFS's layout, generated deterministically, and said to be so."""

from __future__ import annotations

import io
import struct
import zlib

import pyarrow.parquet as pq

from kvlake.sample import lakes, sample_files


def test_the_layout_is_lakefs_quickstarts() -> None:
    paths = [f.path for f in sample_files("quickstart", "main")]
    assert sorted(paths) == [
        "README.md",
        "data/lakes.source.md",
        "images/lakes-map.png",
        "lakes.parquet",
    ]


def test_lakes_parquet_is_a_real_table_over_half_a_megabyte() -> None:
    files = {f.path: f.data for f in sample_files("quickstart", "main")}
    data = files["lakes.parquet"]
    assert len(data) > 512 * 1024
    table = pq.read_table(io.BytesIO(data))
    assert table.num_rows == lakes.ROWS
    assert tuple(table.column_names) == lakes.COLUMNS
    countries = set(table.column("Country").to_pylist())
    assert "Denmark" in countries and len(countries) > 20  # the tutorial filters on Denmark
    areas = table.column("Area_km2").to_pylist()
    assert min(areas) > 0 and max(areas) > 100 * sorted(areas)[len(areas) // 2]  # skewed


def test_the_same_seed_gives_the_same_rows() -> None:
    assert lakes.generate(500).equals(lakes.generate(500))
    assert not lakes.generate(500).equals(lakes.generate(500, seed=lakes.SEED + 1))


def test_the_texts_say_the_data_is_generated_and_name_the_repository() -> None:
    files = {
        f.path: f.data.decode() for f in sample_files("demo", "trunk") if f.path.endswith(".md")
    }
    readme, source = files["README.md"], files["data/lakes.source.md"]
    assert "synthetic" in readme and str(lakes.SEED) in readme
    assert "lakefs://demo/trunk/lakes.parquet" in readme
    assert "generated" in source and "No lake data set was copied" in source
    assert "public domain" in source


def test_the_map_is_a_valid_png() -> None:
    files = {f.path: f.data for f in sample_files("quickstart", "main")}
    image = files["images/lakes-map.png"]
    assert image.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", image[16:24])
    assert (width, height) == (720, 360)
    length = struct.unpack(">I", image[33:37])[0]
    assert image[37:41] == b"IDAT"
    raw = zlib.decompress(image[41 : 41 + length])
    assert len(raw) == height * (1 + 3 * width)
