"""The object address layout (`data/<hour>/<uid>`): what kvlake/catalog/layout.py makes and
reads agrees, and no other module under kvlake/ spells it (GC's safety depends on it)."""

from __future__ import annotations

import ast
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.catalog import (
    DATA_FOLDER,
    HOUR_END,
    HOUR_FORMAT,
    HOUR_KEY_PATTERN,
    HOUR_START,
    data_prefixes,
    hour_folder_end,
    new_address,
)

PACKAGE = Path(__file__).resolve().parents[2] / "kvlake"
LAYOUT = PACKAGE / "catalog" / "layout.py"
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z
HOUR = 3600


def test_a_new_address_lies_in_its_hour_folder() -> None:
    address = new_address(T0)
    assert address.startswith("data/20231114T22/")
    folder, _, uid = address.rpartition("/")
    assert uid and "/" not in uid
    assert new_address(T0) != address


def test_an_hour_folder_ends_when_its_hour_does() -> None:
    folder = data_prefixes(T0, T0 + 1)[0]
    assert hour_folder_end(folder) == (T0 // HOUR + 1) * HOUR
    assert hour_folder_end(new_address(T0).rpartition("/")[0] + "/") == (T0 // HOUR + 1) * HOUR


@pytest.mark.parametrize(
    "folder",
    ["data/", "data/2023111T22/", "data/20231114T22", "data/20231399T99/", "_lakefs/x/", "x/data/"],
)
def test_other_folders_have_no_hour(folder: str) -> None:
    assert hour_folder_end(folder) is None


def test_the_key_pattern_and_slice_read_the_hour_of_an_address() -> None:
    """The pattern and slice GC's inventory task hands to pyarrow, checked here in Python."""
    address = new_address(T0)
    assert re.match(HOUR_KEY_PATTERN, address)
    hour = address[HOUR_START:HOUR_END]
    assert time.strftime(HOUR_FORMAT, time.gmtime(T0)) == hour
    assert not re.match(HOUR_KEY_PATTERN, "_lakefs/" + address)
    assert not re.match(HOUR_KEY_PATTERN, "data/2023111T22/x")
    assert data_prefixes(T0, T0 + 1) == [DATA_FOLDER + hour + "/"]


SPELLINGS = re.compile(r"%Y%m%dT%H(?!%M)|\\d\{8\}T|^\^?data/$|^\^?data/[%(\\]")
"""A strftime hour (not SigV4's `%Y%m%dT%H%M%SZ`), a regex hour, or the bare data folder:
the layout's own spellings."""


def _docstrings(tree: ast.Module) -> set[int]:
    scopes = ast.Module | ast.ClassDef | ast.FunctionDef
    nodes = [n for n in ast.walk(tree) if isinstance(n, scopes)]
    return {
        id(n.body[0].value)
        for n in nodes
        if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }


def _spellings(source: str) -> Iterator[str]:
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and SPELLINGS.search(node.value)
        ):
            yield node.value


def test_the_check_sees_each_spelling() -> None:
    for source in (
        'time.strftime("data/%Y%m%dT%H/", now)',
        're.compile(r"data/(\\d{8}T\\d{2})/")',
        'pc.match_substring_regex(keys, r"^data/\\d{8}T\\d{2}/")',
        'store.list_folders(namespace, "data/")',
        'f"data/{hour}/{uid}"',
        'time.strptime(hour, "%Y%m%dT%H")',
    ):
        assert list(_spellings(source)), source
    assert not list(_spellings('"""Under `data/<hour>/`."""\nPATH = "data/lakes.source.md"'))
    assert not list(_spellings('time.strptime(amz_date, "%Y%m%dT%H%M%SZ")'))


def test_only_the_layout_module_spells_the_layout() -> None:
    found = {
        str(path.relative_to(PACKAGE)): spelled
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != LAYOUT and (spelled := list(_spellings(path.read_text())))
    }
    assert not found, f"modules spell the address layout {found}: use kvlake/catalog/layout.py"


def test_the_layout_module_is_where_the_check_looks() -> None:
    assert list(_spellings(LAYOUT.read_text()))
