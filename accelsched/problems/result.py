"""The one result type every method returns, exact or heuristic.

It lives with the problems, above the hardware layer, because it carries the shared
evaluator's :class:`~accelsched.hardware.cost.report.CostReport`; the solvers below it
report only a :class:`~accelsched.solvers.stats.SolveStats`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from accelsched.errors import AccelschedError
from accelsched.hardware.cost.report import CostReport
from accelsched.solvers.stats import GAP_TINY, SolveStats, status_gap
from accelsched.solvers.status import Status

__all__ = ["ObjectiveMismatch", "Result", "verify_objective"]

SolutionT = TypeVar("SolutionT")

Sense = Literal["min", "max"]

_BOUND_TOL = 1e-6


class ObjectiveMismatch(AccelschedError):
    """The objective a method computed differs from the shared evaluator's value.

    The design treats this as a bug (in the formulation, the decoder or the
    evaluator), never as a rounding note.

    Parameters
    ----------
    method_value
        The objective as the method computed it.
    evaluator_value
        The value the shared cost model gives the same solution.
    rel_tol
        The relative tolerance that was exceeded.
    what
        What was compared (for the message), e.g. ``"energy of cocco/milp"``.
    """

    def __init__(self, method_value: float, evaluator_value: float, rel_tol: float, what: str = "objective") -> None:
        self.method_value = method_value
        self.evaluator_value = evaluator_value
        self.rel_tol = rel_tol
        self.what = what
        diff = abs(method_value - evaluator_value) / max(abs(method_value), abs(evaluator_value), GAP_TINY)
        super().__init__(
            f"{what}: the method computed {method_value!r} but the evaluator gives {evaluator_value!r} "
            f"(relative difference {diff:.3g} > {rel_tol:g}); this is a bug in the formulation, "
            "its decoder or the cost model"
        )


def verify_objective(
    method_value: float,
    evaluator_value: float,
    rel_tol: float = 1e-6,
    *,
    abs_tol: float = 1e-9,
    what: str = "objective",
) -> None:
    """Check that a method's objective equals the evaluator's value of its solution.

    Parameters
    ----------
    method_value
        The objective as the method computed it.
    evaluator_value
        The shared evaluator's value of the same solution.
    rel_tol
        Largest accepted difference relative to the larger magnitude of the two.
    abs_tol
        Differences up to this absolute amount are always accepted (values near zero).
    what
        What is compared, used in the error message.

    Raises
    ------
    ObjectiveMismatch
        The two values differ by more than ``rel_tol`` relative and ``abs_tol`` absolute.
    """
    a, b = float(method_value), float(evaluator_value)
    if math.isnan(a) or math.isnan(b) or not math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol):
        raise ObjectiveMismatch(a, b, rel_tol, what)


@dataclass(frozen=True)
class Result(Generic[SolutionT]):
    """What every method, exact or heuristic, returns.

    Parameters
    ----------
    status
        Outcome of the solve.
    problem
        Name of the problem (``"cocco"``, ``"set"`` ...).
    method
        Name of the method (``"milp"``, ``"cpsat"``, ``"sa"`` ...).
    solution
        The problem's solution object; required when ``status`` is OPTIMAL or FEASIBLE,
        None otherwise.
    objective
        The objective of ``solution`` as the method computed it; present exactly when
        the solution is.
    bound
        A proven bound on the optimum (lower for ``sense="min"``, upper for ``"max"``),
        or None.
    cost
        The shared evaluator's report of ``solution``, or None.
    runtime_s
        Wall-clock time of the method in seconds.
    backend
        Solver backend (``"cpsat"``, ``"highs"`` ...), empty for heuristics.
    seed
        Seed the method ran with, or None if it used none.
    sense
        ``"min"`` or ``"max"``: the direction of ``objective``, which fixes the side of ``bound``.
    stats
        Search statistics and convergence trace.

    Raises
    ------
    ValueError
        The fields contradict each other (a FEASIBLE result without a solution, a lower
        bound above the objective, ...); the message names the field.
    """

    status: Status
    problem: str
    method: str
    solution: SolutionT | None = None
    objective: float | None = None
    bound: float | None = None
    cost: CostReport | None = None
    runtime_s: float = 0.0
    backend: str = ""
    seed: int | None = None
    sense: Sense = "min"
    stats: SolveStats = field(default_factory=SolveStats)

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            raise ValueError(f"Result: field status must be a Status, got {self.status!r}")
        for name in ("problem", "method"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"Result: field {name} must be a non-empty string, got {value!r}")
        if self.sense not in ("min", "max"):
            raise ValueError(f"Result: field sense must be 'min' or 'max', got {self.sense!r}")
        for name in ("objective", "bound"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ValueError(f"Result: field {name} must be a finite number or None, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.status.has_solution:
            if self.solution is None:
                raise ValueError(f"Result: field solution is required when status is {self.status.name}, got None")
            if self.objective is None:
                raise ValueError(f"Result: field objective is required when status is {self.status.name}, got None")
        else:
            if self.solution is not None:
                raise ValueError(f"Result: field solution must be None when status is {self.status.name}")
            if self.objective is not None:
                raise ValueError(
                    f"Result: field objective must be None when status is {self.status.name}, got {self.objective!r}"
                )
        if self.objective is not None and self.bound is not None:
            tol = _BOUND_TOL * max(1.0, abs(self.objective))
            worse = self.bound - self.objective if self.sense == "min" else self.objective - self.bound
            if worse > tol:
                side = "above" if self.sense == "min" else "below"
                raise ValueError(
                    f"Result: field bound={self.bound!r} is {side} objective={self.objective!r} "
                    f"of a {self.sense} problem; a proven bound cannot be"
                )
        if self.cost is not None and not isinstance(self.cost, CostReport):
            raise ValueError(f"Result: field cost must be a CostReport or None, got {type(self.cost).__name__}")
        runtime = self.runtime_s
        if isinstance(runtime, bool) or not isinstance(runtime, numbers.Real) or not 0 <= runtime < math.inf:
            raise ValueError(f"Result: field runtime_s must be a finite number >= 0, got {runtime!r}")
        object.__setattr__(self, "runtime_s", float(runtime))
        if self.seed is not None:
            if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral):
                raise ValueError(f"Result: field seed must be an integer or None, got {self.seed!r}")
            object.__setattr__(self, "seed", int(self.seed))
        if not isinstance(self.stats, SolveStats):
            raise ValueError(f"Result: field stats must be a SolveStats, got {type(self.stats).__name__}")

    @classmethod
    def no_solution(
        cls,
        status: Status,
        problem: str,
        method: str,
        reason: str,
        *,
        runtime_s: float = 0.0,
        iterations: int | None = None,
        backend: str = "",
    ) -> Result[SolutionT]:
        """A result without a solution (INFEASIBLE, TIME_LIMIT_NO_SOLUTION, ERROR) saying why in ``stats``.

        Raises
        ------
        ValueError
            If ``status`` is one that needs a solution.
        """
        if status.has_solution:
            raise ValueError(f"Result.no_solution: status {status.name} needs a solution")
        stats = SolveStats(iterations=iterations, native_status=reason)
        return cls(status, problem, method, runtime_s=runtime_s, backend=backend, stats=stats)

    @property
    def gap(self) -> float | None:
        """Relative gap ``|objective - bound| / max(|objective|, GAP_TINY)``.

        0 when the status is OPTIMAL (optimality is proven, within the requested
        ``rel_gap``); None when the objective or the bound is missing.
        """
        return status_gap(self.status, self.objective, self.bound)

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form; the keys of the CLI's ``--json`` output come first.

        Returns
        -------
        dict
            ``problem, method, status`` (the enum's name), ``objective, bound, gap,
            runtime_s, cost`` (the CostReport's dict or None), ``solution`` (via its
            ``to_dict()``, or None), then ``backend, seed, sense, stats``.
        """
        return {
            "problem": self.problem,
            "method": self.method,
            "status": self.status.name,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "runtime_s": self.runtime_s,
            "cost": None if self.cost is None else self.cost.to_dict(),
            "solution": _solution_dict(self.solution),
            "backend": self.backend,
            "seed": self.seed,
            "sense": self.sense,
            "stats": self.stats.to_dict(),
        }


def _solution_dict(solution: Any) -> Any:
    """The solution's own ``to_dict()``; plain data (a dataclass or a mapping) is converted as is."""
    if solution is None:
        return None
    to_dict = getattr(solution, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if dataclasses.is_dataclass(solution) and not isinstance(solution, type):
        return dataclasses.asdict(solution)
    if isinstance(solution, Mapping):
        return dict(solution)
    raise TypeError(
        f"Result.to_dict: the solution of type {type(solution).__name__} has no to_dict() method; "
        "give the solution class a to_dict()"
    )
