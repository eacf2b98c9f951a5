"""The backend-neutral modelling layer: expressions, constraints, storage, values, errors."""

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
    VarValues,
    available_backends,
    backend_availability,
    quicksum,
    solve,
)
from accelsched.solvers.linear import Var, WarmStart, make_solution


def terms(expr: LinExpr) -> dict[str, float]:
    return {v.name: c for v, c in expr.terms()}


@pytest.fixture
def m() -> LinearModel:
    return LinearModel("t")


def test_arithmetic_builds_linear_expressions(m: LinearModel) -> None:
    x, y = m.add_var("x"), m.add_var("y")
    e = 2 * x + y * 3 - (x - 4) / 2 + 1.5 - y
    assert terms(e) == {"x": 1.5, "y": 2.0}
    assert e.constant == pytest.approx(3.5)
    assert terms(-(x + y)) == {"x": -1.0, "y": -1.0}
    assert terms(+x) == {"x": 1.0}
    assert (10 - x).constant == 10 and terms(10 - x) == {"x": -1.0}


def test_repeated_and_cancelling_terms_merge(m: LinearModel) -> None:
    x, y = m.add_var("x"), m.add_var("y")
    e = x + y - x + 2 * y
    assert terms(e) == {"y": 3.0}


def test_numpy_scalars_work_on_both_sides(m: LinearModel) -> None:
    x = m.add_var("x")
    e = np.float64(2.5) * x + np.int64(3)
    assert isinstance(e, LinExpr)
    assert terms(e) == {"x": 2.5} and e.constant == 3.0
    c = np.float64(1.0) <= x
    m.add(c)  # type: ignore[arg-type]  # numpy's stubs type a reflected comparison as bool
    assert m.to_matrix().row_lower.tolist() == [1.0]


def test_nonlinear_products_rejected(m: LinearModel) -> None:
    x, y = m.add_var("x"), m.add_var("y")
    with pytest.raises(TypeError, match="not linear"):
        x * y
    with pytest.raises(TypeError, match="not linear"):
        (x + 1) * (y + 1)
    with pytest.raises(TypeError, match="not linear"):
        1 / x
    with pytest.raises(TypeError):
        x + "a"


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


def test_constraint_has_no_truth_value(m: LinearModel) -> None:
    x = m.add_var("x")
    with pytest.raises(TypeError, match="no truth value"):
        bool(x <= 1)
    with pytest.raises(TypeError, match="chained comparisons"):
        0 <= x <= 1  # noqa: B015
    with pytest.raises(TypeError, match="not a linear constraint"):
        x != 1  # noqa: B015


def test_vars_hash_by_identity_and_are_usable_as_keys(m: LinearModel) -> None:
    xs = [m.add_binary(f"b{i}") for i in range(50)]
    index = {v: i for i, v in enumerate(xs)}
    assert [index[v] for v in xs] == list(range(50))
    assert m.var("b7") is xs[7]
    assert xs[3] in {xs[3]}


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


def test_from_terms_and_quicksum(m: LinearModel) -> None:
    xs = [m.add_var(f"x{i}") for i in range(4)]
    e = LinExpr.from_terms(xs, [1, 2, 3, 4], constant=5)
    assert terms(e) == {"x0": 1, "x1": 2, "x2": 3, "x3": 4} and e.constant == 5
    q = quicksum([xs[0], 2 * xs[1], 3, e])
    assert terms(q) == {"x0": 2, "x1": 4, "x2": 3, "x3": 4} and q.constant == 8
    with pytest.raises(ValueError, match="got 4 variables but 3 coefficients"):
        LinExpr.from_terms(xs, [1, 2, 3])
    with pytest.raises(TypeError, match="quicksum: cannot add a str"):
        quicksum(["a"])  # type: ignore[list-item]


def test_long_sums_are_linear_time() -> None:
    """1e5-term sums by repeated +, sum() and quicksum build correctly (in-place accumulation:
    a copying ``+`` would make this test take minutes; speed itself is not asserted here)."""
    m = LinearModel("big")
    n = 100_000
    xs = [m.add_var(f"x{i}", 0, 1) for i in range(n)]
    chain: LinExpr = LinExpr()
    for i, x in enumerate(xs):
        chain = chain + (i % 7 + 1) * x
    m.add(chain <= 1000)
    total = sum(xs)
    assert isinstance(total, LinExpr)
    m.add(total >= 1)
    m.maximize(quicksum(xs))
    assert m.num_nonzeros == 2 * n
    mat = m.to_matrix()
    assert mat.a_value[:7].tolist() == [1, 2, 3, 4, 5, 6, 7]


def test_values_by_var_name_and_expression(m: LinearModel) -> None:
    x, y = m.add_var("x"), m.add_var("y")
    values = VarValues(m, [1.5, 2.0])
    assert values[x] == 1.5 and values["y"] == 2.0 and len(values) == 2
    assert list(values) == [x, y] and "x" in values and "zz" not in values
    assert (2 * x + y + 1).value(values) == 6.0
    assert (2 * x + y + 1).value({x: 1.0, y: 0.0}) == 3.0
    with pytest.raises(ValueError, match="expected 2 values"):
        VarValues(m, [1.0])


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
