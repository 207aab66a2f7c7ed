"""Storage addresses in one canonical form, compared segment by segment.

A storage address (a namespace, an import source's folder, a blob's full URL)
can be spelled many ways that a blockstore reads as one place: `s3://b/p`,
`s3:///b/p`, `s3://b//p`, `s3://b/p/` and `s3://b/./p` are all bucket `b`,
prefix `p`; `local:///x`, `local://x`, `local://./x` and `local:////x` are all
the folder `x` below the blockstore root. Every check that asks "is this the
same place?" or "is this inside that?" (namespace ownership, import sources and
folders, purges, links, garbage collection) must get the answer the blockstore
would, or a second spelling walks around it. So this module owns the one
canonical form, the blockstores resolve namespaces through it, and the checks
compare `StorageAddress` values, never strings.

The canonical form is the scheme and the path's segments with empty and `.`
segments dropped; `..` is refused (a namespace never climbs out of the
blockstore root, so there is nothing consistent to resolve it to).
"""

from __future__ import annotations

from typing import NamedTuple

from kvlake.errors import InvalidInputError


class StorageAddress(NamedTuple):
    """A canonical storage address: its scheme and its path's segments (bucket first on S3)."""

    scheme: str
    segments: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.scheme}://{'/'.join(self.segments)}"

    @property
    def path(self) -> str:
        """The segments joined by `/`: what follows `scheme://` in the canonical spelling."""
        return "/".join(self.segments)

    def contains(self, other: StorageAddress) -> bool:
        """Whether `other` is this address or below it, segment-wise (`b/p` holds `b/p/x`,
        not `b/pq`)."""
        return self.scheme == other.scheme and other.segments[: len(self.segments)] == self.segments

    def overlaps(self, other: StorageAddress) -> bool:
        """Whether the two share any blob: one holds the other."""
        return self.contains(other) or other.contains(self)

    def key_in(self, namespace: StorageAddress) -> str:
        """This address's key inside `namespace` ("" when they are equal).

        Raises:
            InvalidInputError: the address is not inside the namespace.
        """
        if not namespace.contains(self):
            raise InvalidInputError(
                f"storage address {str(self)!r} is not inside {str(namespace)!r}"
            )
        return "/".join(self.segments[len(namespace.segments) :])


def parse_address(text: str, *, what: str = "storage address") -> StorageAddress:
    """Parse `scheme://path` into its canonical form; `what` names it in errors.

    Raises:
        InvalidInputError: no `scheme://`, no path left once resolved, NUL, or a
            `..` segment.
    """
    if not isinstance(text, str) or "://" not in text:
        raise InvalidInputError(
            f"{what} {text!r} is not a URL; write scheme://path, such as s3://lake/repo1"
        )
    scheme, _, path = text.partition("://")
    if not scheme or "/" in scheme:
        raise InvalidInputError(
            f"{what} {text!r} has no scheme; write scheme://path, such as s3://lake/repo1"
        )
    segments = tuple(s for s in path.split("/") if s not in ("", "."))
    if not segments or "\0" in path or ".." in segments:
        raise InvalidInputError(
            f"{what} {text!r} is invalid; use a path without NUL or '..' segments,"
            f" such as {scheme}://lake/repo1"
        )
    return StorageAddress(scheme, segments)


def canonical_address(text: str, *, what: str = "storage address") -> str:
    """The canonical spelling of `text`: `scheme://seg/seg`, no empty or `.` segments.

    Raises:
        InvalidInputError: as `parse_address`.
    """
    return str(parse_address(text, what=what))


def parse_prefix(text: str, *, what: str = "storage prefix") -> tuple[StorageAddress, str]:
    """Split `scheme://folder/name` into the folder's canonical address and the name prefix.

    An import source names everything in a folder whose name starts with its last
    part (`s3://b/dir/na`: `na...`; `s3://b/dir/`: everything), so only the folder
    is a place; the last part is kept as written (`""` for a trailing `/`).

    Raises:
        InvalidInputError: the folder is not an address (see `parse_address`).
    """
    folder, _, name = text.rpartition("/") if isinstance(text, str) else ("", "", "")
    if name == "..":
        raise InvalidInputError(f"{what} {text!r} ends in '..'; name the folder it means")
    return parse_address(folder, what=what), name


def canonical_prefix(text: str, *, what: str = "storage prefix") -> str:
    """`text` with its folder in canonical form: `s3:///b//dir/na` is `s3://b/dir/na`."""
    folder, name = parse_prefix(text, what=what)
    return f"{folder}/{name}"


def prefix_overlaps(folder: StorageAddress, name: str, other: StorageAddress) -> bool:
    """Whether the names starting with `name` in `folder` share any blob with `other`."""
    if other.contains(folder):
        return True
    if not folder.contains(other):
        return False  # different schemes, or apart
    return other.segments[len(folder.segments)].startswith(name)
