"""Every linear backend on the same models: optima, warm starts, infeasibility, limits, coexistence."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from accelsched.solvers import LinearModel, LinearSolution, SolveOptions, Status, available_backends, solve
from tests.solvers.instances import (
    JOBSHOP,
    KNAPSACK_CAPACITY,
    KNAPSACK_VALUES,
    KNAPSACK_WEIGHTS,
    jobshop_brute_force,
    jobshop_milp,
    jobshop_schedule_ok,
    knapsack_brute_force,
    knapsack_greedy,
    knapsack_milp,
    planted,
    planted_milp,
)

BACKENDS = available_backends()
REPO = Path(__file__).resolve().parents[2]


def test_every_backend_works_here() -> None:
    assert BACKENDS == ["highs", "pulp-cbc", "pulp-highs", "pyomo-highs"]


def assert_feasible(model: LinearModel, sol: LinearSolution) -> None:
    assert sol.values is not None
    assert model.max_violation(sol.values) < 1e-6


@pytest.mark.parametrize("backend", BACKENDS)
def test_knapsack_optimum(backend: str) -> None:
    best = knapsack_brute_force(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    k = knapsack_milp()
    sol = solve(k.model, backend, SolveOptions(time_limit_s=20))
    assert sol.status is Status.OPTIMAL, sol.native_status
    assert sol.objective == pytest.approx(best)
    assert sol.bound == pytest.approx(best, abs=1e-6)
    assert sol.gap == 0.0 and sol.backend == backend and sol.sense == "max"
    chosen = [i for i, x in enumerate(k.x) if sol.value(x) > 0.5]
    assert sum(KNAPSACK_VALUES[i] for i in chosen) == best
    assert sum(KNAPSACK_WEIGHTS[i] for i in chosen) <= KNAPSACK_CAPACITY
    assert sol.value("take[0]") == sol.value(k.x[0])
    assert_feasible(k.model, sol)


@pytest.mark.parametrize("backend", BACKENDS)
def test_knapsack_warm_start_from_greedy(backend: str) -> None:
    best = knapsack_brute_force(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    greedy = knapsack_greedy(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    greedy_value = sum(KNAPSACK_VALUES[i] for i in greedy)
    assert greedy_value < best  # the start is feasible but not optimal
    k = knapsack_milp()
    start = {x: float(i in greedy) for i, x in enumerate(k.x)}
    assert k.model.max_violation(start) == 0.0
    sol = solve(k.model, backend, SolveOptions(time_limit_s=20), warm_start=start)
    assert sol.status is Status.OPTIMAL
    assert sol.objective is not None and sol.objective >= greedy_value
    assert sol.objective == pytest.approx(best)


@pytest.mark.parametrize("backend", BACKENDS)
def test_warm_start_is_accepted_where_search_finds_nothing(backend: str) -> None:
    """Planted market split, hard to find a point of without a start: with the hidden point as
    start and a node limit of 0 (no search at all), each backend returns a solution at least as
    good as the start. The time limit is only a guard against a hang."""
    p = planted()
    model, x = planted_milp(p)
    start = {xi: float(v) for xi, v in zip(x, p.hidden, strict=True)}
    assert model.max_violation(start) == 0.0
    sol = solve(model, backend, SolveOptions(time_limit_s=60, node_limit=0), warm_start=start)
    assert sol.status.has_solution, sol.native_status
    assert sol.objective is not None and sol.objective <= p.hidden_objective + 1e-6
    assert_feasible(model, sol)


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_gives_feasible_or_no_solution(backend: str) -> None:
    model, _ = planted_milp(planted())
    sol = solve(model, backend, SolveOptions(time_limit_s=0.05))
    assert sol.status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION), sol.native_status
    if sol.status is Status.FEASIBLE:
        assert sol.objective is not None and sol.bound is not None
        assert sol.bound <= sol.objective + 1e-6
        assert sol.gap is not None and sol.gap > 0
        assert_feasible(model, sol)
    else:
        assert sol.objective is None and sol.values is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_jobshop_milp_matches_brute_force(backend: str) -> None:
    best = jobshop_brute_force(JOBSHOP)
    js = jobshop_milp()
    sol = solve(js.model, backend, SolveOptions(time_limit_s=30))
    assert sol.status is Status.OPTIMAL, sol.native_status
    assert sol.objective == pytest.approx(best, abs=1e-6)
    assert sol.bound == pytest.approx(sol.objective, abs=1e-5)
    starts = {op: sol.value(var) for op, var in js.start.items()}
    assert jobshop_schedule_ok(JOBSHOP, starts)
    ends = [starts[j, len(job) - 1] + job[-1][1] for j, job in enumerate(JOBSHOP)]
    assert max(ends) == pytest.approx(best, abs=1e-6)


def infeasible_models() -> dict[str, LinearModel]:
    lp = LinearModel("lp-infeasible")
    a, b = lp.add_var("a", 0, 1), lp.add_var("b", 0, 1)
    lp.add(a + b >= 3)
    lp.minimize(a)
    parity = LinearModel("integer-infeasible")  # the LP relaxation is feasible
    x, y = parity.add_integer("x", 0, 5), parity.add_integer("y", 0, 5)
    parity.add(2 * x + 2 * y == 3)
    parity.maximize(x + y)
    return {"lp": lp, "integer": parity}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["lp", "integer"])
@pytest.mark.parametrize("time_limit", [None, 10.0])
def test_infeasible(backend: str, kind: str, time_limit: float | None) -> None:
    model = infeasible_models()[kind]
    sol = solve(model, backend, SolveOptions(time_limit_s=time_limit))
    assert sol.status is Status.INFEASIBLE, sol.native_status
    assert sol.objective is None and sol.values is None
    with pytest.raises(ValueError, match="no solution to read a value from: status INFEASIBLE"):
        sol.value(model.variables[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_unbounded_is_an_error(backend: str) -> None:
    m = LinearModel("unbounded")
    x = m.add_var("x")
    m.add(x >= 1)
    m.maximize(x)
    assert solve(m, backend).status is Status.ERROR


@pytest.mark.parametrize("backend", BACKENDS)
def test_offset_unused_variable_and_mixed_rows(backend: str) -> None:
    m = LinearModel("misc")
    x = m.add_integer("x", -3, 3)
    y = m.add_var("y", -10, 10)
    unused = m.add_var("unused", 2, 5)
    m.add(x + y <= 2.5)
    m.add(x + y >= -1)
    m.add(y - x <= 0.5)
    m.maximize(2 * x + y + 100)
    sol = solve(m, backend)
    assert sol.status is Status.OPTIMAL, sol.native_status
    # x + y <= 2.5 binds; 2x + y grows with x up to its bound: x = 3, y = -0.5 -> 6 - 0.5 + 100
    assert sol.objective == pytest.approx(105.5)
    assert sol.value(x) == pytest.approx(3) and sol.value(y) == pytest.approx(-0.5)
    assert 2 <= sol.value(unused) <= 5


_COEXIST = textwrap.dedent(
    """
    import importlib, json, sys
    for name in sys.argv[1].split(","):
        importlib.import_module(name)
    from accelsched.solvers import SolveOptions, available_backends, solve, solve_cpsat
    from tests.solvers.instances import knapsack_cpsat, knapsack_milp
    out = {}
    for backend in available_backends():
        sol = solve(knapsack_milp().model, backend, SolveOptions(time_limit_s=20))
        out[backend] = [sol.status.name, sol.objective]
    model, _ = knapsack_cpsat()
    sol = solve_cpsat(model, SolveOptions(time_limit_s=20))
    out["cpsat"] = [sol.status.name, sol.objective]
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize(
    "order",
    [
        "ortools.sat.python.cp_model,highspy,pulp,pyomo.environ",
        "highspy,pyomo.environ,pulp,ortools.sat.python.cp_model",
    ],
)
def test_all_backends_load_and_solve_in_one_process(order: str) -> None:
    best = knapsack_brute_force(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    done = subprocess.run(
        [sys.executable, "-c", _COEXIST, order], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(out) == {"highs", "pulp-cbc", "pulp-highs", "pyomo-highs", "cpsat"}
    assert all(status == "OPTIMAL" and value == pytest.approx(best) for status, value in out.values()), out


def test_thread_count_can_change_between_highs_solves() -> None:
    """HiGHS fixes its scheduler at the first solve; the adapters reset it when threads change."""
    k = knapsack_milp()
    best = knapsack_brute_force(KNAPSACK_WEIGHTS, KNAPSACK_VALUES, KNAPSACK_CAPACITY)
    for backend in ("highs", "pulp-highs", "pyomo-highs"):
        for threads in (2, 1):
            sol = solve(k.model, backend, SolveOptions(threads=threads))
            assert sol.status is Status.OPTIMAL and sol.objective == pytest.approx(best), (backend, threads)
