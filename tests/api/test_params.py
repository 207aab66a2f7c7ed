"""Strict parsing of query parameters, headers and Range values."""

from __future__ import annotations

import pytest

from kvlake.api import params
from kvlake.api.ranges import ByteRange, parse_range
from kvlake.errors import InvalidInputError

DECLARED = (*params.PAGE, params.flag("show"), params.PATH, params.header("Range"))


def test_values_are_converted_and_defaults_apply() -> None:
    query = params.parse(
        DECLARED, [("amount", "5"), ("show", "True"), ("path", "a/b")], {"Range": "bytes=0-1"}
    )
    assert query.amount() == 5 and query.flag("show") and query.text("path") == "a/b"
    assert query.text("Range") == "bytes=0-1" and not query.has("after")
    assert params.parse(DECLARED, [("path", "p")], {}).amount() == 100


@pytest.mark.parametrize(
    "pairs",
    [
        [("path", "p"), ("nope", "1")],
        [("path", "p"), ("amount", "1001")],
        [("path", "p"), ("amount", "1.5")],
        [("path", "p"), ("amount", "99999999999999999999999")],
        [("path", "p"), ("show", "maybe")],
        [("path", "p"), ("after", "a"), ("after", "b")],
        [("path", "../etc/passwd")],
        [("path", "a\0b")],
        [],
    ],
)
def test_bad_query_strings_are_refused(pairs: list[tuple[str, str]]) -> None:
    with pytest.raises(InvalidInputError):
        params.parse(DECLARED, pairs, {})


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-3", ByteRange(0, 4, 10)),
        ("bytes=5-", ByteRange(5, 10, 10)),
        ("bytes=-3", ByteRange(7, 10, 10)),
        ("bytes=-30", ByteRange(0, 10, 10)),
        ("bytes=8-99", ByteRange(8, 10, 10)),
        ("bytes=10-", ByteRange(0, 0, 10, satisfiable=False)),
    ],
)
def test_ranges(header: str, expected: ByteRange) -> None:
    assert parse_range(header, 10) == expected


def test_unsatisfiable_range_names_the_size() -> None:
    assert parse_range("bytes=0-", 0).content_range() == "bytes */0"
    assert parse_range("bytes=2-4", 10).content_range() == "bytes 2-4/10"


def test_an_unsupported_flag_is_refused_only_when_true_naming_it() -> None:
    declared = (params.unsupported("presign", "no presigned URLs here"),)
    assert not params.parse(declared, [("presign", "false")], {}).flag("presign")
    with pytest.raises(InvalidInputError, match="'presign' is not supported: no presigned URLs"):
        params.parse(declared, [("presign", "true")], {})


def test_a_choice_takes_only_its_values_and_the_document_lists_them() -> None:
    """lakeFS's enums (diffRefs' type, listPullRequests' status) are checked and declared."""
    from kvlake.api.openapi import _param_schema

    declared = (params.choice("type", ("two_dot", "three_dot")),)
    assert params.parse(declared, [("type", "two_dot")], {}).text("type") == "two_dot"
    with pytest.raises(InvalidInputError, match="'type' is 'one_dot'; use one of two_dot, three"):
        params.parse(declared, [("type", "one_dot")], {})
    assert _param_schema(declared[0]) == {"type": "string", "enum": ["two_dot", "three_dot"]}
