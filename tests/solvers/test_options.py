"""SolveOptions validation and its mapping to each backend's parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ortools.sat.python import cp_model

from accelsched.solvers import SolveOptions, Status, available_backends, solve, solve_cpsat
from accelsched.solvers.options import MAX_SEED
from tests.solvers.instances import knapsack_milp, planted, planted_milp


def test_defaults() -> None:
    opts = SolveOptions()
    assert (opts.time_limit_s, opts.threads, opts.rel_gap, opts.seed, opts.log) == (None, 1, 0.0, 0, False)
    assert opts.presolve is True


def test_numbers_are_normalised() -> None:
    opts = SolveOptions(time_limit_s=2, threads=np.int64(3), rel_gap=0, seed=np.int32(5))  # type: ignore[arg-type]
    assert opts.time_limit_s == 2.0 and isinstance(opts.time_limit_s, float)
    assert opts.threads == 3 and type(opts.threads) is int
    assert opts.seed == 5 and type(opts.seed) is int


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"time_limit_s": 0},
            "SolveOptions: field time_limit_s must be a positive finite number of seconds or None, got 0",
        ),
        ({"time_limit_s": -1.5}, "field time_limit_s must be a positive finite number of seconds or None, got -1.5"),
        ({"time_limit_s": math.inf}, "field time_limit_s must be a positive finite number of seconds or None, got inf"),
        ({"time_limit_s": math.nan}, "field time_limit_s must be a positive finite number of seconds or None, got nan"),
        ({"time_limit_s": "10"}, "field time_limit_s must be a positive finite number of seconds or None, got '10'"),
        ({"threads": 0}, "SolveOptions: field threads must be an integer >= 1, got 0"),
        ({"threads": 2.0}, "field threads must be an integer >= 1, got 2.0"),
        ({"threads": True}, "field threads must be an integer >= 1, got True"),
        ({"rel_gap": -0.1}, "SolveOptions: field rel_gap must be a number in [0, 1), got -0.1"),
        ({"rel_gap": 1.0}, "field rel_gap must be a number in [0, 1), got 1.0"),
        ({"seed": -1}, f"SolveOptions: field seed must be an integer in [0, {MAX_SEED}], got -1"),
        ({"seed": 2**31}, f"field seed must be an integer in [0, {MAX_SEED}], got {2**31}"),
        ({"seed": 1.0}, f"field seed must be an integer in [0, {MAX_SEED}], got 1.0"),
        ({"log": 1}, "SolveOptions: field log must be True or False, got 1"),
        ({"presolve": "off"}, "SolveOptions: field presolve must be True or False, got 'off'"),
        ({"node_limit": -1}, "SolveOptions: field node_limit must be an integer >= 0 or None, got -1"),
        ({"node_limit": 1.0}, "field node_limit must be an integer >= 0 or None, got 1.0"),
        ({"work_limit": 0}, "SolveOptions: field work_limit must be a positive finite number or None, got 0"),
        ({"work_limit": math.inf}, "field work_limit must be a positive finite number or None, got inf"),
    ],
)
def test_bad_values_name_field_and_value(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        SolveOptions(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_frozen() -> None:
    opts = SolveOptions()
    with pytest.raises(AttributeError):
        opts.threads = 4  # type: ignore[misc]


def test_cpsat_receives_the_options() -> None:
    m = cp_model.CpModel()
    x = m.new_int_var(0, 5, "x")
    m.maximize(x)
    sol = solve_cpsat(m, SolveOptions(time_limit_s=3.5, threads=2, rel_gap=0.01, seed=42))
    params = sol.solver.parameters
    assert params.max_time_in_seconds == 3.5
    assert params.num_workers == 2
    assert params.relative_gap_limit == pytest.approx(0.01)
    assert params.random_seed == 42
    assert params.log_search_progress is False
    assert params.cp_model_presolve is True
    assert solve_cpsat(m, SolveOptions(presolve=False)).solver.parameters.cp_model_presolve is False
    assert solve_cpsat(m, SolveOptions(work_limit=2.5)).solver.parameters.max_deterministic_time == 2.5


@pytest.mark.parametrize("backend", available_backends())
def test_linear_backends_stop_at_the_node_limit(backend: str) -> None:
    """A node limit of 0 stops a hard MIP (planted market split, no start) before the
    branch-and-bound search, whatever the machine's speed: without it the solve would run into
    the time limit, which is only a guard against a hang."""
    model, _ = planted_milp(planted())
    sol = solve(model, backend, SolveOptions(time_limit_s=120, node_limit=0))
    assert sol.status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION), sol.native_status
    assert sol.nodes in (None, 0)


@pytest.mark.parametrize("presolve", [True, False])
@pytest.mark.parametrize("backend", available_backends())
def test_linear_backends_receive_presolve(backend: str, presolve: bool, capfd: pytest.CaptureFixture[str]) -> None:
    k = knapsack_milp()
    sol = solve(k.model, backend, SolveOptions(time_limit_s=10, presolve=presolve, log=True))
    assert sol.status is Status.OPTIMAL
    log = capfd.readouterr().out
    said_off = "-presolve off" in log if backend == "pulp-cbc" else "Presolve is switched off" in log
    assert said_off is not presolve
