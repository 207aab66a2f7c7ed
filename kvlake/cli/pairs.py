"""`KEY=VALUE` options as users type them (`--meta team=a`, `--metadata color=red`).

One parser for every command that takes such pairs, so a malformed one always gets the
same one-line error naming the option and an example (exit 2), never a traceback.
"""

from __future__ import annotations

from kvlake.errors import InvalidInputError


def parse_pairs(values: tuple[str, ...], *, option: str) -> dict[str, str]:
    """The pairs as a mapping (a later key wins).

    Raises:
        InvalidInputError: a value without `=` or with an empty key.
    """
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key:
            raise InvalidInputError(
                f"{option} {value!r} is not KEY=VALUE; write e.g. {option} team=a"
            )
        pairs[key] = wanted
    return pairs
