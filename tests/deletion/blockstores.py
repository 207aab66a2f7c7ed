"""A blockstore that fails (or runs code at) the calls a test chooses: a real BlockStore subclass.

`FaultyBlockStore` wraps any adapter the way `FaultyStore` wraps a KV store:
every adapter call is logged as a `BlobCall`, and `fail` decides, per call,
whether it raises before it runs, after it took effect, or not at all.
`delete_many` is one logged call (with its key count) followed by one call
per key, so tests can check both batching and per-key failures. The rest
(copies, folder listings, presigned URLs, multipart uploads) is one logged
call each, passed to the inner adapter, so a wrapped S3 still copies inside the
bucket and presigns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, Literal, TypeVar, cast

from kvlake.blockstore import BlobInfo, BlockStore, ChunkReader, UploadedPart
from kvlake.errors import UnavailableError


@dataclass(frozen=True, slots=True)
class BlobCall:
    """One adapter call: its 0-based index, operation, namespace, key (or key count)."""

    index: int
    op: str
    namespace: str
    key: str = ""
    size: int = 0


_T = TypeVar("_T")

When = Literal["before", "after"]
Decide = Callable[[BlobCall], When | None]


class FaultyBlockStore(BlockStore):
    """Wraps `inner`; `fail(call)` returns "before", "after" or None for each call."""

    def __init__(self, inner: BlockStore, fail: Decide | None = None) -> None:
        self.inner = inner
        self.scheme = inner.scheme
        self.presigns = inner.presigns
        self.fail: Decide = fail or (lambda call: None)
        self.calls: list[BlobCall] = []
        self._lock = threading.Lock()

    def _run(self, op: str, namespace: str, key: str, action: Callable[[], _T]) -> _T:
        with self._lock:
            call = BlobCall(len(self.calls), op, namespace, key)
            self.calls.append(call)
        when = self.fail(call)
        if when == "before":
            raise UnavailableError(f"injected fault: blockstore {op} {key!r} failed before it ran")
        result = action()
        if when == "after":
            raise UnavailableError(f"injected fault: blockstore {op} {key!r} failed after it ran")
        return result

    def deletes(self) -> list[BlobCall]:
        """The `delete_many` calls seen, each with its key count."""
        return [call for call in self.calls if call.op == "delete_many"]

    def check_namespace(self, namespace: str) -> str:
        return self.inner.check_namespace(namespace)

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        wanted = list(keys)
        with self._lock:
            self.calls.append(BlobCall(len(self.calls), "delete_many", namespace, "", len(wanted)))
        return super().delete_many(namespace, wanted)

    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int:
        data = b"".join(chunks)
        return self._run("put", namespace, key, lambda: self.inner.put(namespace, key, data))

    def _open_reader(self, namespace: str, key: str, start: int, end: int | None) -> BinaryIO:
        return self._run(
            "open_reader",
            namespace,
            key,
            lambda: self.inner.open_reader(namespace, key, start=start, end=end),
        )

    def _size(self, namespace: str, key: str) -> int:
        return self._run("size", namespace, key, lambda: self.inner.size(namespace, key))

    def _delete(self, namespace: str, key: str) -> None:
        self._run("delete", namespace, key, lambda: self.inner.delete(namespace, key))

    def _list_keys(self, namespace: str, prefix: str) -> Iterator[str]:
        self._run("list_keys", namespace, prefix, lambda: None)
        yield from self.inner.list_keys(namespace, prefix)

    def _list_blobs(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        self._run("list_blobs", namespace, prefix, lambda: None)
        yield from self.inner.list_blobs(namespace, (prefix,))

    def _list_folders(self, namespace: str, prefix: str) -> Iterator[str]:
        self._run("list_folders", namespace, prefix, lambda: None)
        yield from self.inner.list_folders(namespace, prefix)

    def _list_level(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        self._run("list_level", namespace, prefix, lambda: None)
        yield from self.inner.list_level(namespace, prefix)

    def _folder_exists(self, namespace: str, prefix: str) -> bool:
        return self._run(
            "folder_exists", namespace, prefix, lambda: self.inner.folder_exists(namespace, prefix)
        )

    def _copy(self, namespace: str, source: str, destination: str, if_match: str) -> int:
        return self._run(
            "copy",
            namespace,
            destination,
            lambda: self.inner.copy(namespace, source, destination, if_match=if_match),
        )

    def _presign_read(self, namespace: str, key: str, expires: int) -> str:
        return self._run(
            "presign_read",
            namespace,
            key,
            lambda: self.inner.presign_read(namespace, key, expires=expires),
        )

    def _presign_write(self, namespace: str, key: str, expires: int) -> str:
        return self._run(
            "presign_write",
            namespace,
            key,
            lambda: self.inner.presign_write(namespace, key, expires=expires),
        )

    def _start_upload(self, namespace: str, key: str) -> str:
        return self._run(
            "start_upload", namespace, key, lambda: self.inner.start_upload(namespace, key)
        )

    def _presign_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, expires: int
    ) -> str:
        return self._run(
            "presign_upload_part",
            namespace,
            key,
            lambda: self.inner.presign_upload_part(
                namespace, key, upload_id, part, expires=expires
            ),
        )

    def _upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, chunks: Iterator[bytes]
    ) -> str:
        return self._run(
            "upload_part",
            namespace,
            key,
            lambda: self.inner.upload_part(
                namespace, key, upload_id, part, cast(BinaryIO, ChunkReader(chunks))
            ),
        )

    def _copy_upload_part(
        self,
        namespace: str,
        key: str,
        upload_id: str,
        part: int,
        source: tuple[str, str],
        start: int,
        end: int,
    ) -> str:
        return self._run(
            "copy_upload_part",
            namespace,
            key,
            lambda: self.inner.copy_upload_part(
                namespace, key, upload_id, part, source=source, start=start, end=end
            ),
        )

    def _complete_upload(
        self, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        return self._run(
            "complete_upload",
            namespace,
            key,
            lambda: self.inner.complete_upload(namespace, key, upload_id, parts),
        )

    def _list_upload_parts(self, namespace: str, key: str, upload_id: str) -> list[UploadedPart]:
        return self._run(
            "list_upload_parts",
            namespace,
            key,
            lambda: self.inner.list_upload_parts(namespace, key, upload_id),
        )

    def _abort_uploads_to(self, namespace: str, key: str) -> int:
        return self._run(
            "abort_uploads_to",
            namespace,
            key,
            lambda: self.inner.abort_uploads_to(namespace, key),
        )

    def _abort_upload(self, namespace: str, key: str, upload_id: str) -> None:
        self._run(
            "abort_upload",
            namespace,
            key,
            lambda: self.inner.abort_upload(namespace, key, upload_id),
        )
