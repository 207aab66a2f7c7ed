"""The README and docs/*.md name only things that exist: code paths, modules, settings, files.

Docs drift when code moves: a module split, a setting renamed, a variable that was
only ever planned. Every `kvlake/...` path (backticked, in a code block or in prose;
`tests/`, `benchmarks/` and `scripts/` paths too), every `kvlake.module` a doc runs,
imports or calls into, every `KVLAKE_*` variable, every `kvlake` command line and every
relative link is checked against the tree, and a failure names the doc, the line and
what to change, so the fix is an edit of the doc (or of the code, if the doc was right).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import click
import msgspec
import pytest

from kvlake.cli.root import main
from kvlake.config import CONFIG_ENV, ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_PATH = re.compile(r"(?<![\w/.\-])(?:kvlake|tests|benchmarks|scripts)/[\w/.*\-]*")
_MODULE = re.compile(
    r"(?:(?<=-m )|(?<=from )|(?<=import ))kvlake(?:\.[A-Za-z_]\w*)+"
    r"|(?<![\w/.\-])kvlake(?:\.[A-Za-z_]\w*){2,}"
)
"""A module as `python -m` or an import names it, or a dotted name of two dots or more:
`kvlake.config.load_settings`. (`kvlake.job_id` alone is a metadata key, not a module.)"""
_VARIABLE = re.compile(r"\bKVLAKE_[A-Z0-9_]*")
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


class Mention(NamedTuple):
    doc: Path
    line: int
    name: str

    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def mentions(doc: Path, pattern: re.Pattern[str]) -> Iterator[Mention]:
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        for match in pattern.finditer(line):
            yield Mention(doc, number, match.group(1) if pattern.groups else match.group(0))


def settings_variables(cls: type[msgspec.Struct] = Settings, prefix: str = ENV_PREFIX) -> set[str]:
    """Every variable `load_settings` reads, spelled as kvlake/config.py's `_build` spells it."""
    names: set[str] = set()
    for field in msgspec.structs.fields(cls):
        variable = f"{prefix}{field.name.upper()}"
        if isinstance(field.type, type) and issubclass(field.type, msgspec.Struct):
            names |= settings_variables(field.type, f"{variable}_")
        else:
            names.add(variable)
    return names


def suite_variables() -> set[str]:
    """`KVLAKE_TEST_*` variables the test suite reads (each spelled once, in quotes)."""
    found: set[str] = set()
    for source in (ROOT / "tests").rglob("*.py"):
        if source.name != Path(__file__).name:
            found |= set(re.findall(r"[\"'](KVLAKE_TEST_[A-Z0-9_]+)[\"']", source.read_text()))
    return found


KNOWN_VARIABLES = settings_variables() | {CONFIG_ENV} | suite_variables()


def _ids(doc: Path) -> str:
    return str(doc.relative_to(ROOT))


def _report(failures: list[str]) -> str:
    return "\n".join(["the docs name things that do not exist:", *failures])


@pytest.mark.parametrize("doc", DOCS, ids=_ids)
def test_every_path_exists(doc: Path) -> None:
    failures = []
    for mention in mentions(doc, _PATH):
        path = mention.name.rstrip(".,:;").rstrip("/")
        if not any(ROOT.glob(path)):
            failures.append(
                f"{mention.where()}: {path} is not in the tree; name the module or folder"
                " where that code lives now (git log --follow finds where it moved)"
            )
    assert not failures, _report(failures)


