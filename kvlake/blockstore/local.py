"""Blobs as files under one root folder: `local:///var/lib/kvlake/data`.

A namespace `local://lake/repo1` is the folder `<root>/lake/repo1` and a key is
a file path below it. The invariant this module protects is that no namespace
or key ever reaches a file outside its folder: paths are checked lexically
(`check_key`, `_namespace_path`) and again after resolving symbolic links.
Puts write a temporary file in the blob's folder, fsync it, then rename it over
the key, so a reader sees the whole old blob or the whole new one, never a torn
one. A put returns only once the blob and its name are durable (invariant 4:
metadata may reference it at once): the rename is made durable by an fsync of
the folder, shared by every put into that folder waiting at the time (a group
commit, `local_syncs.py`), and a newly created folder's name by an fsync of its
parent. Every OSError is translated here; callers see only kvlake errors.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, BinaryIO, Self

from kvlake.blockstore.listing import BlobInfo
from kvlake.blockstore.local_folders import CheckedFolders, identity
from kvlake.blockstore.local_reader import RangeReader
from kvlake.blockstore.local_syncs import FolderSyncs
from kvlake.blockstore.local_uploads import TEMP_PREFIX, LocalUploads
from kvlake.blockstore.store import BlockStore
from kvlake.blockstore.terms import check_key
from kvlake.errors import (
    ConfigError,
    ConflictError,
    InvalidInputError,
    KvlakeError,
    UnavailableError,
)
from kvlake.permissions import create_private_file, make_private_folders

if TYPE_CHECKING:
    pass


def _escapes(namespace: str, key: str) -> InvalidInputError:
    return InvalidInputError(
        f"blob key {key!r} leads out of storage namespace {namespace!r} through a"
        " symbolic link; remove the link or choose another key"
    )


class LocalBlockStore(LocalUploads, BlockStore):
    """Files under a root folder. URL: `local:///absolute/root` (created if missing).

    Thread-safe: each put writes its own temporary file and the rename is atomic,
    so concurrent puts to one key leave one of them whole; the only lock guards
    the bookkeeping of shared folder fsyncs.
    Listings walk one sorted folder at a time and never follow symbolic links.
    """

    scheme = "local"

    def __init__(self, root: str) -> None:
        try:
            make_private_folders(root)
            probe = os.path.join(root, TEMP_PREFIX + secrets.token_hex(8))
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.unlink(probe)
        except OSError as exc:
            raise ConfigError(
                f"KVLAKE_BLOCKSTORE_URL names the folder {root!r}, which kvlake cannot write"
                f" ({exc.strerror or exc}); create it and give the kvlake process write access,"
                " or choose another folder"
            ) from exc
        self._root = os.path.realpath(root)
        self._root_prefix = os.path.join(self._root, "")
        self._syncs = FolderSyncs()
        self._checked = CheckedFolders()

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Open the store rooted at the URL's path, e.g. `local:///var/lib/kvlake/data`."""
        path = url.removeprefix("local://")
        if not url.startswith("local://") or not path.startswith("/"):
            raise ConfigError(
                f"KVLAKE_BLOCKSTORE_URL {url!r} does not name an absolute folder; use"
                " local:///absolute/path, e.g. local:///var/lib/kvlake/data"
            )
        return cls(path)

    @property
    def root(self) -> str:
        """The root folder, symbolic links resolved."""
        return self._root

    def check_namespace(self, namespace: str) -> str:
        """Accept `local://<path below the root>`; refuse links that lead out of the root."""
        self._namespace_dir(namespace)
        return f"{self.scheme}://{self._namespace_path(namespace)}"

    def check_put_namespace(self, namespace: str) -> str:
        # `_put` checks the blob's folder, and so the namespace's links, itself.
        return f"{self.scheme}://{self._namespace_path(namespace)}"

    # -- paths --------------------------------------------------------------------

    def _namespace_dir(self, namespace: str) -> str:
        real = os.path.realpath(os.path.join(self._root, self._namespace_path(namespace)))
        if not real.startswith(self._root_prefix):
            raise InvalidInputError(
                f"storage namespace {namespace!r} leads out of the blockstore root {self._root!r}"
                " through a symbolic link; remove the link or choose another namespace"
            )
        return real

    def _blob_path(self, namespace: str, key: str) -> str:
        lexical = self._path_in(os.path.join(self._root, self._namespace_path(namespace)), key)
        if os.path.realpath(lexical) == lexical:
            # No symbolic link anywhere along it (the root is resolved already), so it
            # lies in its namespace below the root: one resolution, not two.
            return lexical
        folder = self._namespace_dir(namespace)  # a link on the way: check each part
        path = self._path_in(folder, key)
        if not os.path.realpath(path).startswith(os.path.join(folder, "")):
            raise _escapes(namespace, key)
        return path

    @staticmethod
    def _path_in(folder: str, key: str) -> str:
        if key.rsplit("/", 1)[-1].startswith(TEMP_PREFIX):
            raise InvalidInputError(
                f"blob key {key!r} ends in a name starting with {TEMP_PREFIX!r}, which local"
                " storage reserves for uploads in progress; choose another key"
            )
        return os.path.join(folder, key)

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        """Delete blobs resolving each folder once per call, not three paths per key.

        Unlinking a name removes a link, never its target, so checking that the
        blob's folder resolves inside the namespace is as safe as resolving the blob.
        """
        folder = self._namespace_dir(self.check_namespace(namespace))
        inside = os.path.join(folder, "")
        folder_is_inside: dict[str, bool] = {}
        failures: dict[str, Exception] = {}
        for key in keys:
            try:
                path = self._path_in(folder, check_key(key))
                parent = os.path.dirname(path)
                ok = folder_is_inside.get(parent)
                if ok is None:
                    real = os.path.join(os.path.realpath(parent), "")
                    ok = folder_is_inside[parent] = real.startswith(inside)
                if not ok:
                    raise _escapes(namespace, key)
                self._unlink(path, namespace, key)
            except KvlakeError as exc:  # reported per key, as BlockStore.delete_many documents
                failures[key] = exc
        return failures

    # -- errors ---------------------------------------------------------------------

    def _failure(self, exc: OSError, doing: str) -> KvlakeError:
        """Translate an OSError that is not simply "not found" into a kvlake error."""
        if exc.errno == errno.ENAMETOOLONG:
            return InvalidInputError(
                f"cannot {doing}: a name is too long; use shorter key segments"
            )
        if exc.errno == errno.ELOOP:
            return InvalidInputError(f"cannot {doing}: symbolic links loop; remove the loop")
        if isinstance(exc, PermissionError) or exc.errno == errno.EROFS:
            hint = f"give the kvlake process read and write access to {self._root!r}"
        elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
            hint = f"free disk space or raise the quota for {self._root!r}, then retry"
        else:
            hint = f"check the disk holding {self._root!r}, then retry"
        return UnavailableError(f"cannot {doing}: {exc.strerror or exc}; {hint}")

    @contextmanager
    def _os_errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            raise self._failure(exc, doing) from exc

    def _conflict(self, namespace: str, key: str) -> ConflictError:
        return ConflictError(
            f"blob key {key!r} in {namespace!r} collides with a folder or a blob along its path;"
            " local storage cannot hold both 'a' and 'a/b', so choose another key"
        )

    # -- primitives -------------------------------------------------------------------

    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int:
        """Write through the blob's open folder: two fsyncs, no path resolved twice.

        The temporary file is fsynced before the rename (else a crash could leave
        the name on an empty or torn file), and the folder after it (else a crash
        could lose the name); the folder's fsync is shared with concurrent puts.
        Both are needed on any POSIX filesystem; nothing else is synced unless
        folders were created.
        """
        lexical = self._path_in(os.path.join(self._root, self._namespace_path(namespace)), key)
        folder, name = os.path.split(lexical)
        what = f"blob {key!r} in {namespace!r}"
        descriptor = self._open_folder(folder, namespace, key, what)
        try:
            temp = TEMP_PREFIX + secrets.token_hex(8)
            with self._os_errors(f"create a temporary file for {what}"):
                fd = create_private_file(temp, dir_fd=descriptor)
                file = os.fdopen(fd, "wb")  # closed by _write_temp
            try:
                size = self._write_temp(file, chunks, what)
                try:
                    os.replace(temp, name, src_dir_fd=descriptor, dst_dir_fd=descriptor)
                except (IsADirectoryError, NotADirectoryError) as exc:
                    raise self._conflict(namespace, key) from exc
                except OSError as exc:
                    raise self._failure(exc, f"rename the upload into {what}") from exc
            except BaseException:
                # The original error matters more than a failed clean-up, and a leftover
                # temporary file is hidden from listings.
                with suppress(OSError):
                    os.unlink(temp, dir_fd=descriptor)
                raise
            self._syncs.sync(folder, lambda: self._fsync_descriptor(descriptor, what))
        finally:
            os.close(descriptor)
        return size

    def _open_folder(self, folder: str, namespace: str, key: str, what: str) -> int:
        """Open the blob's folder (created if missing), checked to lie in its namespace.

        A folder whose identity was checked before is not resolved again
        (`local_folders.py`); otherwise the open folder must be the one its
        real path names, inside the namespace's real folder.
        """
        try:
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            self._blob_path(namespace, key)  # no link out along the way before creating any
            self._make_folder(folder, namespace, key, what)
            with self._os_errors(f"open the folder of {what}"):
                descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except NotADirectoryError as exc:
            raise self._conflict(namespace, key) from exc
        except OSError as exc:
            raise self._failure(exc, f"open the folder of {what}") from exc
        try:
            with self._os_errors(f"open the folder of {what}"):
                opened = identity(os.fstat(descriptor))
                if self._checked.known(folder, opened):
                    return descriptor
                inside = self._namespace_dir(namespace)
                real = os.path.realpath(folder)
                if real != inside and not real.startswith(os.path.join(inside, "")):
                    raise _escapes(namespace, key)
                if identity(os.stat(real)) != opened:  # replaced while being checked
                    raise _escapes(namespace, key)
            self._checked.remember(folder, opened)
            return descriptor
        except BaseException:
            os.close(descriptor)
            raise

    def _make_folder(self, folder: str, namespace: str, key: str, what: str) -> None:
        """Create the blob's folder if missing, and make the new folders' names durable."""
        if os.path.isdir(folder):
            return  # the common case: keys are grouped in folders created once
        missing = []
        level = folder
        while not os.path.isdir(level):  # ends at the namespace or the root, which exist
            missing.append(level)
            level = os.path.dirname(level)
        try:
            make_private_folders(folder)
        except (FileExistsError, NotADirectoryError) as exc:
            raise self._conflict(namespace, key) from exc
        except OSError as exc:
            raise self._failure(exc, f"create the folder for {what}") from exc
        # A folder's name lives in its parent: unsynced, a crash could lose the
        # folder and every blob later made durable inside it.
        for created in reversed(missing):
            self._sync_folder(os.path.dirname(created), what)

    def _write_temp(self, file: BinaryIO, chunks: Iterator[bytes], what: str) -> int:
        size = 0
        try:
            for chunk in chunks:  # the caller's stream: its errors reach the caller as they are
                with self._os_errors(f"write {what}"):
                    file.write(chunk)
                size += len(chunk)
            # Durable before the rename, so metadata never references a blob a crash empties.
            with self._os_errors(f"flush {what} to disk"):
                file.flush()
                os.fsync(file.fileno())
        finally:
            with self._os_errors(f"close {what}"):
                file.close()
        return size

    def _sync_folder(self, folder: str, what: str) -> None:
        """Make the renames into `folder` durable, sharing fsyncs with concurrent puts."""
        self._syncs.sync(folder, lambda: self._fsync_folder(folder, what))

    def _fsync_folder(self, folder: str, what: str) -> None:
        """fsync a folder by its path."""
        with self._os_errors(f"open the folder of {what}"):
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            self._fsync_descriptor(descriptor, what)
        finally:
            os.close(descriptor)

    def _fsync_descriptor(self, descriptor: int, what: str) -> None:
        """fsync an open folder; some filesystems cannot (EINVAL), and need not."""
        try:
            os.fsync(descriptor)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise self._failure(exc, f"sync the folder of {what}") from exc

    def _open_reader(self, namespace: str, key: str, start: int, end: int | None) -> BinaryIO:
        path = self._blob_path(namespace, key)
        what = f"blob {key!r} in {namespace!r}"
        try:
            file = open(path, "rb", buffering=0)  # closed by the reader
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
            raise self._not_found(namespace, key) from exc
        except OSError as exc:
            raise self._failure(exc, f"open {what}") from exc
        try:
            with self._os_errors(f"read {what}"):
                status = os.fstat(file.fileno())
                if not stat.S_ISREG(status.st_mode):
                    raise self._not_found(namespace, key)
                stop = self._clip_range(namespace, key, start, end, status.st_size)
                file.seek(start)
        except BaseException:
            file.close()
            raise
        return io.BufferedReader(RangeReader(file, stop - start, self._os_errors, what))

    def _size(self, namespace: str, key: str) -> int:
        path = self._blob_path(namespace, key)
        try:
            status = os.stat(path)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise self._not_found(namespace, key) from exc
        except OSError as exc:
            raise self._failure(exc, f"read the size of blob {key!r} in {namespace!r}") from exc
        if not stat.S_ISREG(status.st_mode):
            raise self._not_found(namespace, key)
        return status.st_size

    def _delete(self, namespace: str, key: str) -> None:
        self._unlink(self._blob_path(namespace, key), namespace, key)

    def _unlink(self, path: str, namespace: str, key: str) -> None:
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return  # no blob there: "not found" counts as deleted
        except OSError as exc:
            raise self._failure(exc, f"delete blob {key!r} in {namespace!r}") from exc

    def _list_keys(self, namespace: str, prefix: str) -> Iterator[str]:
        return (key for key, _ in self._files(namespace, prefix))

    def _list_blobs(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        for key, entry in self._files(namespace, prefix):
            try:
                status = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # deleted since the folder was read: listings are not snapshots
            except OSError as exc:
                raise self._failure(exc, f"read the size of blob {key!r}") from exc
            yield BlobInfo(key, status.st_size, status.st_mtime)

    def _prefix_folder(self, namespace: str, prefix: str) -> str | None:
        """The folder holding `prefix`'s blobs (the part before its last `/`), or None when
        no blob can be there: a segment check_key refuses ("", ".", ".."), or a symbolic
        link on the way (listings never follow one, and an import must read the folder
        it names)."""
        folders = prefix.split("/")[:-1]
        if any(segment in ("", ".", "..") for segment in folders):
            return None
        top = os.path.join(self._namespace_dir(namespace), *folders)
        return top if os.path.realpath(top) == top else None

    def _files(self, namespace: str, prefix: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
        top = self._prefix_folder(namespace, prefix)
        if top is not None:
            folders = prefix.rpartition("/")[0]
            yield from self._walk(top, f"{folders}/" if folders else "", prefix)

    def _folder_exists(self, namespace: str, prefix: str) -> bool:
        folders = prefix.split("/")[:-1]
        if any(segment in ("", ".", "..") for segment in folders):
            return False
        top = os.path.join(self._root, self._namespace_path(namespace), *folders)
        # A folder reached through a symbolic link (in the namespace too) is not there:
        # listings never follow one, and an import must read the folder it names.
        return os.path.realpath(top) == top.rstrip("/") and os.path.isdir(top)

    def _list_folders(self, namespace: str, prefix: str) -> Iterator[str]:
        top = self._prefix_folder(namespace, prefix)
        if top is None:
            return
        try:
            with os.scandir(top) as scan:
                names = sorted(e.name for e in scan if e.is_dir(follow_symlinks=False))
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise self._failure(exc, f"list the folder {top!r}") from exc
        for name in names:
            yield f"{prefix}{name}/"

    def _list_level(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        top = self._prefix_folder(namespace, prefix)
        if top is None:
            return
        try:
            with os.scandir(top) as scan:
                files = sorted(
                    (entry.name, entry)
                    for entry in scan
                    if entry.is_file(follow_symlinks=False)
                    and not entry.name.startswith(TEMP_PREFIX)
                )
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise self._failure(exc, f"list the folder {top!r}") from exc
        for name, entry in files:
            try:
                status = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # deleted since the folder was read: listings are not snapshots
            except OSError as exc:
                raise self._failure(exc, f"read the size of blob {prefix + name!r}") from exc
            yield BlobInfo(prefix + name, status.st_size, status.st_mtime)

    def _walk(self, folder: str, base: str, prefix: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """Yield the files below `folder` (whose key is `base`) whose keys start with `prefix`,
        ascending, with their directory entries."""
        try:
            with os.scandir(folder) as scan:
                # A sub-folder sorts as "name/": its keys all start so, which keeps
                # "a-b" before "a/c" exactly as a flat sort of full keys would.
                entries = sorted(
                    (
                        (f"{entry.name}/", False, entry)
                        if entry.is_dir(follow_symlinks=False)
                        else (entry.name, True, entry)
                        for entry in scan
                        if entry.is_dir(follow_symlinks=False)
                        or entry.is_file(follow_symlinks=False)
                    ),
                    key=lambda item: item[:2],
                )
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise self._failure(exc, f"list the folder {folder!r}") from exc
        for name, is_file, entry in entries:
            key = base + name
            if is_file and key.startswith(prefix):
                if not name.startswith(TEMP_PREFIX):
                    yield key, entry
            elif not is_file and (key.startswith(prefix) or prefix.startswith(key)):
                yield from self._walk(os.path.join(folder, name[:-1]), key, prefix)
            elif key > prefix:
                return
