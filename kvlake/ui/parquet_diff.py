"""What changed in a Parquet object between two refs: its columns and its row count.

Only the footer is read (pyarrow over ranged reads, at most `FOOTER_BYTES` per side,
through the caller's `read`, the API's getObject with a Range), so comparing two
huge files costs two footers. A side that is missing (added, removed) has no shape;
a side that pyarrow cannot read, or whose footer is over budget, says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import pyarrow as pa
import pyarrow.parquet as pq

from kvlake.ui.previews import BudgetExceededError, RangedFile, Read

FOOTER_BYTES: Final = 1024 * 1024


@dataclass(frozen=True)
class Shape:
    """A Parquet file's columns (name to type, in order) and row count."""

    columns: dict[str, str]
    rows: int


@dataclass
class Change:
    """The difference of two shapes, as the compare page shows it."""

    added: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)
    retyped: list[tuple[str, str, str]] = field(default_factory=list)
    rows_before: int | None = None
    rows_after: int | None = None
    error: str = ""


def shape(size: int, read: Read) -> Shape | str:
    """The file's shape, or why it cannot be read."""
    source = RangedFile(size, read, FOOTER_BYTES)
    try:
        metadata = pq.ParquetFile(pa.PythonFile(source, mode="r"))
        columns = {f.name: str(f.type) for f in metadata.schema_arrow}
        return Shape(columns, metadata.metadata.num_rows)
    except BudgetExceededError:
        return f"its footer is over {FOOTER_BYTES} bytes"
    except (pa.ArrowException, OSError, ValueError) as exc:
        return f"this Parquet file cannot be read: {exc}"


def change(before: Shape | str | None, after: Shape | str | None) -> Change:
    """Columns added, removed and retyped, and the row counts, from `before` to `after`."""
    errors = [side for side in (before, after) if isinstance(side, str)]
    if errors:
        return Change(error="; ".join(errors))
    old = before.columns if isinstance(before, Shape) else {}
    new = after.columns if isinstance(after, Shape) else {}
    return Change(
        added=[(name, kind) for name, kind in new.items() if name not in old],
        removed=[(name, kind) for name, kind in old.items() if name not in new],
        retyped=[(n, old[n], new[n]) for n in new if n in old and old[n] != new[n]],
        rows_before=before.rows if isinstance(before, Shape) else None,
        rows_after=after.rows if isinstance(after, Shape) else None,
    )
