"""The server's background cleaner survives a failing store and stops when asked."""

from __future__ import annotations

import threading

from kvlake.api.services import _keep_running
from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler.cleaner import Cleaner
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.support import wait_until


def test_a_failing_pass_is_retried_and_stop_ends_the_loop() -> None:
    blocks = MemoryBlockStore()
    store = FaultyStore(MemoryStore(), [Fault(op="scan", times=3)])
    graveler = Graveler(store, CommittedManager(blocks), check_namespace=blocks.check_namespace)
    stop = threading.Event()
    cleaner = Cleaner(graveler)
    thread = threading.Thread(
        target=_keep_running,
        args=("cleaner", lambda stop, interval: cleaner.run(stop, interval=interval), stop, 0.01),
    )

    def retried() -> bool:
        assert thread.is_alive(), "the cleaner thread died on a store failure"
        return len(store.injected) >= 3 and store.count("scan") >= 6

    thread.start()
    try:
        wait_until(retried, interval=0.01, message="three failed passes and three good ones")
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
