"""Regression check: one benchmark on the current tree and on an earlier commit, back to back.

    .venv/bin/python benchmarks/compare_commits.py BASE [--rounds 3] -- \\
        benchmarks/api_bench.py --seconds 5 --backends sqlite

Checks BASE out into a detached git worktree in a temporary folder, then runs the
benchmark script (always the current tree's copy, so both sides are measured the same
way) `--rounds` times per tree, alternating which tree goes first, with the tree under
test first on PYTHONPATH: the servers and imports of a run are that tree's `kvlake`.
The machine is shared, so single runs mean little; it prints every run, the median per
tree, the ratio current/base of the medians, and the load average before and after.

A benchmark takes part by accepting `--json PATH` and writing there one object
`{scenario: {metric: number}}` (api_bench.py does). Whether a higher ratio is better
depends on the metric: req/s up is good, ms up is bad. Nothing here asserts on timing.
The worktree is removed (and git's record of it pruned) even when a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
Results = dict[str, dict[str, float]]
"""One run's figures: scenario -> metric -> value."""


def _git(repo: Path, *args: str) -> str:
    finished = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if finished.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {finished.stderr.strip()}")
    return finished.stdout.strip()


def _load() -> str:
    return " ".join(f"{figure:.2f}" for figure in os.getloadavg())


def run_once(tree: Path, command: list[str], scratch: Path, label: str) -> Results:
    """Run the benchmark in `tree`'s folder with `tree` first on PYTHONPATH; returns the
    figures it wrote."""
    out = scratch / f"{label}.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH", "")]))
    # In the tree's folder: a server the benchmark starts with `python -m kvlake` has the
    # working folder first on sys.path, ahead of PYTHONPATH, and run from the current
    # tree both sides' servers imported the current tree's kvlake.
    finished = subprocess.run(
        [sys.executable, *command, "--json", str(out)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if finished.returncode != 0 or not out.exists():
        tail = (finished.stderr or finished.stdout).strip().splitlines()[-5:]
        raise SystemExit(f"{label}: the benchmark failed ({finished.returncode}): {tail}")
    results: Results = json.loads(out.read_text())
    return results


def compare(
    base: list[Results], current: list[Results]
) -> list[tuple[str, str, list[float], list[float]]]:
    """Rows of (scenario, metric, base values, current values) present on both sides."""
    rows = []
    for scenario, metrics in current[0].items():
        for metric in metrics:
            before = [run[scenario][metric] for run in base if metric in run.get(scenario, {})]
            after = [run[scenario][metric] for run in current if metric in run.get(scenario, {})]
            if before and after:
                rows.append((scenario, metric, before, after))
    return rows


def report(rows: list[tuple[str, str, list[float], list[float]]], base: str) -> None:
    print(
        f"\n{'scenario':<30}{'metric':<10}{'base median':>13}{'current median':>16}"
        f"{'ratio':>8}   runs (base | current)"
    )
    for scenario, metric, before, after in rows:
        old, new = statistics.median(before), statistics.median(after)
        ratio = f"{new / old:8.2f}" if old else f"{'-':>8}"
        runs = " ".join(f"{v:g}" for v in before) + " | " + " ".join(f"{v:g}" for v in after)
        print(f"{scenario:<30}{metric:<10}{old:>13,.2f}{new:>16,.2f}{ratio}   {runs}")
    print(f"ratio = current / base ({base}); for req/s higher is better, for ms lower")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("base", help="the earlier commit (any git revision)")
    parser.add_argument("command", nargs="+", help="benchmark script and its arguments")
    parser.add_argument("--rounds", type=int, default=3, help="runs per tree")
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="the current tree")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds is {args.rounds}; give 1 or more")
    repo = args.repo.resolve()
    sha = _git(repo, "rev-parse", "--verify", f"{args.base}^{{commit}}")
    script = (repo / args.command[0]).resolve()
    if not script.is_file():
        parser.error(f"benchmark {args.command[0]!r} is not a file under {repo}")
    command = [str(script), *args.command[1:]]
    scratch = Path(tempfile.mkdtemp(prefix="kvlake-compare-"))
    tree = scratch / "base"
    _git(repo, "worktree", "add", "--detach", str(tree), sha)
    print(f"base {sha[:12]} in {tree}; current {repo}; load average {_load()}", flush=True)
    base_runs: list[Results] = []
    current_runs: list[Results] = []
    try:
        for n in range(args.rounds):
            order = [("base", tree, base_runs), ("current", repo, current_runs)]
            for label, path, runs in order if n % 2 == 0 else order[::-1]:
                runs.append(run_once(path, command, scratch, f"{label}-{n}"))
                print(f"round {n + 1}/{args.rounds}: {label} done, load {_load()}", flush=True)
    finally:
        _git(repo, "worktree", "remove", "--force", str(tree))
        _git(repo, "worktree", "prune")
        shutil.rmtree(scratch, ignore_errors=True)
    report(compare(base_runs, current_runs), sha[:12])
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
