"""`lakefs://repository/ref/path` URIs, as lakectl writes them: parsed here and only here.

The API (a bulk delete's path), the CLI (every command's URIs), the operations
layer and the Spark source all read them with `parse_uri`, so a URI means the same
everywhere and a malformed one gets the same `InvalidInputError`, naming the URI
and the form expected, before anything is read or written (invariant 6). A shared
leaf like ids.py: it imports errors only, so the CLI loads no lake to parse a URI.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from kvlake.errors import InvalidInputError

SCHEME: Final = "lakefs://"
_NEEDS: Final = {
    "repository": "a repository",
    "ref": "a repository and a branch (or another ref)",
}
_FORMS: Final = {"repository": "lakefs://<repository>", "ref": "lakefs://<repository>/<ref>"}


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


def parse_uri(
    text: str, *, need: Literal["repository", "ref"] = "ref", path: bool = False
) -> LakeUri:
    """Parse `text`; `need` says what must be present (a repository, or a ref in one).

    `path=False` refuses a path part. The ref is any ref expression (`main~2`); names
    are checked by whoever resolves them.

    Raises:
        InvalidInputError: another scheme, a missing repository or ref, more than
            `need` where a repository alone is wanted, a path part not taken, or a NUL.
    """
    form = _FORMS[need] + ("[/<path>]" if path else "")
    if not text.startswith(SCHEME):
        raise InvalidInputError(f"{text!r} is not a lakefs:// URI; write it as {form}")
    repository, _, after = text[len(SCHEME) :].partition("/")
    ref, _, object_path = after.partition("/")
    if need == "repository" and repository and (ref or object_path):
        raise InvalidInputError(f"{text!r} has more than a repository; write it as {form}")
    if not repository or (need == "ref" and not ref):
        missing = "repository" if not repository else "branch, tag or commit"
        raise InvalidInputError(f"{text!r} names no {missing}; it needs {_NEEDS[need]}: {form}")
    if object_path and not path:
        raise InvalidInputError(f"{text!r} has a path part, which is not taken here: {form}")
    if "\0" in text:
        raise InvalidInputError(f"{text!r} holds a NUL character; remove it")
    return LakeUri(repository, ref, object_path)
