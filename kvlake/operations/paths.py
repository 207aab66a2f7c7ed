"""`lakefs://<repository>/<branch>/<prefix>` paths, as a bulk delete and the CLI take them.

Parsed once, before anything is read or written, so a malformed path is a
clear error that changes nothing (invariant 6).
"""

from __future__ import annotations

from typing import NamedTuple

from kvlake.errors import InvalidInputError
from kvlake.graveler import check_branch_name, check_repository_name

SCHEME = "lakefs://"


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
        InvalidInputError: another scheme, a missing repository or ref, a bad
            repository name, or a NUL in the prefix.
    """
    example = "lakefs://my-repo/main/path/to/folder/"
    if not text.startswith(SCHEME):
        raise InvalidInputError(f"path {text!r} is not a lakefs:// URI; write it as {example}")
    repository, _, rest = text[len(SCHEME) :].partition("/")
    ref, _, prefix = rest.partition("/")
    if not repository or not ref:
        raise InvalidInputError(
            f"path {text!r} needs a repository and a branch (or another ref); write it as {example}"
        )
    check_repository_name(repository)
    if "\0" in prefix:
        raise InvalidInputError(f"path {text!r} holds a NUL character; remove it")
    return BranchPath(repository, ref, prefix)


def parse_branch_path(text: str) -> BranchPath:
    """Parse `lakefs://repo/branch[/prefix]`: `parse_ref_path` whose ref must be a branch name.

    Raises:
        InvalidInputError: as `parse_ref_path`, or a bad branch name.
    """
    path = parse_ref_path(text)
    check_branch_name(path.branch)
    return path
