"""Solver layer: the backend-neutral Status and SolveStats, options, a small linear modelling
layer solved by highspy / PuLP (CBC, HiGHS) / Pyomo (``appsi_highs``), and a CP-SAT adapter.

Importing this package loads NumPy only; each backend is imported when it is first used
(:func:`solve_cpsat` needs OR-Tools, the linear backends load theirs in :func:`solve`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accelsched.solvers.linear import (
    BACKENDS,
    Constraint,
    LinearModel,
    LinearSolution,
    LinExpr,
    MatrixForm,
    Var,
    VarValues,
    WarmStart,
    available_backends,
    backend_availability,
    quicksum,
    solve,
)
from accelsched.solvers.options import SolveOptions
from accelsched.solvers.stats import GAP_TINY, SolveStats, relative_gap, status_gap
from accelsched.solvers.status import Outcome, Status, map_status, pulp_status

if TYPE_CHECKING:  # OR-Tools is heavy: cpsat is imported on first use (``__getattr__``)
    from accelsched.solvers.cpsat import CpSatSolution, TraceCallback, solve_cpsat

__all__ = [
    "BACKENDS",
    "GAP_TINY",
    "Constraint",
    "CpSatSolution",
    "LinExpr",
    "LinearModel",
    "LinearSolution",
    "MatrixForm",
    "Outcome",
    "SolveOptions",
    "SolveStats",
    "Status",
    "TraceCallback",
    "Var",
    "VarValues",
    "WarmStart",
    "available_backends",
    "backend_availability",
    "map_status",
    "pulp_status",
    "quicksum",
    "relative_gap",
    "solve",
    "solve_cpsat",
    "status_gap",
]

_LAZY = {"CpSatSolution", "TraceCallback", "solve_cpsat"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from accelsched.solvers import cpsat  # OR-Tools is heavy: imported when CP-SAT is first used

        return getattr(cpsat, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
