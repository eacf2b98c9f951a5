"""Run the cells of a sweep on a Dask distributed cluster (the only module that imports Dask).

``local`` starts a ``distributed.LocalCluster`` of ``workers`` single-threaded
workers; any other address (``tcp://HOST:PORT``, ``tls://...``) connects to a
running scheduler, whose workers must have accelsched installed. Each cell is one
task (:func:`accelsched.bench.cells.run_cell`, never retried on another worker,
``pure=False``); finished cells come back as they complete and the caller writes
them, so resume works exactly as with local processes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from accelsched.bench.cells import Cell, error_record, run_cell
from accelsched.errors import InputError

__all__ = ["CONNECT_TIMEOUT_S", "require_dask", "run_dask"]

CONNECT_TIMEOUT_S = 10.0
"""How long to wait for a remote scheduler before giving up."""

_ADDRESS = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$")


def require_dask(address: str) -> None:
    """Check that ``address`` is well formed and that Dask distributed is installed.

    Raises
    ------
    InputError
        The address is malformed, or ``distributed`` cannot be imported (the message
        says how to install it).
    """
    if address != "local" and not _ADDRESS.match(address):
        raise InputError(f"bad Dask address {address!r}", "--dask", "write local or tcp://HOST:PORT")
    try:
        import distributed  # noqa: F401  # Dask is optional and heavy: probe it only when asked for
    except ImportError:
        raise InputError(
            "Dask distributed is not installed",
            "--dask",
            "install it with: pip install 'accelsched[dask]' (or pip install 'dask[distributed]')",
        ) from None


def run_dask(
    cells: Sequence[Cell], address: str, workers: int, *, processes: bool = True
) -> Iterator[tuple[Cell, dict[str, Any]]]:
    """Yield ``(cell, record)`` as the cluster finishes them.

    Parameters
    ----------
    cells
        Cells to run.
    address
        ``"local"`` or a scheduler address (``tcp://HOST:PORT``).
    workers
        Workers of a local cluster (ignored for a remote one).
    processes
        Local cluster: worker processes (True) or threads of this process (False).

    Raises
    ------
    InputError
        Dask is not installed, the address is malformed, or the scheduler cannot be reached.
    """
    require_dask(address)
    from distributed import Client, LocalCluster, as_completed  # Dask is optional and heavy: only for a Dask sweep

    cluster: Any = None
    try:
        if address == "local":
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=":0")
            client = Client(cluster)
        else:
            client = Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
    except OSError as exc:
        if cluster is not None:
            cluster.close()
        raise InputError(
            f"cannot reach the Dask scheduler at {address} ({exc})",
            "--dask",
            "start one with 'dask scheduler' and 'dask worker ADDRESS', or use --dask local",
        ) from None
    futures: dict[Any, Cell] = {}
    try:
        for cell in cells:
            future = client.submit(run_cell, cell, pure=False, retries=0)
            futures[future] = cell
        for future in as_completed(list(futures)):
            cell = futures.pop(future)
            try:
                record = future.result()
            except Exception as exc:  # the worker died or the task was lost
                record = error_record(cell, f"worker failed: {type(exc).__name__}: {exc}")
            yield cell, record
    finally:
        if futures:
            client.cancel(list(futures))
        client.close()
        if cluster is not None:
            cluster.close()
