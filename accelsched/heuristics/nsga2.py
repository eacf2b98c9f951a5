"""A generic NSGA-II loop (Deb et al., 2002), written once for every multi-objective problem.

The caller supplies the genome operators (a random genome, crossover, mutation),
the objective vector (every objective minimized) and a hashable key per genome for
the evaluation cache. Each generation breeds ``population_size`` children: two
binary-tournament winners (lower non-domination rank, then larger crowding
distance) are crossed with probability ``crossover_rate`` (otherwise the first is
copied), then mutated with probability ``mutation_rate``. Parents and children
compete together (elitist ``(mu + lambda)`` survival): whole fronts are kept in rank
order and the front that does not fit is cut by crowding distance.

Genomes with equal keys enter the population once: copies would otherwise crowd
out the search on small genome spaces. When fewer distinct genomes than
``population_size`` exist among parents and children, the population is smaller
for that generation.

Besides the population, the loop keeps an *archive*: the non-dominated points
among every genome it evaluated (one genome per objective vector, the first one
found). Its hypervolume never decreases. The stopping criterion is called before
every generation with minus the number of genomes that entered the archive so far,
a value that falls exactly when the front improved; so
:class:`~accelsched.heuristics.stopping.NoImprovement` counts generations in which
no new non-dominated point was found.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from accelsched.heuristics.genetic import breed, check_breeding_fields
from accelsched.heuristics.stopping import AnyOf, MaxIterations, StoppingCriterion

__all__ = [
    "GenerationRecord",
    "NSGA2Operators",
    "NSGA2Params",
    "ParetoOutcome",
    "crowding_distance",
    "dominates",
    "hypervolume_2d",
    "non_dominated_sort",
    "nsga2",
]

G = TypeVar("G")

Objectives = tuple[float, ...]


@dataclass(frozen=True)
class NSGA2Params:
    """Parameters of the NSGA-II loop, validated at construction.

    Parameters
    ----------
    population_size
        Genomes per generation (and children bred per generation), >= 2.
    generations
        Generations after the initial population, >= 0.
    crossover_rate
        Probability that a child comes from a crossover rather than a copy, in [0, 1].
    mutation_rate
        Probability that a child is mutated, in [0, 1].
    """

    population_size: int = 40
    generations: int = 50
    crossover_rate: float = 0.9
    mutation_rate: float = 0.5

    def __post_init__(self) -> None:
        check_breeding_fields("NSGA2Params", self)


@dataclass(frozen=True)
class NSGA2Operators(Generic[G]):
    """What a problem supplies to :func:`nsga2`.

    Attributes
    ----------
    random_genome
        ``random_genome(rng) -> genome`` for the initial population.
    crossover
        ``crossover(a, b, rng) -> child``.
    mutate
        ``mutate(genome, rng) -> genome``.
    objectives
        ``objectives(genome) -> values``, each minimized, finite, same length for every genome.
    key
        ``key(genome) -> hashable``: genomes with equal keys have equal objectives (cache key).
    """

    random_genome: Callable[[np.random.Generator], G]
    crossover: Callable[[G, G, np.random.Generator], G]
    mutate: Callable[[G, np.random.Generator], G]
    objectives: Callable[[G], Sequence[float]]
    key: Callable[[G], Hashable]


@dataclass(frozen=True)
class GenerationRecord:
    """One point of the convergence trace, after the initial population (generation 0) or a generation.

    Attributes
    ----------
    generation, time_s
        Generation number and the time since the start of the run.
    evaluations
        Distinct genomes evaluated so far.
    front_size
        Genomes in the population's first front.
    archive_size
        Non-dominated points among everything evaluated so far.
    best
        Best value of each objective found so far.
    hypervolume
        With two objectives, the archive's hypervolume up to the run's reference point; None otherwise.
    """

    generation: int
    time_s: float
    evaluations: int
    front_size: int
    archive_size: int
    best: Objectives
    hypervolume: float | None


@dataclass(frozen=True)
class ParetoOutcome(Generic[G]):
    """What one NSGA-II run found.

    Attributes
    ----------
    front
        The archive: ``(genome, objectives)`` of every non-dominated point evaluated, sorted by objectives.
    population
        The final population's ``(genome, objectives)``, by rank then decreasing crowding distance.
    generations
        Generations bred after the initial population.
    evaluations
        Distinct genomes evaluated (cache misses).
    history
        A :class:`GenerationRecord` for the initial population and every generation.
    reference
        The hypervolume reference point: the worst value of each objective in the initial population.
    """

    front: tuple[tuple[G, Objectives], ...]
    population: tuple[tuple[G, Objectives], ...]
    generations: int
    evaluations: int
    history: tuple[GenerationRecord, ...]
    reference: Objectives


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether ``a`` is no worse than ``b`` in every objective and better in one (minimization)."""
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(x < y for x, y in zip(a, b, strict=True))


