"""The ``"highs"`` backend: a :class:`~accelsched.solvers.linear.LinearModel` solved by highspy directly.

The model is passed in one call (``passModel`` with a row-wise CSR matrix), the warm
start with ``setSolution`` after the model (and so the objective) is in place, and
the answer is read from ``getModelStatus``, ``getInfo`` and ``getSolution``.

Quirk handled here: HiGHS keeps one global thread scheduler per process, created by
the first solve. A later solve asking for a different ``threads`` value fails
(``run`` returns ``kError``, the model status stays ``kNotset``) until
``Highs.resetGlobalScheduler`` is called. :func:`ensure_highs_threads` resets the
scheduler when the thread count changes; it is shared by every HiGHS-based backend
(highspy, PuLP's HiGHS, Pyomo's ``appsi_highs``: they all load the same library).
HiGHS solves must therefore not run concurrently in several threads of one process.
"""

from __future__ import annotations

import time

import highspy
import numpy as np

from accelsched.solvers.linear import LinearModel, LinearSolution, MatrixForm, WarmStart, make_solution
from accelsched.solvers.options import SolveOptions
from accelsched.solvers.status import HIGHS_MODEL_STATUS, map_status

__all__ = ["apply_highs_options", "ensure_highs_threads", "solve_highs"]

_scheduler_threads: int | None = None


def ensure_highs_threads(threads: int) -> None:
    """Make the process-wide HiGHS scheduler accept ``threads`` (reset it if the count changes).

    Parameters
    ----------
    threads
        Thread count the next HiGHS solve will ask for.
    """
    global _scheduler_threads
    if _scheduler_threads != threads:
        highspy.Highs.resetGlobalScheduler(True)
        _scheduler_threads = threads


def apply_highs_options(h: highspy.Highs, options: SolveOptions) -> None:
    """Set the HiGHS options of :class:`SolveOptions` on a solver instance.

    ``time_limit``, ``threads``, ``mip_rel_gap``, ``random_seed``, ``output_flag``,
    ``presolve`` (``"off"`` when ``options.presolve`` is False, else HiGHS' default) and
    ``mip_max_nodes`` (when ``options.node_limit`` is set).
    """
    h.setOptionValue("output_flag", options.log)
    h.setOptionValue("log_to_console", options.log)
    if options.time_limit_s is not None:
        h.setOptionValue("time_limit", options.time_limit_s)
    h.setOptionValue("threads", options.threads)
    h.setOptionValue("mip_rel_gap", options.rel_gap)
    h.setOptionValue("random_seed", options.seed)
    if not options.presolve:
        h.setOptionValue("presolve", "off")
    if options.node_limit is not None:
        h.setOptionValue("mip_max_nodes", options.node_limit)


def _highs_lp(mat: MatrixForm) -> highspy.HighsLp:
    lp = highspy.HighsLp()
    lp.num_col_ = mat.num_cols
    lp.num_row_ = mat.num_rows
    lp.sense_ = highspy.ObjSense.kMaximize if mat.sense == "max" else highspy.ObjSense.kMinimize
    lp.offset_ = mat.offset
    lp.col_cost_ = mat.col_cost
    lp.col_lower_ = mat.col_lower
    lp.col_upper_ = mat.col_upper
    lp.row_lower_ = mat.row_lower
    lp.row_upper_ = mat.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.num_col_ = mat.num_cols
    lp.a_matrix_.num_row_ = mat.num_rows
    lp.a_matrix_.start_ = mat.a_start.astype(np.int32)
    lp.a_matrix_.index_ = mat.a_index.astype(np.int32)
    lp.a_matrix_.value_ = mat.a_value
    if mat.is_mip:
        kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
        lp.integrality_ = [kinds[int(flag)] for flag in mat.integrality]
    return lp


def solve_highs(model: LinearModel, options: SolveOptions, warm_start: WarmStart | None = None) -> LinearSolution:
    """Solve with highspy.

    Parameters
    ----------
    model
        The model.
    options
        Limits and settings (``time_limit``, ``threads``, ``mip_rel_gap``, ``random_seed``, ``output_flag``).
    warm_start
        A (possibly partial) MIP start, given with ``setSolution`` after the objective is set;
        HiGHS completes a partial start by a sub-MIP.

    Returns
    -------
    LinearSolution
        ``bound`` is HiGHS' MIP dual bound (the objective for an LP solved to optimality);
        ``nodes`` the MIP node count; ``iterations`` the simplex iteration count.
    """
    start = time.perf_counter()
    mat = model.to_matrix()
    h = highspy.Highs()
    apply_highs_options(h, options)
    status = h.passModel(_highs_lp(mat))
    if status == highspy.HighsStatus.kError:
        return make_solution(
            model,
            status=map_status(HIGHS_MODEL_STATUS, "kModelError", False),
            x=None,
            bound=None,
            runtime_s=time.perf_counter() - start,
            backend="highs",
            native_status="passModel returned kError",
        )
    if warm_start is not None and warm_start.index.size:
        h.setSolution(int(warm_start.index.size), warm_start.index.astype(np.int32), warm_start.value)
    ensure_highs_threads(options.threads)
    if h.run() == highspy.HighsStatus.kError and h.getModelStatus() == highspy.HighsModelStatus.kNotset:
        # Someone else initialised the global scheduler with another thread count.
        highspy.Highs.resetGlobalScheduler(True)
        h.run()
    native = h.getModelStatus()
    if native == highspy.HighsModelStatus.kUnboundedOrInfeasible and not mat.is_mip:
        # Presolve may stop at "unbounded or infeasible"; the simplex without presolve decides.
        h.setOptionValue("presolve", "off")
        h.run()
        native = h.getModelStatus()
    info = h.getInfo()
    has_solution = info.primal_solution_status == highspy.kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=np.float64) if has_solution else None
    nodes = int(info.mip_node_count) if info.mip_node_count >= 0 else None
    bound = float(info.mip_dual_bound) if mat.is_mip and nodes is not None else None
    return make_solution(
        model,
        status=map_status(HIGHS_MODEL_STATUS, native, has_solution or mat.num_cols == 0),
        x=x if mat.num_cols else np.zeros(0),
        bound=bound,
        runtime_s=time.perf_counter() - start,
        backend="highs",
        native_status=native.name,
        nodes=nodes,
        iterations=max(int(info.simplex_iteration_count), 0),
    )
