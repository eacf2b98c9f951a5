"""A thin adapter around OR-Tools CP-SAT: options, hints, status mapping and a convergence trace.

CP-SAT formulations are written directly with ``cp_model`` (intervals, ``NoOverlap``,
cumulative constraints have no MILP counterpart); this module only runs them the
same way as every other backend and returns a :class:`CpSatSolution`.

CP-SAT objectives are integral: a formulation whose costs are real numbers scales them
by a factor before rounding and passes that factor as ``objective_scale``; objective,
bound and trace are divided by it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ortools.sat.python import cp_model

from accelsched.solvers.options import SolveOptions
from accelsched.solvers.stats import SolveStats, status_gap
from accelsched.solvers.status import CPSAT_STATUS, Status, map_status

__all__ = ["CpSatSolution", "TraceCallback", "solve_cpsat"]


class TraceCallback(cp_model.CpSolverSolutionCallback):
    """Records ``(wall time, objective)`` of every improving solution CP-SAT reports.

    Parameters
    ----------
    objective_scale
        The objective reported by CP-SAT is divided by this factor.
    maximize
        Direction of the objective, to keep only strict improvements.
    """

    def __init__(self, objective_scale: float = 1.0, maximize: bool = False) -> None:
        super().__init__()
        self._scale = objective_scale
        self._maximize = maximize
        self.trace: list[tuple[float, float]] = []

    def on_solution_callback(self) -> None:
        """Called by CP-SAT for each new solution."""
        value = self.objective_value / self._scale
        if self.trace:
            last = self.trace[-1][1]
            if (value <= last) if self._maximize else (value >= last):
                return
        self.trace.append((self.wall_time, value))


@dataclass(frozen=True, eq=False)
class CpSatSolution:
    """What :func:`solve_cpsat` returns.

    Attributes
    ----------
    status
        Outcome of the solve.
    objective
        Best objective found divided by ``objective_scale``; None without a solution
        or when the model has no objective.
    bound
        ``best_objective_bound`` divided by ``objective_scale``; None without an objective
        or when CP-SAT proved nothing (infinite bound).
    runtime_s
        Wall-clock time of the solve call in seconds.
    native_status
        CP-SAT's status name.
    branches
        Search branches.
    conflicts
        Conflicts.
    trace
        ``(time_s, objective)`` of every improving solution, from :class:`TraceCallback`.
    sense
        ``"min"`` or ``"max"`` (``"min"`` for a model without an objective).
    solver
        The CpSolver, which holds the values of the last solution.
    """

    status: Status
    objective: float | None
    bound: float | None
    runtime_s: float
    native_status: str
    branches: int
    conflicts: int
    trace: tuple[tuple[float, float], ...]
    sense: Literal["min", "max"]
    solver: cp_model.CpSolver

    def value(self, expr: Any) -> int:
        """Value of an integer variable or linear expression in the solution.

        Raises
        ------
        ValueError
            The solve returned no solution.
        """
        self._require_solution()
        return int(self.solver.value(expr))

    def boolean_value(self, literal: Any) -> bool:
        """Value of a Boolean variable or its negation in the solution.

        Raises
        ------
        ValueError
            The solve returned no solution.
        """
        self._require_solution()
        return bool(self.solver.boolean_value(literal))

    def _require_solution(self) -> None:
        if not self.status.has_solution:
            raise ValueError(f"no solution to read a value from: status {self.status.name} ({self.native_status})")

    @property
    def gap(self) -> float | None:
        """Relative gap between objective and bound; 0 when OPTIMAL, None when either is missing."""
        return status_gap(self.status, self.objective, self.bound)

    @property
    def stats(self) -> SolveStats:
        """The statistics in the form a :class:`~accelsched.problems.result.Result` carries (nodes = branches)."""
        return SolveStats(nodes=self.branches, trace=self.trace, native_status=self.native_status)


def _sense(model: cp_model.CpModel) -> tuple[bool, Literal["min", "max"]]:
    proto = model.proto
    if proto.has_floating_point_objective():
        return True, "max" if proto.floating_point_objective.maximize else "min"
    if proto.has_objective():
        return True, "max" if proto.objective.scaling_factor < 0 else "min"
    return False, "min"


def solve_cpsat(
    model: cp_model.CpModel,
    options: SolveOptions | None = None,
    hints: Mapping[Any, int] | None = None,
    objective_scale: float = 1.0,
) -> CpSatSolution:
    """Solve a CP-SAT model with :class:`SolveOptions`, optional hints and a convergence trace.

    Parameters
    ----------
    model
        The model, objective included.
    options
        ``max_time_in_seconds``, ``num_workers``, ``relative_gap_limit``, ``random_seed``,
        ``log_search_progress``, ``cp_model_presolve``, ``max_deterministic_time``
        (``work_limit``); ``SolveOptions()`` when omitted.
    hints
        Warm start: a value for (some of) the integer / Boolean variables. When given,
        the model's previous hints are replaced (``clear_hints`` then ``add_hint``).
    objective_scale
        Positive factor the model's objective was multiplied by; objective, bound and
        trace are divided by it.

    Returns
    -------
    CpSatSolution
        Status, objective, bound, statistics, trace, and the solver for the values.

    Raises
    ------
    ValueError
        ``objective_scale`` is not a positive finite number.
    """
    if not (isinstance(objective_scale, int | float) and math.isfinite(objective_scale) and objective_scale > 0):
        raise ValueError(f"solve_cpsat: objective_scale must be a positive finite number, got {objective_scale!r}")
    opts = options or SolveOptions()
    has_objective, sense = _sense(model)
    if hints is not None:
        model.clear_hints()
        for var, val in hints.items():
            model.add_hint(var, int(val))
    solver = cp_model.CpSolver()
    params = solver.parameters
    if opts.time_limit_s is not None:
        params.max_time_in_seconds = opts.time_limit_s
    params.num_workers = opts.threads
    params.relative_gap_limit = opts.rel_gap
    params.random_seed = opts.seed
    params.log_search_progress = opts.log
    params.cp_model_presolve = opts.presolve
    if opts.work_limit is not None:
        params.max_deterministic_time = opts.work_limit
    callback = TraceCallback(objective_scale, maximize=sense == "max")
    start = time.perf_counter()
    native = solver.solve(model, callback)
    runtime = time.perf_counter() - start
    has_solution = native in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    objective = bound = None
    if has_objective:
        if has_solution:
            objective = solver.objective_value / objective_scale
        raw_bound = solver.best_objective_bound
        if math.isfinite(raw_bound) and native != cp_model.INFEASIBLE:
            bound = raw_bound / objective_scale
    return CpSatSolution(
        status=map_status(CPSAT_STATUS, native, has_solution),
        objective=objective,
        bound=bound,
        runtime_s=runtime,
        native_status=solver.status_name(native),
        branches=int(solver.num_branches),
        conflicts=int(solver.num_conflicts),
        trace=tuple(callback.trace),
        sense=sense,
        solver=solver,
    )
