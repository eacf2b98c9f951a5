"""The GA loop: determinism, elitism, seeds, the cache, stopping and validation."""

from __future__ import annotations

import numpy as np
import pytest

from accelsched.heuristics.genetic import GAOperators, GAParams, evolve
from accelsched.heuristics.stopping import NoImprovement

TARGET = (1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1)


def bits(calls: list[int] | None = None) -> GAOperators[tuple[int, ...]]:
    """OneMax-like: the distance of a bit string to TARGET."""

    def fitness(genome: tuple[int, ...]) -> float:
        if calls is not None:
            calls.append(1)
        return float(sum(a != b for a, b in zip(genome, TARGET, strict=True)))

    def crossover(a: tuple[int, ...], b: tuple[int, ...], rng: np.random.Generator) -> tuple[int, ...]:
        cut = int(rng.integers(1, len(a)))
        return a[:cut] + b[cut:]

    def mutate(genome: tuple[int, ...], rng: np.random.Generator) -> tuple[int, ...]:
        k = int(rng.integers(len(genome)))
        return (*genome[:k], 1 - genome[k], *genome[k + 1 :])

    return GAOperators(
        random_genome=lambda rng: tuple(int(x) for x in rng.integers(2, size=len(TARGET))),
        crossover=crossover,
        mutate=mutate,
        fitness=fitness,
        key=lambda genome: genome,
    )


SMALL = GAParams(population_size=20, generations=15, elites=2)


def test_evolve_is_deterministic_under_a_seed_and_converges() -> None:
    first = evolve(bits(), SMALL, np.random.default_rng(7))
    again = evolve(bits(), SMALL, np.random.default_rng(7))
    untimed = [(g, best) for g, _, best in first.history]
    assert (first.best, untimed) == (again.best, [(g, best) for g, _, best in again.history])
    assert first.best_fitness == 0.0 and first.best == TARGET
    assert first.generations == 15 and len(first.history) == 16


def test_elitism_never_loses_the_best_and_the_trace_only_improves() -> None:
    out = evolve(bits(), GAParams(population_size=10, generations=10, elites=1, mutation_rate=1.0),
                 np.random.default_rng(1))  # fmt: skip
    best = [h[2] for h in out.history]
    assert best == sorted(best, reverse=True)
    values = [v for _, v in out.trace]
    assert len(set(values)) == len(values) and values[-1] == out.best_fitness


def test_a_seed_genome_is_kept_by_elitism() -> None:
    out = evolve(bits(), GAParams(population_size=6, generations=3, elites=1, crossover_rate=0.0),
                 np.random.default_rng(0), seeds=[TARGET])  # fmt: skip
    assert out.best == TARGET and out.history[0][2] == 0.0


def test_the_cache_evaluates_each_distinct_genome_once() -> None:
    calls: list[int] = []
    out = evolve(bits(calls), SMALL, np.random.default_rng(3))
    assert len(calls) == out.evaluations < SMALL.population_size * (SMALL.generations + 1)


def test_an_extra_stopping_rule_ends_the_run_early() -> None:
    out = evolve(bits(), GAParams(population_size=4, generations=1000, elites=1, crossover_rate=0.0,
                                  mutation_rate=0.0), np.random.default_rng(0), stop=NoImprovement(3))  # fmt: skip
    assert out.generations == 3


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"population_size": 1}, "population_size must be an integer >= 2"),
        ({"elites": 20, "population_size": 20}, "elites must be below population_size=20"),
        ({"crossover_rate": 1.5}, r"crossover_rate must be a number in \[0, 1\]"),
        ({"tournament_size": 0}, "tournament_size must be an integer >= 1"),
        ({"generations": -1}, "generations must be an integer >= 0"),
    ],
)
def test_bad_parameters_are_named(fields: dict[str, int | float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GAParams(**fields)  # type: ignore[arg-type]
