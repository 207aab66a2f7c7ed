"""The README's quickstart runs as written against a real server: the command-line block
in a shell (the `kvlake` console script), then the Python block with lakeFS's client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server
from tests.cli.conftest import Cli

README = Path(__file__).resolve().parents[2] / "README.md"


def quickstart_block(language: str) -> str:
    text = README.read_text()
    section = text[text.index("Then, from the") : text.index("The same in the library")]
    found = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert found is not None, f"the README's quickstart lost its {language} block"
    return found.group(1)


def test_the_command_line_quickstart_runs(cli: Cli, cli_server: Server, tmp_path: Path) -> None:
    block = quickstart_block("sh")
    # The exports are the banner's lines; the fixture's environment holds the same values.
    script = "\n".join(line for line in block.splitlines() if not line.startswith("export "))
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("KVLAKE_", "LAKECTL_"))}
    environment |= cli.env | {
        "HOME": str(cli.home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.endswith("hello\n"), done.stdout
    assert "    first" in done.stdout


def test_the_python_quickstart_runs(cli_server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    source = quickstart_block("python").replace("http://127.0.0.1:8000", cli_server.url)
    names = {"ACCESS_KEY_ID": ACCESS_KEY_ID, "SECRET_ACCESS_KEY": SECRET_ACCESS_KEY}
    exec(compile(source, "README.md", "exec"), names)  # noqa: S102 - our own documentation
    assert capsys.readouterr().out == "b'hello'\n"
