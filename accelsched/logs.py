"""Where the package's progress records go while a long run is watched (``--verbose``).

The package logs through :mod:`logging` and configures no handler of its own; the command
line, the benchmarks and the worker processes of a verbose run send its INFO records (and, asked
for, its DEBUG records: each exact pricing round of column generation) to a stream with
:func:`show_records`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TextIO

__all__ = ["show_records"]


def show_records(
    stream: TextIO, fmt: str, *, logger: str = "accelsched", datefmt: str | None = None, level: int = logging.INFO
) -> Callable[[], None]:
    """Send the records of ``logger`` and of the loggers below it, from ``level`` up, to ``stream``.

    Parameters
    ----------
    stream
        Where the records are written (``sys.stderr``, ``sys.stdout``).
    fmt, datefmt
        The :class:`logging.Formatter` of the records.
    logger
        The logger whose records are shown (by default the whole package's).
    level
        The least level shown (:data:`logging.INFO`, or :data:`logging.DEBUG` for every record).

    Returns
    -------
    Callable[[], None]
        Undoes it: removes the handler and restores the logger's level.
    """
    target = logging.getLogger(logger)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(fmt, datefmt))
    before = target.level
    target.addHandler(handler)
    target.setLevel(level)

    def undo() -> None:
        target.removeHandler(handler)
        target.setLevel(before)

    return undo
