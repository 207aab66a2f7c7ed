"""The object-storage contract: immutable blobs addressed by namespace and key.

A storage namespace is a URL (`local://lake/repo1`, `mem://repo1`); the
adapter for its scheme stores blobs under it by key (`data/...`, `_lakefs/...`).
Blobs are written once and never modified in place, so readers need no locks;
deletion is idempotent ("not found" counts as deleted), which is what the
two-phase deletion protocol relies on.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import BinaryIO, Self

from kvlake.errors import BlobNotFoundError, InvalidInputError

READ_CHUNK = 1 << 20
"""Streams hand data over in pieces of this size."""


def check_key(key: str) -> str:
    """Refuse keys that are empty, absolute, contain NUL or climb out with `..`."""
    if not key or key.startswith("/") or "\0" in key or ".." in key.split("/"):
        raise InvalidInputError(
            f"blob key {key!r} is invalid; use a relative path without '..' segments or NUL"
        )
    return key


class BlockStore(ABC):
    """Blobs in storage namespaces of one URL scheme. Safe for many threads."""

    scheme: str
    """The namespace URL scheme this adapter serves, e.g. `local`."""

    @abstractmethod
    def check_namespace(self, namespace: str) -> str:
        """Return the namespace normalised (no trailing slash) if this adapter can serve it.

        Raises:
            InvalidInputError: wrong scheme, empty path, or a path escaping the root.
        """

    @abstractmethod
    def put(self, namespace: str, key: str, data: BinaryIO | bytes) -> int:
        """Store a blob, streaming `data` in chunks; return its size in bytes.

        The blob becomes visible whole or not at all (write to a temporary name,
        then rename), so a crashed upload never leaves a torn blob under `key`.
        """

    @abstractmethod
    def open_reader(self, namespace: str, key: str, *, start: int = 0, end: int | None = None) -> BinaryIO:
        """Open the blob for reading bytes [start, end) (end None: to the end). Close it.

        Raises:
            BlobNotFoundError: no blob under the key.
        """

    @abstractmethod
    def size(self, namespace: str, key: str) -> int:
        """Return the blob's size. Raises BlobNotFoundError when absent."""

    @abstractmethod
    def delete(self, namespace: str, key: str) -> None:
        """Delete the blob; a missing blob is not an error."""

    @abstractmethod
    def list_keys(self, namespace: str, prefix: str = "") -> Iterator[str]:
        """Iterate the keys under the namespace that start with `prefix`, ascending."""

    def get(self, namespace: str, key: str) -> bytes:
        """Read a whole blob into memory: for small metadata files only."""
        with self.open_reader(namespace, key) as reader:
            return reader.read()

    def exists(self, namespace: str, key: str) -> bool:
        """Whether a blob is stored under `key`."""
        try:
            self.size(namespace, key)
        except BlobNotFoundError:
            return False
        return True

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        """Delete blobs (up to 1000 a call where the backend batches); return the failures by key."""
        failures: dict[str, Exception] = {}
        for key in keys:
            try:
                self.delete(namespace, key)
            except Exception as exc:  # noqa: BLE001 - reported to the caller per key
                failures[key] = exc
        return failures

    def close(self) -> None:  # noqa: B027 - adapters without resources need not override
        """Release clients and connections."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
