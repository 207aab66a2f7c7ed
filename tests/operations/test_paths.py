"""`lakefs://` URIs: one parser (kvlake/uri.py) for the API, the CLI, operations and Spark."""

from __future__ import annotations

from typing import Literal

import pytest

from kvlake.errors import InvalidInputError
from kvlake.operations import parse_branch_path, parse_ref_path
from kvlake.uri import LakeUri, parse_uri


def test_a_uri_parses_into_its_parts_and_prints_back() -> None:
    assert parse_uri("lakefs://repo1/main~2/a/b/", path=True) == LakeUri("repo1", "main~2", "a/b/")
    assert parse_uri("lakefs://repo1/main") == LakeUri("repo1", "main", "")
    assert parse_uri("lakefs://repo1", need="repository") == LakeUri("repo1", "", "")
    assert str(parse_uri("lakefs://repo1/main/a/b", path=True)) == "lakefs://repo1/main/a/b"
    assert str(parse_uri("lakefs://repo1", need="repository")) == "lakefs://repo1"


@pytest.mark.parametrize(
    ("text", "need", "path", "says"),
    [
        ("s3://bucket/key", "ref", True, "is not a lakefs:// URI; write it as lakefs://"),
        ("lakefs://repo1", "ref", True, "names no branch, tag or commit"),
        ("lakefs:///main/a", "ref", True, "names no repository"),
        ("lakefs://", "repository", False, "names no repository"),
        ("lakefs://repo1/main", "repository", False, "has more than a repository"),
        ("lakefs://repo1/main/a", "ref", False, "has a path part"),
        ("lakefs://repo1/main/a\0b", "ref", True, "NUL character"),
    ],
)
def test_a_bad_uri_says_what_is_wrong_and_what_to_write(
    text: str, need: Literal["repository", "ref"], path: bool, says: str
) -> None:
    with pytest.raises(InvalidInputError, match=says) as refused:
        parse_uri(text, need=need, path=path)
    assert "lakefs://<repository>" in str(refused.value) or "NUL" in says


def test_operations_paths_are_the_same_uris_with_their_names_checked() -> None:
    assert parse_ref_path("lakefs://repo1/main~2/a/") == ("repo1", "main~2", "a/")
    assert str(parse_branch_path("lakefs://repo1/main")) == "lakefs://repo1/main/"
    for text in ("s3://bucket/key", "lakefs://repo1", "lakefs://repo1/main/a\0b"):
        with pytest.raises(InvalidInputError) as ours:
            parse_ref_path(text)
        with pytest.raises(InvalidInputError) as theirs:
            parse_uri(text, path=True)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(InvalidInputError, match="repository name"):
        parse_ref_path("lakefs://Not_A_Name/main")
    with pytest.raises(InvalidInputError, match="branch"):
        parse_branch_path("lakefs://repo1/main~2/a")
