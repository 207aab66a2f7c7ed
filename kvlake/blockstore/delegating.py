"""A blockstore that passes every adapter call to another, through one hook a subclass overrides.

`DelegatingBlockStore` wraps any adapter: each primitive goes to the inner adapter's
public method inside `_call(op, namespace, key, action)`, and each listing inside
`_listing(op, namespace, prefix, make)`. The server's `MeteredBlockStore` times calls
there; the tests' fault injector fails them there. What the inner adapter does well
stays its own: S3 keeps its ETags, conditional reads, batched `delete_many`, copies
inside the bucket and presigned URLs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import BinaryIO, TypeVar, cast

from kvlake.blockstore.chunks import ChunkReader
from kvlake.blockstore.listing import BlobInfo
from kvlake.blockstore.store import BlockStore
from kvlake.blockstore.terms import BlobHead, PartSource, UploadedPart

_T = TypeVar("_T")


class DelegatingBlockStore(BlockStore):
    """Every call of `inner`, through `_call` and `_listing`; `close()` closes `inner`."""

    def __init__(self, inner: BlockStore) -> None:
        self.inner = inner
        self.scheme = inner.scheme
        self.presigns = inner.presigns

    def _call(self, op: str, namespace: str, key: str, action: Callable[[], _T]) -> _T:
        """Run one adapter call (`key` is the key, prefix or key count it concerns)."""
        return action()

    def _listing(
        self, op: str, namespace: str, prefix: str, make: Callable[[], Iterator[_T]]
    ) -> Iterator[_T]:
        """Yield one listing's items."""
        yield from make()

    def check_namespace(self, namespace: str) -> str:
        return self.inner.check_namespace(namespace)

    def check_put_namespace(self, namespace: str) -> str:
        # The inner put checks the namespace itself (local: one path resolution with the
        # key's); checking it fully here too resolved a local namespace twice per put.
        return self.inner.check_put_namespace(namespace)

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        wanted = list(keys)
        return self._call(
            "delete_many",
            namespace,
            str(len(wanted)),
            lambda: self.inner.delete_many(namespace, wanted),
        )

    def close(self) -> None:
        self.inner.close()

    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int:
        reader = cast(BinaryIO, ChunkReader(chunks))
        return self._call("put", namespace, key, lambda: self.inner.put(namespace, key, reader))

    def _open_reader(self, namespace: str, key: str, start: int, end: int | None) -> BinaryIO:
        return self._call(
            "open_reader",
            namespace,
            key,
            lambda: self.inner.open_reader(namespace, key, start=start, end=end),
        )

    def _open_matching(
        self, namespace: str, key: str, start: int, end: int | None, if_match: str
    ) -> BinaryIO:
        return self._call(
            "open_reader",
            namespace,
            key,
            lambda: self.inner.open_reader(namespace, key, start=start, end=end, if_match=if_match),
        )

    def _head(self, namespace: str, key: str) -> BlobHead:
        return self._call("head", namespace, key, lambda: self.inner.head(namespace, key))

    def _size(self, namespace: str, key: str) -> int:
        return self._call("size", namespace, key, lambda: self.inner.size(namespace, key))

    def _delete(self, namespace: str, key: str) -> None:
        self._call("delete", namespace, key, lambda: self.inner.delete(namespace, key))

    def _list_keys(self, namespace: str, prefix: str) -> Iterator[str]:
        return self._listing(
            "list_keys", namespace, prefix, lambda: self.inner.list_keys(namespace, prefix)
        )

    def _list_blobs(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        return self._listing(
            "list_blobs", namespace, prefix, lambda: self.inner.list_blobs(namespace, (prefix,))
        )

    def _list_folders(self, namespace: str, prefix: str) -> Iterator[str]:
        return self._listing(
            "list_folders", namespace, prefix, lambda: self.inner.list_folders(namespace, prefix)
        )

    def _list_level(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        return self._listing(
            "list_level", namespace, prefix, lambda: self.inner.list_level(namespace, prefix)
        )

    def _folder_exists(self, namespace: str, prefix: str) -> bool:
        return self._call(
            "folder_exists", namespace, prefix, lambda: self.inner.folder_exists(namespace, prefix)
        )

    def _copy(self, namespace: str, source: str, destination: str, if_match: str) -> int:
        return self._call(
            "copy",
            namespace,
            destination,
            lambda: self.inner.copy(namespace, source, destination, if_match=if_match),
        )

    def _presign_read(self, namespace: str, key: str, expires: int) -> str:
        return self._call(
            "presign_read",
            namespace,
            key,
            lambda: self.inner.presign_read(namespace, key, expires=expires),
        )

    def _presign_write(self, namespace: str, key: str, expires: int) -> str:
        return self._call(
            "presign_write",
            namespace,
            key,
            lambda: self.inner.presign_write(namespace, key, expires=expires),
        )

    def _start_upload(self, namespace: str, key: str) -> str:
        return self._call(
            "start_upload", namespace, key, lambda: self.inner.start_upload(namespace, key)
        )

    def _presign_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, expires: int
    ) -> str:
        return self._call(
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
        reader = cast(BinaryIO, ChunkReader(chunks))
        return self._call(
            "upload_part",
            namespace,
            key,
            lambda: self.inner.upload_part(namespace, key, upload_id, part, reader),
        )

    def _copy_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, source: PartSource
    ) -> str:
        origin, start, end = (source.namespace, source.key), source.start, source.end
        return self._call(
            "copy_upload_part",
            namespace,
            key,
            lambda: self.inner.copy_upload_part(
                namespace, key, upload_id, part, source=origin, start=start, end=end
            ),
        )

    def _complete_upload(
        self, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        return self._call(
            "complete_upload",
            namespace,
            key,
            lambda: self.inner.complete_upload(namespace, key, upload_id, parts),
        )

    def _list_upload_parts(self, namespace: str, key: str, upload_id: str) -> list[UploadedPart]:
        return self._call(
            "list_upload_parts",
            namespace,
            key,
            lambda: self.inner.list_upload_parts(namespace, key, upload_id),
        )

    def _abort_upload(self, namespace: str, key: str, upload_id: str) -> None:
        self._call(
            "abort_upload",
            namespace,
            key,
            lambda: self.inner.abort_upload(namespace, key, upload_id),
        )

    def _abort_uploads_to(self, namespace: str, key: str) -> int:
        return self._call(
            "abort_uploads_to", namespace, key, lambda: self.inner.abort_uploads_to(namespace, key)
        )
