"""Planning a read of a dataset's rows: one snapshot of the ref, its files, schema and tasks.

The driver resolves the ref once and lists the files under the path from that
one state (commit and staging tokens); the plan then carries each file's blob
location, so every task reads exactly the files of that snapshot, straight from
the blockstore, whatever the branch does meanwhile. Like Spark's own file
index, the plan holds one small record per file (not per row); the listing
streams, and nothing else on the driver grows with the data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec
from pyspark.sql.types import ArrayType, DataType, MapType, StructField, StructType

from kvlake.catalog import blob_location
from kvlake.catalog.records import from_value
from kvlake.errors import InvalidInputError
from kvlake.graveler import prefix_end
from kvlake.lake import Lake
from kvlake.operations import parse_ref_path
from kvlake.pipelines.blobfile import open_blob_file
from kvlake.pipelines.formats import FileFormat, file_format
from kvlake.pipelines.partitions import (
    infer_type,
    partition_columns,
    partition_folders,
)

MAX_PARTITION_BYTES: Final = 128 << 20
"""Bytes of files per task: Spark's `spark.sql.files.maxPartitionBytes`."""
OPEN_COST_BYTES: Final = 4 << 20
"""What opening a file costs, counted in bytes: Spark's `spark.sql.files.openCostInBytes`."""
_TYPES: Final = {"int": "integer", "bigint": "long", "double": "double", "string": "string"}


class DataFile(msgspec.Struct, frozen=True, array_like=True):
    """One file of a planned read: where its bytes are, and its partition folders' values."""

    path: str
    namespace: str
    key: str
    size: int
    partition: tuple[str, ...]
    etag: str = ""
    """The entry's `blob_etag`: tasks read with it as `if_match`, so a linked blob replaced
    through its presigned PUT URL fails the task instead of feeding it other bytes."""


class DatasetPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A read planned on the driver: everything a task needs, no open handle."""

    uri: str
    format: str
    commit_id: str
    schema: str
    """The Spark schema as JSON: the files' columns, then the partition columns."""
    partitions: tuple[tuple[str, str], ...]
    """Partition columns and their inferred types (`int`, `bigint`, `double`, `string`)."""
    files: tuple[DataFile, ...]

    def spark_schema(self) -> StructType:
        return StructType.fromJson(json.loads(self.schema))


def plan_read(lake: Lake, uri: str, options: Mapping[str, str]) -> DatasetPlan:
    """List the dataset at `uri` (`lakefs://repo/ref/path`) once and infer its schema.

    `options` have lower-case keys. Without `mergeschema`, the schema is the
    first file's and each task checks its files against it (Spark's rule); with
    it, every file's schema is read here and the schemas are merged.

    Raises:
        InvalidInputError: a bad URI or format, no files, files in different
            partition layouts, or schemas that do not merge.
        RepositoryNotFoundError, RefNotFoundError: no such repository or ref.
    """
    parsed = parse_ref_path(uri)
    name = options.get("format", "")
    fmt = file_format(name)
    repository = lake.graveler.get_repository(parsed.repository)
    resolved = lake.graveler.resolve_ref(repository, parsed.branch)
    root = parsed.prefix.rstrip("/") + "/" if parsed.prefix.strip("/") else ""
    start = root.encode()
    entries = lake.graveler.list(
        repository, resolved, start=start, stop=prefix_end(start) if start else None
    )
    files: list[DataFile] = []
    layouts: list[list[tuple[str, str]]] = []
    for key, value in entries:
        path = key.decode()
        stat = from_value(path, value)
        if _skipped(path[len(root) :]) or stat.size == 0:
            continue
        folders = partition_folders(path[len(root) :])
        namespace, blob = blob_location(repository.storage_namespace, stat.address)
        layouts.append(folders)
        values = tuple(v for _, v in folders)
        files.append(DataFile(path, namespace, blob, stat.size, values, stat.blob_etag))
    if not files:
        raise InvalidInputError(
            f"no {name} files under {uri!r}; check the path and the ref (files and folders"
            " starting with '_' or '.' are skipped, as Spark skips them)"
        )
    names = partition_columns(layouts, uri)
    types = [infer_type([file.partition[i] for file in files]) for i in range(len(names))]
    sampled = files if _flag(options, "mergeschema") else files[:1]
    schema = _merge([_infer(lake, fmt, file, options) for file in sampled], uri)
    fields = [field for field in schema.fields if field.name not in names]
    fields += [_field(column, kind) for column, kind in zip(names, types, strict=True)]
    return DatasetPlan(
        uri=uri,
        format=name.lower(),
        commit_id=resolved.commit_id,
        schema=StructType(fields).json(),
        partitions=tuple(zip(names, types, strict=True)),
        files=tuple(files),
    )


