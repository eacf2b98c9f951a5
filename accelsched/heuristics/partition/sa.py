"""Simulated annealing for the partition problem with Cocco's moves (method ``sa``).

One genome (partition + capacities) is annealed with the GA's mutations
(modify-node, split-subgraph, merge-subgraph, mutation-DSE; each followed by the
same repairs and in-situ splitting) on the loop of
:mod:`accelsched.heuristics.anneal`: relative acceptance ``exp(-(dC/C)/T)`` and
SET's hyperbolic schedule reaching 0 at the last iteration. The default budget,
10,000 moves, equals the evaluations of Cocco's 20 x 500 GA. The start is the warm
start when given, else a random genome of the GA's initialisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from accelsched.heuristics.anneal import HyperbolicSchedule, anneal
from accelsched.heuristics.partition.moves import MoveParams, mutate, random_genome
from accelsched.heuristics.partition.run import Search, SearchOutcome, run_search, search_method, with_time_limit
from accelsched.heuristics.partition.space import Genome, PartitionSpace
from accelsched.heuristics.stopping import MaxIterations
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions

__all__ = ["METHODS", "PartitionSAParams", "sa_method", "solve_sa"]


@dataclass(frozen=True)
class PartitionSAParams:
    """Parameters of the partition SA, validated at construction.

    Parameters
    ----------
    iterations
        Moves drawn, >= 1 (also the horizon of the schedule).
    t0
        Initial temperature of the relative acceptance rule, > 0.
    alpha
        Curvature of SET's hyperbolic schedule, >= 0.
    moves
        The genome operators.
    """

    iterations: int = 10_000
    t0: float = 0.01
    alpha: float = 8.0
    moves: MoveParams = field(default_factory=MoveParams)

    def __post_init__(self) -> None:
        if isinstance(self.iterations, bool) or not isinstance(self.iterations, int) or self.iterations < 1:
            raise ValueError(f"PartitionSAParams: field iterations must be an integer >= 1, got {self.iterations!r}")
        for name in ("t0", "alpha"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"PartitionSAParams: field {name} must be a finite number >= 0, got {value!r}")
        if self.t0 == 0:
            raise ValueError("PartitionSAParams: field t0 must be > 0, got 0")
        if not isinstance(self.moves, MoveParams):
            raise ValueError(f"PartitionSAParams: field moves must be a MoveParams, got {type(self.moves).__name__}")


def annealing(params: PartitionSAParams) -> Search:
    """The annealing of a partition genome with ``params`` (budget, schedule and operators): ``options.seed``
    seeds the generator, ``options.time_limit_s`` stops it early; the start is the warm start when
    given (the best state is never worse than it), else a random genome."""

    def search(space: PartitionSpace, opts: SolveOptions, warm: Genome | None, start: float) -> SearchOutcome:
        rng = np.random.default_rng(opts.seed)
        initial = warm if warm is not None else random_genome(space, params.moves, rng)
        outcome = anneal(
            initial,
            space.fitness,
            lambda genome, generator: mutate(space, genome, params.moves, generator),
            HyperbolicSchedule(params.t0, params.alpha, params.iterations),
            with_time_limit(opts, MaxIterations(params.iterations), start),
            rng,
            start_time=start,
        )
        note = f"{outcome.iterations} moves, {outcome.accepted} accepted"
        return SearchOutcome(outcome.best, outcome.iterations, outcome.trace, note)

    return search


def solve_sa(
    instance: PartitionInstance,
    options: SolveOptions | None = None,
    warm_start: PartitionSolution | None = None,
    params: PartitionSAParams | None = None,
) -> Result[PartitionSolution]:
    """Anneal a partition genome on ``instance`` (:func:`annealing` with ``params``, default
    :class:`PartitionSAParams`; the arguments and the result as :func:`~.run.run_search`'s)."""
    return run_search("sa", annealing(params or PartitionSAParams()), instance, options, warm_start)


def sa_method(params: PartitionSAParams, name: str = "sa") -> MethodSpec:
    """A method spec running the SA with ``params``."""
    description = f"simulated annealing with Cocco's moves, {params.iterations} moves"
    return search_method(name, "heuristic", description, annealing(params))


METHODS: tuple[MethodSpec, ...] = (sa_method(PartitionSAParams()),)
"""The partition SA with its default budget."""
