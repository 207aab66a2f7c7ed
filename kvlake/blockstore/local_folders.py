"""Folders a local put has already checked, known by identity: no path resolution per put.

Checking that a blob's folder lies inside its namespace takes a `realpath`, an
lstat of every component of the path. A put instead opens its folder once
(`O_DIRECTORY`), reads the open folder's identity (device and inode, one fstat)
and looks it up here: a folder checked before is known by the same identity,
so the check is skipped, and the temporary file, the rename and the folder
fsync all go through that open descriptor, never through the path again. If a
component of the path is replaced by a symbolic link leading elsewhere after
the check, the path opens another folder, its identity misses, and the folder
is checked again before anything is written: the cache cannot be led outside.
(A folder moved out of the root keeps its identity; moving folders needs
write access to the root itself, which serves every blob anyway.)
"""

from __future__ import annotations

import os
import threading
from typing import Final

MAX_FOLDERS: Final = 4096
"""Identities remembered before the cache starts over: bounded memory, one check
per folder per 4,096 folders put into."""

Identity = tuple[int, int]


def identity(status: os.stat_result) -> Identity:
    """A folder's identity: its device and inode, the same for every path reaching it."""
    return status.st_dev, status.st_ino


class CheckedFolders:
    """Identities of the folders whose paths resolved inside their namespace, by path."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checked: dict[str, Identity] = {}

    def known(self, folder: str, opened: Identity) -> bool:
        """Whether `folder` was checked and still opens the folder that was checked."""
        return self._checked.get(folder) == opened

    def remember(self, folder: str, checked: Identity) -> None:
        with self._lock:
            if len(self._checked) >= MAX_FOLDERS:
                self._checked.clear()
            self._checked[folder] = checked

    def __len__(self) -> int:
        return len(self._checked)
