"""Running a command-line entry point (``accelsched`` and the ``python -m accelsched.bench.*`` tools)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["run_entry"]


def run_entry(main: Callable[[], int]) -> int:
    """Run ``main`` and return its exit status; a reader that went away (``... | head``) ends it
    with status 1 and no traceback, the rest of the output discarded.

    Parameters
    ----------
    main
        The entry point, returning its exit status.
    """
    try:
        return main()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush would raise again
        return 1
