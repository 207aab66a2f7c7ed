"""benchmarks/compare_commits.py: each tree's own code is measured, in alternating order,
its children's too.

The benchmark here reads a constant from a module of the tree under test, so the printed
medians show which tree each run imported; no figure depends on timing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_commits.py"
BENCH = """\
import argparse, json, os, subprocess, sys
from pathlib import Path
import mark
# A child started as servers are (`python -m kvlake`): the working folder comes first.
child = subprocess.run([sys.executable, "-c", "import mark; print(mark.VALUE)"],
                       capture_output=True, text=True, check=True)
assert int(child.stdout) == mark.VALUE, f"a child imported {child.stdout.strip()}"
parser = argparse.ArgumentParser()
parser.add_argument("--json", type=Path)
args = parser.parse_args()
with open(os.environ["ORDER_LOG"], "a") as log:
    log.write(f"{mark.VALUE}\\n")
if mark.VALUE < 0:
    raise SystemExit("negative mark")
args.json.write_text(json.dumps({"probe": {"value": mark.VALUE}}))
"""


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "benchmarks").mkdir()  # as in kvlake: the script's folder is not the tree's root
    (repo / "benchmarks" / "bench.py").write_text(BENCH)
    (repo / "mark.py").write_text("VALUE = 2\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "mark.py").write_text("VALUE = 6\n")  # the current tree, uncommitted
    return repo


def _compare(repo: Path, log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run from the current tree's folder, as a developer does."""
    command = [sys.executable, str(SCRIPT), "--repo", str(repo), *args]
    env = {"PATH": "/usr/bin:/bin", "ORDER_LOG": str(log)}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=repo)


def test_each_tree_runs_its_own_code_in_alternating_order(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path), tmp_path / "order.log"
    finished = _compare(repo, log, "--rounds", "3", "HEAD", "--", "benchmarks/bench.py")
    assert finished.returncode == 0, finished.stderr
    assert log.read_text().split() == ["2", "6", "6", "2", "2", "6"]
    row = next(line for line in finished.stdout.splitlines() if line.startswith("probe"))
    assert row.split()[1:5] == ["value", "2.00", "6.00", "3.00"]
    assert _git(repo, "worktree", "list").count("\n") == 1  # the temporary one is gone


def test_a_failing_run_stops_with_its_error_and_removes_the_worktree(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path), tmp_path / "order.log"
    (repo / "mark.py").write_text("VALUE = -1\n")
    finished = _compare(repo, log, "HEAD", "--", "benchmarks/bench.py")
    assert finished.returncode != 0
    assert "current-0: the benchmark failed" in finished.stderr
    assert "negative mark" in finished.stderr
    assert _git(repo, "worktree", "list").count("\n") == 1


def test_an_unknown_base_is_refused_before_anything_runs(tmp_path: Path) -> None:
    repo, log = _repo(tmp_path), tmp_path / "order.log"
    finished = _compare(repo, log, "no-such-commit", "--", "benchmarks/bench.py")
    assert finished.returncode != 0
    assert "no-such-commit" in finished.stderr
    assert not log.exists()
    assert _git(repo, "worktree", "list").count("\n") == 1
