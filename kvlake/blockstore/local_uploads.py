"""Multipart uploads on local storage, for LocalBlockStore: parts as files, joined on completion.

An upload is a folder `_lakefs/uploads/<id>/` in the namespace (kvlake's own
files, never linked or listed as data), holding the key it completes into and
one file per part named by its number and MD5. A part is written to a temporary
file and renamed, so a part sent again replaces the earlier one whole; naming
it by its MD5 makes the ETag check at completion a lookup. Completion streams
the parts, in order, through the store's atomic put (the blob appears whole or
not at all), then removes the folder; abort removes the folder. Every name in it
starts with the store's temporary prefix, so no listing shows a part.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, suppress
from typing import BinaryIO, Final, Protocol

from kvlake.blockstore.terms import (
    MIN_PART_BYTES,
    READ_CHUNK,
    PartSource,
    UploadedPart,
    multipart_etag,
)
from kvlake.errors import UploadRefusedError
from kvlake.permissions import create_private_file

TEMP_PREFIX: Final = ".kvlake-tmp-"
"""Uploads in progress are named so; listings hide them and keys may not end in one."""
UPLOADS_FOLDER: Final = "_lakefs/uploads"
"""Where a namespace's uploads in progress live: under graveler's internal folder."""
_UPLOAD_ID: Final = re.compile(r"[0-9a-f]{32}")
_KEY_FILE: Final = "key"
_PART_PREFIX: Final = "part-"


class _Local(Protocol):
    """What the mixin uses of LocalBlockStore."""

    def _namespace_dir(self, namespace: str) -> str: ...

    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int: ...

    def _open_reader(self, namespace: str, key: str, start: int, end: int | None) -> BinaryIO: ...

    def _make_folder(self, folder: str, namespace: str, key: str, what: str) -> None: ...

    def _write_temp(self, file: BinaryIO, chunks: Iterator[bytes], what: str) -> int: ...

    def _sync_folder(self, folder: str, what: str) -> None: ...

    def _os_errors(self, doing: str) -> AbstractContextManager[None]: ...

    def _upload_folder(self, namespace: str, key: str, upload_id: str) -> str: ...

    def _store_part(
        self, namespace: str, key: str, upload_id: str, part: int, chunks: Iterator[bytes]
    ) -> str: ...


def _no_upload(key: str, upload_id: str) -> UploadRefusedError:
    return UploadRefusedError(
        "NoSuchUpload",
        f"upload {upload_id!r} of {key!r} does not exist (completed or aborted already?);"
        " start a new upload",
    )


def _hashed(chunks: Iterator[bytes], update: Callable[[bytes], None]) -> Iterator[bytes]:
    for chunk in chunks:
        update(chunk)
        yield chunk


def _key_tag(key: str) -> str:
    """The first half of the ids of uploads to `key`: its hash, so its uploads are found
    by name (`_abort_uploads_to`) without reading every upload's key file."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _temp_name(name: str) -> str:
    return TEMP_PREFIX + name


def _read_file(path: str) -> Iterator[bytes]:
    with open(path, "rb") as file:
        while chunk := file.read(READ_CHUNK):
            yield chunk


