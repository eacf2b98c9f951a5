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
from accelsched.heuristics.partition.run import SearchOutcome, run_search, with_time_limit
from accelsched.heuristics.partition.space import Genome, PartitionSpace
from accelsched.heuristics.stopping import MaxIterations
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
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


def solve_sa(
    instance: PartitionInstance,
    options: SolveOptions | None = None,
    warm_start: PartitionSolution | None = None,
    params: PartitionSAParams | None = None,
) -> Result[PartitionSolution]:
    """Anneal a partition genome on ``instance``.

    Parameters
    ----------
    instance
        The partition instance.
    options
        ``seed`` seeds the generator; ``time_limit_s`` stops the annealing early.
    warm_start
        The start state (the best state is never worse than it).
    params
        Budget, schedule and operators (default :class:`PartitionSAParams`).

    Returns
    -------
    Result
        FEASIBLE with the best state's solution, or INFEASIBLE when a layer fits no buffer.
    """
    chosen = params or PartitionSAParams()

    def search(space: PartitionSpace, opts: SolveOptions, warm: Genome | None, start: float) -> SearchOutcome:
        rng = np.random.default_rng(opts.seed)
        initial = warm if warm is not None else random_genome(space, chosen.moves, rng)
        outcome = anneal(
            initial,
            space.fitness,
            lambda genome, generator: mutate(space, genome, chosen.moves, generator),
            HyperbolicSchedule(chosen.t0, chosen.alpha, chosen.iterations),
            with_time_limit(opts, MaxIterations(chosen.iterations), start),
            rng,
            start_time=start,
        )
        note = f"{outcome.iterations} moves, {outcome.accepted} accepted"
        return SearchOutcome(outcome.best, outcome.iterations, outcome.trace, note)

    return run_search("sa", search, instance, options, warm_start)


def sa_method(params: PartitionSAParams, name: str = "sa") -> MethodSpec:
    """A method spec running the SA with ``params``."""
    return MethodSpec(
        name,
        PROBLEM.name,
        "heuristic",
        lambda instance, options, warm_start: solve_sa(instance, options, warm_start, params),
        f"simulated annealing with Cocco's moves, {params.iterations} moves",
    )


METHODS: tuple[MethodSpec, ...] = (sa_method(PartitionSAParams()),)
"""The partition SA with its default budget."""
