"""Search statistics every backend reports in one form (iterations, nodes, convergence trace),
and the relative gap between an objective and a bound."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from accelsched.solvers.status import Status

__all__ = ["GAP_TINY", "SolveStats", "relative_gap", "status_gap"]

GAP_TINY = 1e-9
"""Floor of the denominator of the relative gap, so that a zero objective gives a finite gap."""


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|objective - bound| / max(|objective|, GAP_TINY)``, or None when either is missing.

    Parameters
    ----------
    objective
        Value of the best solution found.
    bound
        Proven bound on the optimum.

    Returns
    -------
    float or None
        The relative gap, >= 0.
    """
    if objective is None or bound is None:
        return None
    return abs(objective - bound) / max(abs(objective), GAP_TINY)


def status_gap(status: Status, objective: float | None, bound: float | None) -> float | None:
    """The gap a solve reports: 0 when ``status`` is OPTIMAL (optimality is proven, within the
    requested ``rel_gap``), else :func:`relative_gap` of ``objective`` and ``bound``."""
    if status is Status.OPTIMAL:
        return 0.0
    return relative_gap(objective, bound)


@dataclass(frozen=True)
class SolveStats:
    """Search statistics of a solve.

    Parameters
    ----------
    iterations
        Iterations of the method (simplex iterations, SA moves, GA generations), if counted.
    nodes
        Branch-and-bound nodes (CP-SAT: branches), if the backend reports them.
    trace
        Convergence trace: ``(time_s, objective)`` of every improving solution, in time order.
    native_status
        The backend's own status text, e.g. ``"kTimeLimit"``.
    """

    iterations: int | None = None
    nodes: int | None = None
    trace: tuple[tuple[float, float], ...] = ()
    native_status: str = ""

    def __post_init__(self) -> None:
        for name in ("iterations", "nodes"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"SolveStats: field {name} must be a non-negative integer or None, got {value!r}")
            object.__setattr__(self, name, int(value))
        trace = _as_trace(self.trace)
        object.__setattr__(self, "trace", trace)

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "iterations": self.iterations,
            "nodes": self.nodes,
            "trace": [list(point) for point in self.trace],
            "native_status": self.native_status,
        }


def _as_trace(points: Iterable[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    trace = tuple((float(t), float(v)) for t, v in points)
    for i, (t, v) in enumerate(trace):
        if not (math.isfinite(t) and t >= 0 and math.isfinite(v)):
            raise ValueError(f"SolveStats: field trace[{i}] must be (time_s >= 0, finite objective), got {(t, v)!r}")
        if i and t < trace[i - 1][0]:
            raise ValueError(f"SolveStats: field trace must be in time order, got time {t!r} after {trace[i - 1][0]!r}")
    return trace
