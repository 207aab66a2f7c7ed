"""One way to be used in a `with` block: leaving it calls `close`."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Closing:
    """Base of kvlake's resources (stores, scans, blockstores): `with x:` closes `x`."""

    def close(self) -> None:
        """Release what the resource holds; subclasses with resources override it."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