def split_bytes(files: Sequence[DataFile], *, max_bytes: int, parallelism: int) -> int:
    """The bytes of one task, as Spark's file sources compute it (`maxSplitBytes`): the
    files' bytes (each counting OPEN_COST_BYTES more) spread over `parallelism` tasks,
    at least OPEN_COST_BYTES and at most `max_bytes`, so a small dataset still keeps
    every core busy instead of landing in one task."""
    total = sum(file.size + OPEN_COST_BYTES for file in files)
    return min(max_bytes, max(OPEN_COST_BYTES, total // max(parallelism, 1)))


def group_files(
    files: Sequence[DataFile], *, max_bytes: int = MAX_PARTITION_BYTES
) -> list[list[DataFile]]:
    """Files grouped into tasks by size, as Spark's file sources do: largest first, each
    file into the open group until it would pass `max_bytes` (a file costs its size
    plus OPEN_COST_BYTES, so many tiny files still spread over tasks)."""
    groups: list[list[DataFile]] = []
    current: list[DataFile] = []
    used = 0
    for file in sorted(files, key=lambda f: (-f.size, f.path)):
        cost = file.size + OPEN_COST_BYTES
        if current and used + cost > max_bytes:
            groups.append(current)
            current, used = [], 0
        current.append(file)
        used += cost
    if current:
        groups.append(current)
    return groups


def _skipped(relative: str) -> bool:
    """Spark's rule for files that are not data: any segment starting with '.' or with
    '_' (`_SUCCESS`, `_temporary/`), except `_name=value` partition folders."""
    return any(
        segment.startswith(".") or (segment.startswith("_") and "=" not in segment)
        for segment in relative.split("/")
    )


def _infer(lake: Lake, fmt: FileFormat, file: DataFile, options: Mapping[str, str]) -> StructType:
    blockstore = lake.blockstore
    with open_blob_file(
        blockstore, file.namespace, file.key, file.size, if_match=file.etag
    ) as handle:
        try:
            return fmt.infer(handle, file.size, options)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{file.path}: {exc}") from exc


def _merge(schemas: Sequence[StructType], uri: str) -> StructType:
    """One schema of many files: fields by name in order of first appearance, struct fields
    merged the same way at any depth (inside arrays and map values too), as Spark's
    `mergeSchema` does.

    Raises:
        InvalidInputError: one column (or nested field) has two types.
    """
    merged = StructType([])
    for schema in schemas:
        merged = _merge_struct(merged, schema, uri, prefix="")
    return merged


def _merge_struct(known: StructType, new: StructType, uri: str, *, prefix: str) -> StructType:
    fields = {field.name: field for field in known.fields}
    for field in new.fields:
        before = fields.get(field.name)
        if before is None:
            fields[field.name] = field
        else:
            name = prefix + field.name
            kind = _merge_type(before.dataType, field.dataType, uri, name=name)
            fields[field.name] = StructField(field.name, kind, True, before.metadata)
    return StructType(list(fields.values()))


def _merge_type(known: DataType, new: DataType, uri: str, *, name: str) -> DataType:
    """Two files' types of one column, merged: equal, or structs (in arrays, maps) whose
    fields merge.

    Raises:
        InvalidInputError: naming the column (dotted for a nested field) and both types.
    """
    if known == new:
        return known
    if isinstance(known, StructType) and isinstance(new, StructType):
        return _merge_struct(known, new, uri, prefix=name + ".")
    if isinstance(known, ArrayType) and isinstance(new, ArrayType):
        return ArrayType(_merge_type(known.elementType, new.elementType, uri, name=name), True)
    if isinstance(known, MapType) and isinstance(new, MapType) and known.keyType == new.keyType:
        value = _merge_type(known.valueType, new.valueType, uri, name=name)
        return MapType(known.keyType, value, True)
    raise InvalidInputError(
        f"column {name!r} of the files under {uri!r} is {known.simpleString()} in one file"
        f" and {new.simpleString()} in another; rewrite the files with one type"
    )


def _field(name: str, kind: str) -> StructField:
    """A partition column's field, of its inferred type."""
    return StructField.fromJson(
        {"name": name, "type": _TYPES[kind], "nullable": True, "metadata": {}}
    )


def _flag(options: Mapping[str, str], name: str) -> bool:
    return options.get(name, "false").strip().lower() == "true"
