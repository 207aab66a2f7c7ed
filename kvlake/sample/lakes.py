"""The sample's table of lakes: generated here, from a fixed seed, never copied from a data set.

Every lake is synthetic: its name is built from syllables, its country and
continent are drawn from a short list of real countries (names are facts, not
anyone's work), its coordinates fall in a rough box around that country, and its
area, depth, elevation and volume come from skewed random draws (many small
lakes, few large ones, as on the real planet). The same seed gives the same
table on every machine, so the sample's `lakes.parquet` has the same rows
everywhere (its bytes depend on the pyarrow version that writes it).
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from typing import Final

import pyarrow as pa
import pyarrow.parquet as pq

SEED: Final = 20240614
ROWS: Final = 30_000
"""Enough rows for a Parquet file of about a megabyte: tutorials expect a real table."""

COLUMNS: Final = (
    "Lake_id",
    "Lake_name",
    "Country",
    "Continent",
    "Latitude",
    "Longitude",
    "Area_km2",
    "Depth_avg_m",
    "Elevation_m",
    "Volume_mcm",
)


@dataclass(frozen=True)
class _Country:
    name: str
    continent: str
    latitudes: tuple[float, float]
    longitudes: tuple[float, float]
    weight: int
    """How many of the lakes it gets, relatively (lake-rich countries get more)."""


# Rough bounding boxes (degrees): where each country's synthetic lakes may fall.
_COUNTRIES: Final = (
    _Country("Canada", "North America", (43.0, 70.0), (-140.0, -55.0), 30),
    _Country("United States of America", "North America", (26.0, 49.0), (-124.0, -68.0), 14),
    _Country("Russia", "Europe", (45.0, 72.0), (30.0, 175.0), 16),
    _Country("Finland", "Europe", (60.0, 69.0), (21.0, 31.0), 6),
    _Country("Sweden", "Europe", (55.5, 68.5), (11.5, 23.5), 6),
    _Country("Norway", "Europe", (58.0, 71.0), (5.0, 30.0), 4),
    _Country("Denmark", "Europe", (54.6, 57.7), (8.1, 12.6), 2),
    _Country("Germany", "Europe", (47.3, 55.0), (6.0, 15.0), 2),
    _Country("Poland", "Europe", (49.0, 54.8), (14.1, 24.1), 2),
    _Country("Ireland", "Europe", (51.4, 55.4), (-10.5, -6.0), 1),
    _Country("Iceland", "Europe", (63.4, 66.5), (-24.0, -13.5), 1),
    _Country("China", "Asia", (22.0, 48.0), (75.0, 122.0), 5),
    _Country("Mongolia", "Asia", (42.0, 52.0), (88.0, 119.0), 2),
    _Country("Kazakhstan", "Asia", (41.0, 55.0), (47.0, 87.0), 2),
    _Country("India", "Asia", (8.0, 32.0), (69.0, 89.0), 2),
    _Country("Brazil", "South America", (-33.0, 4.0), (-73.0, -35.0), 3),
    _Country("Argentina", "South America", (-54.0, -22.0), (-72.0, -54.0), 2),
    _Country("Chile", "South America", (-55.0, -18.0), (-75.0, -67.0), 1),
    _Country("Peru", "South America", (-18.0, -1.0), (-81.0, -69.0), 1),
    _Country("Tanzania", "Africa", (-11.0, -1.0), (29.5, 40.0), 1),
    _Country("Uganda", "Africa", (-1.4, 4.2), (29.6, 35.0), 1),
    _Country("Ethiopia", "Africa", (3.5, 14.8), (33.0, 47.9), 1),
    _Country("Australia", "Oceania", (-43.0, -11.0), (114.0, 153.0), 2),
    _Country("New Zealand", "Oceania", (-46.6, -34.4), (166.5, 178.5), 1),
)

_SYLLABLES: Final = (
    "al", "an", "ar", "bel", "bor", "ca", "dal", "den", "el", "fen", "gar", "hal", "is",
    "ka", "kel", "la", "lin", "lo", "mar", "mer", "na", "nor", "o", "pa", "ra", "ren",
    "sa", "sil", "ta", "tor", "u", "va", "vik", "wen", "ya", "zor",
)  # fmt: skip
_KINDS: Final = ("Lake", "Lake", "Lake", "Loch", "Pond", "Mere", "Tarn", "Reservoir")


def _name(rng: random.Random) -> str:
    stem = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
    return f"{rng.choice(_KINDS)} {stem.capitalize()}"


def generate(rows: int = ROWS, seed: int = SEED) -> pa.Table:
    """The table of `rows` synthetic lakes for `seed` (the same rows for the same arguments)."""
    rng = random.Random(seed)
    weights = [c.weight for c in _COUNTRIES]
    columns: dict[str, list[object]] = {name: [] for name in COLUMNS}
    for lake_id in range(1, rows + 1):
        country = rng.choices(_COUNTRIES, weights)[0]
        area = round(0.1 * rng.paretovariate(1.1), 3)  # km2: many small, few huge
        depth = round(max(0.5, rng.lognormvariate(1.8, 0.9)), 1)
        values: tuple[object, ...] = (
            lake_id,
            _name(rng),
            country.name,
            country.continent,
            round(rng.uniform(*country.latitudes), 5),
            round(rng.uniform(*country.longitudes), 5),
            area,
            depth,
            round(rng.triangular(-30.0, 4500.0, 250.0)),
            round(area * depth, 4),  # million cubic metres: km2 x m
        )
        for name, value in zip(COLUMNS, values, strict=True):
            columns[name].append(value)
    schema = pa.schema(
        [
            ("Lake_id", pa.int32()),
            ("Lake_name", pa.string()),
            ("Country", pa.string()),
            ("Continent", pa.string()),
            ("Latitude", pa.float64()),
            ("Longitude", pa.float64()),
            ("Area_km2", pa.float64()),
            ("Depth_avg_m", pa.float64()),
            ("Elevation_m", pa.int32()),
            ("Volume_mcm", pa.float64()),
        ]
    )
    return pa.table(columns, schema=schema)


def to_parquet(table: pa.Table) -> bytes:
    """The table as one Parquet file (snappy, one row group), as bytes."""
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="snappy")
    return sink.getvalue()


def coordinates(table: pa.Table) -> list[tuple[float, float]]:
    """(latitude, longitude) of every lake, for the sample's map."""
    latitudes = table.column("Latitude").to_pylist()
    return list(zip(latitudes, table.column("Longitude").to_pylist(), strict=True))