def _module_exists(dotted: str) -> bool:
    """Whether `dotted` is a module of the tree, or a name its nearest module defines."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:end])
        source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if source.is_file():
            rest = parts[end:]
            return (
                not rest or re.search(rf"\b{re.escape(rest[0])}\b", source.read_text()) is not None
            )
    return False


@pytest.mark.parametrize("doc", DOCS, ids=_ids)
def test_every_kvlake_module_exists(doc: Path) -> None:
    failures = [
        f"{mention.where()}: {mention.name} is no module of the tree (nor a name in one);"
        " name the module as `python -m` or an import spells it now"
        for mention in mentions(doc, _MODULE)
        if not _module_exists(mention.name)
    ]
    assert not failures, _report(failures)


@pytest.mark.parametrize("doc", DOCS, ids=_ids)
def test_every_setting_exists(doc: Path) -> None:
    failures = []
    for mention in mentions(doc, _VARIABLE):
        name = mention.name
        if name == ENV_PREFIX:  # `KVLAKE_*` or `KVLAKE_<SECTION>_<NAME>`: every setting
            continue
        if name.endswith("_"):  # a family: `KVLAKE_DELETION_*`
            if not any(known.startswith(name) for known in KNOWN_VARIABLES):
                failures.append(
                    f"{mention.where()}: no setting starts with {name}; check the section's"
                    " name in kvlake/config.py's Settings"
                )
        elif name not in KNOWN_VARIABLES:
            failures.append(
                f"{mention.where()}: {name} is not a setting kvlake reads; use a field of"
                " kvlake/config.py's Settings (KVLAKE_<SECTION>_<FIELD>) or drop the mention"
            )
    assert not failures, _report(failures)


@pytest.mark.parametrize("doc", DOCS, ids=_ids)
def test_every_relative_link_resolves(doc: Path) -> None:
    failures = [
        f"{mention.where()}: the link to {mention.name} leads nowhere; link a file that exists"
        for mention in mentions(doc, _LINK)
        if "://" not in mention.name
        and not mention.name.startswith("mailto:")
        and not (doc.parent / mention.name).exists()
    ]
    assert not failures, _report(failures)


_COMMAND = re.compile(r"^(?:\$ )?kvlake((?: [a-z][a-z-]*(?:\|[a-z][a-z-]*)*)+)")


def command_lines(doc: Path) -> Iterator[Mention]:
    """`kvlake ...` as a shell line of a code block or a backticked span begins it."""
    fenced = False
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        for text in [line.strip()] if fenced else re.findall(r"`([^`]+)`", line):
            found = _COMMAND.match(text)
            if found:
                yield Mention(doc, number, found.group(1).strip())


def unknown_command(words: str) -> str | None:
    """The first word (or `a|b` alternative) that names no subcommand where it stands."""
    command: click.Command = main
    for word in words.split():
        if not isinstance(command, click.Group):
            return None  # the rest are arguments
        found = [command.get_command(click.Context(command), name) for name in word.split("|")]
        if found[0] is None or None in found:
            return word
        command = found[0]
    return None


@pytest.mark.parametrize("doc", DOCS, ids=_ids)
def test_every_kvlake_command_exists(doc: Path) -> None:
    failures = []
    for mention in command_lines(doc):
        unknown = unknown_command(mention.name)
        if unknown is not None:
            failures.append(
                f"{mention.where()}: `kvlake {mention.name}`: {unknown!r} is no command there;"
                " spell it as `kvlake --help` lists it"
            )
    assert not failures, _report(failures)


def test_the_checks_see_the_mentions_they_check() -> None:
    """The patterns match the spellings the docs use, so a passing run is not a blind one."""
    readme = ROOT / "README.md"
    assert any(m.name.startswith("KVLAKE_DATA_DIR") for m in mentions(readme, _VARIABLE))
    assert "kvlake/config.py" in {m.name for m in mentions(ROOT / "docs" / "kv.md", _PATH)}
    assert "benchmarks/kv_bench.py" in {m.name for m in mentions(ROOT / "docs" / "kv.md", _PATH)}
    assert "kvlake.config" in {m.name for m in mentions(readme, _MODULE)}
    assert "docs/performance.md" in {m.name for m in mentions(readme, _LINK)}
    assert {"KVLAKE_DELETION_SEND_DELAY", "KVLAKE_SERVER_BODY_BUDGET"} <= KNOWN_VARIABLES
    assert "KVLAKE_DELETION_WORKERS" not in KNOWN_VARIABLES
    assert not _module_exists("kvlake.pipelines.no_such_module")
    assert "kv migrate" in {
        m.name for m in command_lines(readme.parent / "docs" / "configuration.md")
    }
    assert unknown_command("kv migrate SRC_URL") is None
    assert unknown_command("kv check|migrate") is None
    assert unknown_command("kv smoke") == "smoke"
    assert unknown_command("repo create|nope") == "create|nope"
