"""The README's library example runs as written (with its folder moved to a temporary one),
and the README stays a front page that opens with the two set-up commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
FRONT_PAGE_LINES = 160
"""Issue 31 asked for a front page of about 150 lines; a little slack, not a second log."""


def test_the_library_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text()
    section = text[text.index("The same in the library") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "the README lost its library example"
    source = code.group(1).replace("/tmp/lake", str(tmp_path / "lake"))
    exec(compile(source, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    assert capsys.readouterr().out == "first\n"


def test_the_readme_opens_with_the_two_commands_and_stays_a_front_page() -> None:
    """A fresh machine needs two commands, and they come first; details live in docs/*.md
    (the benchmark log in docs/performance.md), so the README stays a page one reads."""
    text = README.read_text()
    first = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first is not None and text.index(first.group(0)) < text.index("\n## ")
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert commands == ["make serve", "make test"], (
        "README.md must open with `make serve` and `make test`, the whole set-up of a fresh"
        f" machine, and nothing else in that block; it has {commands}"
    )
    lines = len(text.splitlines())
    assert lines <= FRONT_PAGE_LINES, (
        f"README.md has {lines} lines, more than {FRONT_PAGE_LINES}: move detail to the"
        " docs/*.md page it belongs to and link it"
    )
