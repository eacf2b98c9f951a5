"""Benchmark sweeps: cells, executors, resume and progress.

A *cell* is one method run: (problem, instance, method, seed, time limit). A sweep
plans the cells of a suite (:mod:`accelsched.bench.suites`), skips those whose
line is already in ``OUT/results.jsonl``, runs the others on an executor and
appends each finished cell's line at once (flushed), so that a sweep killed at any
point is resumed by running the same command again. Then it writes the CSV, the
Markdown report and the plots (:mod:`accelsched.bench.report`).

Executors
---------
``workers=0``
    every cell in this process, one after the other (notebooks, debugging);
``workers=N`` (default 1)
    a ``concurrent.futures.ProcessPoolExecutor`` of N processes;
``dask=ADDRESS``
    a Dask distributed cluster: ``local`` starts a ``LocalCluster`` of ``workers``
    processes, ``tcp://HOST:PORT`` connects to a running scheduler
    (:mod:`accelsched.bench.dask_executor`).

Every cell goes through :func:`accelsched.registry.run_method`, so every solution
in the results passed the problem's ``check`` and the shared evaluator. A method
that stops without a solution is a status like any other; a cell that raises is
recorded with status ``ERROR`` and the exception's message, and the sweep goes on.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import platform
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal, TextIO

from accelsched import registry
from accelsched.bench.cells import Cell, code, now, run_cell
from accelsched.bench.dask_executor import require_dask, run_dask
from accelsched.bench.records import Key, RecordWriter, key_of, load_records, repair_tail
from accelsched.bench.report import write_report
from accelsched.bench.suites import PROBLEM_SUITES, ProblemSuites, select
from accelsched.errors import InputError
from accelsched.processes import exit_with_parent

__all__ = [
    "RESULTS_FILE",
    "Executor",
    "Sweep",
    "SweepOutcome",
    "bench",
    "machine_description",
    "plan",
    "run_sweep",
]

RESULTS_FILE = "results.jsonl"
SWEEP_FILE = "sweep.json"

OnCell = Callable[["Cell", dict[str, Any]], None]


@dataclass(frozen=True)
class Sweep:
    """The cells of a suite for some problems, with the limits they run under."""

    suite: str
    problems: tuple[str, ...]
    time_limits_s: dict[str, float]
    seeds: dict[str, int]
    cells: tuple[Cell, ...] = field(repr=False)

    def describe(self) -> dict[str, Any]:
        """JSON-compatible summary (without the cells)."""
        return {"suite": self.suite, "problems": list(self.problems), "time_limit_s": dict(self.time_limits_s),
                "seeds": dict(self.seeds), "cells": len(self.cells)}  # fmt: skip


def plan(
    suite: str,
    problems: Sequence[str] | None = None,
    *,
    time_limit_s: float | None = None,
    seeds: int | None = None,
    table: Sequence[ProblemSuites] = PROBLEM_SUITES,
) -> Sweep:
    """The cells of ``suite`` for ``problems`` (default all), in a fixed order.

    ``time_limit_s`` and ``seeds`` replace the suites' own values when given.

    Raises
    ------
    InputError
        Unknown suite, problem or method, or a bad time limit / seed count.
    """
    if time_limit_s is not None and (
        isinstance(time_limit_s, bool) or not isinstance(time_limit_s, numbers.Real) or not 0 < time_limit_s < math.inf
    ):
        raise InputError(f"time limit must be a positive number of seconds, got {time_limit_s!r}", "--time-limit")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, numbers.Integral) or seeds < 1):
        raise InputError(f"the number of seeds must be an integer >= 1, got {seeds!r}", "--seeds")
    chosen = select(suite, problems, table)
    cells: list[Cell] = []
    limits: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name, entry in chosen.items():
        registry.get_problem(name)
        limits[name] = float(time_limit_s) if time_limit_s is not None else entry.time_limit_s
        counts[name] = int(seeds) if seeds is not None else entry.seeds
        for instance in entry.instances:
            for method_plan in entry.methods_of(instance):
                method = registry.get_method(name, method_plan.name)
                for seed in range(counts[name] if method_plan.seeded else 1):
                    cells.append(Cell(name, instance, method.name, method.kind, method_plan.seeded, seed, limits[name]))
    return Sweep(suite, tuple(chosen), limits, counts, tuple(cells))


# ----------------------------------------------------------------------- executors
Finished = Iterator[tuple[Cell, dict[str, Any] | None]]
"""``(cell, record)`` as cells finish; the record is None when the cell was lost with its worker."""

Executor = Callable[[Sequence[Cell]], Finished]
"""Runs cells (typically with :func:`~accelsched.bench.cells.run_cell`) and yields them as they finish."""


def _run_inline(cells: Sequence[Cell]) -> Finished:
    for cell in cells:
        yield cell, run_cell(cell)


def _start_worker(parent: int) -> None:
    """Worker initializer: Ctrl-C stops the sweep in the parent, which then stops the workers; a parent
    killed outright takes them with it (:func:`~accelsched.processes.exit_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent)


def _run_processes(cells: Sequence[Cell], workers: int, run: Callable[[Cell], dict[str, Any]] = run_cell) -> Finished:
    """Run ``cells`` on ``workers`` spawned processes, each cell by ``run`` (a picklable, module-level function)."""
    # spawn: a fresh interpreter per worker, never a fork of a process holding solver threads
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=get_context("spawn"), initializer=_start_worker, initargs=(os.getpid(),)
    )
    pending: dict[Future[dict[str, Any]], Cell] = {}
    try:
        pending = {pool.submit(run, cell): cell for cell in cells}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                cell = pending.pop(future)
                try:
                    record: dict[str, Any] | None = future.result()
                except Exception:  # the worker process died (a crash in native code, a kill): cell unfinished
                    record = None
                yield cell, record
    finally:
        if pending:  # interrupted: drop what has not started and stop the running cells now
            processes = list(getattr(pool, "_processes", None) or {}).copy()
            procs = [pool._processes[pid] for pid in processes] if getattr(pool, "_processes", None) else []
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in procs:
                proc.terminate()
        else:
            pool.shutdown(wait=True)


def _executor(cells: Sequence[Cell], workers: int, dask: str | None, dask_processes: bool) -> Finished:
    if dask is not None:
        return run_dask(cells, dask, max(workers, 1), processes=dask_processes)
    if workers == 0:
        return _run_inline(cells)
    return _run_processes(cells, workers)


def _executor_label(workers: int, dask: str | None) -> str:
    if dask is not None:
        return f"dask {dask}" + (f" ({max(workers, 1)} workers)" if dask == "local" else "")
    return "in-process" if workers == 0 else f"{workers} local process{'es' if workers > 1 else ''}"


# ------------------------------------------------------------------------ progress
def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """A one-line progress display on a stream: cells done / total, elapsed, remaining."""

    def __init__(self, total: int, resumed: int, label: str, stream: TextIO | None) -> None:
        self.total, self.resumed, self.label, self.stream = total, resumed, label, stream
        self.ran = 0
        self.start = time.perf_counter()
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._show("")

    def update(self, cell: Cell, record: dict[str, Any]) -> None:
        """Count one finished cell and redraw."""
        self.ran += 1
        self._show(f"{cell.label()}: {record['result']['status']}")

    def _show(self, last: str) -> None:
        if self.stream is None:
            return
        elapsed = time.perf_counter() - self.start
        left = self.total - self.resumed - self.ran
        eta = _clock(elapsed / self.ran * left) if self.ran else "?"
        done = self.resumed + self.ran
        text = f"{self.label}: {done}/{self.total} cells"
        if self.resumed:
            text += f" ({self.resumed} resumed)"
        text += f", {_clock(elapsed)} elapsed, {eta} left"
        if last:
            text += f" | {last}"
        if self.tty:
            self.stream.write("\r" + text[:120].ljust(120))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line."""
        if self.stream is not None and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- sweeps
@dataclass(frozen=True)
class SweepOutcome:
    """What a call of :func:`run_sweep` did.

    Attributes
    ----------
    records
        The records of the sweep's cells (resumed and new), in the sweep's cell order.
    ran
        Cells run by this call.
    resumed
        Cells found finished in the results file.
    interrupted
        Whether the call was stopped (Ctrl-C) before every cell finished.
    wall_s
        Wall-clock time of the call.
    lost
        Cells whose worker process died before returning (not recorded: a re-run retries them).
    """

    records: tuple[dict[str, Any], ...]
    ran: int
    resumed: int
    interrupted: bool
    wall_s: float
    lost: int = 0


def run_sweep(
    sweep: Sweep,
    out_dir: str | Path,
    *,
    workers: int = 1,
    dask: str | None = None,
    dask_processes: bool = True,
    retry_errors: bool = False,
    on_cell: OnCell | None = None,
    stream: TextIO | Literal["stderr"] | None = "stderr",
    executor: Executor | None = None,
) -> SweepOutcome:
    """Run the unfinished cells of ``sweep``, appending one line per cell to ``OUT/results.jsonl``.

    Parameters
    ----------
    sweep
        The planned cells (:func:`plan`).
    out_dir
        Output directory (created).
    workers
        0: run in this process; N >= 1: N local processes (or Dask workers with ``dask="local"``).
    dask
        ``None``, ``"local"`` or a scheduler address such as ``tcp://HOST:PORT``.
    dask_processes
        With ``dask="local"``: workers are processes (True) or threads of this process.
    retry_errors
        Run again the cells whose recorded status is ERROR.
    on_cell
        Called in this process with each cell run by this call and its record.
    stream
        Where the progress line goes (None: nowhere; default ``sys.stderr`` at call time).
    executor
        Runs the unfinished cells instead of the executor ``workers`` and ``dask`` select
        (an application's own scheduler; a test's executor that loses a cell).

    Raises
    ------
    InputError
        Bad ``workers``, or a Dask address that is malformed or unreachable.
    """
    if stream == "stderr":
        stream = sys.stderr
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise InputError(f"workers must be an integer >= 0, got {workers!r}", "--workers")
    if dask is not None:
        require_dask(dask)
    start = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESULTS_FILE
    cut = repair_tail(path)
    loaded = load_records(path)
    if stream is not None and (cut or loaded.bad_lines):
        stream.write(f"{path}: dropped a partial last line ({cut} bytes) and skipped {loaded.bad_lines} bad lines\n")
    wanted = {cell.key for cell in sweep.cells}
    done: dict[Key, dict[str, Any]] = {}
    for line in loaded.records:  # the last line of a key wins (a retried cell)
        key = key_of(line)
        if key in wanted:
            done[key] = line
    if retry_errors:
        done = {k: r for k, r in done.items() if r["result"]["status"] != "ERROR"}
    todo = [cell for cell in sweep.cells if cell.key not in done]
    _warn_other_code(done.values(), stream)
    progress = Progress(len(sweep.cells), len(done), f"bench {sweep.suite}", stream)
    interrupted = False
    ran = lost = 0
    started = now()
    if not todo:
        finished: Finished = iter(())
    elif executor is not None:
        finished = executor(todo)
    else:
        finished = _executor(todo, workers, dask, dask_processes)
    try:
        with RecordWriter(path) as writer:
            for cell, record in finished:
                if record is None:  # lost with its worker: stays unfinished, the next run retries it
                    lost += 1
                    continue
                writer.write(record)
                done[cell.key] = record
                ran += 1
                if on_cell is not None:
                    on_cell(cell, record)
                progress.update(cell, record)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        close = getattr(finished, "close", None)
        if close is not None:  # stop the executor: cancel what has not started
            close()
        progress.close()
    wall = time.perf_counter() - start
    _log_invocation(out, sweep, started, wall, ran, len(wanted) - len(todo), interrupted, workers, dask)
    records = tuple(done[cell.key] for cell in sweep.cells if cell.key in done)
    return SweepOutcome(records, ran, len(sweep.cells) - len(todo), interrupted, wall, lost)


def _warn_other_code(records: Any, stream: TextIO | None) -> None:
    codes = {r.get("code") for r in records}
    other = codes - {code()}
    if other and stream is not None:
        count = sum(1 for r in records if r.get("code") in other)
        stream.write(f"note: {count} finished cells were computed by other code (fingerprints {sorted(map(str, other))}"
                     f", now {code()}); use a fresh --out to recompute them\n")  # fmt: skip


def machine_description() -> dict[str, Any]:
    """The machine a sweep ran on: CPU, cores, memory, OS, Python, solver versions, load."""
    cpu = platform.processor() or platform.machine()
    memory = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu)
        with open("/proc/meminfo", encoding="utf-8") as handle:
            kib = next((int(line.split()[1]) for line in handle if line.startswith("MemTotal")), None)
            memory = None if kib is None else round(kib / 2**20, 1)
    except OSError:
        pass
    versions: dict[str, str | None] = {}
    for package in ("accelsched", "ortools", "highspy", "pulp", "pyomo", "numpy", "distributed"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "host": socket.gethostname(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "code": code(),
        "versions": versions,
    }


def _log_invocation(out: Path, sweep: Sweep, started: str, wall: float, ran: int, resumed: int,
                    interrupted: bool, workers: int, dask: str | None) -> None:  # fmt: skip
    path = out / SWEEP_FILE
    try:
        history = json.loads(path.read_text(encoding="utf-8")).get("invocations", [])
    except (OSError, ValueError, AttributeError):
        history = []
    history.append({"started_at": started, "wall_s": round(wall, 2), "ran": ran, "resumed": resumed,
                    "interrupted": interrupted, "executor": _executor_label(workers, dask),
                    "machine": machine_description()})  # fmt: skip
    data = {**sweep.describe(), "invocations": history}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def bench(
    suite: str,
    problems: Sequence[str] | None = None,
    *,
    time_limit_s: float | None = None,
    seeds: int | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    dask: str | None = None,
    retry_errors: bool = False,
    stream: TextIO | Literal["stderr"] | None = "stderr",
) -> int:
    """``accelsched bench``: plan, run (resuming), then write the CSV, the report and the plots.

    ``workers`` defaults to one per CPU (``os.cpu_count()``). Returns the exit status:
    0; 130 when interrupted, 1 when cells were lost with a dying worker (the report
    is still written for the cells that finished; running the same command resumes).
    """
    if stream == "stderr":
        stream = sys.stderr
    if workers is None:
        workers = os.cpu_count() or 1
    sweep = plan(suite, problems, time_limit_s=time_limit_s, seeds=seeds)
    if dask is not None:
        require_dask(dask)
    out_dir = Path(out) if out is not None else Path(f"bench_{suite}")
    if stream is not None:
        limits = ", ".join(f"{p} {sweep.time_limits_s[p]:g} s x {sweep.seeds[p]} seeds" for p in sweep.problems)
        stream.write(f"bench {suite}: {len(sweep.cells)} cells ({limits}) on {_executor_label(workers, dask)}, "
                     f"results in {out_dir}\n")  # fmt: skip
    outcome = run_sweep(sweep, out_dir, workers=workers, dask=dask, retry_errors=retry_errors, stream=stream)
    paths = write_report(out_dir, outcome.records, _read_meta(out_dir))
    print(f"ran {outcome.ran} cells, resumed {outcome.resumed}, {outcome.wall_s:.1f} s")
    for written in paths:
        print(f"wrote {written}")
    missing = len(sweep.cells) - len(outcome.records)
    if outcome.interrupted:
        print(f"interrupted with {missing} cells unfinished: run the same command again to resume", file=sys.stderr)
        return 130
    if missing:
        print(
            f"{missing} cells unfinished ({outcome.lost} lost with a worker that died): run the same command again",
            file=sys.stderr,
        )
        return 1
    return 0


def _read_meta(out_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((out_dir / SWEEP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
