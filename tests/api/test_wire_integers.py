"""Every integer field of every request body is bounded to what kvlake stores (issue 23).

A bulk delete's `min_size` of 2**64 reached the msgpack encoder of the operation
record and answered 500; every integer of a request is now bounded to a 64-bit
signed integer (or tighter) by its wire type. The cases are generated from the
wire models, so a field added without a bound fails here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import msgspec
import pytest

import kvlake.api.wire
from kvlake.api.wire.common import INT64_MAX, Request


def _requests() -> Iterator[type[Request]]:
    for module in pkgutil.iter_modules(kvlake.api.wire.__path__):
        importlib.import_module(f"kvlake.api.wire.{module.name}")
    pending = list(Request.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        yield cls


def _integers(kind: msgspec.inspect.Type) -> Iterator[msgspec.inspect.IntType]:
    if isinstance(kind, msgspec.inspect.IntType):
        yield kind
    elif isinstance(kind, msgspec.inspect.UnionType):
        for member in kind.types:
            yield from _integers(member)
    elif isinstance(kind, (msgspec.inspect.ListType, msgspec.inspect.SetType)):
        yield from _integers(kind.item_type)
    elif isinstance(kind, msgspec.inspect.DictType):
        yield from _integers(kind.value_type)


def _fields() -> list[tuple[type[Request], str, msgspec.inspect.IntType]]:
    found: list[tuple[type[Request], str, msgspec.inspect.IntType]] = []
    for cls in _requests():
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        for field in info.fields:
            found.extend((cls, field.encode_name, kind) for kind in _integers(field.type))
    return sorted(found, key=lambda item: (item[0].__name__, item[1]))


FIELDS = _fields()


def test_the_generated_cases_find_the_known_integer_fields() -> None:
    names = {f"{cls.__name__}.{name}" for cls, name, _ in FIELDS}
    assert {"BulkDeleteFilters.min_size", "ObjectStageCreation.size_bytes"} <= names


@pytest.mark.parametrize(
    ("cls", "name", "kind"), FIELDS, ids=[f"{c.__name__}.{n}" for c, n, _ in FIELDS]
)
def test_every_integer_field_is_bounded_to_64_bits(
    cls: type[Request], name: str, kind: msgspec.inspect.IntType
) -> None:
    low = kind.ge if kind.ge is not None else None if kind.gt is None else kind.gt + 1
    high = kind.le if kind.le is not None else None if kind.lt is None else kind.lt - 1
    assert low is not None and low >= -INT64_MAX - 1, f"{cls.__name__}.{name} has no lower bound"
    assert high is not None and high <= INT64_MAX, f"{cls.__name__}.{name} has no upper bound"
    for value in (2**64, INT64_MAX + 1, -(2**64)):
        with pytest.raises(msgspec.ValidationError, match=rf"\$\.{name}\b"):
            msgspec.json.decode(msgspec.json.encode({name: value}), type=cls)