class LocalUploads:
    """Implements BlockStore's multipart primitives for LocalBlockStore (a mixin)."""

    def _upload_folder(self: _Local, namespace: str, key: str, upload_id: str) -> str:
        """The upload's folder, after checking it exists and completes into `key`."""
        if not _UPLOAD_ID.fullmatch(upload_id):
            raise _no_upload(key, upload_id)
        folder = os.path.join(self._namespace_dir(namespace), UPLOADS_FOLDER, upload_id)
        try:
            with open(os.path.join(folder, _temp_name(_KEY_FILE)), encoding="utf-8") as f:
                recorded = f.read()
        except (FileNotFoundError, NotADirectoryError):
            raise _no_upload(key, upload_id) from None
        if recorded != key:  # S3's answer for another key's upload id
            raise _no_upload(key, upload_id)
        return folder

    def _start_upload(self: _Local, namespace: str, key: str) -> str:
        upload_id = _key_tag(key) + secrets.token_hex(8)  # found by its key's tag on abort
        folder = os.path.join(self._namespace_dir(namespace), UPLOADS_FOLDER, upload_id)
        what = f"upload {upload_id!r} of {key!r} in {namespace!r}"
        self._make_folder(folder, namespace, f"{UPLOADS_FOLDER}/{upload_id}/k", what)
        temp = os.path.join(folder, _temp_name(_KEY_FILE + "-" + secrets.token_hex(8)))
        with self._os_errors(f"create {what}"):
            file = os.fdopen(create_private_file(temp), "wb")
        self._write_temp(file, iter([key.encode()]), what)
        with self._os_errors(f"create {what}"):
            os.replace(temp, os.path.join(folder, _temp_name(_KEY_FILE)))
        self._sync_folder(folder, what)
        return upload_id

    def _store_part(
        self: _Local, namespace: str, key: str, upload_id: str, part: int, chunks: Iterator[bytes]
    ) -> str:
        folder = self._upload_folder(namespace, key, upload_id)
        what = f"part {part} of upload {upload_id!r} of {key!r}"
        temp = os.path.join(folder, _temp_name("write-" + secrets.token_hex(8)))
        with self._os_errors(f"create {what}"):
            file = os.fdopen(create_private_file(temp), "wb")
        digest = hashlib.md5(usedforsecurity=False)
        try:
            self._write_temp(file, _hashed(chunks, digest.update), what)
            etag = digest.hexdigest()
            name = _temp_name(f"{_PART_PREFIX}{part:05d}.{etag}")
            with self._os_errors(f"store {what}"):
                os.replace(temp, os.path.join(folder, name))
        except BaseException:
            with suppress(OSError):
                os.unlink(temp)
            raise
        # The part sent before under this number (other bytes, another name) is replaced.
        stale = _temp_name(f"{_PART_PREFIX}{part:05d}.")
        with self._os_errors(f"replace {what}"):
            for entry in os.scandir(folder):
                if entry.name.startswith(stale) and entry.name != name:
                    with suppress(FileNotFoundError):
                        os.unlink(entry.path)
        self._sync_folder(folder, what)
        return etag

    def _upload_part(
        self: _Local, namespace: str, key: str, upload_id: str, part: int, chunks: Iterator[bytes]
    ) -> str:
        return self._store_part(namespace, key, upload_id, part, chunks)

    def _copy_upload_part(
        self: _Local, namespace: str, key: str, upload_id: str, part: int, source: PartSource
    ) -> str:
        self._upload_folder(namespace, key, upload_id)  # an unknown upload reads nothing
        with self._open_reader(source.namespace, source.key, source.start, source.end) as reader:
            copied = iter(lambda: reader.read(READ_CHUNK), b"")
            return self._store_part(namespace, key, upload_id, part, copied)

    def _complete_upload(
        self: _Local, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        folder = self._upload_folder(namespace, key, upload_id)
        found: list[tuple[int, str, int]] = []
        for number, etag in parts:  # every part is there before any size counts, as on S3
            etag = etag.strip('"').lower()
            path = os.path.join(folder, _temp_name(f"{_PART_PREFIX}{number:05d}.{etag}"))
            try:
                found.append((number, path, os.stat(path).st_size))
            except FileNotFoundError:
                raise UploadRefusedError(
                    "InvalidPart",
                    f"part {number} with ETag {etag!r} was not uploaded to {upload_id!r}"
                    "; list the parts and send their ETags",
                ) from None
        for number, _, size in found[:-1]:
            if size < MIN_PART_BYTES:
                raise UploadRefusedError(
                    "EntityTooSmall",
                    f"part {number} has {size} bytes; every part but the last needs at least"
                    f" {MIN_PART_BYTES}: send larger parts",
                )
        paths = [path for _, path, _ in found]
        self._put(namespace, key, (chunk for path in paths for chunk in _read_file(path)))
        shutil.rmtree(folder, ignore_errors=True)
        return multipart_etag([etag for _, etag in parts])

    def _list_upload_parts(
        self: _Local, namespace: str, key: str, upload_id: str
    ) -> list[UploadedPart]:
        folder = self._upload_folder(namespace, key, upload_id)
        prefix = _temp_name(_PART_PREFIX)
        parts = []
        with self._os_errors(f"list the parts of upload {upload_id!r} of {key!r}"):
            for entry in os.scandir(folder):
                if not entry.name.startswith(prefix):
                    continue
                number, _, etag = entry.name[len(prefix) :].partition(".")
                try:
                    status = entry.stat()
                except FileNotFoundError:
                    continue  # replaced since the folder was read
                parts.append(UploadedPart(int(number), etag, status.st_size, status.st_mtime))
        return sorted(parts, key=lambda part: part.number)

    def _abort_uploads_to(self: _Local, namespace: str, key: str) -> int:
        folder = os.path.join(self._namespace_dir(namespace), UPLOADS_FOLDER)
        tag = _key_tag(key)
        try:
            with os.scandir(folder) as scan:
                candidates = [entry.name for entry in scan if entry.name.startswith(tag)]
        except FileNotFoundError:
            return 0
        aborted = 0
        for upload_id in candidates:
            try:
                found = self._upload_folder(namespace, key, upload_id)
            except UploadRefusedError:
                continue  # another key with the same tag, or gone meanwhile
            shutil.rmtree(found, ignore_errors=True)
            aborted += 1
        return aborted

    def _abort_upload(self: _Local, namespace: str, key: str, upload_id: str) -> None:
        try:
            folder = self._upload_folder(namespace, key, upload_id)
        except UploadRefusedError:
            return  # gone already: aborted or completed
        shutil.rmtree(folder, ignore_errors=True)
