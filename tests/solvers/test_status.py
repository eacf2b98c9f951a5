"""Every entry of the status tables, and their coverage of each backend's native codes."""

from __future__ import annotations

import highspy
import pulp
import pytest
from ortools.sat.python import cp_model
from pyomo.contrib.appsi.base import TerminationCondition as AppsiTermination
from pyomo.contrib.appsi.base import legacy_termination_condition_map
from pyomo.opt import TerminationCondition as LegacyTermination

from accelsched.solvers.status import (
    CPSAT_STATUS,
    HIGHS_MODEL_STATUS,
    PULP_NO_SOLUTION_STATUS,
    PULP_SOLUTION_STATUS,
    PYOMO_TERMINATION,
    Outcome,
    Status,
    map_status,
    pulp_status,
)

OPT, FEAS, INF, NOSOL, ERR = (
    Status.OPTIMAL,
    Status.FEASIBLE,
    Status.INFEASIBLE,
    Status.TIME_LIMIT_NO_SOLUTION,
    Status.ERROR,
)

# (status with a solution, status without one), written out independently of the module.
EXPECTED_CPSAT = {
    "OPTIMAL": (OPT, ERR),
    "FEASIBLE": (FEAS, ERR),
    "INFEASIBLE": (ERR, INF),
    "UNKNOWN": (FEAS, NOSOL),
    "MODEL_INVALID": (ERR, ERR),
}

EXPECTED_HIGHS = {
    "kNotset": (ERR, ERR),
    "kLoadError": (ERR, ERR),
    "kModelError": (ERR, ERR),
    "kPresolveError": (ERR, ERR),
    "kSolveError": (ERR, ERR),
    "kPostsolveError": (ERR, ERR),
    "kModelEmpty": (OPT, OPT),
    "kOptimal": (OPT, ERR),
    "kInfeasible": (ERR, INF),
    "kUnboundedOrInfeasible": (ERR, ERR),
    "kUnbounded": (ERR, ERR),
    "kObjectiveBound": (FEAS, NOSOL),
    "kObjectiveTarget": (FEAS, NOSOL),
    "kTimeLimit": (FEAS, NOSOL),
    "kIterationLimit": (FEAS, NOSOL),
    "kUnknown": (FEAS, ERR),
    "kSolutionLimit": (FEAS, NOSOL),
    "kInterrupt": (FEAS, NOSOL),
    "kMemoryLimit": (FEAS, ERR),
    "kHighsInterrupt": (FEAS, NOSOL),
}

EXPECTED_PYOMO = {
    "unknown": (FEAS, ERR),
    "maxTimeLimit": (FEAS, NOSOL),
    "maxIterations": (FEAS, NOSOL),
    "minFunctionValue": (FEAS, NOSOL),
    "minStepLength": (ERR, ERR),
    "optimal": (OPT, ERR),
    "unbounded": (ERR, ERR),
    "infeasible": (ERR, INF),
    "infeasibleOrUnbounded": (ERR, ERR),
    "error": (ERR, ERR),
    "resourceInterrupt": (FEAS, NOSOL),
    "licensingProblems": (ERR, ERR),
}

# (LpStatus, LpSolution) -> Status for every pair.
EXPECTED_PULP = {
    **{(status, 1): OPT for status in pulp.LpStatus},
    **{(status, 2): FEAS for status in pulp.LpStatus},
    **{(status, -1): INF for status in pulp.LpStatus},
    **{(status, -2): ERR for status in pulp.LpStatus},
    (0, 0): NOSOL,
    (1, 0): ERR,
    (-1, 0): INF,
    (-2, 0): ERR,
    (-3, 0): ERR,
}

TABLES = [
    ("cpsat", CPSAT_STATUS, EXPECTED_CPSAT),
    ("highs", HIGHS_MODEL_STATUS, EXPECTED_HIGHS),
    ("pyomo", PYOMO_TERMINATION, EXPECTED_PYOMO),
]


@pytest.mark.parametrize(
    ("table", "name", "expected"),
    [(table, name, exp) for _, table, expected in TABLES for name, exp in expected.items()],
)
def test_every_table_entry(table: dict[str, Outcome], name: str, expected: tuple[Status, Status]) -> None:
    assert table[name] == Outcome(*expected)
    assert map_status(table, name, True) is expected[0]
    assert map_status(table, name, False) is expected[1]


@pytest.mark.parametrize(("label", "table", "expected"), TABLES)
def test_tables_have_no_extra_entries(label: str, table: dict[str, Outcome], expected: dict[str, tuple]) -> None:
    assert set(table) == set(expected), label


def test_cpsat_table_covers_every_native_status() -> None:
    natives = [cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE, cp_model.UNKNOWN, cp_model.MODEL_INVALID]
    assert {s.name for s in natives} == set(CPSAT_STATUS)
    assert map_status(CPSAT_STATUS, cp_model.UNKNOWN, False) is NOSOL  # enum members are looked up by name


def test_highs_table_covers_every_model_status() -> None:
    assert set(highspy.HighsModelStatus.__members__) == set(HIGHS_MODEL_STATUS)
    assert map_status(HIGHS_MODEL_STATUS, highspy.HighsModelStatus.kTimeLimit, True) is FEAS


def test_pyomo_table_covers_every_appsi_termination() -> None:
    # appsi_highs reports appsi's TerminationCondition through the legacy one; all images are mapped.
    images = {legacy_termination_condition_map[tc].name for tc in AppsiTermination}
    assert images == set(PYOMO_TERMINATION)
    assert map_status(PYOMO_TERMINATION, LegacyTermination.maxTimeLimit, False) is NOSOL


def test_unmapped_codes_are_errors() -> None:
    assert map_status(PYOMO_TERMINATION, LegacyTermination.solverFailure, True) is ERR
    assert map_status(HIGHS_MODEL_STATUS, "kSomethingNew", True) is ERR


@pytest.mark.parametrize(("pair", "expected"), sorted(EXPECTED_PULP.items()))
def test_pulp_status_pairs(pair: tuple[int, int], expected: Status) -> None:
    assert pulp_status(*pair) is expected


def test_pulp_tables_cover_pulp_codes() -> None:
    assert set(PULP_SOLUTION_STATUS) == set(pulp.LpSolution)
    assert set(PULP_NO_SOLUTION_STATUS) == set(pulp.LpStatus)
    assert len(EXPECTED_PULP) == len(pulp.LpStatus) * len(pulp.LpSolution)


def test_pulp_time_limit_reports_optimal_status_but_integer_feasible_solution() -> None:
    assert pulp_status(pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible) is FEAS
    assert pulp_status(pulp.LpStatusOptimal, 99) is ERR


def test_status_has_solution() -> None:
    assert [s for s in Status if s.has_solution] == [OPT, FEAS]
