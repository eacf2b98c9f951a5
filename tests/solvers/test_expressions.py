"""Variables, linear expressions and constraints (``accelsched.solvers.expressions``): arithmetic,
merging, numpy interplay, what is rejected, values."""

from __future__ import annotations

import numpy as np
import pytest

from accelsched.solvers import (
    LinearModel,
    LinExpr,
    VarValues,
    quicksum,
)
from tests.solvers.helpers import terms


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
