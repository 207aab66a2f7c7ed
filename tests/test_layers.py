"""The layers keep their boundaries: checked on the source, so a new import cannot slip in.

Outside kvlake/graveler, code imports graveler's package face only, and never
spells one of its KV partitions: its key schema and engines are its own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kvlake"

GRAVELER_PARTITIONS = (b"graveler", b"staging/", b"graveler_deleted", b"graveler_namespaces")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        yield ".".join(relative.parts), ast.parse(path.read_text(), str(path))


def _graveler_internals(tree: ast.Module) -> Iterator[str]:
    """Graveler modules a tree imports: anything but the package face `kvlake.graveler`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("kvlake.graveler."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("kvlake.graveler."):
                yield node.module
            elif node.module == "kvlake.graveler":
                for alias in node.names:
                    if find_spec(f"kvlake.graveler.{alias.name}") is not None:
                        yield f"kvlake.graveler.{alias.name}"


OUTSIDE_GRAVELER = [
    (name, tree) for name, tree in _modules() if not name.startswith("kvlake.graveler")
]


@pytest.mark.parametrize(("name", "tree"), OUTSIDE_GRAVELER, ids=[n for n, _ in OUTSIDE_GRAVELER])
def test_only_graveler_spells_graveler_keys(name: str, tree: ast.Module) -> None:
    private = list(_graveler_internals(tree))
    assert not private, f"{name} imports graveler's modules {private}: import kvlake.graveler"
    literals = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in GRAVELER_PARTITIONS
    ]
    assert not literals, f"{name} spells graveler partitions {literals}"


def test_the_check_sees_a_module_that_reaches_in() -> None:
    for source in (
        "from kvlake.graveler import keys",
        "from kvlake.graveler.refs import Refs",
        "import kvlake.graveler.graveler",
    ):
        assert list(_graveler_internals(ast.parse(source))), source
    assert not list(_graveler_internals(ast.parse("from kvlake.graveler import Graveler")))


def _kvlake_imports(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("kvlake."))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kvlake"):
            yield node.module


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


DOORS = ("kvlake.api", "kvlake.cli", "kvlake.ui")
"""The gateway's siblings in DESIGN.md's top row: it uses the layers below, never them."""
GATEWAY_MOUNT = "kvlake.api.app"
"""The one module that may import the gateway: the server's app mounts it."""


@pytest.mark.parametrize(("name", "tree"), list(_modules()), ids=[n for n, _ in _modules()])
def test_the_gateway_stands_beside_the_api(name: str, tree: ast.Module) -> None:
    imported = list(_kvlake_imports(tree))
    if _within(name, "kvlake.gateway"):
        upward = [m for m in imported if any(_within(m, door) for door in DOORS)]
        assert not upward, f"{name} imports {upward}: the gateway uses the layers below only"
    elif name != GATEWAY_MOUNT:
        reaching = [m for m in imported if _within(m, "kvlake.gateway")]
        assert not reaching, f"{name} imports {reaching}: only {GATEWAY_MOUNT} mounts the gateway"


def test_the_gateway_check_sees_an_import_of_the_api() -> None:
    tree = ast.parse("from kvlake.api.ranges import parse_range")
    assert any(_within(m, "kvlake.api") for m in _kvlake_imports(tree))
