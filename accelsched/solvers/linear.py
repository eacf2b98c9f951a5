"""A small backend-neutral layer for linear and mixed-integer models.

A formulation is written once, in notation that reads like the math, and solved by
any backend of :func:`available_backends`::

    m = LinearModel("knapsack")
    x = [m.add_binary(f"x{i}") for i in range(n)]
    m.add(quicksum(w[i] * x[i] for i in range(n)) <= capacity, name="capacity")
    m.maximize(quicksum(v[i] * x[i] for i in range(n)))
    sol = solve(m, backend="highs", options=SolveOptions(time_limit_s=10))
    chosen = [i for i in range(n) if sol.value(x[i]) > 0.5]

Storage is compact: the constraint matrix is kept row-wise in two flat typed buffers
(indices and coefficients), expressions (:mod:`accelsched.solvers.expressions`) are
built lazily as a tree and flattened once (so ``e = e + term`` in a loop, ``sum(...)``
and :func:`quicksum` are all linear in the number of terms), and each backend receives
the whole model at once as CSR arrays (:meth:`LinearModel.to_matrix`).
"""

from __future__ import annotations

import importlib
import math
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from accelsched.errors import InputError
from accelsched.solvers.expressions import (
    Constraint,
    FloatArray,
    IntArray,
    LinExpr,
    PointValues,
    Sense,
    Var,
    VarValues,
    _as_expr,
    _merge,
    quicksum,
)
from accelsched.solvers.options import SolveOptions
from accelsched.solvers.stats import SolveStats, status_gap
from accelsched.solvers.status import Status

__all__ = [
    "BACKENDS",
    "Constraint",
    "LinExpr",
    "LinearModel",
    "LinearSolution",
    "MatrixForm",
    "PointValues",
    "Var",
    "VarValues",
    "WarmStart",
    "available_backends",
    "backend_availability",
    "quicksum",
    "solve",
]


@dataclass(frozen=True, eq=False)
class MatrixForm:
    """A model as arrays: ``opt sense: col_cost @ x + offset`` s.t. ``row_lower <= A x <= row_upper``,
    ``col_lower <= x <= col_upper``, ``x[j]`` integer where ``integrality[j]``.

    ``A`` is in CSR form: the nonzeros of row ``i`` are ``a_index[a_start[i]:a_start[i+1]]``
    with values ``a_value[...]``; indices within a row are distinct.
    """

    sense: Sense
    col_cost: FloatArray
    offset: float
    col_lower: FloatArray
    col_upper: FloatArray
    integrality: npt.NDArray[np.bool_]
    row_lower: FloatArray
    row_upper: FloatArray
    a_start: IntArray
    a_index: IntArray
    a_value: FloatArray
    col_names: tuple[str, ...]
    row_names: tuple[str, ...]

    @property
    def num_cols(self) -> int:
        """Number of variables."""
        return int(self.col_cost.size)

    @property
    def num_rows(self) -> int:
        """Number of constraints."""
        return int(self.row_lower.size)

    @property
    def num_nonzeros(self) -> int:
        """Number of nonzeros of ``A``."""
        return int(self.a_value.size)

    @property
    def is_mip(self) -> bool:
        """Whether any variable is integer."""
        return bool(self.integrality.any())

    def objective_value(self, x: FloatArray) -> float:
        """Objective at the column values ``x``."""
        return float(self.col_cost @ x) + self.offset


