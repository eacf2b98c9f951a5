"""Backend-neutral solve status and the explicit tables from each backend's native codes.

Every backend reports its outcome in its own vocabulary. The tables below translate
each native code into one :class:`Status`. Many native codes only say *why* the solver
stopped (a time limit, an interrupt, a node limit) and not whether it holds a feasible
solution, so every entry is an :class:`Outcome`: the status to report when the solver
returned a feasible solution and the status to report when it did not.

There is no ``UNBOUNDED`` status: every scheduling objective of accelsched is bounded,
so an unbounded (or infeasible-or-unbounded) answer is a formulation bug and maps to
:attr:`Status.ERROR`; the native status text kept next to the status says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType
from typing import NamedTuple

__all__ = [
    "CPSAT_STATUS",
    "HIGHS_MODEL_STATUS",
    "PULP_NO_SOLUTION_STATUS",
    "PULP_SOLUTION_STATUS",
    "PYOMO_TERMINATION",
    "Outcome",
    "Status",
    "map_status",
    "pulp_status",
]


class Status(Enum):
    """Outcome of a solve, the same for every method and backend.

    Attributes
    ----------
    OPTIMAL
        A solution was found and proven optimal (within the requested ``rel_gap``).
    FEASIBLE
        A feasible solution was found, optimality is not proven (a limit was hit).
    INFEASIBLE
        The model was proven to have no feasible solution.
    TIME_LIMIT_NO_SOLUTION
        A limit (time, nodes, interrupt) stopped the solver before any feasible
        solution was found, and infeasibility was not proven either.
    ERROR
        The solver failed, the model was invalid, or the answer is inconsistent
        (for example unbounded, which no scheduling objective can be).
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT_NO_SOLUTION = "time_limit_no_solution"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        """True for :attr:`OPTIMAL` and :attr:`FEASIBLE`, the statuses that carry a solution."""
        return self in (Status.OPTIMAL, Status.FEASIBLE)


class Outcome(NamedTuple):
    """What a native code means, depending on whether the solver holds a feasible solution.

    Attributes
    ----------
    with_solution
        Status to report when the solver returned a feasible solution.
    without_solution
        Status to report when it did not.
    """

    with_solution: Status
    without_solution: Status


_OPT = Outcome(Status.OPTIMAL, Status.ERROR)
_INF = Outcome(Status.ERROR, Status.INFEASIBLE)
_LIMIT = Outcome(Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION)
_FAIL = Outcome(Status.ERROR, Status.ERROR)
_FAIL_KEEP = Outcome(Status.FEASIBLE, Status.ERROR)


def map_status(table: Mapping[str, Outcome], code: object, has_solution: bool) -> Status:
    """Translate a native status code with one of the tables of this module.

    Parameters
    ----------
    table
        One of :data:`CPSAT_STATUS`, :data:`HIGHS_MODEL_STATUS`, :data:`PYOMO_TERMINATION`.
    code
        The backend's native code: an enum member of that backend (looked up by its
        ``name``) or the name itself.
    has_solution
        Whether the backend returned a feasible solution.

    Returns
    -------
    Status
        The mapped status; a code missing from the table maps to :attr:`Status.ERROR`.
    """
    name = code if isinstance(code, str) else getattr(code, "name", str(code))
    outcome = table.get(name)
    if outcome is None:
        return Status.ERROR
    return outcome.with_solution if has_solution else outcome.without_solution


CPSAT_STATUS: Mapping[str, Outcome] = MappingProxyType(
    {
        "OPTIMAL": _OPT,
        "FEASIBLE": Outcome(Status.FEASIBLE, Status.ERROR),
        "INFEASIBLE": _INF,
        # UNKNOWN: a limit was reached before a solution or a proof was found.
        "UNKNOWN": _LIMIT,
        "MODEL_INVALID": _FAIL,
    }
)
"""CP-SAT ``CpSolverStatus`` name -> :class:`Outcome`."""

