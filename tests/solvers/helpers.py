"""Helpers of the solver-layer tests."""

from __future__ import annotations

from accelsched.solvers import LinExpr


def terms(expr: LinExpr) -> dict[str, float]:
    """An expression's merged terms by variable name."""
    return {v.name: c for v, c in expr.terms()}
