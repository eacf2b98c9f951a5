"""One cell of a sweep: what it runs (:class:`Cell`) and how it becomes a results line.

:func:`run_cell` is the unit of work every executor (in-process, local processes, Dask)
runs; it never raises on a failing method, so that one bad cell leaves the sweep going.
"""

from __future__ import annotations

import datetime
import functools
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accelsched import registry
from accelsched.bench.records import RECORD_VERSION, Key, code_fingerprint
from accelsched.bench.suites import InstanceSpec
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, Status

__all__ = ["Cell", "RunMethod", "code", "error_record", "now", "run_cell", "worker_id"]

RunMethod = Callable[..., Result[Any]]
"""A callable with the signature of :func:`accelsched.registry.run_method`."""


@dataclass(frozen=True)
class Cell:
    """One method run of a sweep.

    Parameters
    ----------
    problem
        Registered problem name.
    instance
        The instance.
    method
        Registered method name.
    kind
        The method's kind (``exact``, ``heuristic``, ``baseline``).
    seeded
        Whether the method runs once per seed.
    seed
        Seed of the run (``SolveOptions.seed``).
    time_limit_s
        Time limit of the run, seconds.
    """

    problem: str
    instance: InstanceSpec
    method: str
    kind: str
    seeded: bool
    seed: int
    time_limit_s: float

    @property
    def key(self) -> Key:
        """``(problem, instance id, method, seed, time limit)``."""
        return (self.problem, self.instance.id, self.method, self.seed, self.time_limit_s)

    def label(self) -> str:
        """Short text for the progress line."""
        seed = f" seed {self.seed}" if self.seeded else ""
        return f"{self.problem} {self.instance.id} {self.method}{seed}"


@functools.cache
def worker_id() -> str:
    """``host:pid`` of this process, as the records name it."""
    return f"{socket.gethostname()}:{os.getpid()}"


@functools.cache
def code() -> str:
    """Fingerprint of the code this process runs (:func:`~accelsched.fingerprint.code_fingerprint`)."""
    return code_fingerprint()


def now() -> str:
    """The current UTC time, ISO 8601 to the millisecond."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def _record(cell: Cell, result: Result[Any], n_layers: int | None, error: str | None, wall_s: float) -> dict[str, Any]:
    return {
        "v": RECORD_VERSION,
        "key": dict(zip(("problem", "instance", "method", "seed", "time_limit_s"), cell.key, strict=True)),
        "instance": cell.instance.to_dict(),
        "kind": cell.kind,
        "seeded": cell.seeded,
        "n_layers": n_layers,
        "result": result.to_dict(),
        "error": error,
        "wall_s": wall_s,
        "finished_at": now(),
        "worker": worker_id(),
        "code": code(),
    }


def error_record(cell: Cell, message: str, wall_s: float = 0.0, n_layers: int | None = None) -> dict[str, Any]:
    """The record of a cell that raised (or whose worker died): status ERROR with the message."""
    result: Result[Any] = Result.no_solution(Status.ERROR, cell.problem, cell.method, message, runtime_s=wall_s)
    return _record(cell, result, n_layers, message, wall_s)


def run_cell(cell: Cell, run_method: RunMethod = registry.run_method) -> dict[str, Any]:
    """Build the instance, run the method and return the cell's record.

    The instance is made by :func:`accelsched.registry.make_instance` (which runs the
    problem's instance steps); the record's ``result.runtime_s`` is the one
    ``run_method`` measured, ``wall_s`` the whole cell's time, instance built included.

    Parameters
    ----------
    cell
        The cell.
    run_method
        What runs the method: :func:`accelsched.registry.run_method`, or a stand-in
        with its signature (a test's failing method).

    Returns
    -------
    dict
        The results line. Never raises on a failing method: any exception becomes an
        ``ERROR`` record carrying ``TypeName: message``.
    """
    start = time.perf_counter()
    n_layers: int | None = None
    try:
        problem = registry.get_problem(cell.problem)
        spec = cell.instance
        workload = load_workload(spec.workload, batch=spec.batch)
        n_layers = len(workload)
        instance = registry.make_instance(problem, workload, load_accelerator(spec.hardware), dict(spec.options))
        options = SolveOptions(time_limit_s=cell.time_limit_s, seed=cell.seed)
        result = run_method(problem, instance, registry.get_method(cell.problem, cell.method), options)
    except Exception as exc:
        return error_record(cell, f"{type(exc).__name__}: {exc}", time.perf_counter() - start, n_layers)
    return _record(cell, result, n_layers, None, time.perf_counter() - start)
