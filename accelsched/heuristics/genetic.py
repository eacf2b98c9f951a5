"""A generic genetic-algorithm loop, written once for every problem.

The caller supplies the genome operators (a random genome, crossover, mutation),
the fitness (minimized) and a hashable key per genome for the evaluation cache.
Each generation keeps the ``elites`` best genomes and fills the rest of the
population with children: two tournament winners are crossed with probability
``crossover_rate`` (otherwise the first is copied), then mutated with probability
``mutation_rate``.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np

from accelsched.heuristics.checks import require_fraction, require_int
from accelsched.heuristics.stopping import AnyOf, MaxIterations, StoppingCriterion

__all__ = ["EvolutionOutcome", "GAOperators", "GAParams", "Variation", "breed", "check_breeding_fields", "evolve"]

G = TypeVar("G")


@dataclass(frozen=True)
class GAParams:
    """Parameters of the GA loop, validated at construction.

    Parameters
    ----------
    population_size
        Genomes per generation, >= 2.
    generations
        Generations after the initial population, >= 0.
    tournament_size
        Genomes drawn (with replacement) per tournament, >= 1.
    crossover_rate
        Probability that a child comes from a crossover rather than a copy, in [0, 1].
    mutation_rate
        Probability that a child is mutated, in [0, 1].
    elites
        Best genomes copied unchanged into the next generation, in [0, population_size).
    """

    population_size: int = 500
    generations: int = 20
    tournament_size: int = 3
    crossover_rate: float = 0.8
    mutation_rate: float = 0.6
    elites: int = 10

    def __post_init__(self) -> None:
        check_breeding_fields("GAParams", self)
        for name, low in (("tournament_size", 1), ("elites", 0)):
            require_int("GAParams", name, getattr(self, name), low)
        if self.elites >= self.population_size:
            raise ValueError(
                f"GAParams: field elites must be below population_size={self.population_size}, got {self.elites!r}"
            )


class _BreedingFields(Protocol):
    @property
    def population_size(self) -> int: ...
    @property
    def generations(self) -> int: ...
    @property
    def crossover_rate(self) -> float: ...
    @property
    def mutation_rate(self) -> float: ...


def check_breeding_fields(owner: str, params: _BreedingFields) -> None:
    """Check the fields every evolutionary loop has (GA, NSGA-II): ``population_size`` >= 2,
    ``generations`` >= 0, ``crossover_rate`` and ``mutation_rate`` in [0, 1].

    Raises
    ------
    ValueError
        Naming ``owner``, the field and its value.
    """
    for name, low in (("population_size", 2), ("generations", 0)):
        require_int(owner, name, getattr(params, name), low)
    for name in ("crossover_rate", "mutation_rate"):
        require_fraction(owner, name, getattr(params, name))


class Variation(Protocol[G]):
    """The variation operators of a genome type (both :class:`GAOperators` and NSGA-II's have them)."""

    @property
    def crossover(self) -> Callable[[G, G, np.random.Generator], G]:
        """``crossover(a, b, rng) -> child``."""
        ...

    @property
    def mutate(self) -> Callable[[G, np.random.Generator], G]:
        """``mutate(genome, rng) -> genome``."""
        ...


def breed(
    pick: Callable[[], G], operators: Variation[G], params: _BreedingFields, rng: np.random.Generator
) -> G:
    """One child: ``pick()`` a parent; with probability ``crossover_rate`` cross it with a second
    ``pick()``; then mutate it with probability ``mutation_rate``.

    The draws happen in this order (parent, crossover coin, second parent, mutation coin), so
    that a seeded run is reproducible.
    """
    child = pick()
    if rng.random() < params.crossover_rate:
        child = operators.crossover(child, pick(), rng)
    if rng.random() < params.mutation_rate:
        child = operators.mutate(child, rng)
    return child


@dataclass(frozen=True)
class GAOperators(Generic[G]):
    """What a problem supplies to :func:`evolve`.

    Attributes
    ----------
    random_genome
        ``random_genome(rng) -> genome`` for the initial population.
    crossover
        ``crossover(a, b, rng) -> child``.
    mutate
        ``mutate(genome, rng) -> genome``.
    fitness
        ``fitness(genome) -> float``, minimized (``inf`` for a genome never to be kept).
    key
        ``key(genome) -> hashable``: genomes with equal keys have equal fitness (cache key).
    """

    random_genome: Callable[[np.random.Generator], G]
    crossover: Callable[[G, G, np.random.Generator], G]
    mutate: Callable[[G, np.random.Generator], G]
    fitness: Callable[[G], float]
    key: Callable[[G], Hashable]


@dataclass(frozen=True)
class EvolutionOutcome(Generic[G]):
    """What one GA run found.

    Attributes
    ----------
    best
        The best genome of the run.
    best_fitness
        Its fitness.
    generations
        Generations bred after the initial population.
    evaluations
        Fitness evaluations (cache misses).
    history
        ``(generation, time_s, best fitness)`` after the initial population (generation
        0) and after every generation.
    trace
        ``(time_s, best fitness)`` at every strict improvement, in time order.
    """

    best: G
    best_fitness: float
    generations: int
    evaluations: int
    history: tuple[tuple[int, float, float], ...]
    trace: tuple[tuple[float, float], ...]


class _Evaluator(Generic[G]):
    """Fitness with a cache keyed by the genome's key."""

    def __init__(self, operators: GAOperators[G]) -> None:
        self.operators = operators
        self.cache: dict[Hashable, float] = {}

    def __call__(self, genome: G) -> float:
        key = self.operators.key(genome)
        value = self.cache.get(key)
        if value is None:
            value = self.operators.fitness(genome)
            self.cache[key] = value
        return value


def _tournament(population: list[tuple[G, float]], size: int, rng: np.random.Generator) -> G:
    picks = rng.integers(len(population), size=size)
    winner = min(int(i) for i in picks)  # the population is sorted by fitness
    return population[winner][0]


def evolve(
    operators: GAOperators[G],
    params: GAParams,
    rng: np.random.Generator,
    *,
    stop: StoppingCriterion | None = None,
    seeds: Sequence[G] = (),
    clock: Callable[[], float] = time.perf_counter,
    start_time: float | None = None,
) -> EvolutionOutcome[G]:
    """Run the GA for ``params.generations`` generations or until ``stop`` holds.

    Parameters
    ----------
    operators
        The problem's genome operators and fitness.
    params
        Population size, generations, selection and variation rates, elitism.
    rng
        The only source of randomness (seeded by the caller).
    stop
        Extra stopping criterion (time, no improvement), called with the best fitness
        before every generation.
    seeds
        Genomes placed in the initial population (warm starts); random genomes fill
        the rest. Elitism keeps the best of them, so the result is never worse.
    clock, start_time
        Time source and the time the trace counts from (default: the call).

    Returns
    -------
    EvolutionOutcome
        The best genome, its fitness, counters, the per-generation history and the trace.
    """
    start = clock() if start_time is None else start_time
    evaluate = _Evaluator(operators)
    genomes = list(seeds)[: params.population_size]
    while len(genomes) < params.population_size:
        genomes.append(operators.random_genome(rng))
    population = sorted(((g, evaluate(g)) for g in genomes), key=lambda item: item[1])
    budget = MaxIterations(params.generations)
    criterion: StoppingCriterion = budget if stop is None else AnyOf(budget, stop)
    best, best_fitness = population[0]
    history = [(0, max(0.0, clock() - start), best_fitness)]
    trace = [history[0][1:]] if math.isfinite(best_fitness) else []
    generation = 0
    while not criterion(best_fitness):
        generation += 1
        children = [genome for genome, _ in population[: params.elites]]
        pick = functools.partial(_tournament, population, params.tournament_size, rng)
        while len(children) < params.population_size:
            children.append(breed(pick, operators, params, rng))
        population = sorted(((g, evaluate(g)) for g in children), key=lambda item: item[1])
        now = max(history[-1][1], clock() - start)
        if population[0][1] < best_fitness:
            best, best_fitness = population[0]
            trace.append((now, best_fitness))
        history.append((generation, now, best_fitness))
    return EvolutionOutcome(best, best_fitness, generation, len(evaluate.cache), tuple(history), tuple(trace))
