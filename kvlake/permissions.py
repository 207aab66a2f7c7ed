"""Files kvlake creates are its process user's alone: folders 0700, files 0600.

The data folder holds the metadata (the SQLite file and its -wal and -shm
companions), every blob of the local blockstore and the server key that
decrypts stored secrets: readable by other users, any of them leaks a lake.
Modes are set at creation, so a umask can only make them stricter. Folders
and files that already exist keep the modes their owner gave them.
"""

from __future__ import annotations

import os
from typing import Final

FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600


def make_private_folders(path: str | os.PathLike[str]) -> None:
    """Create `path` and every missing parent with mode 0700 (existing ones are left alone).

    Raises:
        OSError: as `os.mkdir` does; FileExistsError only if something else than a
            folder is in the way.
    """
    path = os.fspath(path)
    missing: list[str] = []
    level = os.path.abspath(path)
    while not os.path.isdir(level):
        missing.append(level)
        parent = os.path.dirname(level)
        if parent == level:
            break
        level = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise  # a file where a folder should be


def create_private_file(path: str | os.PathLike[str], dir_fd: int | None = None) -> int:
    """Create a new file with mode 0600 and return its descriptor (open for writing).

    A relative `path` with `dir_fd` is taken in that open folder, not resolved again.

    Raises:
        FileExistsError: something is at `path` already.
    """
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE, dir_fd=dir_fd)
