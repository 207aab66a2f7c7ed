"""`lakefs://<repository>/<ref>[/<prefix>]`: the addresses pipelines read and delete under."""

from __future__ import annotations

from typing import NamedTuple

from kvlake.errors import InvalidInputError

SCHEME = "lakefs://"


class LakeUri(NamedTuple):
    repository: str
    ref: str
    prefix: str


def parse_lake_uri(uri: str) -> LakeUri:
    """Split a lakeFS URI. Raises InvalidInputError saying what shape is expected."""
    if not uri.startswith(SCHEME):
        raise InvalidInputError(
            f"{uri!r} is not a lakeFS URI; write lakefs://<repository>/<ref>[/<prefix>]"
        )
    repository, _, rest = uri[len(SCHEME) :].partition("/")
    ref, _, prefix = rest.partition("/")
    if not repository or not ref:
        raise InvalidInputError(
            f"{uri!r} names no {'repository' if not repository else 'ref'}; write"
            " lakefs://<repository>/<ref>[/<prefix>], e.g. lakefs://lake/main/tables/"
        )
    return LakeUri(repository, ref, prefix)
