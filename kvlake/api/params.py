"""Query parameters and headers, parsed strictly before a request reaches the core.

Each operation declares its parameters; anything undeclared, repeated, of the
wrong type or out of range is a 400 naming the parameter and what it accepts.
The same declarations produce the parameters of the OpenAPI document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal, NamedTuple

from kvlake.api.wire.common import DEFAULT_PER_PAGE, MAX_PER_PAGE
from kvlake.errors import InvalidInputError

Kind = Literal["str", "bool", "int", "list", "path"]
_INT = re.compile(r"-?[0-9]{1,18}")
MAX_VALUE_LENGTH: Final = 4096
_BOOLEANS: Final = {  # what lakeFS (Go's strconv.ParseBool) accepts; Python clients send "True"
    **dict.fromkeys(("1", "t", "T", "true", "TRUE", "True"), True),
    **dict.fromkeys(("0", "f", "F", "false", "FALSE", "False"), False),
}


class Param(NamedTuple):
    """One query parameter (or header, with `where="header"`)."""

    name: str
    kind: Kind = "str"
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    where: Literal["query", "header"] = "query"
    description: str = ""
    unsupported: str = ""
    """Why kvlake cannot honour this flag: accepted when false, a 400 naming it when true."""
    choices: tuple[str, ...] = ()
    """The values a text parameter may take (lakeFS's enum); empty: any text."""


def text(name: str, description: str = "", *, required: bool = False) -> Param:
    return Param(name, "str", required, description=description)


def choice(name: str, choices: tuple[str, ...], description: str = "") -> Param:
    """A text parameter that takes one of `choices` (an enum in lakeFS's API description)."""
    return Param(name, "str", description=description, choices=choices)


def flag(name: str, description: str = "") -> Param:
    return Param(name, "bool", description=description)


def unsupported(name: str, reason: str) -> Param:
    """A lakeFS flag kvlake declares (clients send it) but refuses when true, saying why.

    The one way an operation declares what it cannot do: `parse` refuses it, so
    no handler checks it again.
    """
    return Param(name, "bool", description=f"must be false: {reason}", unsupported=reason)


def header(name: str, description: str = "") -> Param:
    return Param(name, "str", where="header", description=description)


def object_path(name: str, description: str, *, required: bool = True) -> Param:
    """An object path: text without NUL and without '..' segments (no traversal)."""
    return Param(name, "path", required, description=description)


FORCE: Final = flag(
    "force",
    "lakeFS: bypass a read-only repository. kvlake has no read-only repositories, so it"
    " changes nothing; branch protection applies as in lakeFS",
)
"""lakeFS's `force` overrides only read-only repositories, never branch protection."""

PATH: Final = object_path("path", "object path relative to the ref")
PAGE: Final = (
    text("prefix", "return items prefixed with this value"),
    text("after", "return items after this value"),
    Param("amount", "int", minimum=-1, maximum=MAX_PER_PAGE, description="how many items"),
)


class Query:
    """Parsed values by name; absent optional parameters are missing (see `get`)."""

    def __init__(self, values: dict[str, object]) -> None:
        self._values = values

    def text(self, name: str, default: str = "") -> str:
        value = self._values.get(name, default)
        assert isinstance(value, str)
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self._values.get(name, default)
        assert isinstance(value, bool)
        return value

    def number(self, name: str, default: int) -> int:
        value = self._values.get(name, default)
        assert isinstance(value, int)
        return value

    def items(self, name: str) -> list[str]:
        value = self._values.get(name, [])
        assert isinstance(value, list)
        return value

    def amount(self) -> int:
        """The page size: -1 or absent means the default."""
        amount = self.number("amount", -1)
        return DEFAULT_PER_PAGE if amount < 0 else amount

    def has(self, name: str) -> bool:
        return name in self._values

    def as_dict(self) -> dict[str, object]:
        """Every parsed value by name (for message templates)."""
        return dict(self._values)


def parse(
    declared: Sequence[Param],
    query: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
) -> Query:
    """Check the request's query string and declared headers against `declared`."""
    by_name = {p.name: p for p in declared if p.where == "query"}
    values: dict[str, object] = {}
    for name, raw in query:
        param = by_name.get(name)
        if param is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise InvalidInputError(f"query parameter {name!r} is unknown; known: {known}")
        if len(raw) > MAX_VALUE_LENGTH:
            raise InvalidInputError(f"query parameter {name!r} is over {MAX_VALUE_LENGTH} chars")
        if param.kind == "list":
            listed = values.setdefault(name, [])
            assert isinstance(listed, list)
            listed.append(raw)
            continue
        if name in values:
            raise InvalidInputError(f"query parameter {name!r} is given twice; give it once")
        values[name] = _convert(param, raw)
        if param.unsupported and values[name] is True:
            raise InvalidInputError(
                f"query parameter {name!r} is not supported: {param.unsupported};"
                " leave it out or set it to false"
            )
    for param in declared:
        if param.where == "header":
            raw_header = headers.get(param.name)
            if raw_header is not None:
                values[param.name] = _convert(param, raw_header)
        if param.required and param.name not in values:
            raise InvalidInputError(f"{param.where} parameter {param.name!r} is required")
    return Query(values)


def check_object_path(name: str, path: str) -> str:
    """Refuse '..' segments: a path that climbs out of its prefix is an attack, not a key."""
    if ".." in path.split("/"):
        raise InvalidInputError(f"{name} {path!r} has a '..' segment; object paths cannot climb")
    return path


def _convert(param: Param, raw: str) -> object:
    if param.kind in ("str", "path"):
        if "\0" in raw:
            raise InvalidInputError(f"parameter {param.name!r} contains NUL; remove it")
        if param.kind == "path":
            check_object_path(param.name, raw)
        if param.choices and raw not in param.choices:
            raise InvalidInputError(
                f"parameter {param.name!r} is {raw!r}; use one of {', '.join(param.choices)}"
            )
        return raw
    if param.kind == "bool":
        if raw not in _BOOLEANS:
            raise InvalidInputError(f"parameter {param.name!r} is {raw!r}; use true or false")
        return _BOOLEANS[raw]
    if not _INT.fullmatch(raw):
        raise InvalidInputError(f"parameter {param.name!r} is {raw!r}; use an integer")
    number = int(raw)
    if (param.minimum is not None and number < param.minimum) or (
        param.maximum is not None and number > param.maximum
    ):
        raise InvalidInputError(
            f"parameter {param.name!r} is {number}; use {param.minimum} to {param.maximum}"
        )
    return number
