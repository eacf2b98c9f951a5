"""Variables, linear expressions and constraints of :mod:`accelsched.solvers.linear`.

Expressions are built lazily as a tree of ``(coefficient, operand)`` parts and
flattened once when a model reads them, so ``e = e + term`` in a loop, ``sum(...)``
and :func:`quicksum` are all linear in the number of terms. A :class:`Var` belongs to
one :class:`~accelsched.solvers.linear.LinearModel`, which creates it; comparing
expressions gives a :class:`Constraint` for :meth:`LinearModel.add
<accelsched.solvers.linear.LinearModel.add>`.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias, TypeGuard

import numpy as np
import numpy.typing as npt

__all__ = [
    "Constraint",
    "FloatArray",
    "IntArray",
    "LinExpr",
    "ModelColumns",
    "PointValues",
    "RowSense",
    "Sense",
    "Var",
    "VarValues",
    "quicksum",
]

Sense = Literal["min", "max"]
RowSense = Literal["<=", ">=", "=="]
FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]

_SMALL_ROW = 64  # rows up to this many terms are merged with a dict, longer ones with numpy


class ModelColumns(Protocol):
    """The column store a :class:`Var` and a :class:`VarValues` read: what they need of the model.

    :class:`~accelsched.solvers.linear.LinearModel` is the one implementation; naming
    this protocol here, rather than the model class, keeps expressions below the model.
    """

    name: str
    _vars: list[Var]
    _by_name: dict[str, Var]
    _col_lower: list[float]
    _col_upper: list[float]
    _col_integer: list[bool]

    @property
    def num_vars(self) -> int:
        """Number of variables."""
        ...

    def _column(self, key: Var | str) -> int:
        """Column of a variable given by itself or by name."""
        ...


def _is_number(value: object) -> TypeGuard[numbers.Real]:
    return type(value) is float or type(value) is int or isinstance(value, numbers.Real)


class _Operand:
    """Arithmetic and comparisons shared by :class:`Var` and :class:`LinExpr`."""

    __slots__ = ()
    # Make NumPy scalars defer to our reflected operators (``np.float64(2) * x``).
    __array_ufunc__ = None

    def __add__(self, other: object) -> LinExpr:
        return _add(self, other, 1.0)

    def __radd__(self, other: object) -> LinExpr:
        return _add(self, other, 1.0)

    def __sub__(self, other: object) -> LinExpr:
        return _add(self, other, -1.0)

    def __rsub__(self, other: object) -> LinExpr:
        if _is_number(other):
            return LinExpr._node([(-1.0, self)], float(other))
        return NotImplemented

    def __mul__(self, other: object) -> LinExpr:
        if _is_number(other):
            return LinExpr._node([(float(other), self)], 0.0)
        if isinstance(other, _Operand):
            raise TypeError("the product of two variables or expressions is not linear")
        return NotImplemented

    def __rmul__(self, other: object) -> LinExpr:
        return self.__mul__(other)

    def __truediv__(self, other: object) -> LinExpr:
        if _is_number(other):
            return LinExpr._node([(1.0 / float(other), self)], 0.0)
        if isinstance(other, _Operand):
            raise TypeError("division by a variable or expression is not linear")
        return NotImplemented

    def __rtruediv__(self, other: object) -> LinExpr:
        if _is_number(other):
            raise TypeError("division by a variable or expression is not linear")
        return NotImplemented

    def __neg__(self) -> LinExpr:
        return LinExpr._node([(-1.0, self)], 0.0)

    def __pos__(self) -> LinExpr:
        return LinExpr._node([(1.0, self)], 0.0)

    def __le__(self, other: object) -> Constraint:
        return _compare(self, other, "<=")

    def __ge__(self, other: object) -> Constraint:
        return _compare(self, other, ">=")

    def __eq__(self, other: object) -> Constraint:  # type: ignore[override]
        return _compare(self, other, "==")

    def __ne__(self, other: object) -> bool:
        if isinstance(other, _Operand) or _is_number(other):
            raise TypeError("'!=' is not a linear constraint; use two binaries and big-M rows")
        return NotImplemented


def _add(a: _Operand, b: object, sign: float) -> LinExpr:
    if isinstance(b, _Operand):
        return LinExpr._node([(1.0, a), (sign, b)], 0.0)
    if _is_number(b):
        return LinExpr._node([(1.0, a)], sign * float(b))
    return NotImplemented


def _compare(a: _Operand, b: object, sense: RowSense) -> Constraint:
    if isinstance(b, _Operand) or _is_number(b):
        return Constraint(_add(a, b, -1.0), sense)
    return NotImplemented


class Var(_Operand):
    """A decision variable of one :class:`~accelsched.solvers.linear.LinearModel`; create it with
    :meth:`~accelsched.solvers.linear.LinearModel.add_var`.

    Variables compare by identity (``hash``) and build :class:`LinExpr` with ``+ - *``
    and :class:`Constraint` with ``<= >= ==``.

    Attributes
    ----------
    index
        Column of the variable in its model.
    name
        Unique name within the model.
    """

    __slots__ = ("_model", "index", "name")

    __hash__ = object.__hash__

    def __init__(self, model: ModelColumns, index: int, name: str) -> None:
        self._model = model
        self.index = index
        self.name = name

    @property
    def model(self) -> ModelColumns:
        """The model the variable belongs to."""
        return self._model

    @property
    def lb(self) -> float:
        """Lower bound (``-inf`` when free)."""
        return self._model._col_lower[self.index]

    @property
    def ub(self) -> float:
        """Upper bound (``inf`` when free)."""
        return self._model._col_upper[self.index]

    @property
    def integer(self) -> bool:
        """Whether the variable is integer."""
        return bool(self._model._col_integer[self.index])

    def __repr__(self) -> str:
        return f"Var({self.name!r})"


_Part = tuple[float, _Operand]


PointValues: TypeAlias = "Mapping[Var, float] | Mapping[str, float] | Mapping[Var | str, float]"
"""Values of some variables keyed by variable or by name (a warm start, a point to check)."""


@dataclass(frozen=True, eq=False)
class _Flat:
    """A flattened expression: ``sum(coef[k] * x[idx[k]]) + const`` (indices may repeat)."""

    idx: Sequence[int] | IntArray
    coef: Sequence[float] | FloatArray
    const: float
    model: ModelColumns | None


class LinExpr(_Operand):
    """A linear expression ``sum_k a_k x_k + c``.

    Build it from variables with ``+ - *`` and numbers, with :func:`quicksum`, or in
    bulk from arrays with :meth:`from_terms`. Operations do not copy terms: they
    make a small node, and the tree is flattened once (iteratively, so deep ``+``
    chains are fine) when the expression is used in a constraint or an objective.
    """

    __slots__ = ("_const", "_flat", "_parts")

    def __init__(self, constant: float = 0.0) -> None:
        self._parts: list[_Part] = []
        self._const = float(constant)
        self._flat: _Flat | None = None

    @classmethod
    def _node(cls, parts: list[_Part], constant: float) -> LinExpr:
        expr = cls.__new__(cls)
        expr._parts = parts
        expr._const = constant
        expr._flat = None
        return expr

    @classmethod
    def from_terms(
        cls, variables: Sequence[Var], coefficients: npt.ArrayLike | None = None, constant: float = 0.0
    ) -> LinExpr:
        """Expression ``sum(coefficients[k] * variables[k]) + constant`` built in one step.

        Parameters
        ----------
        variables
            Variables of one model (may repeat; repeated terms are summed).
        coefficients
            One finite number per variable; all ones when omitted.
        constant
            Constant term.

        Returns
        -------
        LinExpr
            The expression, already flattened.
        """
        n = len(variables)
        coef = np.ones(n) if coefficients is None else np.asarray(coefficients, dtype=np.float64).ravel()
        if coef.shape != (n,):
            raise ValueError(f"LinExpr.from_terms: got {n} variables but {coef.size} coefficients")
        model = variables[0]._model if n else None
        if any(v._model is not model for v in variables):
            raise ValueError("LinExpr.from_terms: variables belong to different models")
        idx = np.fromiter((v.index for v in variables), dtype=np.int64, count=n)
        expr = cls._node([], float(constant))
        expr._flat = _Flat(idx, coef, float(constant), model)
        return expr

    def _flatten(self) -> _Flat:
        if self._flat is not None:
            return self._flat
        var_idx: list[int] = []
        var_coef: list[float] = []
        chunks_idx: list[IntArray] = []
        chunks_coef: list[FloatArray] = []
        const = 0.0
        model: ModelColumns | None = None
        stack: list[_Part] = [(1.0, self)]
        while stack:
            scale, item = stack.pop()
            if isinstance(item, Var):
                if model is None:
                    model = item._model
                elif item._model is not model:
                    raise ValueError(f"expression mixes variables of different models (at {item.name!r})")
                var_idx.append(item.index)
                var_coef.append(scale)
                continue
            if not isinstance(item, LinExpr):
                raise TypeError(f"cannot use a {type(item).__name__} in a linear expression")
            flat = item._flat
            if flat is None:
                const += scale * item._const
                if scale == 1.0:
                    stack.extend(item._parts)
                else:
                    stack.extend([(scale * c, sub) for c, sub in item._parts])
                continue
            if flat.model is not None:
                if model is None:
                    model = flat.model
                elif flat.model is not model:
                    raise ValueError("expression mixes variables of different models")
            const += scale * flat.const
            if isinstance(flat.idx, np.ndarray):
                chunks_idx.append(flat.idx)
                chunks_coef.append(scale * np.asarray(flat.coef, dtype=np.float64))
            else:
                var_idx.extend(flat.idx)
                var_coef.extend(scale * c for c in flat.coef)
        result: _Flat
        if chunks_idx:
            chunks_idx.append(np.asarray(var_idx, dtype=np.int64))
            chunks_coef.append(np.asarray(var_coef, dtype=np.float64))
            result = _Flat(np.concatenate(chunks_idx), np.concatenate(chunks_coef), const, model)
        else:
            result = _Flat(var_idx, var_coef, const, model)
        self._flat = result
        self._parts = []
        return result

    @property
    def constant(self) -> float:
        """The constant term."""
        return self._flatten().const

    def terms(self) -> list[tuple[Var, float]]:
        """The terms ``(variable, coefficient)`` with repeated variables summed and zeros dropped."""
        flat = self._flatten()
        if flat.model is None:
            return []
        idx, coef = _merge(flat.idx, flat.coef)
        variables = flat.model._vars
        return [(variables[int(i)], float(c)) for i, c in zip(idx, coef, strict=True)]

    def value(self, values: Mapping[Var, float] | VarValues) -> float:
        """Value of the expression at ``values`` (a solution's values or any mapping from variables)."""
        flat = self._flatten()
        if isinstance(values, VarValues):
            x = values.array
            coef = np.asarray(flat.coef, dtype=np.float64)
            return float(np.dot(coef, x[np.asarray(flat.idx, dtype=np.int64)])) + flat.const
        total = flat.const
        if flat.model is not None:
            variables = flat.model._vars
            for i, c in zip(flat.idx, flat.coef, strict=True):
                total += float(c) * float(values[variables[int(i)]])
        return total

    def __repr__(self) -> str:
        terms = self.terms()
        shown = " + ".join(f"{c:g}*{v.name}" for v, c in terms[:8])
        if len(terms) > 8:
            shown += f" + ... ({len(terms)} terms)"
        const = self.constant
        if const or not terms:
            shown = f"{shown} + {const:g}" if shown else f"{const:g}"
        return f"LinExpr({shown})"


def quicksum(terms: Iterable[Var | LinExpr | float]) -> LinExpr:
    """Sum of variables, expressions and numbers, in one node (linear time).

    Parameters
    ----------
    terms
        Any iterable of :class:`Var`, :class:`LinExpr` and numbers.

    Returns
    -------
    LinExpr
        Their sum.
    """
    parts: list[_Part] = []
    const = 0.0
    for term in terms:
        if isinstance(term, Var | LinExpr):
            parts.append((1.0, term))
        elif _is_number(term):
            const += float(term)
        else:
            raise TypeError(f"quicksum: cannot add a {type(term).__name__}")
    return LinExpr._node(parts, const)


def _as_expr(value: Var | LinExpr | float) -> LinExpr:
    if isinstance(value, LinExpr):
        return value
    if isinstance(value, Var):
        return LinExpr._node([(1.0, value)], 0.0)
    if _is_number(value):
        return LinExpr(float(value))
    raise TypeError(f"expected a variable, an expression or a number, got {type(value).__name__}")


def _merge(
    idx: Sequence[int] | IntArray, coef: Sequence[float] | FloatArray
) -> tuple[list[int], list[float]] | tuple[IntArray, FloatArray]:
    """Sum repeated indices and drop zero coefficients (lists for short rows, arrays for long ones)."""
    if not isinstance(idx, np.ndarray) and len(idx) <= _SMALL_ROW:
        merged: dict[int, float] = {}
        for i, c in zip(idx, coef, strict=True):
            merged[i] = merged.get(i, 0.0) + c
        keys = [i for i, c in merged.items() if c != 0.0]
        return keys, [merged[i] for i in keys]
    idx_arr = np.asarray(idx, dtype=np.int64)
    coef_arr = np.asarray(coef, dtype=np.float64)
    uniq, inverse = np.unique(idx_arr, return_inverse=True)
    summed = np.bincount(inverse, weights=coef_arr, minlength=uniq.size)
    keep = summed != 0.0
    return uniq[keep], summed[keep]


class Constraint:
    """A linear constraint ``body <sense> 0``, made by comparing expressions (``<=, >=, ==``).

    It has no truth value (so that ``0 <= x <= 1`` or ``if x == y`` fail loudly);
    add it to a model with :meth:`~accelsched.solvers.linear.LinearModel.add`.

    Attributes
    ----------
    body
        ``lhs - rhs`` of the comparison.
    sense
        ``"<="``, ``">="`` or ``"=="``.
    """

    __slots__ = ("body", "sense")

    def __init__(self, body: LinExpr, sense: RowSense) -> None:
        self.body = body
        self.sense = sense

    def __bool__(self) -> bool:
        raise TypeError(
            "a Constraint has no truth value; add it with model.add(...) "
            "(chained comparisons like 0 <= x <= 1 are not supported: add two constraints)"
        )

    def __repr__(self) -> str:
        return f"Constraint({self.body!r} {self.sense} 0)"


class VarValues(Mapping[Var | str, float]):
    """Values of a solution, by :class:`Var` or by variable name; iterates over variables.

    Parameters
    ----------
    model
        The model solved.
    x
        One value per column.
    """

    def __init__(self, model: ModelColumns, x: npt.ArrayLike) -> None:
        self._model = model
        self._x = np.asarray(x, dtype=np.float64).copy()
        self._x.setflags(write=False)
        if self._x.shape != (model.num_vars,):
            raise ValueError(f"VarValues: expected {model.num_vars} values, got shape {self._x.shape}")

    @property
    def array(self) -> FloatArray:
        """All values in column order (read-only)."""
        return self._x

    def __getitem__(self, key: Var | str) -> float:
        if isinstance(key, str) and key not in self._model._by_name:
            raise KeyError(key)
        return float(self._x[self._model._column(key)])

    def __iter__(self) -> Iterator[Var]:
        return iter(self._model._vars)

    def __len__(self) -> int:
        return int(self._x.size)

    def __repr__(self) -> str:
        return f"VarValues({self._model.name!r}, {self._x.size} values)"
