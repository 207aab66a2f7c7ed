"""`lakefs://repository/ref/path` URIs, as lakectl writes them, parsed in one place.

A malformed URI is an `InvalidInputError` (exit 2) naming the URI and the form the
command expects, before anything is sent to the server.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from kvlake.errors import InvalidInputError

SCHEME: Final = "lakefs://"


class LakeUri(NamedTuple):
    """A repository, optionally a ref in it, optionally a path below the ref."""

    repository: str
    ref: str
    path: str

    def __str__(self) -> str:
        text = f"{SCHEME}{self.repository}"
        if self.ref:
            text += f"/{self.ref}"
            if self.path:
                text += f"/{self.path}"
        return text


def parse_uri(text: str, *, need: str = "ref", path: bool = False) -> LakeUri:
    """Parse `text`; `need` is "repository" or "ref" (what must be present).

    `path=False` refuses a path part. Raises InvalidInputError naming the expected form.
    """
    form = {
        "repository": "lakefs://<repository>",
        "ref": "lakefs://<repository>/<ref>",
    }[need] + ("[/<path>]" if path else "")
    if not text.startswith(SCHEME):
        raise InvalidInputError(f"{text!r} is not a lakefs:// URI; write it as {form}")
    rest = text[len(SCHEME) :]
    repository, _, after = rest.partition("/")
    ref, _, object_path = after.partition("/")
    if not repository:
        raise InvalidInputError(f"{text!r} names no repository; write it as {form}")
    if need == "repository" and (ref or object_path):
        raise InvalidInputError(f"{text!r} has more than a repository; write it as {form}")
    if need == "ref" and not ref:
        raise InvalidInputError(f"{text!r} names no branch, tag or commit; write it as {form}")
    if object_path and not path:
        raise InvalidInputError(f"{text!r} has a path part this command does not take: {form}")
    return LakeUri(repository, ref, object_path)
