"""The `kvlake` command line; `main` is the console script's entry point."""

from kvlake.cli.root import main

__all__ = ["main"]
