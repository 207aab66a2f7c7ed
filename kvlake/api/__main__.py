"""`python -m kvlake.api [--host H] [--port P] [--data-dir D] [--kv URL] [--workers N]`."""

from __future__ import annotations

import argparse
import os
import sys

from kvlake.api.server import serve
from kvlake.config import load_settings
from kvlake.errors import KvlakeError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kvlake.api", description=__doc__)
    parser.add_argument("--host")
    parser.add_argument("--port")
    parser.add_argument("--data-dir")
    parser.add_argument("--kv", help="KV store URL, e.g. postgres://user@host/db")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    environ = dict(os.environ)
    for name, value in (
        ("KVLAKE_HOST", args.host),
        ("KVLAKE_PORT", args.port),
        ("KVLAKE_DATA_DIR", args.data_dir),
        ("KVLAKE_KV_URL", args.kv),
    ):
        if value:
            environ[name] = value
    try:
        serve(load_settings(environ), workers=args.workers)
    except KvlakeError as exc:
        print(f"kvlake: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
