"""Every kvlake package's face: a sorted `__all__` of names that exist, and nothing missing.

STYLE.md: a layer is a package whose `__init__.py` only re-exports a sorted
`__all__`, and other layers import from the package, not its modules. The
packages are found on disk (every folder with an `__init__.py`), so a new one is
checked without a line here.
"""

from __future__ import annotations

import ast
import collections
import functools
import importlib
import inspect
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType

import pytest

import kvlake

SOURCE = Path(kvlake.__file__).parent
PACKAGES = sorted(
    ".".join(("kvlake", *init.parent.relative_to(SOURCE).parts))
    for init in SOURCE.rglob("__init__.py")
)
# Packages whose whole face is these modules: every public name they define is exported.
FACE_MODULES = {"kvlake.blockstore": ("registry", "store"), "kvlake.kv": ("registry",)}


def _exported(package: ModuleType) -> list[str]:
    return list(getattr(package, "__all__", []))


def _public(module: ModuleType) -> set[str]:
    """Names a module binds for others: not private, not modules, not `from __future__`."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }


@functools.cache
def _absolute_imports() -> dict[str, set[str]]:
    """Module -> the names kvlake and its tests import from it (`from module import ...`),
    parsed once for every package's test (parsing every file per package took minutes)."""
    names: dict[str, set[str]] = collections.defaultdict(set)
    for source in (*SOURCE.rglob("*.py"), *Path(__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names[node.module].update(alias.name for alias in node.names)
    return names


def _imported_from(package: str) -> set[str]:
    """Names kvlake and its tests import from the package itself, less submodules and dunders."""
    names = _absolute_imports().get(package, set())
    return {n for n in names if not n.startswith("__") and not find_spec(f"{package}.{n}")}


@pytest.fixture(params=PACKAGES)
def package(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(request.param)


def test_every_layer_is_found() -> None:
    layers = {"kvlake.api", "kvlake.auth", "kvlake.blockstore", "kvlake.catalog"}
    assert layers | {"kvlake.deletion", "kvlake.graveler.committed", "kvlake.kv"} <= set(PACKAGES)


def test_all_is_sorted_as_isort_sorts_it(package: ModuleType) -> None:
    exported = _exported(package)
    # CONSTANTS, then Classes, then functions, each alphabetically.
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    assert len(exported) == len(set(exported))


def test_all_names_exist_and_are_re_exported(package: ModuleType) -> None:
    for name in _exported(package):
        value = getattr(package, name)  # AttributeError names a missing export
        if inspect.isclass(value) or inspect.isfunction(value):
            # The package only re-exports: what it names is defined in one of its modules.
            assert value.__module__.startswith(f"{package.__name__}."), name


def test_all_is_every_public_name_of_the_package(package: ModuleType) -> None:
    assert set(_exported(package)) == _public(package)


def test_all_has_every_name_other_modules_import_from_the_package(package: ModuleType) -> None:
    assert _imported_from(package.__name__) <= set(_exported(package))


@pytest.mark.parametrize("package_name", sorted(FACE_MODULES))
def test_all_has_every_public_name_of_the_modules_that_make_the_face(package_name: str) -> None:
    package = importlib.import_module(package_name)
    for module_name in FACE_MODULES[package_name]:
        module = importlib.import_module(f"{package_name}.{module_name}")
        defined = {
            name
            for name in _public(module)
            if getattr(getattr(module, name), "__module__", module.__name__) == module.__name__
        }
        assert defined <= set(_exported(package)), module.__name__
