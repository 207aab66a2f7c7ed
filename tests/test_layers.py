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
        "from kvlake.graveler.refs.store import Refs",
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


LAYERS: dict[str, int] = {
    "errors": 0,
    "closing": 1,
    "permissions": 1,
    "ids": 1,
    "uri": 1,
    "http": 1,
    "sample": 1,
    "kvlake": 1,
    "kv": 2,
    "blockstore": 2,
    "config": 3,
    "graveler": 4,
    "deletion": 5,
    "operations": 6,
    "auth": 7,
    "catalog": 7,
    "actions": 8,
    "lake": 9,
    "gateway": 10,
    "pipelines": 10,
    "api": 11,
    "ui": 12,
    "cli": 13,
    "__main__": 14,
}
"""docs/design.md's layers, bottom up: a module imports its own unit (a subpackage, or a
top-level module) and units of a lower rank only. Units of one rank are siblings that
import neither way (auth and catalog; gateway and pipelines). `kvlake` is the package's
own __init__.py (its version)."""


def _documented_layers() -> dict[str, int]:
    """docs/design.md's rank table: `rank  unit  what`, or `rank  a, b, c: what`."""
    text = (PACKAGE.parent / "docs" / "design.md").read_text()
    table = text.split("rank  units\n", 1)[1].split("```", 1)[0]
    ranks: dict[str, int] = {}
    for line in table.splitlines():
        rank, rest = line.split(maxsplit=1)
        first = rest.split()[0]
        for unit in rest.split(":")[0].split(",") if first.endswith(",") else [first]:
            ranks[unit.strip()] = int(rank)
    return ranks


def test_the_design_docs_rank_table_is_the_one_checked() -> None:
    assert _documented_layers() == {u: r for u, r in LAYERS.items() if u != "kvlake"}


MOUNTS = {("kvlake.api.app", "kvlake.ui")}
"""The upward imports the design names: api/app.py mounts the UI, whose pages call the
API's operations (imported inside the app's factory, after kvlake.api is built)."""


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module a relative `from ... import` names, from inside `module`."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(module: str, tree: ast.Module, is_package: bool = False) -> Iterator[tuple[str, int]]:
    """Every kvlake module `tree` imports, with its line: at the top, inside functions and
    `if TYPE_CHECKING:` blocks alike; `import a.b`, `from a import b` (b a module or a name
    of a), relative imports, and `importlib.import_module` of a constant."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node, is_package) if node.level else node.module or ""
            yield source, node.lineno
            for alias in node.names:  # `from kvlake import cli` imports kvlake.cli
                if _is_module(f"{source}.{alias.name}"):
                    yield f"{source}.{alias.name}", node.lineno
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("importlib.import_module", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, node.lineno


def _is_module(name: str) -> bool:
    """Whether `name` is a kvlake module or package, read from the source tree."""
    if not _within(name, "kvlake"):
        return False
    path = PACKAGE.joinpath(*name.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def upward_imports(module: str, tree: ast.Module, is_package: bool = False) -> list[str]:
    """Each import of `module` that runs up docs/design.md's layers, as a message naming
    the import, its line and the rule it breaks."""
    found = []
    unit = _unit(module)
    for imported, line in _imports(module, tree, is_package):
        if not _within(imported, "kvlake") or _unit(imported) == unit:
            continue
        target = _unit(imported)
        if any(_within(module, m) and _within(imported, t) for m, t in MOUNTS):
            continue
        if target not in LAYERS or LAYERS[target] >= LAYERS[unit]:
            found.append(
                f"{module} line {line} imports {imported}: kvlake.{unit} (layer"
                f" {LAYERS[unit]}) may import only layers below it, and kvlake.{target} is"
                f" layer {LAYERS.get(target, 'none')} (LAYERS in tests/test_layers.py,"
                " docs/design.md): move what both need down, or pass it in"
            )
    return found


def test_every_unit_has_a_layer() -> None:
    units = {_unit(name.removesuffix(".__init__")) for name, _ in _modules()}
    assert units - set(LAYERS) == set(), "place each new unit in LAYERS and docs/design.md"
    assert set(LAYERS) - units == set(), "a unit in LAYERS no longer exists: take it off"


def test_nothing_imports_upward() -> None:
    found = [
        message
        for name, tree in _modules()
        for message in upward_imports(
            name.removesuffix(".__init__"), tree, name.endswith(".__init__")
        )
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "from kvlake.cli import main",
        "import kvlake.api.app",
        "from kvlake import cli",
        "from kvlake.api import app",
        "from ..cli import main",
        "def f():\n    from kvlake.pipelines import gc_job\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kvlake.lake import Lake\n",
        "import importlib\nimportlib.import_module('kvlake.api')\n",
    ],
    ids=[
        "from-import",
        "import-dotted",
        "from-package-import-module",
        "from-subpackage-import-module",
        "relative",
        "inside-a-function",
        "type-checking",
        "import-module-call",
    ],
)
def test_the_layer_check_sees_every_kind_of_upward_import(source: str) -> None:
    found = upward_imports("kvlake.catalog.objects", ast.parse(source))
    assert len(found) >= 1, source
    assert "kvlake.catalog (layer 7) may import only layers below it" in found[0], found


def test_the_layer_check_lets_downward_and_own_imports_through() -> None:
    source = "from kvlake import errors\nfrom . import guard\nfrom ..graveler import Graveler\n"
    assert upward_imports("kvlake.catalog.objects", ast.parse(source)) == []
