"""The process a crash test kills: runs one bulk delete, SIGKILLing itself at a chosen KV call.

`python -m tests.operations.crash_child KV_URL BLOCKS_URL OPERATION_ID NOW OP SKIP [PARTITION]`:
the `SKIP`+1-th driver call of kind `OP` (`any` for every kind) in `PARTITION`
(if given) kills the process, after the call when OP is prefixed with `after:`.
Every operation record the run writes is appended to `<kv file>.swaps` once it landed
(see `record_swaps`), so the test can check that counters never went backwards.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from kvlake.blockstore import open_blockstore
from kvlake.kv import open_store
from kvlake.kv.faults import Call, Fault, FaultyStore
from kvlake.operations import local_engine
from tests.operations.crash_setup import lake_over, record_swaps
from tests.support import FakeClock


def _die(call: Call) -> Exception:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")  # pragma: no cover


def main() -> None:
    kv_url, blocks_url, operation_id, now, op, skip = sys.argv[1:7]
    partition = sys.argv[7].encode() if len(sys.argv) > 7 else None
    after = op.startswith("after:")
    fault = Fault(
        op=op.removeprefix("after:"),
        when="after" if after else "before",
        skip=int(skip),
        partition=partition,
        error=_die,
    )
    clock = FakeClock()
    clock.now = float(now)
    store = FaultyStore(open_store(kv_url), [fault])
    lake = lake_over(store, open_blockstore(blocks_url), clock)
    record_swaps(lake, kv_url)
    local_engine(lake.engine_context(owner="doomed")).run(operation_id, threading.Event())
    print("not killed")


if __name__ == "__main__":
    main()
