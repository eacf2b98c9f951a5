"""One pair of candidates of the capacity decomposition solved: its fixed-capacity problem with its cutoff.

A :class:`PairTask` is what the decomposition
(:class:`~accelsched.formulations.partition.capacity.CapacityDecomposition`) hands out, a
:class:`PairOutcome` what the solve proved and found, and a :class:`PairSolver` (a copy in each
worker process) solves one: the pair's columns filtered from the co-exploration enumeration, the
fixed-capacity proof (:mod:`~accelsched.formulations.partition.fixed_capacity`) with the cutoff,
and the MILP over the table it leaves. The notation is the decomposition's
(:mod:`~accelsched.formulations.partition.capacity`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from typing import TypeVar

from accelsched.formulations.partition.common import InnerPoint, TreeState, VariantTable, checked_warm_start
from accelsched.formulations.partition.fixed_capacity import list_columns, master_columns, prove_fixed
from accelsched.formulations.partition.master import RestrictedMaster
from accelsched.formulations.partition.milp_model import PartitionMilp
from accelsched.formulations.partition.proof_params import ProofSettings
from accelsched.logs import show_records
from accelsched.problems.partition import Metric, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import ColumnSet, mask_of
from accelsched.processes import can_spawn, exit_with_parent
from accelsched.solvers import SolveOptions, Status, solve

__all__ = [
    "PairOutcome",
    "PairSolver",
    "PairTask",
    "master_value",
    "passed",
    "solve_in_processes",
    "solve_in_worker",
    "start_worker",
]


class PairSolver:
    """Solves one pair's fixed-capacity problem with its cutoff (a copy lives in each worker process).

    Parameters
    ----------
    instance
        The co-exploration instance.
    options
        Threads and seed of each solve (its time limit comes with each task).
    columns
        The co-exploration instance's enumeration, which each pair's columns are filtered from.
    settings
        Column budget, round limit and MILP backend of each fixed-capacity problem.
    """

    def __init__(
        self, instance: PartitionInstance, options: SolveOptions, columns: ColumnSet, settings: ProofSettings
    ) -> None:
        self.instance = instance
        self.options = options
        self.columns = columns
        self.settings = settings

    def fixed(self, act_bytes: int, weight_bytes: int) -> PartitionInstance:
        """The fixed-capacity instance of a pair."""
        weights = () if self.instance.shared else (weight_bytes,)
        return dataclasses.replace(self.instance, act_candidates_bytes=(act_bytes,), weight_candidates_bytes=weights)

    def pair_columns(self, fixed: PartitionInstance) -> ColumnSet:
        """The columns of the co-exploration enumeration that fit a pair's instance ``fixed``: all of
        the pair's, or (the enumeration stopped early) all those of fewer layers than it listed."""
        fitting = tuple(column for column in self.columns.columns if fixed.fits_largest(column.cost))
        return dataclasses.replace(self.columns, columns=fitting)

    def solve(self, task: PairTask) -> PairOutcome:
        """The pair's table from its columns, with the cutoff
        (:func:`~accelsched.formulations.partition.fixed_capacity.prove_fixed`), solved by the MILP
        over it; the bound it proves of :math:`E^*(p)`, and its best partition."""
        start = time.perf_counter()
        fixed = self.fixed(task.act_bytes, task.weight_bytes)
        options = dataclasses.replace(self.options, time_limit_s=task.limit_s)
        warm, _ = checked_warm_start(fixed, task.warm)
        listed = self.pair_columns(fixed)
        listing = list_columns(fixed, options, warm, start, self.settings, listed=listed, seeds=task.seeds)
        run = prove_fixed(
            listing,
            options,
            start,
            self.settings,
            cutoff=task.cutoff,
            inner=task.inner,
            tree=task.tree,
            reach=task.reach,
        )
        milp = PartitionMilp(run.table)
        start_values = milp.start(run.warm) if run.warm else None
        answer = solve(milp.model, self.settings.backend, run.solver_options(options), start_values)
        found = [run.warm] if run.warm is not None else []
        if answer.values is not None:
            found.append(milp.decode(answer.values))
        best = min(found, key=run.table.objective, default=None)
        if run.table.complete and answer.bound is not None:
            whole_bytes = self.instance.metric is Metric.EMA
            tolerance = self.settings.params.colgen.proof_tolerance(self.instance.n_layers, task.cutoff)
            floor = task.cutoff if whole_bytes else task.cutoff - tolerance
            lower = min(answer.bound, floor)
        else:
            lower = run.table.column_set.bound if run.table.column_set.bound is not None else -math.inf
        if run.proven_bound is not None:  # over every column: past the cutoff (up to the reach at the root)
            lower = max(lower, run.proven_bound)
        settled = run.table.complete and answer.status is Status.OPTIMAL
        ceiling = None if settled or listed.complete else master_value(run.table)
        return PairOutcome(
            lower,
            settled,
            None if best is None else run.table.solution(best),
            None if best is None else run.table.objective(best),
            time.perf_counter() - start,
            () if listed.complete else _generated(run.table, listed, self.settings.params.branch.master_columns),
            run.inner,
            "" if settled else _why_open(run.table, listed, answer.status),
            run.tree,
            ceiling,
        )


