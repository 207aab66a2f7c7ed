"""Stored records to wire models: one function per shape, shared by the route modules."""

from __future__ import annotations

from kvlake.api.wire import objects as wire_objects
from kvlake.api.wire import refs as wire_refs
from kvlake.catalog import ObjectStat, physical_address
from kvlake.graveler import Commit


def commit(commit_id: str, record: Commit) -> wire_refs.Commit:
    return wire_refs.Commit(
        id=commit_id,
        parents=list(record.parents),
        committer=record.committer,
        message=record.message,
        creation_date=record.creation_date,
        meta_range_id=record.metarange_id,
        metadata=dict(record.metadata),
        generation=record.generation,
    )


def object_stats(
    stat: ObjectStat, namespace: str, *, user_metadata: bool = True
) -> wire_objects.ObjectStats:
    return wire_objects.ObjectStats(
        path=stat.path,
        path_type="object",
        physical_address=physical_address(namespace, stat.address),
        checksum=stat.checksum,
        mtime=int(stat.mtime),
        size_bytes=stat.size,
        metadata=stat.metadata if user_metadata else {},  # only encoded: no copy
        content_type=stat.content_type,
    )


def common_prefix(path: str) -> wire_objects.ObjectStats:
    """A folded "directory" row: lakeFS sends every field, empty or zero."""
    return wire_objects.ObjectStats(
        path=path, path_type="common_prefix", physical_address="", checksum="", mtime=0
    )
