"""Repository metadata: lakeFS's free-form string pairs on a repository.

One record under `settings/repository_metadata` in the repository's instance
partition, edited by compare-and-swap, so racing edits of different keys both
land. Setting adds or replaces the given keys and keeps the others; deleting
removes the given keys and ignores the absent ones (lakeFS's semantics). A new
repository instance starts with none: metadata dies with its repository.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from kvlake.errors import InvalidInputError
from kvlake.graveler import keys
from kvlake.graveler.records import (
    Repository,
    RepositoryMetadata,
    decode_repository_metadata,
    encode,
)
from kvlake.graveler.refs.store import partition_of
from kvlake.kv import Store, get_or_none, update

SETTING: Final = "repository_metadata"
MAX_KEY: Final = 1024
MAX_BYTES: Final = 256 * 1024
"""The stored record's size limit: metadata is for labels, not for data."""

_Change = Callable[[dict[str, str]], dict[str, str]]


class RepositoryMetadataSettings:
    """Reads and edits repositories' metadata. Thread-safe."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, repository: Repository) -> dict[str, str]:
        """The metadata (empty when none was set)."""
        return dict(self._load(repository).metadata)

    def set(self, repository: Repository, metadata: Mapping[str, str]) -> None:
        """Add or replace these keys; the others stay.

        Raises:
            InvalidInputError: an empty or overlong key, or metadata over MAX_BYTES in
                all; nothing was changed.
        """
        for key in metadata:
            if not key or len(key) > MAX_KEY:
                raise InvalidInputError(
                    f"repository metadata key {key[:40]!r} is empty or over {MAX_KEY} characters;"
                    " use a shorter key"
                )
        self._update(repository, lambda current: {**current, **metadata})

    def delete(self, repository: Repository, names: Iterable[str]) -> None:
        """Remove these keys; absent ones are ignored."""
        gone = set(names)

        def without(current: dict[str, str]) -> dict[str, str]:
            return {key: value for key, value in current.items() if key not in gone}

        self._update(repository, without)

    def _load(self, repository: Repository) -> RepositoryMetadata:
        loaded = get_or_none(self._store, partition_of(repository), keys.setting_key(SETTING))
        return RepositoryMetadata() if loaded is None else decode_repository_metadata(loaded[0])

    def _update(self, repository: Repository, change: _Change) -> None:
        def edit(raw: bytes | None) -> bytes | None:
            # Run again on another edit's metadata when it landed first.
            current = RepositoryMetadata() if raw is None else decode_repository_metadata(raw)
            updated = change(dict(current.metadata))
            if updated == current.metadata:
                return None
            edited = encode(RepositoryMetadata(metadata=updated))
            if len(edited) > MAX_BYTES:
                raise InvalidInputError(
                    f"repository {repository.name!r}'s metadata would take {len(edited)} bytes,"
                    f" over {MAX_BYTES}; keep metadata to short labels, or delete some keys first"
                )
            return edited

        what = f"editing the metadata of repository {repository.name!r}"
        update(self._store, partition_of(repository), keys.setting_key(SETTING), edit, what=what)
