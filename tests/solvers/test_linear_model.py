"""The backend-neutral modelling layer: rows, objective, storage, solutions, warm starts, backends, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelsched.errors import InputError
from accelsched.solvers import (
    LinearModel,
    LinExpr,
    SolveOptions,
    Status,
    available_backends,
    backend_availability,
    solve,
)
from accelsched.solvers.linear import Var, WarmStart, make_solution
from tests.solvers.helpers import terms


def test_constraints_become_rows(m: LinearModel) -> None:
    x, y = m.add_var("x", -5, 5), m.add_var("y")
    assert m.add(2 * x + y <= 4, name="le") == 0
    m.add(x >= y - 1)
    m.add(3 == x + y)  # type: ignore[arg-type]  # noqa: SIM300 (the reflected comparison is what is tested)
    mat = m.to_matrix()
    assert mat.row_names == ("le", "c1", "c2")
    assert mat.row_lower.tolist() == [-math.inf, -1.0, 3.0]
    assert mat.row_upper.tolist() == [4.0, math.inf, 3.0]
    rows = [
        dict(zip(mat.a_index[a:b].tolist(), mat.a_value[a:b].tolist(), strict=True))
        for a, b in zip(mat.a_start[:-1], mat.a_start[1:], strict=True)
    ]
    # 3 == x + y is evaluated as (x + y).__eq__(3): the row x + y == 3
    assert rows == [{0: 2.0, 1: 1.0}, {0: 1.0, 1: -1.0}, {0: 1.0, 1: 1.0}]
    assert mat.col_lower.tolist() == [-5.0, 0.0] and mat.col_upper.tolist() == [5.0, math.inf]


def test_objective_sense_and_offset(m: LinearModel) -> None:
    x, y = m.add_var("x"), m.add_var("y")
    m.maximize(3 * x - y + 7)
    mat = m.to_matrix()
    assert mat.sense == "max" and mat.col_cost.tolist() == [3.0, -1.0] and mat.offset == 7.0
    assert terms(m.objective()) == {"x": 3.0, "y": -1.0}
    m.minimize(x)
    assert m.to_matrix().sense == "min" and m.sense == "min"


def test_model_errors(m: LinearModel) -> None:
    x = m.add_var("x")
    with pytest.raises(ValueError, match="duplicate variable name 'x'"):
        m.add_var("x")
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        m.add_var("")
    with pytest.raises(ValueError, match="variable 'z' has bad bounds lb=2, ub=1"):
        m.add_var("z", 2, 1)
    with pytest.raises(ValueError, match="bad bounds"):
        m.add_var("n", math.nan, 1)
    with pytest.raises(TypeError, match="expects a Constraint, got bool"):
        m.add(1 <= 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-finite coefficient"):
        m.add(math.inf * x <= 1)
    other = LinearModel("other")
    z = other.add_var("z")
    with pytest.raises(ValueError, match="uses variables of model 'other'"):
        m.add(z <= 1)
    with pytest.raises(ValueError, match="different models"):
        m.add(x + z <= 1)
    with pytest.raises(KeyError, match="model 't' has no variable 'nope'"):
        m.var("nope")


def test_max_violation(m: LinearModel) -> None:
    x, y = m.add_var("x", 0, 4), m.add_integer("y", 0, 3)
    m.add(x + y <= 5)
    m.add(x - y >= -1)
    m.add(LinExpr(0.0) <= 1)  # an empty row
    assert m.max_violation({x: 2.0, y: 3.0}) == 0.0
    assert m.max_violation({"x": 4.0, "y": 3.0}) == pytest.approx(2.0)
    assert m.max_violation({x: 1.0, y: 1.5}) == pytest.approx(0.5)
    assert m.max_violation({x: 1.0, y: 1.5}, check_integrality=False) == 0.0
    with pytest.raises(ValueError, match="no value for variable 'y'"):
        m.max_violation({x: 1.0})


def test_warm_start_resolution(m: LinearModel) -> None:
    x, _ = m.add_var("x"), m.add_var("y")
    start: dict[Var | str, float] = {"y": 2.0, x: 1.0}
    ws = WarmStart.from_mapping(m, start)
    assert ws.index.tolist() == [1, 0] and ws.value.tolist() == [2.0, 1.0]
    assert ws.dense(2).tolist() == [1.0, 2.0]
    with pytest.raises(InputError, match="unknown variable 'w'"):
        WarmStart.from_mapping(m, {"w": 1})
    with pytest.raises(ValueError, match="value of 'x' is nan"):
        WarmStart.from_mapping(m, {x: math.nan})
    other = LinearModel("other").add_var("x")
    with pytest.raises(ValueError, match="belongs to model 'other'"):
        WarmStart.from_mapping(m, {other: 1})


def test_make_solution_recomputes_objective(m: LinearModel) -> None:
    x = m.add_var("x")
    m.maximize(2 * x + 1)
    sol = make_solution(
        m, status=Status.OPTIMAL, x=np.array([3.0]), bound=None, runtime_s=0.1, backend="b", native_status="ok"
    )
    assert sol.objective == 7.0 and sol.bound == 7.0 and sol.gap == 0.0 and sol.sense == "max"
    broken = make_solution(
        m, status=Status.FEASIBLE, x=None, bound=1.0, runtime_s=0.1, backend="b", native_status="odd"
    )
    assert broken.status is Status.ERROR and "no values returned" in broken.native_status
    with pytest.raises(ValueError, match="no solution to read a value from: status ERROR"):
        broken.value(x)


def test_unknown_backend_lists_available_ones() -> None:
    m = LinearModel("t")
    m.add_var("x")
    with pytest.raises(InputError) as info:
        solve(m, backend="gurobi")
    text = str(info.value)
    assert text.startswith("backend: unknown backend 'gurobi' (use one of: ")
    for name in available_backends():
        assert name in text


def test_available_backends_are_the_working_ones() -> None:
    reasons = backend_availability()
    assert set(reasons) == {"highs", "pulp-cbc", "pulp-highs", "pyomo-highs"}
    assert available_backends() == [name for name, why in reasons.items() if not why]
    assert "highs" in available_backends()


def test_empty_model_is_optimal_with_its_offset() -> None:
    m = LinearModel("empty")
    m.minimize(LinExpr(5.0))
    sol = solve(m, "highs", SolveOptions())
    assert sol.status is Status.OPTIMAL and sol.objective == 5.0
