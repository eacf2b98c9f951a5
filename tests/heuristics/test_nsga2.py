"""The NSGA-II loop: non-dominated sorting, crowding, hypervolume, the archive, determinism, stopping."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from accelsched.heuristics.nsga2 import (
    NSGA2Operators,
    NSGA2Params,
    crowding_distance,
    dominates,
    hypervolume_2d,
    non_dominated_sort,
    nsga2,
)
from accelsched.heuristics.stopping import NoImprovement

Bits = tuple[int, ...]
BITS = 6


def schaffer(calls: list[Bits] | None = None) -> NSGA2Operators[Bits]:
    """Schaffer's problem on a grid: x = value(bits) / 8 - 4 in [-4, 3.875], minimize (x^2, (x - 2)^2)."""

    def objectives(genome: Bits) -> tuple[float, float]:
        if calls is not None:
            calls.append(genome)
        x = int("".join(map(str, genome)), 2) / 8 - 4
        return x * x, (x - 2) ** 2

    def crossover(a: Bits, b: Bits, rng: np.random.Generator) -> Bits:
        cut = int(rng.integers(1, BITS))
        return a[:cut] + b[cut:]

    def mutate(genome: Bits, rng: np.random.Generator) -> Bits:
        k = int(rng.integers(BITS))
        return (*genome[:k], 1 - genome[k], *genome[k + 1 :])

    return NSGA2Operators(
        random_genome=lambda rng: tuple(int(b) for b in rng.integers(2, size=BITS)),
        crossover=crossover,
        mutate=mutate,
        objectives=objectives,
        key=lambda genome: genome,
    )


HEAD, TAIL = 5, 15


def zdt1() -> NSGA2Operators[Bits]:
    """ZDT1 on bits: x from the 5 head bits in [0, 1], g = 1 + 9 (ones in the 15 tail bits) / 15,
    minimize (x, g (1 - sqrt(x / g))). Pareto-optimal exactly when the tail is all zeros (32 points)."""

    def objectives(genome: Bits) -> tuple[float, float]:
        x = int("".join(map(str, genome[:HEAD])), 2) / (2**HEAD - 1)
        g = 1 + 9 * sum(genome[HEAD:]) / TAIL
        return x, g * (1 - math.sqrt(x / g))

    def crossover(a: Bits, b: Bits, rng: np.random.Generator) -> Bits:
        mask = rng.random(len(a)) < 0.5
        return tuple(x if k else y for x, y, k in zip(a, b, mask, strict=True))

    def mutate(genome: Bits, rng: np.random.Generator) -> Bits:
        k = int(rng.integers(len(genome)))
        return (*genome[:k], 1 - genome[k], *genome[k + 1 :])

    return NSGA2Operators(
        random_genome=lambda rng: tuple(int(b) for b in rng.integers(2, size=HEAD + TAIL)),
        crossover=crossover,
        mutate=mutate,
        objectives=objectives,
        key=lambda genome: genome,
    )


def pareto_set() -> set[tuple[float, ...]]:
    """The exact front of :func:`schaffer` by enumeration: x in [0, 2]."""
    points = [tuple(schaffer().objectives(g)) for g in itertools.product((0, 1), repeat=BITS)]
    return {p for p in points if not any(dominates(q, p) for q in points)}


def brute_ranks(points: list[tuple[float, ...]]) -> list[int]:
    """Ranks by peeling: the points no remaining point dominates form the next front."""
    rank = [-1] * len(points)
    r = 0
    while -1 in rank:
        left = [i for i in range(len(points)) if rank[i] < 0]
        front = [i for i in left if not any(dominates(points[j], points[i]) for j in left)]
        for i in front:
            rank[i] = r
        r += 1
    return rank


def test_non_dominated_sort_by_hand_with_ties_and_duplicates() -> None:
    points = [(1, 3), (2, 2), (3, 1), (2, 3), (3, 3), (1, 3), (1, 4)]
    # (1, 3) twice: equal points do not dominate each other; (1, 4) ties (1, 3) on the first objective
    assert non_dominated_sort(points).tolist() == [0, 0, 0, 1, 2, 0, 1]
    assert non_dominated_sort([(5.0, 5.0)] * 3).tolist() == [0, 0, 0]
    assert non_dominated_sort(np.empty((0, 2))).tolist() == []