@dataclass(frozen=True)
class PairTask:
    r"""One pair's solve as the decomposition hands it out.

    Attributes
    ----------
    act_bytes, weight_bytes
        The pair's capacities (``weight_bytes`` 0 with a shared buffer).
    cutoff
        :math:`c(p)` at the incumbent when the pair starts.
    warm
        The incumbent's subgraphs under the pair's capacities (checked by the solve), or None.
    limit_s
        Seconds the solve may take, or None.
    seeds
        Subgraphs (layer indices) the pair's column generation starts from: those generated by
        earlier solves of the pair (its ledger) and of pairs within it, which fit it.
    inner
        The inner point its column generation starts from: the best proven by earlier solves of
        the pair or of pairs containing it, or None.
    tree
        The open nodes of the branch-and-price tree its last solve stopped in, which this one
        resumes (:func:`~accelsched.formulations.partition.fixed_capacity.prove_fixed`), or None.
    reach
        The cutoffs of the open pairs within it, the levels its root's bound is pushed to (module
        docstring, "Reach"; those at or below :math:`c(p)` count for nothing); none: the cutoff.
    """

    act_bytes: int
    weight_bytes: int
    cutoff: float
    warm: PartitionSolution | None
    limit_s: float | None
    seeds: tuple[tuple[int, ...], ...] = ()
    inner: InnerPoint | None = None
    tree: TreeState | None = None
    reach: tuple[float, ...] = ()


@dataclass(frozen=True)
class PairOutcome:
    r"""What one pair's solve proved and found.

    Attributes
    ----------
    lower
        A lower bound of :math:`E^*(p)` (at least :math:`\min(E^*(p), c(p))`, less the proof's
        tolerance with energy, when settled).
    settled
        Whether the pair's best partition is its optimum, or none is below its cutoff.
    best
        The best partition found under the pair, or None.
    metric
        Its metric (the fixed-capacity objective), or None.
    seconds
        Time the solve took.
    generated
        The subgraphs of its table that its master did not start from: those column
        generation found, listed or not (and the warm start's, the seeds).
    inner
        The root inner point of its column generation (None when its columns were all listed).
    stopped
        Why an open pair's solve stopped where it did (:func:`_why_open`); empty when settled.
    tree
        The open nodes of its branch-and-price tree when it stopped there, or None.
    ceiling
        When it is left open with its columns generated: the LP value of its master over every
        column its solve met (:func:`master_value`; module docstring, "Ceilings"), else None.
    """

    lower: float
    settled: bool
    best: PartitionSolution | None
    metric: float | None
    seconds: float
    generated: tuple[tuple[int, ...], ...] = ()
    inner: InnerPoint | None = None
    stopped: str = ""
    tree: TreeState | None = None
    ceiling: float | None = None


def master_value(table: VariantTable) -> float | None:
    """The LP value of the master over a fixed-capacity table's columns, without branching rules, at a
    vertex (crossover): at least the LP optimum over every column, so at least every bound column
    generation proves. None when the LP is not solved to optimality."""
    lp = RestrictedMaster(table).solve_lp(vertex=True)
    return lp.value if lp.status == "Optimal" and math.isfinite(lp.value) else None