def _matrix(points: npt.ArrayLike) -> npt.NDArray[np.float64]:
    f = np.asarray(points, dtype=np.float64)
    if f.size == 0:
        return f.reshape(0, 0)
    if f.ndim != 2:
        raise ValueError(f"points must be a (points x objectives) array, got shape {f.shape}")
    return f


def non_dominated_sort(points: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Non-domination rank of every point (0: the Pareto front; 1: the front once rank 0 is removed; ...).

    Deb's fast non-dominated sort on a dominance matrix; equal points do not
    dominate each other and get the same rank.

    Parameters
    ----------
    points
        ``(n, m)`` objective values, minimized.
    """
    f = _matrix(points)
    n = len(f)
    rank = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return rank
    better_eq = np.all(f[:, None, :] <= f[None, :, :], axis=2)
    better = np.any(f[:, None, :] < f[None, :, :], axis=2)
    dom = better_eq & better  # dom[i, j]: i dominates j
    count = dom.sum(axis=0)
    current = np.flatnonzero(count == 0)
    r = 0
    while current.size:
        rank[current] = r
        count = count - dom[current].sum(axis=0)
        current = np.flatnonzero((count == 0) & (rank < 0))
        r += 1
    return rank


def crowding_distance(points: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Crowding distance of every point of one front.

    For each objective the distinct points are sorted (ties broken by the whole
    vector, so the result does not depend on the input order); the two ends get
    infinity and every other point adds the gap between its neighbours divided by
    the objective's range on the front. An objective with zero range adds nothing.
    A front of at most two distinct points is all ends (infinity). A point equal to
    an earlier one gets 0, so that copies are the first to go.

    Parameters
    ----------
    points
        ``(n, m)`` objective values of the front's points.
    """
    f = _matrix(points)
    n = len(f)
    distance = np.zeros(n)
    if n == 0:
        return distance
    unique, first = np.unique(f, axis=0, return_index=True)
    d, m = unique.shape
    crowd = np.full(d, np.inf) if d <= 2 else np.zeros(d)
    if d > 2:
        for i in range(m):
            span = unique[:, i].max() - unique[:, i].min()
            if span <= 0:
                continue
            keys = (*(unique[:, j] for j in reversed(range(m))), unique[:, i])
            order = np.lexsort(keys)
            crowd[order[0]] = crowd[order[-1]] = np.inf
            crowd[order[1:-1]] += (unique[order[2:], i] - unique[order[:-2], i]) / span
    distance[first] = crowd
    return distance


def hypervolume_2d(points: npt.ArrayLike, reference: Sequence[float]) -> float:
    """Area dominated by two-objective ``points`` and bounded by ``reference`` (minimization).

    Points not strictly better than the reference in both objectives add nothing.
    """
    f = _matrix(points)
    if len(reference) != 2 or (f.size and f.shape[1] != 2):
        raise ValueError("hypervolume_2d: points and reference need exactly two objectives")
    rx, ry = float(reference[0]), float(reference[1])
    area, low = 0.0, ry
    for x, y in sorted((float(x), float(y)) for x, y in f if x < rx and y < ry):
        if y < low:
            area += (rx - x) * (low - y)
            low = y
    return area


class _Archive(Generic[G]):
    """Non-dominated points among everything evaluated (one genome per objective vector)."""

    def __init__(self, m: int) -> None:
        self.values = np.empty((0, m))
        self.genomes: list[G] = []
        self.insertions = 0

    def add(self, genome: G, values: Objectives) -> None:
        point = np.asarray(values)
        if len(self.genomes) and np.any(np.all(self.values <= point, axis=1)):
            return  # dominated by, or equal to, an archived point
        keep = ~np.all(point <= self.values, axis=1)
        self.values = np.vstack([self.values[keep], point])
        self.genomes = [g for g, k in zip(self.genomes, keep, strict=True) if k] + [genome]
        self.insertions += 1


class _Run(Generic[G]):
    """State of one NSGA-II run: the evaluation cache, the archive and the population."""

    def __init__(self, operators: NSGA2Operators[G]) -> None:
        self.operators = operators
        self.cache: dict[Hashable, Objectives] = {}
        self.archive: _Archive[G] | None = None

    def evaluate(self, genome: G) -> Objectives:
        key = self.operators.key(genome)
        values = self.cache.get(key)
        if values is None:
            values = tuple(float(v) for v in self.operators.objectives(genome))
            if not values or not all(math.isfinite(v) for v in values):
                raise ValueError(f"nsga2: objectives must be a non-empty vector of finite numbers, got {values!r}")
            if self.archive is None:
                self.archive = _Archive[G](len(values))
            elif self.archive.values.shape[1] != len(values):
                raise ValueError(f"nsga2: every genome needs {self.archive.values.shape[1]} objectives, "
                                 f"got {len(values)}")  # fmt: skip
            self.cache[key] = values
            self.archive.add(genome, values)
        return values

    def distinct(self, genomes: Sequence[G]) -> list[G]:
        seen: set[Hashable] = set()
        out = []
        for genome in genomes:
            key = self.operators.key(genome)
            if key not in seen:
                seen.add(key)
                out.append(genome)
        return out


def _survivors(values: npt.NDArray[np.float64], size: int) -> tuple[list[int], list[int], list[float]]:
    """Indices kept by elitist survival, with their ranks and crowding distances, best first."""
    rank = non_dominated_sort(values)
    crowd = np.zeros(len(values))
    for r in range(int(rank.max()) + 1 if len(rank) else 0):
        members = np.flatnonzero(rank == r)
        crowd[members] = crowding_distance(values[members])
    order = sorted(range(len(values)), key=lambda i: (rank[i], -crowd[i], i))[:size]
    return order, [int(rank[i]) for i in order], [float(crowd[i]) for i in order]


def _tournament(ranks: list[int], crowds: list[float], rng: np.random.Generator) -> int:
    i, j = (int(x) for x in rng.integers(len(ranks), size=2))
    return i if (ranks[i], -crowds[i]) <= (ranks[j], -crowds[j]) else j


def _parent(
    population: Sequence[tuple[G, Objectives]], ranks: list[int], crowds: list[float], rng: np.random.Generator
) -> G:
    """The genome of a binary-tournament winner of ``population``."""
    return population[_tournament(ranks, crowds, rng)][0]


def nsga2(
    operators: NSGA2Operators[G],
    params: NSGA2Params,
    rng: np.random.Generator,
    *,
    stop: StoppingCriterion | None = None,
    seeds: Sequence[G] = (),
    clock: Callable[[], float] = time.perf_counter,
    start_time: float | None = None,
) -> ParetoOutcome[G]:
    """Run NSGA-II for ``params.generations`` generations or until ``stop`` holds.

    Parameters
    ----------
    operators
        The problem's genome operators and objective vector.
    params
        Population size, generations, variation rates.
    rng
        The only source of randomness (seeded by the caller).
    stop
        Extra stopping criterion (time, no improvement of the front), called before every
        generation with minus the number of archive insertions so far (see the module docstring).
    seeds
        Genomes placed in the initial population (warm starts); random genomes fill the rest
        (up to ``20 x population_size`` draws). A seed stays in the archive unless dominated.
    clock, start_time
        Time source and the time the history counts from (default: the call).

    Returns
    -------
    ParetoOutcome
        The archive front, the final population, counters, the per-generation history.
    """
    start = clock() if start_time is None else start_time
    run = _Run(operators)
    size = params.population_size
    genomes = run.distinct(list(seeds))[:size]
    keys = {operators.key(g) for g in genomes}
    for _ in range(20 * size):
        if len(genomes) >= size:
            break
        genome = operators.random_genome(rng)
        if operators.key(genome) not in keys:
            keys.add(operators.key(genome))
            genomes.append(genome)
    if not genomes:
        raise ValueError("nsga2: no initial genome (give seeds or a random_genome that returns one)")
    values = np.array([run.evaluate(g) for g in genomes])
    reference = tuple(float(v) for v in values.max(axis=0))
    order, ranks, crowds = _survivors(values, size)
    population = [(genomes[i], tuple(float(v) for v in values[i])) for i in order]
    history = [_record(run, 0, max(0.0, clock() - start), ranks, reference)]
    budget = MaxIterations(params.generations)
    criterion: StoppingCriterion = budget if stop is None else AnyOf(budget, stop)
    generation = 0
    while not criterion(-float(_archive(run).insertions)):
        generation += 1
        pick = functools.partial(_parent, population, ranks, crowds, rng)
        children = [breed(pick, operators, params, rng) for _ in range(size)]
        pool = run.distinct([g for g, _ in population] + children)
        values = np.array([run.evaluate(g) for g in pool])
        order, ranks, crowds = _survivors(values, size)
        population = [(pool[i], tuple(float(v) for v in values[i])) for i in order]
        now = max(history[-1].time_s, clock() - start)
        history.append(_record(run, generation, now, ranks, reference))
    archive = _archive(run)
    front = sorted(zip(archive.genomes, (tuple(float(v) for v in row) for row in archive.values), strict=True),
                   key=lambda item: item[1])  # fmt: skip
    return ParetoOutcome(
        tuple(front),
        tuple(population),
        generation,
        len(run.cache),
        tuple(history),
        reference,
    )


def _archive(run: _Run[G]) -> _Archive[G]:
    assert run.archive is not None  # the initial population evaluated at least one genome
    return run.archive


def _record(run: _Run[G], generation: int, time_s: float, ranks: list[int], reference: Objectives) -> GenerationRecord:
    archive = _archive(run)
    best = tuple(float(v) for v in archive.values.min(axis=0))
    volume = hypervolume_2d(archive.values, reference) if len(reference) == 2 else None
    return GenerationRecord(
        generation, time_s, len(run.cache), sum(r == 0 for r in ranks), len(archive.genomes), best, volume
    )
