"""The layers keep their boundaries: checked on the source, so a new import cannot slip in."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kvlake"

GRAVELER_PRIVATE = ("kvlake.graveler.keys", "kvlake.graveler.repositories", "kvlake.graveler.refs")
"""Graveler's key schema and storage engines: only graveler itself may import them."""

GRAVELER_PARTITIONS = (b"graveler", b"staging/", b"graveler_deleted", b"graveler_namespaces")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        yield ".".join(relative.parts), ast.parse(path.read_text(), str(path))


def _imports(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


OUTSIDE_GRAVELER = [
    (name, tree) for name, tree in _modules() if not name.startswith("kvlake.graveler")
]


@pytest.mark.parametrize(("name", "tree"), OUTSIDE_GRAVELER, ids=[n for n, _ in OUTSIDE_GRAVELER])
def test_only_graveler_spells_graveler_keys(name: str, tree: ast.Module) -> None:
    private = [i for i in _imports(tree) if i.startswith(GRAVELER_PRIVATE)]
    assert not private, f"{name} imports graveler internals {private}: use Graveler's API"
    literals = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in GRAVELER_PARTITIONS
    ]
    assert not literals, f"{name} spells graveler partitions {literals}"


def test_the_check_sees_a_module_that_reaches_in() -> None:
    tree = ast.parse("from kvlake.graveler import keys\nkeys.staging_partition('t')\n")
    assert any(i.startswith(GRAVELER_PRIVATE) for i in _imports(tree))
