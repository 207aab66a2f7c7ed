"""File formats of datasets in the lake (Parquet, CSV, JSON lines): schemas and Arrow batches.

Each format answers two questions over one blob, both through pyarrow: what
Spark schema the file has (on the driver, planning a read), and its rows as
Arrow batches of exactly the schema the read promised Spark (in a task). A
file whose columns do not fit the promised schema is refused with its path and
what to do, never read as nulls or cast silently.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from typing import IO, Final, Protocol

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from kvlake.errors import InvalidInputError

SPARK_SCHEMA_KEY: Final = b"org.apache.spark.sql.parquet.row.metadata"
"""Where Spark's Parquet writer keeps the Spark schema in a file's footer: it tells a
timestamp with zone from one without, which the Parquet types alone do not for INT96."""
SAMPLE_BYTES: Final = 1 << 20
"""How much of a CSV or JSON file the driver reads to infer its schema."""
BATCH_ROWS: Final = 65_536


class FileFormat(Protocol):
    """One file format: infer a file's schema, read a file's rows."""

    def infer(self, file: IO[bytes], size: int, options: Mapping[str, str]) -> StructType:
        """The file's schema (all fields nullable, as Spark reads files)."""

    def read(
        self, file: IO[bytes], schema: pa.Schema, options: Mapping[str, str]
    ) -> Iterator[pa.Table]:
        """The file's rows as tables of `schema`'s columns (missing columns as nulls).

        Raises:
            InvalidInputError: the file is not of this format, or a column has another type.
        """