def _why_open(table: VariantTable, listed: ColumnSet, status: Status) -> str:
    """Why a pair's solve left it open: where its column generation, listing or tree stopped (the
    pricing round, the master LP's value when a listing gave up, the nodes solved and left open),
    without the enumeration's stop reason, which every pair shares; or, over a complete table,
    the MILP's status."""
    if table.complete:
        return f"the MILP over its {len(table.columns)} columns ended {status.name}"
    return table.column_set.stopped.removeprefix(f"{listed.stopped}; ")


def _generated(table: VariantTable, listed: ColumnSet, most: int) -> tuple[tuple[int, ...], ...]:
    """The subgraphs of more than one layer in ``table`` that its master did not start from
    (:func:`~accelsched.formulations.partition.fixed_capacity.master_columns` of ``listed``, at
    most ``most``): a listed column beyond the master's start is one the pair's next solve would
    have to generate again."""
    known = {mask_of(column.members) for column in master_columns(listed, most).columns}
    return tuple(
        tuple(column.members)
        for column in table.columns
        if len(column.members) > 1 and mask_of(column.members) not in known
    )


_WORKER: PairSolver | None = None
"""The pair solver of a worker process (:func:`start_worker`)."""


def start_worker(solver: PairSolver, parent: int, level: int | None = None) -> None:
    """Keep the pair solver of this worker process; exit when ``parent`` dies
    (:func:`~accelsched.processes.exit_with_parent`). With a ``level`` (the least the parent logs of
    the decomposition's records), the package's records of the pair's solve from that level up (its
    root, its tree's nodes; at DEBUG its exact pricing rounds too) go to stderr, which the worker
    shares with its parent, each with the worker's pid."""
    global _WORKER
    _WORKER = solver
    exit_with_parent(parent)
    if level is not None:
        show_records(sys.stderr, "%(asctime)s %(name)s [pid %(process)d]: %(message)s", level=level)


def solve_in_worker(task: PairTask) -> PairOutcome:
    """The pair's solve in a worker process started by :func:`start_worker`."""
    assert _WORKER is not None, "the worker process was not started by start_worker"
    return _WORKER.solve(task)


def passed(deadline: float | None) -> bool:
    """Whether ``deadline`` (a :func:`time.perf_counter` value, or None: never) has passed."""
    return deadline is not None and time.perf_counter() > deadline


Point = TypeVar("Point")


def solve_in_processes(
    solver: PairSolver,
    workers: int,
    level: int | None,
    deadline: float | None,
    hand_out: Callable[[list[Point]], tuple[Point, PairTask] | None],
    apply: Callable[[Point, PairTask, PairOutcome], bool],
) -> bool:
    """Keep ``workers`` pairs solving in spawned processes; False when they cannot start or break.

    Each process receives ``solver`` (the instance and the enumeration) once
    (:func:`start_worker`, logging from ``level`` up), and a task per pair: ``hand_out`` gives the
    next pair not among those running and its task (None: none is left), until ``deadline``;
    ``apply`` records each outcome as it comes and says whether the pair was settled. A pair left
    unsettled stops the hand-out, as in the serial order (it had all the time left, or its round
    limit stopped it), and the pairs still running are waited for. Which pairs get solved, and so
    the incumbent reached when the time runs out, depends on the order in which they finish; a
    complete run's optimum does not (a task's cutoff, the incumbent's when it starts, is valid
    whatever the others find later: a smaller incumbent only lowers it).

    Spawned processes import the caller's main module again, which fails when it has no file (a
    script piped to ``python -``), and a daemonic process may not start any: the caller then
    solves the pairs itself, one after another, as it does those left open when a process dies
    (the pool is then broken).
    """
    if not can_spawn():
        return False
    running: dict[Future[PairOutcome], tuple[Point, PairTask]] = {}
    handing_out = True
    try:
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=get_context("spawn"),
            initializer=start_worker,
            initargs=(solver, os.getpid(), level),
        ) as pool:
            while True:
                while handing_out and len(running) < workers and not passed(deadline):
                    handed = hand_out([point for point, _ in running.values()])
                    if handed is None:
                        break
                    point, task = handed
                    running[pool.submit(solve_in_worker, task)] = (point, task)
                if not running:
                    return True
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    point, task = running.pop(future)
                    handing_out = apply(point, task, future.result()) and handing_out
    except BrokenProcessPool:
        return not handing_out  # its pairs are still open: solved here, unless the hand-out had stopped