@pytest.mark.parametrize("seed", range(8))
def test_non_dominated_sort_matches_peeling(seed: int) -> None:
    rng = np.random.default_rng(seed)
    points = [tuple(float(v) for v in row) for row in rng.integers(0, 5, size=(30, 2 + seed % 2))]
    assert non_dominated_sort(points).tolist() == brute_ranks(points)


def test_crowding_distance_by_hand() -> None:
    # distinct points sorted by f0: (1,4) (2,2) (3,1.5) (4,1); ranges 3 and 3
    # (2,2): (3-1)/3 + (4-1.5)/3 = 1.5; (3,1.5): (4-2)/3 + (2-1)/3 = 1; the copy of (2,2) gets 0
    d = crowding_distance([(1, 4), (2, 2), (4, 1), (3, 1.5), (2, 2)])
    assert d[[0, 2]].tolist() == [np.inf, np.inf] and d[4] == 0
    assert d[1] == pytest.approx(1.5) and d[3] == pytest.approx(1.0)


def test_crowding_distance_edge_cases() -> None:
    assert crowding_distance([(1, 2)]).tolist() == [np.inf]
    assert crowding_distance([(1, 2), (2, 1), (1, 2)]).tolist() == [np.inf, np.inf, 0.0]
    assert crowding_distance([(3, 3)] * 4).tolist() == [np.inf, 0.0, 0.0, 0.0]
    assert crowding_distance(np.empty((0, 2))).tolist() == []
    # the third objective is constant: it adds nothing, not even infinity at its ends
    d = crowding_distance([(0, 4, 7), (1, 2, 7), (2, 1, 7), (4, 0, 7)])
    assert d.tolist() == pytest.approx([np.inf, 2 / 4 + 3 / 4, 3 / 4 + 2 / 4, np.inf])
    # ties on one objective are ordered by the whole vector, so the order of the input does not matter
    points = [(1, 5, 2), (1, 3, 4), (2, 1, 1), (0, 6, 6), (3, 0, 3)]
    base = crowding_distance(points)
    for perm in itertools.permutations(range(len(points))):
        assert crowding_distance([points[i] for i in perm]).tolist() == base[list(perm)].tolist()


def test_hypervolume_2d_by_hand() -> None:
    # union of [1,4]x[3,4] and [2,4]x[1,4]: 3 + 6 - 2
    assert hypervolume_2d([(1, 3), (2, 1)], (4, 4)) == 7.0
    assert hypervolume_2d([(1, 3), (2, 1), (3, 3), (5, 0), (4, 1)], (4, 4)) == 7.0  # dominated / outside: nothing
    assert hypervolume_2d(np.empty((0, 2)), (1, 1)) == 0.0
    with pytest.raises(ValueError, match="exactly two objectives"):
        hypervolume_2d([(1, 2, 3)], (4, 4, 4))


def test_nsga2_finds_the_exact_front_deterministically() -> None:
    params = NSGA2Params(population_size=20, generations=15)
    first = nsga2(schaffer(), params, np.random.default_rng(3))
    again = nsga2(schaffer(), params, np.random.default_rng(3))
    assert first.front == again.front and first.population == again.population
    untimed = [(h.generation, h.front_size, h.best, h.hypervolume) for h in first.history]
    assert untimed == [(h.generation, h.front_size, h.best, h.hypervolume) for h in again.history]
    assert {values for _, values in first.front} == pareto_set()  # 17 grid points with x in [0, 2]
    assert first.generations == 15 and len(first.history) == 16
    other = nsga2(schaffer(), params, np.random.default_rng(4))
    assert [g for g, _ in other.population] != [g for g, _ in first.population]


@pytest.mark.parametrize("seed", range(3))
def test_nsga2_converges_to_the_front_of_zdt1(seed: int) -> None:
    # ~400 evaluations of 2^20 genomes: random sampling would see a Pareto-optimal one with probability ~1 %
    out = nsga2(zdt1(), NSGA2Params(population_size=20, generations=40), np.random.default_rng(seed))
    optimal = [genome for genome, _ in out.front if not any(genome[HEAD:])]
    assert len(optimal) >= 28 and out.evaluations < 450
    assert out.history[-1].hypervolume is not None and out.history[0].hypervolume is not None
    assert out.history[-1].hypervolume > 1.3 * out.history[0].hypervolume


