"""Import sources, checked before anything is recorded: the canonical spelling of each
source (invariant 7), never in or around a repository's own namespace, and, for local
imports, inside the folders they may read.

A source outside a repository's namespace in every spelling is what keeps imported
files out of the deletion log, garbage collection and purges: kvlake never deletes
what it imported (kvlake/catalog/imports.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kvlake.blockstore import BlockStore, parse_address, parse_prefix, prefix_overlaps
from kvlake.catalog.import_listing import ImportSource
from kvlake.errors import InvalidInputError
from kvlake.graveler import Repository, check_path

LOCAL_SCHEME: Final = "local"


class ImportSources:
    """Checks import sources against a repository and the folders local imports may read."""

    def __init__(self, blockstore: BlockStore, folders: Sequence[str]) -> None:
        self._blockstore = blockstore
        self._folders = folders

    def canonical(self, repository: Repository, source: ImportSource) -> ImportSource:
        """The source with its folder in canonical form, once it passed every check.

        Invariant 7: the source is normalised before anything compares it, so no
        second spelling of the repository's own namespace (`s3:///lake/repo1/`,
        `local:////repo1`) passes for an external location; the entries then carry
        the canonical address, which is what every later check compares.
        """
        folder, _, rest = source.path.rpartition("/")
        if source.kind not in ("common_prefix", "object") or (source.kind == "object" and not rest):
            raise InvalidInputError(
                f"import path {source.path!r} of type {source.kind!r} is invalid; use type"
                " common_prefix with s3://bucket/prefix, or object with s3://bucket/key"
            )
        try:
            address, rest = parse_prefix(source.path, what="import path")
        except InvalidInputError as exc:
            raise InvalidInputError(f"import path {source.path!r} cannot be read: {exc}") from exc
        own = parse_address(repository.storage_namespace)
        if prefix_overlaps(address, rest, own):
            where = "is inside" if own.contains(address) else "overlaps"
            raise InvalidInputError(
                f"import source {source.path} {where} repository {repository.name}'s namespace"
                f" {own}, whose blobs kvlake deletes; import from outside it"
            )
        try:
            folder = self._blockstore.check_namespace(str(address))
        except InvalidInputError as exc:
            raise InvalidInputError(f"import path {source.path!r} cannot be read: {exc}") from exc
        if self._blockstore.scheme == LOCAL_SCHEME:
            self._check_local(source, folder, rest)
        if source.kind == "object":
            check_path(source.destination)
        return source._replace(path=f"{folder}/{rest}")

    def _check_local(self, source: ImportSource, folder: str, rest: str) -> None:
        """A local source lies in an import folder, and exists: a file, or a folder."""
        # Everything the source lists is in its folder: inside an import folder when that
        # folder is, segment-wise (`local://imports/a` as a name prefix in `local://imports`
        # lists `imports/ab` too, so the name never counts).
        address = parse_address(folder)
        if not any(parse_address(allowed).contains(address) for allowed in self._folders):
            allowed = ", ".join(self._folders)
            raise InvalidInputError(
                f"import path {source.path!r} is outside the folders local imports may read"
                f" ({allowed}); import from one of them, or add its folder to"
                " KVLAKE_IMPORTS_LOCAL_PREFIXES"
            )
        # The folder holding the named file or names (`dir/` for dir/, dir/na and dir/f),
        # reached without symbolic links: one could lead into a repository's namespace.
        parent = rest.rpartition("/")[0]
        exists = self._blockstore.folder_exists(folder, f"{parent}/" if parent else "")
        if exists and source.kind == "object":
            exists = self._blockstore.exists(folder, rest)
        if not exists:
            raise InvalidInputError(
                f"import path {source.path!r} does not exist; check the path (folders end in '/')"
            )


def destinations(sources: Sequence[ImportSource]) -> tuple[list[bytes], list[bytes]]:
    """The sources' destinations, as graveler's import checks take them: (prefixes, objects)."""
    prefixes = [s.destination.encode() for s in sources if s.kind == "common_prefix"]
    objects = [s.destination.encode() for s in sources if s.kind == "object"]
    return prefixes, objects


def check_outside_import_folders(namespace: str, folders: Sequence[str]) -> None:
    """Refuse a repository's namespace in or around a folder imports read: its garbage
    collection and purges would delete the imported files as the repository's own blobs.

    Raises:
        InvalidInputError: the namespace overlaps one of `folders`.
    """
    address = parse_address(namespace, what="storage namespace")
    for folder in folders:
        if address.overlaps(parse_address(folder)):
            raise InvalidInputError(
                f"storage namespace {namespace!r} overlaps {folder!r}, a folder local imports"
                " read (KVLAKE_IMPORTS_LOCAL_PREFIXES), whose files kvlake must never delete;"
                " choose a namespace outside it"
            )
