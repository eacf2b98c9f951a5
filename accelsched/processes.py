"""What every process pool of accelsched does around its workers: whether it can start them
(:func:`can_spawn`), and that they exit with the process that started them (:func:`exit_with_parent`)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from multiprocessing import current_process

__all__ = ["ORPHAN_CHECK_S", "can_spawn", "exit_with_parent"]

ORPHAN_CHECK_S = 1.0
"""How often a worker process checks that the process that started it is alive."""

PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process receives when its parent dies."""


def can_spawn() -> bool:
    """Whether spawned processes can start from here.

    A spawned process imports the caller's main module again, which fails when it has no file
    (a script piped to ``python -``), and a daemonic process (a ``multiprocessing.Pool`` or Dask
    worker) may not start any: callers then do the work in this process.
    """
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return not ((main is not None and not os.path.exists(main)) or current_process().daemon)


def exit_with_parent(parent: int) -> None:
    """Make this worker process exit once ``parent``, the process that started it, has died.

    Call it from a pool's initializer, with the parent's pid (``os.getpid()`` in the parent). A parent
    that is killed cannot shut its pool down, and its workers would otherwise go on, orphaned, for
    hours (seen: two co-exploration pair solves for 52 minutes). On Linux the kernel kills this
    process with its parent, at once, even inside a solver call; a daemon thread also checks every
    :data:`ORPHAN_CHECK_S` seconds, which is all there is elsewhere.

    Parameters
    ----------
    parent
        The pid of the process that started this one. If it has already died (a worker starts slowly
        and its parent may be killed meanwhile), this process exits at once.
    """
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the prctl, which would then never fire
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="exit-with-parent", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_S)
    os._exit(1)