def test_archive_and_population_invariants() -> None:
    calls: list[Bits] = []
    out = nsga2(schaffer(calls), NSGA2Params(population_size=8, generations=12), np.random.default_rng(0))
    assert len(calls) == len(set(calls)) == out.evaluations  # each distinct genome evaluated once
    values = [v for _, v in out.front]
    assert not any(dominates(a, b) for a in values for b in values)
    assert values == sorted(values) and len(set(values)) == len(values)
    keys = [g for g, _ in out.population]
    assert len(keys) == len(set(keys)) <= 8
    first = [v for _, v in out.population[: out.history[-1].front_size]]  # rank 0 comes first
    assert not any(dominates(a, b) for a in first for b in first)
    assert all(any(dominates(a, v) for a in first) for _, v in out.population[len(first) :])
    volumes = [h.hypervolume for h in out.history]
    assert all(v is not None for v in volumes) and volumes == sorted(volumes)  # type: ignore[type-var]
    for i in range(2):
        bests = [h.best[i] for h in out.history]
        assert bests == sorted(bests, reverse=True)
        # elitism: the best value of each objective ever found is still in the population
        assert min(v[i] for _, v in out.population) == out.history[-1].best[i]
    assert out.history[-1].archive_size == len(out.front) and out.history[-1].evaluations == out.evaluations
    initial = [schaffer().objectives(g) for g in calls[:8]]  # the first evaluations: the initial population
    assert out.reference == tuple(max(v[i] for v in initial) for i in range(2))


def test_a_seed_stays_in_the_population_and_on_the_front() -> None:
    x_one = (1, 0, 1, 0, 0, 0)  # x = 40 / 8 - 4 = 1, Pareto-optimal
    out = nsga2(schaffer(), NSGA2Params(population_size=6, generations=3, mutation_rate=1.0),
                np.random.default_rng(0), seeds=[x_one, x_one])  # fmt: skip
    assert x_one in [g for g, _ in out.front]  # Pareto-optimal: never leaves the archive
    assert out.history[0].evaluations == 6  # the copy of the seed is dropped, random genomes fill the rest


def test_an_extra_stopping_rule_ends_the_run_early() -> None:
    still = NSGA2Params(population_size=4, generations=1000, crossover_rate=0.0, mutation_rate=0.0)
    out = nsga2(schaffer(), still, np.random.default_rng(0), stop=NoImprovement(3))
    assert out.generations == 3  # copies only: the front never gains a point


def test_a_tiny_genome_space_gives_a_smaller_population() -> None:
    ops = NSGA2Operators(
        random_genome=lambda rng: int(rng.integers(3)),
        crossover=lambda a, b, rng: b,
        mutate=lambda g, rng: (g + 1) % 3,
        objectives=lambda g: (float(g), float(2 - g)),
        key=lambda g: g,
    )
    out = nsga2(ops, NSGA2Params(population_size=10, generations=2), np.random.default_rng(0))
    assert sorted(g for g, _ in out.population) == [0, 1, 2] and len(out.front) == 3


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"population_size": 1}, "field population_size must be an integer >= 2, got 1"),
        ({"population_size": 4.0}, "field population_size must be an integer >= 2"),
        ({"generations": -1}, "field generations must be an integer >= 0, got -1"),
        ({"crossover_rate": 1.5}, r"field crossover_rate must be a number in \[0, 1\], got 1.5"),
        ({"mutation_rate": True}, r"field mutation_rate must be a number in \[0, 1\], got True"),
    ],
)
def test_bad_parameters_are_named(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NSGA2Params(**fields)  # type: ignore[arg-type]


def test_bad_objectives_are_reported() -> None:
    ops = schaffer()
    broken = NSGA2Operators(ops.random_genome, ops.crossover, ops.mutate, lambda g: (float("nan"), 1.0), ops.key)
    with pytest.raises(ValueError, match="finite numbers"):
        nsga2(broken, NSGA2Params(population_size=2, generations=0), np.random.default_rng(0))
