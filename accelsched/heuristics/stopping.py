"""Stopping criteria of the search loops, as small stateful objects (after PyVRP).

A criterion is called once before every iteration (SA move, GA generation) with
the best objective found so far and answers whether the search stops now. They
combine with :class:`AnyOf`, which stops as soon as one of its members holds.
Each object keeps its own counters, so build a fresh one for every run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Protocol

from accelsched.heuristics.checks import require_int, require_positive

__all__ = ["AnyOf", "MaxIterations", "MaxRuntime", "NoImprovement", "StoppingCriterion"]


class StoppingCriterion(Protocol):
    """``criterion(best_cost) -> True`` when the search must stop before the next iteration."""

    def __call__(self, best_cost: float) -> bool:
        """Whether to stop, given the best objective so far."""
        ...


class MaxIterations:
    """Stop after ``max_iterations`` iterations (the call before iteration ``max_iterations + 1``).

    Parameters
    ----------
    max_iterations
        Iterations allowed, >= 0.
    """

    def __init__(self, max_iterations: int) -> None:
        self.max_iterations = require_int("MaxIterations", "max_iterations", max_iterations, 0)
        self.calls = 0

    def __call__(self, best_cost: float) -> bool:
        """Count one iteration about to start; stop once the budget is spent."""
        self.calls += 1
        return self.calls > self.max_iterations


class MaxRuntime:
    """Stop once ``max_runtime_s`` seconds have passed since ``start``.

    Parameters
    ----------
    max_runtime_s
        Wall-clock budget in seconds, > 0.
    clock
        Time source in seconds (``time.perf_counter`` by default; tests pass a fake).
    start
        The clock reading the budget counts from (default: when the criterion is built).
    """

    def __init__(
        self, max_runtime_s: float, clock: Callable[[], float] = time.perf_counter, start: float | None = None
    ) -> None:
        self.max_runtime_s = require_positive("MaxRuntime", "max_runtime_s", max_runtime_s)
        self.clock = clock
        self.start = clock() if start is None else start

    def __call__(self, best_cost: float) -> bool:
        """Whether the budget is spent."""
        return self.clock() - self.start >= self.max_runtime_s


class NoImprovement:
    """Stop after ``max_iterations`` consecutive iterations without a strictly better best cost.

    Parameters
    ----------
    max_iterations
        Iterations without improvement allowed, >= 1.
    """

    def __init__(self, max_iterations: int) -> None:
        self.max_iterations = require_int("NoImprovement", "max_iterations", max_iterations, 0)
        if self.max_iterations < 1:
            raise ValueError(f"NoImprovement: field max_iterations must be >= 1, got {max_iterations!r}")
        self.best = math.inf
        self.stale = 0

    def __call__(self, best_cost: float) -> bool:
        """Count an iteration without improvement unless ``best_cost`` beats the last best."""
        if best_cost < self.best:
            self.best = best_cost
            self.stale = 0
        else:
            self.stale += 1
        return self.stale >= self.max_iterations


class AnyOf:
    """Stop when any member criterion holds; every member is called each time, so their
    counters stay in step.

    Parameters
    ----------
    *criteria
        At least one criterion.
    """

    def __init__(self, *criteria: StoppingCriterion) -> None:
        if not criteria:
            raise ValueError("AnyOf: give at least one stopping criterion")
        self.criteria = criteria

    def __call__(self, best_cost: float) -> bool:
        """Whether any member says stop."""
        answers = [criterion(best_cost) for criterion in self.criteria]
        return any(answers)
