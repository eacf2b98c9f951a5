"""Whether this process can start spawned worker processes (shared by every process pool of accelsched)."""

from __future__ import annotations

import os
import sys
from multiprocessing import current_process

__all__ = ["can_spawn"]


def can_spawn() -> bool:
    """Whether spawned processes can start from here.

    A spawned process imports the caller's main module again, which fails when it has no file
    (a script piped to ``python -``), and a daemonic process (a ``multiprocessing.Pool`` or Dask
    worker) may not start any: callers then do the work in this process.
    """
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return not ((main is not None and not os.path.exists(main)) or current_process().daemon)
