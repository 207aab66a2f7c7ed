"""The blob a staged or committed value references, as the layers below the catalog need it:
the deletion log (`entry_ref`), garbage collection's marks (`blob_key_in`), bulk deletes'
filters and purges (`describe_entry`).

Graveler stores values it cannot read; these read them as catalog entries, and a value
that is not one (written by something other than the catalog) references no blob.
"""

from __future__ import annotations

from kvlake.blockstore import parse_address
from kvlake.catalog.records import from_value, is_external
from kvlake.deletion import EntryRef
from kvlake.errors import InvalidInputError
from kvlake.graveler import Value
from kvlake.operations import ObjectInfo


def entry_ref(value: Value) -> EntryRef:
    """The blob a staged or committed value references, and its mtime, for the deletion log.

    A value that is not a catalog entry references no blob: its address is "".
    """
    try:
        stat = from_value("", value)
    except ValueError:  # msgspec decode errors: written by something other than the catalog
        return EntryRef("", 0.0)
    if is_external(stat.address):
        return EntryRef("", stat.mtime, stat.address)  # imported: never kvlake's to delete
    return EntryRef(stat.address, stat.mtime)


def blob_key_in(namespace: str, value: Value) -> str:
    """The key in `namespace` of the blob a staged or committed value references, for
    garbage collection's marks; "" when it references none there.

    Unlike `entry_ref`, an imported (full URL) address that lies inside the namespace in
    its canonical form (`s3:///lake/repo1/data/x` in `s3://lake/repo1`) counts: imports
    made before sources were compared canonically could point at the repository's own
    blobs that way, and garbage collection must not delete what they still read.
    """
    try:
        stat = from_value("", value)
    except ValueError:  # msgspec decode errors: written by something other than the catalog
        return ""
    if not is_external(stat.address):
        return stat.address
    try:
        return parse_address(stat.address).key_in(parse_address(namespace))
    except InvalidInputError:
        return ""  # elsewhere: not this namespace's blob


def describe_entry(value: Value) -> ObjectInfo:
    """A value's blob address, size, mtime and user metadata, for bulk deletes' filters and
    purges.

    A value that is not a catalog entry references no blob: address "", its data's size.
    """
    try:
        stat = from_value("", value)
    except ValueError:
        return ObjectInfo("", len(value.data), 0.0)
    return ObjectInfo(stat.address, stat.size, stat.mtime, stat.metadata)
