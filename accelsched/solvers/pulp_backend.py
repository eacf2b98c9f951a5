"""The ``"pulp-cbc"`` and ``"pulp-highs"`` backends: a :class:`~accelsched.solvers.linear.LinearModel`
solved through PuLP, with its bundled CBC or its HiGHS API solver.

Quirks handled here (PuLP 3.3, bundled CBC 2.10.3, HiGHS 1.12):

* A time-limited MIP that stops with an incumbent reports ``status == LpStatusOptimal``;
  only ``sol_status == LpSolutionIntegerFeasible`` says it is not proven optimal
  (:func:`~accelsched.solvers.status.pulp_status` reads both).
* CBC whose time limit expires during its preprocessing prints "Pre-processing says
  infeasible or unbounded" and PuLP reports the (feasible) model as Infeasible. When
  that message appears under a time limit, the solve is repeated once with
  ``preprocess off`` for the remaining time, and that answer is the one reported.
* CBC's ``randomCbcSeed 0`` means "seed from the time of day"; seed 0 therefore keeps
  CBC's fixed default seed and seeds >= 1 are passed as they are.
* CBC sometimes exits abnormally, without any output, when a very short time limit
  (about a millisecond) expires while it reads a MIP start; PuLP then raises
  ``PulpSolverError``. With a time limit this is reported as TIME_LIMIT_NO_SOLUTION,
  without one as ERROR; the native status says that CBC exited abnormally.
* CBC does not expose its dual bound through PuLP: it is read from CBC's log ("Lower
  bound:" when a limit stopped the search; at optimality the bound is the objective).
  With ``log=True`` the log is printed after the solve.
* ``PULP_CBC_CMD`` and direct ``LpVariable(...)`` construction are deprecated in PuLP 3.3
  (DeprecationWarning); variables are made with ``LpProblem.add_variable`` and the CBC
  command with the warning silenced.
* PuLP's HiGHS solver has no warm start, does not pass the objective constant to
  HiGHS, and raises ``KeyError`` for model statuses newer than its table
  (``kSolutionLimit``, ``kMemoryLimit``, ``kHighsInterrupt``). A small subclass adds
  ``setSolution`` before the run and falls back to HiGHS' own status for the missing
  codes; the bound is read from the underlying ``highspy.Highs``.
* PuLP only knows the variables that appear in the objective or a constraint; a
  variable that appears nowhere gets the value in its bounds closest to 0.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from typing import Any

import highspy
import numpy as np
import pulp

from accelsched.solvers.highs import ensure_highs_threads
from accelsched.solvers.linear import FloatArray, LinearModel, LinearSolution, MatrixForm, WarmStart, make_solution
from accelsched.solvers.options import SolveOptions
from accelsched.solvers.status import HIGHS_MODEL_STATUS, Status, map_status, pulp_status

__all__ = ["solve_pulp_cbc", "solve_pulp_highs"]

_LOG_NUMBER = r"\s*:\s*([-+0-9.eEinf]+)"


def _build(mat: MatrixForm) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    """The model as an LpProblem with variables ``x<j>`` and constraints ``r<i>`` (PuLP-safe names)."""
    sense = pulp.LpMaximize if mat.sense == "max" else pulp.LpMinimize
    prob = pulp.LpProblem("accelsched", sense)
    xs = [
        prob.add_variable(
            f"x{j}",
            None if lo == -np.inf else float(lo),
            None if hi == np.inf else float(hi),
            pulp.LpInteger if integer else pulp.LpContinuous,
        )
        for j, (lo, hi, integer) in enumerate(
            zip(mat.col_lower.tolist(), mat.col_upper.tolist(), mat.integrality.tolist(), strict=True)
        )
    ]
    cost_idx = np.flatnonzero(mat.col_cost)
    prob.setObjective(
        pulp.LpAffineExpression(
            [(xs[j], c) for j, c in zip(cost_idx.tolist(), mat.col_cost[cost_idx].tolist(), strict=True)]
        )
        + mat.offset
    )
    starts = mat.a_start.tolist()
    index, value = mat.a_index.tolist(), mat.a_value.tolist()
    for i, (lo, hi) in enumerate(zip(mat.row_lower.tolist(), mat.row_upper.tolist(), strict=True)):
        lo_i, hi_i = starts[i], starts[i + 1]
        terms = [(xs[j], c) for j, c in zip(index[lo_i:hi_i], value[lo_i:hi_i], strict=True)]
        if lo == hi:
            prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintEQ, f"r{i}", lo))
            continue
        if lo > -np.inf:
            prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintGE, f"r{i}_lo", lo))
        if hi < np.inf:
            prob.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), pulp.LpConstraintLE, f"r{i}_hi", hi))
    return prob, xs


def _values(mat: MatrixForm, xs: list[pulp.LpVariable]) -> FloatArray:
    fallback = np.clip(0.0, mat.col_lower, mat.col_upper)
    raw = [v.varValue for v in xs]
    return np.array([fallback[j] if val is None else float(val) for j, val in enumerate(raw)], dtype=np.float64)


def _set_start(xs: list[pulp.LpVariable], warm_start: WarmStart | None) -> None:
    if warm_start is None:
        return
    for j, val in zip(warm_start.index.tolist(), warm_start.value.tolist(), strict=True):
        xs[j].varValue = val


# -- CBC -------------------------------------------------------------------------------


@contextlib.contextmanager
def _log_file() -> Iterator[str]:
    fd, path = tempfile.mkstemp(prefix="accelsched-cbc-", suffix=".log")
    os.close(fd)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)


def _cbc_command(options: SolveOptions, time_limit: float | None, warm: bool, log_path: str, extra: list[str]) -> Any:
    cbc_options = list(extra)
    if options.seed > 0:
        cbc_options.append(f"randomCbcSeed {options.seed}")
    if options.node_limit is not None:
        cbc_options.append(f"maxNodes {options.node_limit}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pulp.PULP_CBC_CMD(
            msg=False,
            timeLimit=time_limit,
            gapRel=options.rel_gap,
            threads=options.threads if options.threads > 1 else None,
            warmStart=warm,
            presolve=None if options.presolve else False,
            logPath=log_path,
            options=cbc_options,
        )


def _log_value(log: str, label: str) -> float | None:
    match = re.search(rf"^{label}{_LOG_NUMBER}", log, flags=re.MULTILINE)
    if match is None:
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None


def _run_cbc(
    prob: pulp.LpProblem, options: SolveOptions, time_limit: float | None, warm: bool, extra: list[str]
) -> str:
    with _log_file() as log_path:
        prob.solve(_cbc_command(options, time_limit, warm, log_path, extra))
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            log = handle.read()
    if options.log:
        sys.stdout.write(log)
    return log


def solve_pulp_cbc(model: LinearModel, options: SolveOptions, warm_start: WarmStart | None = None) -> LinearSolution:
    """Solve with PuLP's bundled CBC (``PULP_CBC_CMD``).

    Parameters
    ----------
    model
        The model.
    options
        ``timeLimit``, ``gapRel``, ``threads`` (only when > 1), ``randomCbcSeed`` (seed >= 1),
        ``msg`` (the log is printed after the solve), ``presolve`` (``-presolve off`` when False),
        ``maxNodes`` (``node_limit``).
    warm_start
        MIP start written as CBC's ``-mips`` file (``warmStart=True``); PuLP writes 0 for
        the variables a partial start leaves out.

    Returns
    -------
    LinearSolution
        ``bound`` from CBC's log when a limit stopped it (the objective at optimality);
        ``nodes`` and ``iterations`` from the log.
    """
    start = time.perf_counter()
    mat = model.to_matrix()
    prob, xs = _build(mat)
    _set_start(xs, warm_start)
    warm = warm_start is not None
    try:
        log = _run_cbc(prob, options, options.time_limit_s, warm, [])
        if (
            options.time_limit_s is not None
            and prob.status == pulp.LpStatusInfeasible
            and "Pre-processing says infeasible" in log
        ):
            remaining = max(options.time_limit_s - (time.perf_counter() - start), 1e-3)
            _set_start(xs, warm_start)  # the first run overwrote the values PuLP writes as the MIP start
            log = _run_cbc(prob, options, remaining, warm, ["preprocess off"])
    except pulp.PulpSolverError as exc:
        return make_solution(
            model,
            status=Status.ERROR if options.time_limit_s is None else Status.TIME_LIMIT_NO_SOLUTION,
            x=None,
            bound=None,
            runtime_s=time.perf_counter() - start,
            backend="pulp-cbc",
            native_status=f"CBC exited abnormally: {exc}",
        )
    status = pulp_status(prob.status, prob.sol_status)
    native = f"{pulp.LpStatus[prob.status]} / {pulp.LpSolution[prob.sol_status]}"
    bound = _log_value(log, "Lower bound") if status is Status.FEASIBLE else None
    if bound is not None and mat.sense == "max":
        # With "-max" CBC minimizes the negated objective and logs its own lower bound.
        bound = -bound
    if bound is not None:
        bound += mat.offset
    nodes = _log_value(log, "Enumerated nodes")
    iterations = _log_value(log, "Total iterations")
    return make_solution(
        model,
        status=status,
        x=_values(mat, xs) if status.has_solution else None,
        bound=bound,
        runtime_s=time.perf_counter() - start,
        backend="pulp-cbc",
        native_status=native,
        nodes=None if nodes is None else int(nodes),
        iterations=None if iterations is None else int(iterations),
    )


# -- HiGHS through PuLP -------------------------------------------------------------------


class _HiGHSWithStart(pulp.HiGHS):
    """PuLP's HiGHS API solver plus a MIP start and tolerance of newer HiGHS statuses."""

    def __init__(self, start: WarmStart | None, xs: list[pulp.LpVariable], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._start = start
        self._xs = xs

    def callSolver(self, lp: pulp.LpProblem) -> None:
        if self._start is not None and self._start.index.size:
            # buildSolverModel has numbered the columns (var.index) and set the objective.
            cols = np.array([self._xs[j].index for j in self._start.index.tolist()], dtype=np.int32)
            lp.solverModel.setSolution(int(cols.size), cols, self._start.value)
        super().callSolver(lp)

    def findSolutionValues(self, lp: pulp.LpProblem) -> tuple[int, int]:
        try:
            found: tuple[int, int] = super().findSolutionValues(lp)
        except KeyError:
            # PuLP's status table lacks kSolutionLimit, kMemoryLimit and kHighsInterrupt;
            # the variable values were assigned before the lookup failed.
            if _highs_has_solution(lp):
                return pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible
            return pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound
        return found


def _highs_has_solution(lp: pulp.LpProblem) -> bool:
    return bool(lp.solverModel.getInfo().primal_solution_status == highspy.kSolutionStatusFeasible)


def solve_pulp_highs(model: LinearModel, options: SolveOptions, warm_start: WarmStart | None = None) -> LinearSolution:
    """Solve with PuLP's HiGHS API solver (``pulp.HiGHS``, in process through highspy).

    Parameters
    ----------
    model
        The model.
    options
        ``timeLimit``, ``gapRel``, ``threads``, ``msg`` and HiGHS' ``random_seed``, ``presolve`` and
        ``mip_max_nodes`` (``node_limit``).
    warm_start
        MIP start, given to HiGHS with ``setSolution`` (added by this module; PuLP has none).

    Returns
    -------
    LinearSolution
        ``bound`` is HiGHS' MIP dual bound, read from the underlying ``highspy.Highs``.
    """
    start = time.perf_counter()
    mat = model.to_matrix()
    prob, xs = _build(mat)
    solver = _HiGHSWithStart(
        warm_start,
        xs,
        msg=options.log,
        timeLimit=options.time_limit_s,
        gapRel=options.rel_gap,
        threads=options.threads,
        random_seed=options.seed,
        **({} if options.presolve else {"presolve": "off"}),
        **({} if options.node_limit is None else {"mip_max_nodes": options.node_limit}),
    )
    ensure_highs_threads(options.threads)
    prob.solve(solver)
    status = pulp_status(prob.status, prob.sol_status)
    highs = prob.solverModel
    native_code = highs.getModelStatus()
    if status.has_solution and not _highs_has_solution(prob):
        # PuLP maps kInterrupt / kObjectiveBound to "integer feasible" without checking for a solution.
        status = map_status(HIGHS_MODEL_STATUS, native_code, False)
    info = highs.getInfo()
    nodes = int(info.mip_node_count) if info.mip_node_count >= 0 else None
    bound = None
    if mat.is_mip and nodes is not None:
        # PuLP gives HiGHS the negated costs of a maximization and no objective constant.
        bound = (-1.0 if mat.sense == "max" else 1.0) * float(info.mip_dual_bound) + mat.offset
    return make_solution(
        model,
        status=status,
        x=_values(mat, xs) if status.has_solution else None,
        bound=bound,
        runtime_s=time.perf_counter() - start,
        backend="pulp-highs",
        native_status=f"{pulp.LpStatus[prob.status]} / {pulp.LpSolution[prob.sol_status]} ({native_code.name})",
        nodes=nodes,
        iterations=max(int(info.simplex_iteration_count), 0),
    )
