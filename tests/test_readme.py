"""The README's library example runs as written (with its folder moved to a temporary one)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_library_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text()
    section = text[text.index("The same in the library") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "the README lost its library example"
    source = code.group(1).replace("/tmp/lake", str(tmp_path / "lake"))
    exec(compile(source, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    assert capsys.readouterr().out == "first\n"