class LinearModel:
    """A mixed-integer linear model, independent of any solver.

    Parameters
    ----------
    name
        Name of the model (used in logs and error messages).
    """

    def __init__(self, name: str = "model") -> None:
        self.name = name
        self._vars: list[Var] = []
        self._by_name: dict[str, Var] = {}
        self._col_lower: list[float] = []
        self._col_upper: list[float] = []
        self._col_integer: list[bool] = []
        self._row_start = array("q", [0])
        self._row_index = array("q")
        self._row_value = array("d")
        self._row_lower = array("d")
        self._row_upper = array("d")
        self._row_names: list[str] = []
        self._sense: Sense = "min"
        self._obj_idx: IntArray = np.zeros(0, dtype=np.int64)
        self._obj_coef: FloatArray = np.zeros(0)
        self._obj_const = 0.0
        self._matrix: MatrixForm | None = None

    # -- variables ---------------------------------------------------------------

    def add_var(self, name: str, lb: float = 0.0, ub: float = math.inf, integer: bool = False) -> Var:
        """Add a variable.

        Parameters
        ----------
        name
            Unique, non-empty name.
        lb, ub
            Bounds; ``-math.inf`` / ``math.inf`` for none. ``lb <= ub``.
        integer
            Whether the variable must take integer values.

        Returns
        -------
        Var
            The new variable.

        Raises
        ------
        ValueError
            Empty or duplicate name, NaN bounds or ``lb > ub``.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"LinearModel.add_var: name must be a non-empty string, got {name!r}")
        if name in self._by_name:
            raise ValueError(f"LinearModel.add_var: duplicate variable name {name!r} in model {self.name!r}")
        lo, hi = float(lb), float(ub)
        if math.isnan(lo) or math.isnan(hi) or lo > hi or lo == math.inf or hi == -math.inf:
            raise ValueError(f"LinearModel.add_var: variable {name!r} has bad bounds lb={lb!r}, ub={ub!r}")
        var = Var(self, len(self._vars), name)
        self._vars.append(var)
        self._by_name[name] = var
        self._col_lower.append(lo)
        self._col_upper.append(hi)
        self._col_integer.append(bool(integer))
        self._matrix = None
        return var

    def add_binary(self, name: str) -> Var:
        """Add a 0-1 variable (see :meth:`add_var`)."""
        return self.add_var(name, 0.0, 1.0, integer=True)

    def add_integer(self, name: str, lb: float = 0.0, ub: float = math.inf) -> Var:
        """Add an integer variable (see :meth:`add_var`)."""
        return self.add_var(name, lb, ub, integer=True)

    def var(self, name: str) -> Var:
        """The variable called ``name``.

        Raises
        ------
        KeyError
            No variable has that name.
        """
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"model {self.name!r} has no variable {name!r}") from None

    @property
    def variables(self) -> tuple[Var, ...]:
        """All variables, in column order."""
        return tuple(self._vars)

    # -- constraints and objective -------------------------------------------------

    def add(self, constraint: Constraint, name: str | None = None) -> int:
        """Add a constraint.

        Parameters
        ----------
        constraint
            Made by comparing expressions, e.g. ``quicksum(x) <= 1``.
        name
            Name used in solver files and messages; ``c<row>`` when omitted.

        Returns
        -------
        int
            The row of the constraint.

        Raises
        ------
        TypeError
            ``constraint`` is not a :class:`Constraint` (e.g. a ``bool`` from comparing numbers).
        ValueError
            The constraint uses variables of another model or non-finite coefficients.
        """
        if not isinstance(constraint, Constraint):
            raise TypeError(
                f"LinearModel.add expects a Constraint, got {type(constraint).__name__} "
                "(did a comparison involve no variable?)"
            )
        row = len(self._row_names)
        label = f"c{row}" if name is None else name
        idx, coef, const = self._merged(constraint.body, f"constraint {label!r}")
        rhs = -const
        lower = rhs if constraint.sense in (">=", "==") else -math.inf
        upper = rhs if constraint.sense in ("<=", "==") else math.inf
        if isinstance(idx, np.ndarray):
            self._row_index.frombytes(idx.tobytes())
            self._row_value.frombytes(np.asarray(coef).tobytes())
        else:
            self._row_index.extend(idx)
            self._row_value.extend(coef)
        self._row_start.append(len(self._row_index))
        self._row_lower.append(lower)
        self._row_upper.append(upper)
        self._row_names.append(label)
        self._matrix = None
        return row

    def _merged(
        self, expr: Var | LinExpr | float, what: str
    ) -> tuple[list[int] | IntArray, list[float] | FloatArray, float]:
        flat = _as_expr(expr)._flatten()
        if flat.model is not None and flat.model is not self:
            raise ValueError(f"LinearModel {self.name!r}: {what} uses variables of model {flat.model.name!r}")
        idx, coef = _merge(flat.idx, flat.coef)
        finite = np.isfinite(coef).all() if isinstance(coef, np.ndarray) else all(map(math.isfinite, coef))
        if not (finite and math.isfinite(flat.const)):
            raise ValueError(f"LinearModel {self.name!r}: {what} has a non-finite coefficient or constant")
        return idx, coef, flat.const

    def minimize(self, expr: Var | LinExpr | float) -> None:
        """Set the objective to minimize ``expr``."""
        self._set_objective(expr, "min")

    def maximize(self, expr: Var | LinExpr | float) -> None:
        """Set the objective to maximize ``expr``."""
        self._set_objective(expr, "max")

    def _set_objective(self, expr: Var | LinExpr | float, sense: Sense) -> None:
        idx, coef, const = self._merged(expr, "objective")
        self._obj_idx = np.asarray(idx, dtype=np.int64)
        self._obj_coef = np.asarray(coef, dtype=np.float64)
        self._obj_const = const
        self._sense = sense
        self._matrix = None

    # -- inspection -------------------------------------------------------------

    @property
    def sense(self) -> Sense:
        """``"min"`` or ``"max"`` (``"min"`` of 0 until an objective is set)."""
        return self._sense

    @property
    def num_vars(self) -> int:
        """Number of variables."""
        return len(self._vars)

    @property
    def num_constraints(self) -> int:
        """Number of constraints."""
        return len(self._row_names)

    @property
    def num_nonzeros(self) -> int:
        """Number of nonzero constraint coefficients."""
        return len(self._row_index)

    @property
    def is_mip(self) -> bool:
        """Whether any variable is integer."""
        return any(self._col_integer)

    def objective(self) -> LinExpr:
        """The objective as an expression."""
        return LinExpr.from_terms([self._vars[i] for i in self._obj_idx.tolist()], self._obj_coef, self._obj_const)

    def to_matrix(self) -> MatrixForm:
        """The model as arrays (cached until the model changes).

        Returns
        -------
        MatrixForm
            Dense column data, CSR constraint matrix, objective and sense.
        """
        if self._matrix is None:
            n = len(self._vars)
            cost = np.zeros(n)
            cost[self._obj_idx] = self._obj_coef
            self._matrix = MatrixForm(
                sense=self._sense,
                col_cost=cost,
                offset=self._obj_const,
                col_lower=np.array(self._col_lower, dtype=np.float64),
                col_upper=np.array(self._col_upper, dtype=np.float64),
                integrality=np.array(self._col_integer, dtype=np.bool_),
                row_lower=np.frombuffer(self._row_lower, dtype=np.float64).copy(),
                row_upper=np.frombuffer(self._row_upper, dtype=np.float64).copy(),
                a_start=np.frombuffer(self._row_start, dtype=np.int64).copy(),
                a_index=np.frombuffer(self._row_index, dtype=np.int64).copy(),
                a_value=np.frombuffer(self._row_value, dtype=np.float64).copy(),
                col_names=tuple(v.name for v in self._vars),
                row_names=tuple(self._row_names),
            )
        return self._matrix

    def max_violation(self, values: PointValues | VarValues, *, check_integrality: bool = True) -> float:
        """Largest violation of a bound, a constraint or integrality at ``values``.

        Parameters
        ----------
        values
            A value for every variable (a solution's values or a mapping by variable or name).
        check_integrality
            Also measure the distance of integer variables to the nearest integer.

        Returns
        -------
        float
            0 for a feasible point.
        """
        x = self._dense(values)
        mat = self.to_matrix()
        worst = float(np.max(np.maximum(mat.col_lower - x, x - mat.col_upper), initial=0.0))
        if mat.num_rows:
            row_of_nonzero = np.repeat(np.arange(mat.num_rows), np.diff(mat.a_start))
            act = np.bincount(row_of_nonzero, weights=mat.a_value * x[mat.a_index], minlength=mat.num_rows)
            worst = max(worst, float(np.max(np.maximum(mat.row_lower - act, act - mat.row_upper), initial=0.0)))
        if check_integrality and mat.is_mip:
            xi = x[mat.integrality]
            worst = max(worst, float(np.max(np.abs(xi - np.round(xi)), initial=0.0)))
        return worst

    def _dense(self, values: PointValues | VarValues) -> FloatArray:
        if isinstance(values, VarValues):
            return values.array
        x = np.full(len(self._vars), np.nan)
        for key, value in values.items():
            x[self._column(key)] = float(value)
        missing = np.flatnonzero(np.isnan(x))
        if missing.size:
            raise ValueError(f"model {self.name!r}: no value for variable {self._vars[int(missing[0])].name!r}")
        return x

    def _column(self, key: Var | str) -> int:
        if isinstance(key, Var):
            if key._model is not self:
                raise ValueError(f"variable {key.name!r} belongs to model {key._model.name!r}, not {self.name!r}")
            return key.index
        if isinstance(key, str):
            var = self._by_name.get(key)
            if var is None:
                raise InputError(f"unknown variable {key!r}", where=f"model {self.name!r}")
            return var.index
        raise TypeError(f"expected a Var or a variable name, got {type(key).__name__}")

    def __repr__(self) -> str:
        kind = "MILP" if self.is_mip else "LP"
        return (
            f"LinearModel({self.name!r}, {kind}, {self.num_vars} vars, {self.num_constraints} constraints, "
            f"{self.num_nonzeros} nonzeros, {self._sense})"
        )


@dataclass(frozen=True, eq=False)
class WarmStart:
    """A (possibly partial) starting point: values for the columns ``index``."""

    index: IntArray
    value: FloatArray

    @classmethod
    def from_mapping(cls, model: LinearModel, start: PointValues) -> WarmStart:
        """Resolve a mapping by variable or name against ``model``.

        Raises
        ------
        InputError
            An unknown variable name.
        ValueError
            A variable of another model or a non-finite value.
        """
        index = np.fromiter((model._column(k) for k in start), dtype=np.int64, count=len(start))
        value = np.fromiter((float(v) for v in start.values()), dtype=np.float64, count=len(start))
        if not np.isfinite(value).all():
            bad = int(np.flatnonzero(~np.isfinite(value))[0])
            raise ValueError(f"warm start: value of {model._vars[int(index[bad])].name!r} is {float(value[bad])!r}")
        return cls(index, value)

    def dense(self, num_cols: int, fill: float = 0.0) -> FloatArray:
        """Values of every column, ``fill`` for the columns the start does not give."""
        x = np.full(num_cols, fill)
        x[self.index] = self.value
        return x


@dataclass(frozen=True, eq=False)
class LinearSolution:
    """What :func:`solve` returns.

    Attributes
    ----------
    status
        Outcome of the solve.
    objective
        Objective of the returned point (computed from ``values`` with the model's
        coefficients, so it is the same quantity on every backend); None without a solution.
    bound
        Proven bound on the optimum (the MIP dual bound; for an LP, the objective);
        None if the backend does not report one.
    values
        Variable values, by :class:`Var` or name; None without a solution.
    runtime_s
        Wall-clock time of the backend call, model transfer included, in seconds.
    backend
        Name of the backend.
    native_status
        The backend's own status text.
    sense
        ``"min"`` or ``"max"``.
    nodes
        Branch-and-bound nodes, when reported.
    iterations
        Simplex iterations, when reported.
    """

    status: Status
    objective: float | None
    bound: float | None
    values: VarValues | None
    runtime_s: float
    backend: str
    native_status: str
    sense: Sense = "min"
    nodes: int | None = None
    iterations: int | None = None

    def value(self, item: Var | LinExpr | str) -> float:
        """Value of a variable (or variable name) or of an expression in this solution.

        Raises
        ------
        ValueError
            The solve returned no solution.
        """
        if self.values is None:
            raise ValueError(f"no solution to read a value from: status {self.status.name} ({self.native_status})")
        if isinstance(item, LinExpr):
            return item.value(self.values)
        return self.values[item]

    @property
    def gap(self) -> float | None:
        """Relative gap between objective and bound; 0 when OPTIMAL, None when either is missing."""
        return status_gap(self.status, self.objective, self.bound)

    @property
    def stats(self) -> SolveStats:
        """The statistics in the form a :class:`~accelsched.problems.result.Result` carries."""
        return SolveStats(iterations=self.iterations, nodes=self.nodes, native_status=self.native_status)


def make_solution(
    model: LinearModel,
    *,
    status: Status,
    x: npt.ArrayLike | None,
    bound: float | None,
    runtime_s: float,
    backend: str,
    native_status: str,
    nodes: int | None = None,
    iterations: int | None = None,
) -> LinearSolution:
    """Assemble a :class:`LinearSolution` from a backend's raw answer (used by the adapters).

    The objective is recomputed from ``x``; a non-finite bound becomes None; an LP or
    an OPTIMAL answer without a reported bound gets the objective as its bound; a
    status that carries a solution but comes without values becomes ERROR.
    """
    mat = model.to_matrix()
    values = objective = None
    if status.has_solution:
        if x is None:
            status, native_status = Status.ERROR, f"{native_status} (no values returned)"
        else:
            values = VarValues(model, x)
            objective = mat.objective_value(values.array)
    if bound is not None and not math.isfinite(bound):
        bound = None
    if objective is not None and (status is Status.OPTIMAL and (bound is None or not mat.is_mip)):
        bound = objective
    return LinearSolution(
        status=status,
        objective=objective,
        bound=bound,
        values=values,
        runtime_s=runtime_s,
        backend=backend,
        native_status=native_status,
        sense=mat.sense,
        nodes=nodes,
        iterations=iterations,
    )


# -- backends --------------------------------------------------------------------

Adapter = Callable[[LinearModel, SolveOptions, "WarmStart | None"], LinearSolution]

BACKENDS: Mapping[str, tuple[str, str]] = {
    "highs": ("accelsched.solvers.highs", "solve_highs"),
    "pulp-cbc": ("accelsched.solvers.pulp_backend", "solve_pulp_cbc"),
    "pulp-highs": ("accelsched.solvers.pulp_backend", "solve_pulp_highs"),
    "pyomo-highs": ("accelsched.solvers.pyomo_backend", "solve_pyomo_highs"),
}
"""Backend name -> (module, adapter function) of every linear backend accelsched knows."""


def _adapter(backend: str) -> Adapter:
    module, function = BACKENDS[backend]
    adapter: Adapter = getattr(importlib.import_module(module), function)
    return adapter


@cache
def backend_availability() -> Mapping[str, str]:
    """Whether each known backend works in this process.

    Each backend is imported and solves a two-variable MILP once (cached for the
    process), so "available" means "works", not just "importable".

    Returns
    -------
    Mapping[str, str]
        Backend name -> ``""`` when it works, else the reason it does not.
    """
    probe = LinearModel("probe")
    a, b = probe.add_binary("a"), probe.add_var("b", 0.0, 2.5)
    probe.add(a + b <= 2, name="cap")
    probe.maximize(3 * a + b)
    reasons: dict[str, str] = {}
    for name in BACKENDS:
        try:
            sol = _adapter(name)(probe, SolveOptions(time_limit_s=10.0), None)
        except Exception as exc:  # any failure means "does not work here"
            reasons[name] = f"{type(exc).__name__}: {exc}"
            continue
        if sol.status is not Status.OPTIMAL or sol.objective is None or abs(sol.objective - 4.0) > 1e-6:
            reasons[name] = f"probe model solved wrongly: {sol.status.name} {sol.objective} ({sol.native_status})"
        else:
            reasons[name] = ""
    return reasons


def available_backends() -> list[str]:
    """Names of the linear backends that work in this process (see :func:`backend_availability`)."""
    return [name for name, reason in backend_availability().items() if not reason]


def solve(
    model: LinearModel,
    backend: str = "highs",
    options: SolveOptions | None = None,
    warm_start: PointValues | None = None,
) -> LinearSolution:
    """Solve a :class:`LinearModel` with one backend.

    Parameters
    ----------
    model
        The model.
    backend
        One of :func:`available_backends`: ``"highs"`` (highspy), ``"pulp-cbc"``,
        ``"pulp-highs"``, ``"pyomo-highs"``.
    options
        Limits and settings; ``SolveOptions()`` when omitted.
    warm_start
        A feasible (possibly partial) point by variable or name, handed to the solver as a MIP start.

    Returns
    -------
    LinearSolution
        Status, objective, bound and values. Limits and infeasibility are statuses,
        never exceptions.

    Raises
    ------
    InputError
        Unknown or unavailable backend, or an unknown variable name in ``warm_start``.
    """
    if backend not in BACKENDS:
        raise InputError(
            f"unknown backend {backend!r}",
            where="backend",
            fix=f"use one of: {', '.join(available_backends())}",
        )
    reason = backend_availability()[backend]
    if reason:
        raise InputError(
            f"backend {backend!r} does not work here: {reason}",
            where="backend",
            fix=f"use one of: {', '.join(available_backends())}",
        )
    start = None if not warm_start else WarmStart.from_mapping(model, warm_start)
    return _adapter(backend)(model, options or SolveOptions(), start)
