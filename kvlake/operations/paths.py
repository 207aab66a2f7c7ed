"""`lakefs://<repository>/<branch>/<prefix>` paths, as a bulk delete and the Spark source
take them: `kvlake.uri.parse_uri`'s URIs whose repository (and, for a bulk delete, branch)
names are checked too.

Parsed once, before anything is read or written, so a malformed path is a
clear error that changes nothing (invariant 6).
"""

from __future__ import annotations

from typing import NamedTuple

from kvlake.graveler import check_branch_name, check_repository_name
from kvlake.uri import SCHEME, parse_uri


class BranchPath(NamedTuple):
    """A repository, a branch (any ref, from `parse_ref_path`), and an object path prefix on
    it ("" for the whole branch)."""

    repository: str
    branch: str
    prefix: str

    def __str__(self) -> str:
        return f"{SCHEME}{self.repository}/{self.branch}/{self.prefix}"


def parse_ref_path(text: str) -> BranchPath:
    """Parse `lakefs://repo/ref[/prefix]`, where ref is any ref expression (the Spark source's).

    Raises:
        InvalidInputError: as `kvlake.uri.parse_uri`, or a bad repository name.
    """
    uri = parse_uri(text, path=True)
    check_repository_name(uri.repository)
    return BranchPath(uri.repository, uri.ref, uri.path)


def parse_branch_path(text: str) -> BranchPath:
    """Parse `lakefs://repo/branch[/prefix]`: `parse_ref_path` whose ref must be a branch name.

    Raises:
        InvalidInputError: as `parse_ref_path`, or a bad branch name.
    """
    path = parse_ref_path(text)
    check_branch_name(path.branch)
    return path
