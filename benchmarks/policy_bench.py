"""Policy wildcard matching: the backtracking-free matcher beside the regex it replaced.

Prints, for a few pattern and resource shapes, the median time per match of
`kvlake.auth.wildcard.match` and of the old translation to one regular
expression, measured in the same run (the machine is shared: read the ratio).
The old regex is given at most `--regex-budget` seconds per shape.

    .venv/bin/python benchmarks/policy_bench.py
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable

from kvlake.auth.wildcard import match


def regex_match(pattern: str, value: str) -> bool:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch("".join(parts), value, re.DOTALL) is not None


PREFIX = "arn:lakefs:fs:::repository/r/object/"
SHAPES = {
    "one star, ordinary path": (PREFIX + "public/*", PREFIX + "public/2026/11/a.csv"),
    "four stars, ordinary path": (PREFIX + "*/*/*/*.csv", PREFIX + "a/b/c/d/e.csv"),
    "four stars, 100 slashes": (PREFIX + "*/*/*/*.csv", PREFIX + "/" * 100),
    "four stars, 200 slashes": (PREFIX + "*/*/*/*.csv", PREFIX + "/" * 200),
    "four stars, 700 slashes": (PREFIX + "*/*/*/*.csv", PREFIX + "/" * 700),
}


def median_seconds(fn: Callable[[str, str], bool], pattern: str, value: str, budget: float) -> str:
    samples: list[float] = []
    deadline = time.perf_counter() + budget
    while len(samples) < 50 and (not samples or time.perf_counter() < deadline):
        start = time.perf_counter()
        fn(pattern, value)
        samples.append(time.perf_counter() - start)
        if samples[-1] > budget:
            return f">{budget:.1f} s (1 run: {samples[-1]:.1f} s)"
    return f"{statistics.median(samples) * 1e6:,.1f} us"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regex-budget", type=float, default=2.0)
    args = parser.parse_args()
    print(f"| shape | wildcard.match | old regex (budget {args.regex_budget} s) |")
    print("|---|---|---|")
    for name, (pattern, value) in SHAPES.items():
        ours = median_seconds(match, pattern, value, 1.0)
        theirs = median_seconds(regex_match, pattern, value, args.regex_budget)
        print(f"| {name} | {ours} | {theirs} |")


if __name__ == "__main__":
    main()
