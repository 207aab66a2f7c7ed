"""The quickstart sample's files, in lakeFS's quickstart layout, all produced by kvlake.

`README.md`, `lakes.parquet`, `data/lakes.source.md` and `images/lakes-map.png`:
the table and the map are generated from a fixed seed (lakes.py, images.py), and
the two texts are kvlake's own. Nothing is copied from lakeFS's sample or from a
lake data set. The table is built once per process and kept: it is the same
every time.
"""

from __future__ import annotations

import functools
from typing import Final, NamedTuple

from kvlake.sample import images, lakes


class SampleFile(NamedTuple):
    path: str
    data: bytes
    content_type: str


COMMIT_MESSAGE: Final = "Add sample data"
"""lakeFS's message for the sample's commit (clients and tutorials show it)."""

_README: Final = """\
# Quickstart: the lakes sample

This repository was created by kvlake with `sample_data: true`. It holds:

| path | what |
|---|---|
| `lakes.parquet` | a table of {rows:,} lakes around the world, one row a lake |
| `data/lakes.source.md` | where the table comes from, and its columns |
| `images/lakes-map.png` | every lake of the table drawn on a world map |

**The data is synthetic.** kvlake generated every row from a fixed random seed
({seed}): the lake names are made of random syllables, and the coordinates,
areas, depths and elevations are random draws. Only the country and continent
names are real. Do not use it as facts about lakes; use it to learn versioning.

## Try it

Count the lakes of each country with DuckDB (through lakefs-spec's filesystem,
or lakeFS's DuckDB integration):

```sql
SELECT   Country, COUNT(*)
FROM     READ_PARQUET('lakefs://{repository}/{branch}/lakes.parquet')
GROUP BY Country
ORDER BY COUNT(*) DESC
LIMIT    5;
```

`{branch}` is protected, as in lakeFS's quickstart: commits and writes go to a
branch, which you then merge. Work on a branch, as you would on code:

1. Create a branch `denmark-lakes` from `{branch}`.
2. Keep only Denmark's lakes there:
   `COPY (SELECT * FROM READ_PARQUET('lakefs://{repository}/denmark-lakes/lakes.parquet')
   WHERE Country = 'Denmark') TO 'lakefs://{repository}/denmark-lakes/lakes.parquet';`
3. Commit, compare the branch with `{branch}`, and merge it (or throw it away:
   `{branch}` is untouched until you merge).

From Python, pandas and polars read it the same way:

```python
import pandas as pd
lakes = pd.read_parquet("lakefs://{repository}/{branch}/lakes.parquet")
```
"""

_SOURCE: Final = """\
# Where `lakes.parquet` comes from

kvlake generated it. No lake data set was copied: `kvlake/sample/lakes.py`
draws {rows:,} synthetic lakes from Python's `random.Random({seed})`, so every
kvlake produces the same rows. The names of countries and continents are real;
everything else is random: names are random syllables, each lake's position is a
random point in a rough box around its country, areas follow a Pareto draw (many
small lakes, a few large ones), depths a log-normal one. The map in
`images/lakes-map.png` is drawn from the same table. kvlake places this sample,
its text and its pictures in the public domain.

## Columns

| column | type | meaning |
|---|---|---|
| `Lake_id` | int32 | 1, 2, 3, ... |
| `Lake_name` | string | a made-up name, e.g. "Lake Dalnor" |
| `Country` | string | a real country |
| `Continent` | string | that country's continent |
| `Latitude`, `Longitude` | float64 | degrees, WGS 84 style |
| `Area_km2` | float64 | surface area, km² |
| `Depth_avg_m` | float64 | mean depth, m |
| `Elevation_m` | int32 | surface elevation, m |
| `Volume_mcm` | float64 | area × depth, million m³ |
"""


@functools.cache
def _lakes() -> tuple[bytes, bytes]:
    table = lakes.generate()
    return lakes.to_parquet(table), images.lakes_map(lakes.coordinates(table))


def sample_files(repository: str, branch: str) -> list[SampleFile]:
    """The sample's files for a repository whose default branch is `branch`."""
    parquet, picture = _lakes()
    fields = {"rows": lakes.ROWS, "seed": lakes.SEED, "repository": repository, "branch": branch}
    return [
        SampleFile("README.md", _README.format(**fields).encode(), "text/markdown"),
        SampleFile("data/lakes.source.md", _SOURCE.format(**fields).encode(), "text/markdown"),
        SampleFile("images/lakes-map.png", picture, "image/png"),
        SampleFile("lakes.parquet", parquet, "application/octet-stream"),
    ]
