"""Cocco's genetic algorithm for graph partition and buffer sizing (method ``ga``).

Genome: a partition (subgraphs in execution order) and the capacity candidates;
operators in :mod:`accelsched.heuristics.partition.moves` (random initialisation in
topological order, crossover averaging capacities and rebuilding the partition
layer by layer, the mutations modify-node, split-subgraph, merge-subgraph and
mutation-DSE, in-situ splitting of subgraphs over capacity); tournament selection
and elitism in :mod:`accelsched.heuristics.genetic`. The fitness is the problem's
objective from the cached subgraph costs. Cocco's setting is the default: 20
generations of 500 genomes. A warm start joins the initial population, and
elitism keeps it until something better is found.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from accelsched.heuristics.genetic import GAOperators, GAParams, evolve
from accelsched.heuristics.partition.moves import MoveParams, crossover, mutate, random_genome
from accelsched.heuristics.partition.run import Search, SearchOutcome, run_search, search_method, time_limit
from accelsched.heuristics.partition.space import Genome, PartitionSpace
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions

__all__ = ["METHODS", "PartitionGAParams", "ga_method", "solve_ga"]


@dataclass(frozen=True)
class PartitionGAParams:
    """Parameters of the partition GA.

    Parameters
    ----------
    ga
        The GA loop (population 500, 20 generations by default, as in Cocco).
    moves
        The genome operators.
    """

    ga: GAParams = field(default_factory=GAParams)
    moves: MoveParams = field(default_factory=MoveParams)

    def __post_init__(self) -> None:
        if not isinstance(self.ga, GAParams):
            raise ValueError(f"PartitionGAParams: field ga must be a GAParams, got {type(self.ga).__name__}")
        if not isinstance(self.moves, MoveParams):
            raise ValueError(f"PartitionGAParams: field moves must be a MoveParams, got {type(self.moves).__name__}")


def _operators(space: PartitionSpace, moves: MoveParams) -> GAOperators[Genome]:
    def mutated(genome: Genome, rng: np.random.Generator) -> Genome:
        return mutate(space, genome, moves, rng) or genome

    return GAOperators(
        random_genome=lambda rng: random_genome(space, moves, rng),
        crossover=lambda a, b, rng: crossover(space, a, b, moves, rng),
        mutate=mutated,
        fitness=space.fitness,
        key=lambda genome: genome,
    )


def evolution(params: PartitionGAParams) -> Search:
    """The Cocco GA with ``params``: ``options.seed`` seeds the generator, ``options.time_limit_s`` stops
    it after the generation that passes it; a warm start joins the initial population."""

    def search(space: PartitionSpace, opts: SolveOptions, warm: Genome | None, start: float) -> SearchOutcome:
        rng = np.random.default_rng(opts.seed)
        stop = time_limit(opts, start)
        seeds = () if warm is None else (warm,)
        outcome = evolve(_operators(space, params.moves), params.ga, rng, stop=stop, seeds=seeds, start_time=start)
        note = f"{outcome.generations} generations x {params.ga.population_size}, {outcome.evaluations} evaluations"
        return SearchOutcome(outcome.best, outcome.generations, outcome.trace, note)

    return search


def solve_ga(
    instance: PartitionInstance,
    options: SolveOptions | None = None,
    warm_start: PartitionSolution | None = None,
    params: PartitionGAParams | None = None,
) -> Result[PartitionSolution]:
    """Run the Cocco GA on ``instance`` (:func:`evolution` with ``params``, default
    :class:`PartitionGAParams`; the arguments and the result as :func:`~.run.run_search`'s)."""
    return run_search("ga", evolution(params or PartitionGAParams()), instance, options, warm_start)


def ga_method(params: PartitionGAParams, name: str = "ga") -> MethodSpec:
    """A method spec running the GA with ``params`` (for other sizes than Cocco's)."""
    description = f"Cocco GA: {params.ga.generations} generations x {params.ga.population_size} genomes"
    return search_method(name, "heuristic", description, evolution(params))


METHODS: tuple[MethodSpec, ...] = (ga_method(PartitionGAParams()),)
"""The partition GA with Cocco's setting (20 generations x 500 genomes)."""
