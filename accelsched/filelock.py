"""Files that long runs share: one process at a time, and never half-written.

A co-exploration proof writes its pair ledger for hours
(:mod:`accelsched.formulations.partition.ledger`), and the benchmark tables merge their rows
into one results file (:mod:`accelsched.bench.partition_tables`). Two processes writing the
same file would each overwrite what the other proved or measured, so :func:`exclusive` lets one
process hold a file while it works with it: an advisory ``flock`` on a hidden sidecar file
(``.NAME.lock`` beside the file; the file itself is replaced on every write, so it cannot carry
the lock), which the system drops when the process ends, killed or not. Within one process the
lock is re-entrant: the CLI holds a ledger from the moment it checks it, and the method it runs
holds it again. On a system without ``flock`` (Windows) :func:`exclusive` holds nothing.

:func:`write_atomic` writes a file through a temporary one renamed over it, so that a process
stopped while writing leaves the previous file.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from accelsched.errors import InputError

POLL_S = 0.1
"""How often a process waiting for a held file tries again, seconds."""

_held: dict[Path, tuple[int, int]] = {}
"""The lock files this process holds: descriptor and depth (the number of holds not yet released)."""
_guard = threading.Lock()


def lock_path(path: str | Path) -> Path:
    """The sidecar file whose lock stands for ``path``'s (``dir/.NAME.lock``)."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


@contextmanager
def exclusive(path: str | Path, *, what: str, fix: str, wait_s: float = 0.0) -> Iterator[None]:
    """Hold ``path`` against other processes for the duration of the block.

    Parameters
    ----------
    path
        The file to hold (it need not exist yet; its directory is made).
    what
        What the file is, for the error ("pair ledger", "results file").
    fix
        How to go on when another process holds it.
    wait_s
        How long to wait for another process to release it, seconds (0: do not wait).

    Raises
    ------
    InputError
        Another process still holds the file after ``wait_s``.
    """
    if sys.platform == "win32":  # no flock: nothing to hold
        yield
        return
    key = lock_path(path).resolve()
    with _guard:
        fd, depth = _held.get(key, (-1, 0))
        if depth == 0:
            fd = _acquire(key, Path(path), what, fix, wait_s)
        _held[key] = (fd, depth + 1)
    try:
        yield
    finally:
        with _guard:
            fd, depth = _held.pop(key)
            if depth > 1:
                _held[key] = (fd, depth - 1)
            else:
                os.close(fd)  # closing the descriptor drops its lock


def _acquire(key: Path, path: Path, what: str, fix: str, wait_s: float) -> int:
    """A descriptor of the lock file ``key`` holding its exclusive lock, within ``wait_s`` seconds."""
    import fcntl  # POSIX-only: imported where a lock is taken, so that the module imports everywhere

    key.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                waited = f" (waited {wait_s:g} s)" if wait_s > 0 else ""
                raise InputError(f"another process is using it{waited}", f"{what} {path}", fix) from None
            time.sleep(POLL_S)


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it (never half-written)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
