"""Hive-style partition folders (`year=2026/month=1/`): columns from paths, and pruning.

A dataset's files may sit in `name=value/` folders below the path read; each
such folder is a column of every row of the files inside, as Spark's own file
sources do. Values are typed as Spark infers them (int, bigint, double, else
string; `__HIVE_DEFAULT_PARTITION__` is null), so `year = 2026` prunes. The
pruning here only ever drops a file whose partition values make a pushed filter
false: a filter it cannot decide keeps the file, and Spark evaluates every
filter again on the rows, so a wrong guess can cost a read but never a row.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import unquote

from kvlake.errors import InvalidInputError

NULL_VALUE: Final = "__HIVE_DEFAULT_PARTITION__"
"""The folder value Spark writes for a null partition value."""
_INT_RANGE: Final = range(-(2**31), 2**31)

PartitionValue = int | float | str | None


def partition_folders(relative: str) -> list[tuple[str, str]]:
    """The `name=value` folders of a file's path below the dataset's root, outermost first.

    Folders that are not `name=value` carry no column (Spark's rule for folders
    that only group files).
    """
    folders = relative.split("/")[:-1]
    pairs = []
    for folder in folders:
        name, equals, value = folder.partition("=")
        if equals and name:
            pairs.append((unquote(name), unquote(value)))
    return pairs


def partition_columns(files: Sequence[Sequence[tuple[str, str]]], root: str) -> list[str]:
    """The partition column names all files agree on, in folder order.

    Raises:
        InvalidInputError: files sit in different partition layouts (Spark refuses them too).
    """
    layouts = {tuple(name for name, _ in folders) for folders in files}
    if len(layouts) > 1:
        shown = " and ".join(repr("/".join(layout) or "(none)") for layout in sorted(layouts)[:2])
        raise InvalidInputError(
            f"the files under {root!r} are partitioned in different ways ({shown});"
            " read each layout through its own path"
        )
    return list(next(iter(layouts), ()))


def infer_type(values: Sequence[str]) -> str:
    """Spark's inferred type of one partition column: `int`, `bigint`, `double` or `string`."""
    present = [value for value in values if value != NULL_VALUE]
    for name, parse in (("int", int), ("double", float)):
        try:
            parsed = [parse(value) for value in present]
        except ValueError:
            continue
        if name == "int" and not all(number in _INT_RANGE for number in parsed):
            return "bigint"
        return name
    return "string"


def parse_value(text: str, type_name: str) -> PartitionValue:
    """A folder's value as its column's type (`infer_type`'s name)."""
    if text == NULL_VALUE:
        return None
    if type_name in ("int", "bigint"):
        return int(text)
    if type_name == "double":
        return float(text)
    return text


_COMPARISONS: Final[Mapping[str, Callable[[Any, Any], bool]]] = {
    "EqualTo": operator.eq,
    "GreaterThan": operator.gt,
    "GreaterThanOrEqual": operator.ge,
    "LessThan": operator.lt,
    "LessThanOrEqual": operator.le,
}


def may_match(condition: Any, values: Mapping[str, PartitionValue]) -> bool:
    """False only if `condition` (a pushed Spark filter) is surely false for these values.

    A filter on a column that is not a partition column, or one whose literal
    cannot be compared with the value, may match: the file is read.
    """
    outcome = _evaluate(condition, values)
    return outcome is not False


def _evaluate(condition: Any, values: Mapping[str, PartitionValue]) -> bool | None:
    """The filter's truth for these values (None: unknown, or SQL NULL)."""
    kind = type(condition).__name__
    if kind == "Not":
        inner = _evaluate(condition.child, values)
        return None if inner is None else not inner
    attribute: tuple[str, ...] = getattr(condition, "attribute", ())
    if len(attribute) != 1 or attribute[0] not in values:
        return None
    value = values[attribute[0]]
    try:
        if kind == "IsNull":
            return value is None
        if kind == "IsNotNull":
            return value is not None
        if kind == "EqualNullSafe":
            if value is None or condition.value is None:
                return value is condition.value
            return value == condition.value if _comparable(value, condition.value) else None
        if value is None or getattr(condition, "value", None) is None:
            return None
        if kind in _COMPARISONS and _comparable(value, condition.value):
            return _COMPARISONS[kind](value, condition.value)
        if kind == "In" and all(_comparable(value, item) for item in condition.value):
            return value in condition.value
        if isinstance(value, str) and kind == "StringStartsWith":
            return value.startswith(condition.value)
        if isinstance(value, str) and kind == "StringEndsWith":
            return value.endswith(condition.value)
        if isinstance(value, str) and kind == "StringContains":
            return condition.value in value
    except TypeError:
        return None
    return None


def _comparable(value: PartitionValue, literal: Any) -> bool:
    """Whether Python compares these as Spark would: numbers with numbers, text with text
    (`2026 == "2026"` is False in Python, but may be true in Spark after a cast)."""
    numbers = (int, float)
    if isinstance(value, numbers) and not isinstance(value, bool):
        return isinstance(literal, numbers) and not isinstance(literal, bool)
    return isinstance(value, str) and isinstance(literal, str)
