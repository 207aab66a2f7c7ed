"""Long-lived processes a test starts (servers, workers) end when its test worker dies.

They run in sessions of their own (`start_new_session`), so a test worker that crashes
(a segfault, the OOM killer) would leave them running to the end of the suite, their
background jobs loading the machine and their PostgreSQL connections held. Started
through `python_dying_with_parent`, the kernel sends them SIGTERM (a graceful stop)
when the process that started them dies (Linux's PR_SET_PDEATHSIG, which survives
the exec into the real command).
"""

from __future__ import annotations

import sys
from typing import Final

_SET_DEATH_SIGNAL: Final = (
    "import ctypes, os, signal, sys;"
    " ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM);"  # 1: PR_SET_PDEATHSIG
    " os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def python_dying_with_parent(*arguments: str) -> list[str]:
    """The command line running `python <arguments>` that is stopped when the process
    running the test dies (tests run on the worker's main thread, which lives as long)."""
    return [sys.executable, "-c", _SET_DEATH_SIGNAL, *arguments]
