"""The ``"pyomo-highs"`` backend: a :class:`~accelsched.solvers.linear.LinearModel` solved by Pyomo's
``appsi_highs`` solver (the legacy ``SolverFactory`` interface over appsi's persistent HiGHS).

Usage rules (from DESIGN and checked here):

* the time limit is given as ``solve(..., timelimit=)``: the legacy ``solve`` copies
  the solver's ``config`` and overwrites its ``time_limit`` with that argument, so a
  limit set on ``config`` beforehand is silently dropped;
* the solve runs with ``load_solutions=False`` and the termination condition and the
  number of solutions in the results are checked before anything is read (loading
  after a limit without a solution raises ``RuntimeError`` in appsi); the values are
  then read with the persistent solver's ``get_primals`` (``model.solutions.load_from``
  would log a warning for every time-limited incumbent);
* ``warmstart=True`` makes appsi pass the current variable values to HiGHS with
  ``setSolution``; appsi fills the variables without a value with 0.

The bound comes from the results' ``problem.lower_bound`` (minimization) or
``upper_bound`` (maximization), which appsi fills with HiGHS' MIP dual bound.
"""

from __future__ import annotations

import time

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from accelsched.solvers.highs import ensure_highs_threads
from accelsched.solvers.linear import LinearModel, LinearSolution, MatrixForm, WarmStart, make_solution
from accelsched.solvers.options import SolveOptions
from accelsched.solvers.status import PYOMO_TERMINATION, map_status

__all__ = ["solve_pyomo_highs"]


def _build(mat: MatrixForm) -> pyo.ConcreteModel:
    """The model as a Pyomo ConcreteModel with ``m.x[j]`` and ``m.rows[i]``."""
    m = pyo.ConcreteModel("accelsched")
    lower = [None if lo == -np.inf else lo for lo in mat.col_lower.tolist()]
    upper = [None if hi == np.inf else hi for hi in mat.col_upper.tolist()]
    integer = mat.integrality.tolist()
    cols = range(mat.num_cols)
    m.x = pyo.Var(
        cols,
        within=lambda _m, j: pyo.Integers if integer[j] else pyo.Reals,
        bounds=lambda _m, j: (lower[j], upper[j]),
    )
    xs = [m.x[j] for j in cols]
    starts = mat.a_start.tolist()
    index, value = mat.a_index.tolist(), mat.a_value.tolist()
    row_lower = [None if lo == -np.inf else lo for lo in mat.row_lower.tolist()]
    row_upper = [None if hi == np.inf else hi for hi in mat.row_upper.tolist()]

    def row(_m: pyo.ConcreteModel, i: int) -> object:
        lo, hi = starts[i], starts[i + 1]
        if row_lower[i] is None and row_upper[i] is None:
            return pyo.Constraint.Skip
        body = LinearExpression(constant=0.0, linear_coefs=value[lo:hi], linear_vars=[xs[j] for j in index[lo:hi]])
        return (row_lower[i], body, row_upper[i])

    m.rows = pyo.Constraint(range(mat.num_rows), rule=row)
    cost_idx = np.flatnonzero(mat.col_cost).tolist()
    m.objective = pyo.Objective(
        expr=LinearExpression(
            constant=mat.offset,
            linear_coefs=[float(mat.col_cost[j]) for j in cost_idx],
            linear_vars=[xs[j] for j in cost_idx],
        ),
        sense=pyo.maximize if mat.sense == "max" else pyo.minimize,
    )
    return m


def solve_pyomo_highs(model: LinearModel, options: SolveOptions, warm_start: WarmStart | None = None) -> LinearSolution:
    """Solve with Pyomo's ``appsi_highs``.

    Parameters
    ----------
    model
        The model.
    options
        ``solve(timelimit=...)``, ``tee`` for the log, and the HiGHS options
        ``mip_rel_gap``, ``threads``, ``random_seed`` (and ``presolve="off"`` when False,
        ``mip_max_nodes`` when ``node_limit`` is set).
    warm_start
        MIP start: the variables' values before a ``warmstart=True`` solve.

    Returns
    -------
    LinearSolution
        ``bound`` from the results' problem bounds; no node count (appsi does not report it).
    """
    start = time.perf_counter()
    mat = model.to_matrix()
    m = _build(mat)
    if warm_start is not None:
        for j, val in zip(warm_start.index.tolist(), warm_start.value.tolist(), strict=True):
            m.x[j].set_value(val, skip_validation=True)
    solver = pyo.SolverFactory("appsi_highs")
    ensure_highs_threads(options.threads)
    results = solver.solve(
        m,
        tee=options.log,
        load_solutions=False,
        timelimit=options.time_limit_s,
        warmstart=warm_start is not None,
        options={
            "mip_rel_gap": options.rel_gap,
            "threads": options.threads,
            "random_seed": options.seed,
            **({} if options.presolve else {"presolve": "off"}),
            **({} if options.node_limit is None else {"mip_max_nodes": options.node_limit}),
        },
    )
    termination = results.solver.termination_condition
    has_solution = len(results.solution) > 0
    status = map_status(PYOMO_TERMINATION, termination, has_solution)
    x = None
    if status.has_solution:
        # appsi's own accessor: no "aborted status" warning for a time-limited incumbent, and
        # variables that appear nowhere (not passed to HiGHS) take the value in bounds closest to 0.
        primals = solver.get_primals()
        fallback = np.clip(0.0, mat.col_lower, mat.col_upper)
        x = np.array([float(primals[m.x[j]]) if m.x[j] in primals else fallback[j] for j in range(mat.num_cols)])
    bound = results.problem.upper_bound if mat.sense == "max" else results.problem.lower_bound
    return make_solution(
        model,
        status=status,
        x=x,
        bound=None if bound is None else float(bound),
        runtime_s=time.perf_counter() - start,
        backend="pyomo-highs",
        native_status=f"{termination.name} ({len(results.solution)} solution(s))",
    )