def nullable(data_type: DataType) -> DataType:
    """The type with every field, element and value nullable: how Spark reads files."""
    if isinstance(data_type, StructType):
        return StructType(
            [StructField(field.name, nullable(field.dataType), True) for field in data_type.fields]
        )
    if isinstance(data_type, ArrayType):
        return ArrayType(nullable(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(nullable(data_type.keyType), nullable(data_type.valueType), True)
    return data_type


def conform(table: pa.Table, schema: pa.Schema, *, source: str) -> pa.Table:
    """`table` with exactly `schema`'s columns, in order; absent columns are nulls.

    Raises:
        InvalidInputError: a column cannot be cast to its promised type.
    """
    columns = []
    for field in schema:
        if field.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table.column(field.name)
        try:
            columns.append(column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InvalidInputError(
                f"column {field.name!r} of {source} is {column.type}, not {field.type} as in"
                f" the dataset's schema; read it with option('mergeSchema', 'true') if the files'"
                f" schemas differ, or fix the file ({exc})"
            ) from exc
    return pa.Table.from_arrays(columns, schema=schema)


class ParquetFormat:
    """Parquet, as Spark writes and reads it (INT96 timestamps included)."""

    def infer(self, file: IO[bytes], size: int, options: Mapping[str, str]) -> StructType:
        metadata = _parquet(file).metadata
        spark_json = (metadata.metadata or {}).get(SPARK_SCHEMA_KEY)
        if spark_json is not None:
            schema = StructType.fromJson(json.loads(spark_json))
        else:
            schema = from_arrow_schema(_utc_int96(metadata), prefer_timestamp_ntz=True)
        result = nullable(schema)
        assert isinstance(result, StructType)
        return result

    def read(
        self, file: IO[bytes], schema: pa.Schema, options: Mapping[str, str]
    ) -> Iterator[pa.Table]:
        parquet = _parquet(file)
        present = set(parquet.schema_arrow.names)
        missing = [name for name in schema.names if name not in present]
        if missing and not _flag(options, "mergeschema"):
            raise InvalidInputError(
                f"the file has no column {', '.join(map(repr, missing))}, which the dataset's"
                " schema (its first file's) has; read with option('mergeSchema', 'true') to"
                " merge the files' schemas"
            )
        wanted = [name for name in schema.names if name in present]
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=wanted):
            yield pa.Table.from_batches([batch])


def _parquet(file: IO[bytes]) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(file, coerce_int96_timestamp_unit="us")
    except pa.ArrowInvalid as exc:
        raise InvalidInputError(f"not a Parquet file ({exc})") from exc


def _utc_int96(metadata: pq.FileMetaData) -> pa.Schema:
    """The file's Arrow schema, INT96 columns as UTC timestamps (what Spark means by them)."""
    schema = metadata.schema.to_arrow_schema()
    int96 = {
        metadata.schema.column(i).path
        for i in range(metadata.num_columns)
        if metadata.schema.column(i).physical_type == "INT96"
    }
    fields = [
        field.with_type(pa.timestamp("us", tz="UTC")) if field.name in int96 else field
        for field in schema
    ]
    return pa.schema(fields)


class CsvFormat:
    """CSV with Spark's options `header`, `sep`/`delimiter`, `quote`, `escape`, `inferSchema`."""

    def infer(self, file: IO[bytes], size: int, options: Mapping[str, str]) -> StructType:
        sample = _sample(file, size)
        table = pa_csv.read_csv(
            io.BytesIO(sample),
            read_options=self._read_options(options),
            parse_options=self._parse_options(options),
        )
        if _flag(options, "inferschema"):
            return _inferred(table.schema)
        return StructType([StructField(name, StringType(), True) for name in table.column_names])

    def read(
        self, file: IO[bytes], schema: pa.Schema, options: Mapping[str, str]
    ) -> Iterator[pa.Table]:
        try:
            reader = pa_csv.open_csv(
                file,
                read_options=self._read_options(options, names=schema.names),
                parse_options=self._parse_options(options),
                convert_options=pa_csv.ConvertOptions(
                    column_types={field.name: field.type for field in schema},
                    strings_can_be_null=True,
                ),
            )
            for batch in reader:
                yield pa.Table.from_batches([batch])
        except pa.ArrowInvalid as exc:
            raise InvalidInputError(f"not CSV of the dataset's schema ({exc})") from exc

    @staticmethod
    def _read_options(
        options: Mapping[str, str], names: list[str] | None = None
    ) -> pa_csv.ReadOptions:
        header = _flag(options, "header")
        return pa_csv.ReadOptions(
            column_names=names,
            autogenerate_column_names=not header and names is None,
            skip_rows=1 if header and names is not None else 0,
        )

    @staticmethod
    def _parse_options(options: Mapping[str, str]) -> pa_csv.ParseOptions:
        return pa_csv.ParseOptions(
            delimiter=options.get("sep", options.get("delimiter", ",")),
            quote_char=options.get("quote", '"'),
            escape_char=options.get("escape", False) or False,
        )


class JsonFormat:
    """JSON lines (Spark's default `multiLine=false`): one object per line."""

    def infer(self, file: IO[bytes], size: int, options: Mapping[str, str]) -> StructType:
        try:
            table = pa_json.read_json(io.BytesIO(_sample(file, size)))
        except pa.ArrowInvalid as exc:
            raise InvalidInputError(f"not JSON lines ({exc})") from exc
        return _inferred(table.schema)

    def read(
        self, file: IO[bytes], schema: pa.Schema, options: Mapping[str, str]
    ) -> Iterator[pa.Table]:
        try:
            yield pa_json.read_json(
                file,
                parse_options=pa_json.ParseOptions(
                    explicit_schema=schema, unexpected_field_behavior="ignore"
                ),
            )
        except pa.ArrowInvalid as exc:
            raise InvalidInputError(f"not JSON lines of the dataset's schema ({exc})") from exc


def _inferred(schema: pa.Schema) -> StructType:
    """Spark's types for what pyarrow inferred from text (naive timestamps are Spark's local)."""
    result = nullable(from_arrow_schema(schema, prefer_timestamp_ntz=True))
    assert isinstance(result, StructType)
    return result


def _sample(file: IO[bytes], size: int) -> bytes:
    """The first SAMPLE_BYTES of a text file, cut after its last whole line."""
    head = file.read(min(size, SAMPLE_BYTES))
    if len(head) < size and b"\n" in head:
        head = head[: head.rindex(b"\n") + 1]
    return head


def _flag(options: Mapping[str, str], name: str) -> bool:
    return options.get(name, "false").strip().lower() == "true"


FORMATS: Final[Mapping[str, FileFormat]] = {
    "csv": CsvFormat(),
    "json": JsonFormat(),
    "parquet": ParquetFormat(),
}


def file_format(name: str) -> FileFormat:
    """The format named by the read's `format` option.

    Raises:
        InvalidInputError: no such format.
    """
    found = FORMATS.get(name.lower())
    if found is None:
        raise InvalidInputError(
            f"format {name!r} is not one the kvlake source reads; use one of"
            f" {', '.join(sorted(FORMATS))}, or no format to list the objects"
        )
    return found
