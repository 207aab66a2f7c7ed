"""How CLI commands print: aligned tables for people, `--json` for scripts, tqdm on stderr.

One style for every command: a listing is a table with a header (or a line saying it is
empty, never nothing at all), `--json` prints a listing as one JSON array and a single
result as one object, and progress goes to stderr so stdout stays parseable.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import click
from tqdm import tqdm

_F = TypeVar("_F", bound=Callable[..., Any])

json_option: Callable[[_F], _F] = click.option(
    "--json", "as_json", is_flag=True, help="Print JSON on stdout instead of text."
)
"""The `--json` flag every user command takes (its parameter is `as_json`)."""


def emit_json(value: Any) -> None:
    """One JSON document on stdout."""
    click.echo(json.dumps(value, sort_keys=False, default=str))


def emit_table(rows: Iterable[Sequence[Any]], headers: Sequence[str], *, empty: str) -> None:
    """An aligned table; `empty` (e.g. "no branches") when there are no rows."""
    table = [[_cell(value) for value in row] for row in rows]
    if not table:
        click.echo(empty)
        return
    widths = [max(len(headers[i]), *(len(row[i]) for row in table)) for i in range(len(headers))]
    click.echo("  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    for row in table:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def emit_listing(
    items: Iterable[dict[str, Any]],
    columns: Sequence[tuple[str, Callable[[dict[str, Any]], Any]]],
    *,
    as_json: bool,
    empty: str,
) -> None:
    """A listing: a JSON array of the server's objects, or a table of `columns`."""
    if as_json:
        emit_json(list(items))
        return
    emit_table(
        ([get(item) for _, get in columns] for item in items),
        [name for name, _ in columns],
        empty=empty,
    )


def progress(total: int | None, unit: str, description: str) -> tqdm[Any]:
    """The one progress bar: tqdm on stderr, hidden when stderr is not a terminal."""
    bar: tqdm[Any] = tqdm(
        total=total,
        unit=unit,
        unit_scale=unit == "B",
        desc=description,
        file=sys.stderr,
        disable=None,
        leave=False,
    )
    return bar


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)