HIGHS_MODEL_STATUS: Mapping[str, Outcome] = MappingProxyType(
    {
        "kNotset": _FAIL,
        "kLoadError": _FAIL,
        "kModelError": _FAIL,
        "kPresolveError": _FAIL,
        "kSolveError": _FAIL,
        "kPostsolveError": _FAIL,
        # A model without columns: its objective is the offset, which is optimal.
        "kModelEmpty": Outcome(Status.OPTIMAL, Status.OPTIMAL),
        "kOptimal": _OPT,
        "kInfeasible": _INF,
        "kUnboundedOrInfeasible": _FAIL,
        "kUnbounded": _FAIL,
        "kObjectiveBound": _LIMIT,
        "kObjectiveTarget": _LIMIT,
        "kTimeLimit": _LIMIT,
        "kIterationLimit": _LIMIT,
        "kUnknown": _FAIL_KEEP,
        "kSolutionLimit": _LIMIT,
        "kInterrupt": _LIMIT,
        "kMemoryLimit": _FAIL_KEEP,
        "kHighsInterrupt": _LIMIT,
    }
)
"""highspy ``HighsModelStatus`` name -> :class:`Outcome` (every member of HiGHS 1.12)."""

PYOMO_TERMINATION: Mapping[str, Outcome] = MappingProxyType(
    {
        # The legacy ``SolverFactory("appsi_highs")`` interface reports the legacy
        # ``pyomo.opt.TerminationCondition``; these are the twelve values it can produce
        # (the images of appsi's own TerminationCondition). Any other maps to ERROR.
        "unknown": _FAIL_KEEP,
        "maxTimeLimit": _LIMIT,
        "maxIterations": _LIMIT,
        "minFunctionValue": _LIMIT,
        "minStepLength": _FAIL,
        "optimal": _OPT,
        "unbounded": _FAIL,
        "infeasible": _INF,
        "infeasibleOrUnbounded": _FAIL,
        "error": _FAIL,
        "resourceInterrupt": _LIMIT,
        "licensingProblems": _FAIL,
    }
)
"""Pyomo legacy ``TerminationCondition`` name (as reported by ``appsi_highs``) -> :class:`Outcome`."""

PULP_SOLUTION_STATUS: Mapping[int, Status | None] = MappingProxyType(
    {
        1: Status.OPTIMAL,  # LpSolutionOptimal
        2: Status.FEASIBLE,  # LpSolutionIntegerFeasible: a limit stopped the search (status says "Optimal")
        -1: Status.INFEASIBLE,  # LpSolutionInfeasible
        -2: Status.ERROR,  # LpSolutionUnbounded
        0: None,  # LpSolutionNoSolutionFound: decided by the problem status, see below
    }
)
"""PuLP ``sol_status`` -> :class:`Status`; ``None`` defers to :data:`PULP_NO_SOLUTION_STATUS`."""

PULP_NO_SOLUTION_STATUS: Mapping[int, Status] = MappingProxyType(
    {
        0: Status.TIME_LIMIT_NO_SOLUTION,  # LpStatusNotSolved: CBC "Stopped ..." without a solution
        1: Status.ERROR,  # LpStatusOptimal without a solution is inconsistent
        -1: Status.INFEASIBLE,  # LpStatusInfeasible (CBC "Integer infeasible" has no sol_status)
        -2: Status.ERROR,  # LpStatusUnbounded
        -3: Status.ERROR,  # LpStatusUndefined
    }
)
"""PuLP problem ``status`` -> :class:`Status`, used when ``sol_status`` is NoSolutionFound."""


def pulp_status(status: int, sol_status: int) -> Status:
    """Translate PuLP's pair ``(problem.status, problem.sol_status)``.

    PuLP reports a time-limited MIP with a feasible incumbent as status ``Optimal``
    (1) and only ``sol_status`` (``LpSolutionIntegerFeasible``, 2) tells it apart, so
    the solution status decides first; the problem status decides when no solution
    was found.

    Parameters
    ----------
    status
        ``LpProblem.status`` (a key of ``pulp.LpStatus``).
    sol_status
        ``LpProblem.sol_status`` (a key of ``pulp.LpSolution``).

    Returns
    -------
    Status
        The mapped status; unknown codes map to :attr:`Status.ERROR`.
    """
    if sol_status not in PULP_SOLUTION_STATUS:
        return Status.ERROR
    mapped = PULP_SOLUTION_STATUS[sol_status]
    if mapped is not None:
        return mapped
    return PULP_NO_SOLUTION_STATUS.get(status, Status.ERROR)
