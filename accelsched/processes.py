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
from typing import Protocol

__all__ = ["ORPHAN_CHECK_S", "can_spawn", "exit_with_parent"]

ORPHAN_CHECK_S = 1.0
"""How often a worker process checks that the process that started it is alive."""

PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process receives when its parent dies."""


class _Process(Protocol):
    """What :func:`can_spawn` reads of a process (``multiprocessing.current_process()``)."""

    @property
    def daemon(self) -> bool:
        """Whether the process is daemonic."""
        ...


def can_spawn(main: object | None = None, process: _Process | None = None) -> bool:
    """Whether spawned processes can start from here.

    A spawned process imports the caller's main module again, which fails when it has no file
    (a script piped to ``python -``), and a daemonic process (a ``multiprocessing.Pool`` or Dask
    worker) may not start any: callers then do the work in this process.

    Parameters
    ----------
    main
        The main module (default ``sys.modules["__main__"]``); its ``__file__``, if any, must exist.
    process
        The current process (default ``multiprocessing.current_process()``); it must not be daemonic.
    """
    module = sys.modules.get("__main__") if main is None else main
    path = getattr(module, "__file__", None)
    daemonic = (current_process() if process is None else process).daemon
    return not ((path is not None and not os.path.exists(path)) or daemonic)


def exit_with_parent(parent: int, check_s: float = ORPHAN_CHECK_S) -> None:
    """Make this worker process exit once ``parent``, the process that started it, has died.

    Call it from a pool's initializer, with the parent's pid (``os.getpid()`` in the parent). A parent
    that is killed cannot shut its pool down, and its workers would otherwise go on, orphaned, for
    as long as their work lasts. On Linux the kernel kills this process with its parent, at once,
    even inside a solver call; a daemon thread also checks every ``check_s`` seconds, which is all
    there is elsewhere.

    Parameters
    ----------
    parent
        The pid of the process that started this one. If it has already died (a worker starts slowly
        and its parent may be killed meanwhile), this process exits at once.
    check_s
        Seconds between two checks of the watching thread, > 0 (default :data:`ORPHAN_CHECK_S`).

    Raises
    ------
    ValueError
        ``check_s`` is not a finite number > 0.
    """
    if isinstance(check_s, bool) or not isinstance(check_s, int | float) or not 0 < check_s < float("inf"):
        raise ValueError(f"exit_with_parent: check_s must be a finite number > 0, got {check_s!r}")
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the prctl, which would then never fire
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, check_s), name="exit-with-parent", daemon=True).start()


def _watch(parent: int, check_s: float) -> None:
    while os.getppid() == parent:
        time.sleep(check_s)
    os._exit(1)
