"""What every partition heuristic does around its search: the infeasible answer, the
warm start, the time limit and the :class:`Result`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from accelsched.heuristics.partition.space import Genome, PartitionSpace
from accelsched.heuristics.stopping import AnyOf, MaxRuntime, StoppingCriterion
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = [
    "Search",
    "SearchOutcome",
    "deadline_passed",
    "run_search",
    "search_method",
    "time_limit",
    "with_time_limit",
]


@dataclass(frozen=True)
class SearchOutcome:
    """What a search returns to :func:`run_search`.

    Attributes
    ----------
    best
        The best genome found (valid).
    iterations
        Iterations of the method (moves, generations, merges, segments).
    trace
        ``(time_s, objective)`` of every improving solution, in time order.
    native_status
        A short note on how the search ended.
    """

    best: Genome
    iterations: int
    trace: tuple[tuple[float, float], ...]
    native_status: str = ""


Search = Callable[[PartitionSpace, SolveOptions, Genome | None, float], SearchOutcome]
"""``search(space, options, warm_genome, start_time) -> SearchOutcome``."""


def time_limit(options: SolveOptions, start: float) -> MaxRuntime | None:
    """``options.time_limit_s`` counted from ``start`` as a criterion, or None without a limit."""
    return None if options.time_limit_s is None else MaxRuntime(options.time_limit_s, start=start)


def with_time_limit(options: SolveOptions, criterion: StoppingCriterion, start: float) -> StoppingCriterion:
    """``criterion``, or the first of it and ``options.time_limit_s`` counted from ``start``."""
    limit = time_limit(options, start)
    return criterion if limit is None else AnyOf(criterion, limit)


def deadline_passed(options: SolveOptions, start: float) -> bool:
    """Whether ``options.time_limit_s`` has passed since ``start``."""
    return options.time_limit_s is not None and time.perf_counter() - start >= options.time_limit_s


def run_search(
    method: str,
    search: Search,
    instance: PartitionInstance,
    options: SolveOptions | None,
    warm_start: PartitionSolution | None,
) -> Result[PartitionSolution]:
    """Run ``search`` on ``instance`` and package its best genome as a FEASIBLE result.

    Parameters
    ----------
    method
        The method's name in the result.
    search
        The method's search over the instance's genomes.
    instance
        The partition instance.
    options
        Seed and time limit (the search says what each does for it); None: the defaults.
    warm_start
        A solution the search starts from or keeps (converted to a genome), or None.

    Returns
    -------
    Result
        FEASIBLE with the best genome's solution, or INFEASIBLE when a layer fits no buffer (the
        reason in ``stats.native_status``). The objective is the problem's objective of the best
        genome, from the cached subgraph costs of the shared cost model; ``runtime_s`` is the
        registry's to measure (:func:`accelsched.registry.run_method`).
    """
    options = options or SolveOptions()
    start = time.perf_counter()
    reason = instance.infeasibility
    if reason is not None:
        return Result(
            Status.INFEASIBLE,
            PROBLEM.name,
            method,
            seed=options.seed,
            stats=SolveStats(iterations=0, native_status=reason),
        )
    space = PartitionSpace(instance)
    warm = None if warm_start is None else space.from_solution(warm_start)
    outcome = search(space, options, warm, start)
    value = space.fitness(outcome.best)
    if not math.isfinite(value):
        raise AssertionError(f"{method}: the best genome does not fit its capacities")
    return Result(
        Status.FEASIBLE,
        PROBLEM.name,
        method,
        solution=space.to_solution(outcome.best),
        objective=value,
        seed=options.seed,
        stats=SolveStats(iterations=outcome.iterations, trace=outcome.trace, native_status=outcome.native_status),
    )


def search_method(name: str, kind: str, description: str, search: Search) -> MethodSpec:
    """The method spec ``name`` of the partition problem whose run is ``search`` through :func:`run_search`."""
    return MethodSpec(name, PROBLEM.name, kind, partial(run_search, name, search), description)
