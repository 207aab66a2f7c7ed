"""`python -m kvlake`: the `kvlake` command, for when only the interpreter is at hand.

It is the same click group as the console script, so both spell every flag
and report every error the same way; tests and benchmarks start servers with
it through `sys.executable`, whatever the venv's bin directory is.
"""

from kvlake.cli import main

if __name__ == "__main__":
    main()
