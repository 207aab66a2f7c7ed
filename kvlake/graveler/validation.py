"""Checks on names and paths, done before anything is written (invariant 6).

The rules follow lakeFS so that names valid there are valid here.
"""

from __future__ import annotations

import re

from kvlake.errors import InvalidInputError

MAX_PATH_BYTES = 1024
_REPOSITORY = re.compile(r"[a-z0-9][a-z0-9-]{2,62}")
_BRANCH = re.compile(r"\w[-\w]*", re.ASCII)
_TAG = re.compile(r"\w[-\w.]*", re.ASCII)
_COMMIT_ID = re.compile(r"[0-9a-f]{64}")


def check_repository_name(name: str) -> str:
    if not isinstance(name, str) or not _REPOSITORY.fullmatch(name):
        raise InvalidInputError(
            f"repository name {name!r} is invalid; use 3-63 lowercase letters, digits and '-', "
            "starting with a letter or digit"
        )
    return name


def is_branch_name(name: str) -> bool:
    return isinstance(name, str) and len(name) <= 256 and bool(_BRANCH.fullmatch(name))


def is_tag_name(name: str) -> bool:
    return isinstance(name, str) and len(name) <= 256 and bool(_TAG.fullmatch(name))


def check_branch_name(name: str) -> str:
    if not is_branch_name(name):
        raise InvalidInputError(
            f"branch name {name!r} is invalid; use letters, digits, '_' and '-', "
            "starting with a letter, digit or '_' (at most 256 characters)"
        )
    return name


def check_tag_name(name: str) -> str:
    if not is_tag_name(name):
        raise InvalidInputError(
            f"tag name {name!r} is invalid; use letters, digits, '_', '-' and '.', "
            "starting with a letter, digit or '_' (at most 256 characters)"
        )
    return name


def is_commit_id(text: str) -> bool:
    return bool(_COMMIT_ID.fullmatch(text))


def check_path(path: str) -> bytes:
    """Return the path as the KV key it is stored under."""
    if not isinstance(path, str) or not path:
        raise InvalidInputError("object path is empty; give the path of the object")
    if "\0" in path:
        raise InvalidInputError(f"object path {path!r} contains NUL; remove it")
    encoded = path.encode()
    if len(encoded) > MAX_PATH_BYTES:
        raise InvalidInputError(
            f"object path is {len(encoded)} bytes long; use at most {MAX_PATH_BYTES} bytes"
        )
    return encoded
