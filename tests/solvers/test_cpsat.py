"""The CP-SAT adapter on the shared instances, plus hints, trace and objective scaling."""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

from accelsched.solvers import SolveOptions, Status, solve_cpsat
from tests.solvers.instances import (
    JOBSHOP,
    KNAPSACK_CAPACITY,
    KNAPSACK_VALUES,
    KNAPSACK_WEIGHTS,
    jobshop_brute_force,
    jobshop_cpsat,
    jobshop_schedule_ok,
    knapsack_brute_force,
    knapsack_cpsat,
    knapsack_greedy,
    planted,
    planted_cpsat,
)


def test_knapsack_optimum_and_trace() -> None:
    best = knapsack_brute_force(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    model, x = knapsack_cpsat()
    sol = solve_cpsat(model, SolveOptions(time_limit_s=20))
    assert sol.status is Status.OPTIMAL and sol.native_status == "OPTIMAL"
    assert sol.objective == best and sol.bound == best and sol.gap == 0.0 and sol.sense == "max"
    assert sum(KNAPSACK_WEIGHTS[i] for i, xi in enumerate(x) if sol.boolean_value(xi)) <= KNAPSACK_CAPACITY
    assert sum(KNAPSACK_VALUES[i] * sol.value(xi) for i, xi in enumerate(x)) == best
    assert sol.trace and sol.trace[-1][1] == best
    times = [t for t, _ in sol.trace]
    values = [v for _, v in sol.trace]
    assert times == sorted(times) and values == sorted(values)  # improving, for a maximization
    stats = sol.stats
    assert stats.nodes == sol.branches and stats.trace == sol.trace and stats.native_status == "OPTIMAL"


def test_knapsack_hint_from_greedy() -> None:
    best = knapsack_brute_force(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    greedy = knapsack_greedy(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    greedy_value = sum(KNAPSACK_VALUES[i] for i in greedy)
    model, x = knapsack_cpsat()
    sol = solve_cpsat(model, SolveOptions(time_limit_s=20), hints={xi: int(i in greedy) for i, xi in enumerate(x)})
    assert sol.status is Status.OPTIMAL
    assert sol.objective is not None and greedy_value <= sol.objective == best
    assert len(model.proto.solution_hint.vars) == len(x)
    solve_cpsat(model, hints={x[0]: 1})
    assert len(model.proto.solution_hint.vars) == 1  # hints replace the previous ones


def test_hint_accepted_where_search_finds_nothing() -> None:
    """A small deterministic work budget (the same on every machine) with the hidden point as
    hint gives a solution; the time limit is only a guard against a hang."""
    p = planted()
    model, x = planted_cpsat(p)
    options = SolveOptions(time_limit_s=60, work_limit=0.05)
    sol = solve_cpsat(model, options, hints={xi: int(v) for xi, v in zip(x, p.hidden, strict=True)})
    assert sol.status.has_solution, sol.native_status
    assert sol.objective is not None and sol.objective <= p.hidden_objective
    assert all(
        sum(int(c) * sol.value(xi) for c, xi in zip(row, x, strict=True)) == b for row, b in zip(p.a, p.b, strict=True)
    )


def test_jobshop_intervals_match_brute_force() -> None:
    best = jobshop_brute_force(JOBSHOP)
    model, start, makespan = jobshop_cpsat()
    sol = solve_cpsat(model, SolveOptions(time_limit_s=20))
    assert sol.status is Status.OPTIMAL
    assert sol.objective == best and sol.bound == sol.objective and sol.value(makespan) == best
    assert jobshop_schedule_ok(JOBSHOP, {op: float(sol.value(v)) for op, v in start.items()})


def test_infeasible() -> None:
    model = cp_model.CpModel()
    x = model.new_int_var(0, 5, "x")
    y = model.new_int_var(0, 5, "y")
    model.add(2 * x + 2 * y == 3)
    model.maximize(x + y)
    sol = solve_cpsat(model, SolveOptions(time_limit_s=10))
    assert sol.status is Status.INFEASIBLE and sol.objective is None and sol.bound is None
    with pytest.raises(ValueError, match="no solution to read a value from: status INFEASIBLE"):
        sol.value(x)


def test_invalid_model_is_an_error() -> None:
    model = cp_model.CpModel()
    x = model.new_int_var(0, 5, "x")
    model.add_division_equality(x, x, 0)
    sol = solve_cpsat(model)
    assert sol.status is Status.ERROR and sol.native_status == "MODEL_INVALID"


def test_time_limit_gives_feasible_or_no_solution() -> None:
    model, _ = planted_cpsat(planted())
    sol = solve_cpsat(model, SolveOptions(time_limit_s=0.05))
    assert sol.status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION), sol.native_status
    if sol.status is Status.FEASIBLE:
        assert sol.objective is not None and sol.bound is not None and sol.bound <= sol.objective
        assert sol.gap is not None and sol.gap > 0
    else:
        assert sol.objective is None and not sol.trace


def test_objective_scale_divides_objective_bound_and_trace() -> None:
    model = cp_model.CpModel()
    x = model.new_int_var(0, 10, "x")
    model.add(x >= 3)
    model.minimize(250 * x)  # a cost of 2.5 per unit, scaled by 100
    sol = solve_cpsat(model, objective_scale=100.0)
    assert sol.objective == pytest.approx(7.5) and sol.bound == pytest.approx(7.5)
    assert sol.trace[-1][1] == pytest.approx(7.5) and sol.sense == "min"
    with pytest.raises(ValueError, match="objective_scale must be a positive finite number, got 0"):
        solve_cpsat(model, objective_scale=0)


def test_model_without_objective() -> None:
    model = cp_model.CpModel()
    x = model.new_int_var(0, 3, "x")
    model.add(x == 2)
    sol = solve_cpsat(model)
    assert sol.status is Status.OPTIMAL and sol.objective is None and sol.bound is None
    assert sol.value(x) == 2
