"""Committed data: immutable, content-addressed range and metarange files."""

from kvlake.graveler.committed.apply import Change
from kvlake.graveler.committed.batches import ChangeBatch, batched
from kvlake.graveler.committed.columns import RangeColumns, RowPair, compare_rows
from kvlake.graveler.committed.manager import CommittedManager
from kvlake.graveler.committed.reader import CommittedStats
from kvlake.graveler.committed.records import Chunking, Piece, RangeInfo

__all__ = [
    "Change",
    "ChangeBatch",
    "Chunking",
    "CommittedManager",
    "CommittedStats",
    "Piece",
    "RangeColumns",
    "RangeInfo",
    "RowPair",
    "batched",
    "compare_rows",
]
