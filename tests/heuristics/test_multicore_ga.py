"""The allocation GA (method ``ga`` of the multicore problem): checked results, the Pareto front, the
exhaustive optimum of small instances, the manual baseline, determinism, warm starts, limits, operators."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections import Counter

import numpy as np
import pytest

from accelsched.hardware.cost.cn_graph import Granularity
from accelsched.heuristics import multicore_ga
from accelsched.heuristics.multicore_ga import (
    AllocationSpace,
    MulticoreGAParams,
    ga_method,
    pareto_front,
    solve_ga,
)
from accelsched.heuristics.multicore_manual import manual_allocation
from accelsched.heuristics.nsga2 import NSGA2Params, dominates
from accelsched.models.builder import NetBuilder
from accelsched.models.layer import OpKind
from accelsched.models.random_dag import random_workload
from accelsched.problems.multicore import (
    OBJECTIVES,
    PROBLEM,
    MulticoreInstance,
    MulticoreSolution,
    Priority,
    evaluate_schedule,
    list_schedule,
)
from accelsched.problems.result import Result
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions, Status
from tests.hardware.cost.helpers import multicore

SMALL = MulticoreGAParams(NSGA2Params(population_size=8, generations=6))
SMALL_GA = ga_method(SMALL)


@functools.cache
def small_instance(seed: int) -> MulticoreInstance:
    """2 compute cores and a SIMD core, 4-6 layers; granularity, priority and objective vary with the seed."""
    workload = random_workload(4 + seed % 3, seed, height=8, width=8, channels=(8, 16, 32))
    return MulticoreInstance(
        workload,
        multicore(weight_bytes=4000, activation_bytes=1500),
        Granularity.LAYER if seed % 5 == 0 else Granularity.FUSED,
        rows_per_cn=2,
        priority=Priority.MEMORY if seed % 7 == 3 else Priority.LATENCY,
        objective=OBJECTIVES[seed % 4],
    )


def value(result: Result[MulticoreSolution]) -> float:
    """The result's objective (present: the GA always has a solution)."""
    assert result.objective is not None
    return result.objective


def metric(instance: MulticoreInstance, allocation: dict[str, int]) -> float:
    report = evaluate_schedule(instance, list_schedule(instance, allocation)).report
    return report.metric(instance.objective)


@functools.cache
def exhaustive(seed: int) -> tuple[float, int, int]:
    """Best objective over every allocation (each list-scheduled), the allocations and how many are best."""
    instance = small_instance(seed)
    names = instance.workload.names
    values = [metric(instance, dict(zip(names, cores, strict=True)))
              for cores in itertools.product(*(instance.allowed_cores[n] for n in names))]  # fmt: skip
    best = min(values)
    return best, len(values), sum(v <= best * (1 + 1e-9) for v in values)


def test_the_method_is_exported() -> None:
    (spec,) = multicore_ga.METHODS
    assert (spec.name, spec.problem, spec.kind) == ("ga", "multicore", "heuristic")
    default = MulticoreGAParams()
    assert (default.nsga2.population_size, default.nsga2.generations, default.crossover) == (32, 50, "uniform")


@pytest.mark.parametrize("seed", range(12))
def test_results_pass_the_checker_and_beat_neither_the_optimum_nor_lose_to_manual(seed: int) -> None:
    instance = small_instance(seed)
    result = run_method(PROBLEM, instance, SMALL_GA, SolveOptions(seed=seed))  # checks, re-evaluates, compares
    assert result.status is Status.FEASIBLE and result.method == "ga" and result.seed == seed
    assert result.cost is not None and result.cost.metric(instance.objective) == pytest.approx(result.objective)
    assert value(result) <= metric(instance, manual_allocation(instance))
    assert value(result) >= exhaustive(seed)[0] * (1 - 1e-9)
    assert result.stats.iterations == 6 and result.stats.trace[-1][1] == result.objective
    assert "generations x 8" in result.stats.native_status


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_the_front_is_non_dominated_priced_by_the_evaluator_and_holds_the_answer(objective: str) -> None:
    instance = MulticoreInstance(small_instance(2).workload, small_instance(2).accelerator, Granularity.FUSED,
                                 rows_per_cn=2, objective=objective)  # fmt: skip
    run = solve_ga(instance, SolveOptions(seed=1), params=SMALL)
    points = [(p.latency_cycles, p.energy_pj) for p in run.front]
    assert points and points == sorted(points)
    assert not any(dominates(a, b) for a in points for b in points)
    for point in run.front:
        assert all(point.allocation[n] in instance.allowed_cores[n] for n in instance.workload.names)
        report = evaluate_schedule(instance, list_schedule(instance, dict(point.allocation))).report
        assert (report.latency_cycles, report.energy_pj) == (point.latency_cycles, point.energy_pj)
    chosen = run.result.solution
    assert chosen is not None
    by_front = {
        "latency": min(lat for lat, _ in points),
        "energy": min(e for _, e in points),
        "edp": min(lat * e for lat, e in points),
    }
    if objective in by_front:  # the answer is a front point, the best one for the objective
        assert run.result.objective == pytest.approx(by_front[objective])
        assert dict(chosen.allocation) in [dict(p.allocation) for p in run.front]
    else:  # memory is not on the front: the answer is the best evaluated, at least as good as every front point
        assert all(value(run.result) <= metric(instance, dict(p.allocation)) for p in run.front)
    assert run.history[-1].archive_size == len(run.front)
    assert pareto_front(instance, SMALL, seed=1) == run.front


def test_the_ga_reaches_the_exhaustive_optimum_of_most_small_instances() -> None:
    """On 2-core instances of 16-64 allocations a small GA (4 genomes x 10 generations, evaluating about half
    of the allocations) reaches the optimum on most instances: clearly more often than random sampling of as
    many allocations and than the manual allocation. The peak-memory objective is left out: it is not one of
    the front's objectives, so the GA does not steer towards it."""
    budget = MulticoreGAParams(NSGA2Params(population_size=4, generations=10))
    hits = manual_hits = n = 0
    chance = evaluated = space = 0.0
    for seed in range(120):
        if small_instance(seed).objective == "memory":
            continue
        best, size, optima = exhaustive(seed)
        if size < 16:
            continue
        instance = small_instance(seed)
        run = solve_ga(instance, SolveOptions(seed=seed), params=budget)
        n += 1
        hits += value(run.result) <= best * (1 + 1e-9)
        manual_hits += metric(instance, manual_allocation(instance)) <= best * (1 + 1e-9)
        e = run.history[-1].evaluations
        chance += 1 - math.comb(size - optima, e) / math.comb(size, e)  # P(e distinct random draws hit an optimum)
        evaluated += e
        space += size
    assert n >= 70 and evaluated < 0.65 * space
    assert hits >= 0.7 * n, (hits, n)
    assert hits >= chance + 0.12 * n, (hits, chance, n)
    assert hits >= manual_hits + 0.4 * n, (hits, manual_hits, n)


def test_same_seed_same_run() -> None:
    instance = small_instance(11)
    first, again = solve_ga(instance, SolveOptions(seed=5), params=SMALL), solve_ga(instance, SolveOptions(seed=5),
                                                                                     params=SMALL)  # fmt: skip
    assert first.result.solution == again.result.solution and first.result.objective == again.result.objective
    assert first.front == again.front
    assert [v for _, v in first.result.stats.trace] == [v for _, v in again.result.stats.trace]
    assert [(h.front_size, h.best, h.hypervolume) for h in first.history] == [
        (h.front_size, h.best, h.hypervolume) for h in again.history
    ]


def test_a_warm_start_joins_the_population_and_a_bad_one_is_named() -> None:
    seed = 5
    instance = small_instance(seed)
    names = instance.workload.names
    best = min((dict(zip(names, cores, strict=True)) for cores in
                itertools.product(*(instance.allowed_cores[n] for n in names))),
               key=lambda a: metric(instance, a))  # fmt: skip
    warm = list_schedule(instance, best)
    no_search = ga_method(MulticoreGAParams(NSGA2Params(population_size=2, generations=0)))
    result = run_method(PROBLEM, instance, no_search, SolveOptions(seed=0), warm)
    assert result.objective == pytest.approx(exhaustive(seed)[0])
    bad = {**best, names[0]: 99}
    with pytest.raises(ValueError, match=f"the warm start puts layer '{names[0]}' on core 99, allowed"):
        solve_ga(instance, warm_start=dataclasses.replace(warm, allocation=bad), params=SMALL)
    with pytest.raises(ValueError, match="warm start must be a MulticoreSolution, got dict"):
        solve_ga(instance, warm_start=best, params=SMALL)  # type: ignore[arg-type]


def test_the_time_limit_and_the_stall_rule_stop_the_run() -> None:
    instance = small_instance(14)
    endless = MulticoreGAParams(NSGA2Params(population_size=6, generations=10**6))
    result = run_method(PROBLEM, instance, ga_method(endless), SolveOptions(seed=0, time_limit_s=0.3))
    assert result.status is Status.FEASIBLE  # it returned: the time limit, not the generations, ended the run
    assert result.stats.iterations is not None and 0 <= result.stats.iterations < 10**6
    stalled = MulticoreGAParams(NSGA2Params(population_size=6, generations=10**6), stall_generations=3)
    run = solve_ga(instance, SolveOptions(seed=0), params=stalled)
    assert run.result.stats.iterations is not None and 3 <= run.result.stats.iterations < 10**6


def operator_instance() -> MulticoreInstance:
    """3 compute cores; convolutions on any, the FC layer on cores 1 and 2 only; pooling on the SIMD core."""
    b = NetBuilder("ops", 4, 8, 8)
    x = b.input
    for i in range(4):
        x = b.conv(x, 8, 3, pad=1, name=f"c{i}")
    x = b.global_pool(x, name="gap")
    b.fc(x, 10, name="fc")
    spatials = ((("K", 4), ("C", 4)), (("OX", 4), ("K", 4)), (("K", 8),))
    allowed = ((OpKind.CONV, (0, 1, 2)), (OpKind.FC, (1, 2)))
    return MulticoreInstance(b.build(), multicore(spatials), allowed=allowed)


@pytest.mark.parametrize("crossover", ["uniform", "two-point"])
def test_operators_keep_every_layer_on_an_allowed_core(crossover: str) -> None:
    instance = operator_instance()
    allowed = [instance.allowed_cores[n] for n in instance.workload.names]
    assert allowed[instance.workload.names.index("gap")] == (3,) and allowed[-1] == (1, 2)
    flips = AllocationSpace(instance, MulticoreGAParams(crossover=crossover, swap_rate=0.0))
    swaps = AllocationSpace(instance, MulticoreGAParams(crossover=crossover, swap_rate=1.0))
    rng = np.random.default_rng(0)
    ok = lambda g: all(c in cores for c, cores in zip(g, allowed, strict=True))  # noqa: E731
    seen_cores: Counter[int] = Counter()
    for _ in range(300):
        a, b = flips.random_genome(rng), flips.random_genome(rng)
        assert ok(a) and ok(b)
        seen_cores.update(a)
        child = flips.crossover(a, b, rng)
        assert ok(child) and all(c in (x, y) for c, x, y in zip(child, a, b, strict=True))
        if crossover == "two-point":
            assert any(child == a[:i] + b[i:j] + a[j:] for i in range(len(a) + 1) for j in range(i, len(a) + 1))
        flipped = flips.mutate(a, rng)
        assert ok(flipped) and sum(x != y for x, y in zip(a, flipped, strict=True)) == 1
        swapped = swaps.mutate(a, rng)
        changed = [i for i in range(len(a)) if a[i] != swapped[i]]
        assert ok(swapped) and len(changed) in (1, 2)
        if len(changed) == 2:  # a swap: the two layers exchanged their cores
            i, j = changed
            assert (swapped[i], swapped[j]) == (a[j], a[i])
    assert set(seen_cores) == {0, 1, 2, 3}
    # the FC layer on core 2 and every convolution on core 0: no pair may swap, so the swap falls back to a flip
    stuck = tuple(0 if c == (0, 1, 2) else c[-1] for c in allowed)
    assert sum(x != y for x, y in zip(stuck, swaps.mutate(stuck, rng), strict=True)) == 1


def test_a_layer_without_choice_is_never_moved() -> None:
    instance = MulticoreInstance(small_instance(1).workload, small_instance(1).accelerator,
                                 allowed=((OpKind.CONV, (1,)),))  # fmt: skip
    space = AllocationSpace(instance, SMALL)
    genome = space.random_genome(np.random.default_rng(0))
    assert space.mutate(genome, np.random.default_rng(0)) == genome
    run = solve_ga(instance, params=SMALL)
    assert len(run.front) == 1 and run.history[-1].evaluations == 1
    assert dict(run.front[0].allocation) == manual_allocation(instance)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"crossover": "one-point"}, "field crossover must be one of uniform, two-point, got 'one-point'"),
        ({"swap_rate": -0.1}, r"field swap_rate must be a number in \[0, 1\], got -0.1"),
        ({"stall_generations": 0}, "field stall_generations must be an integer >= 1 or None, got 0"),
        ({"nsga2": 5}, "field nsga2 must be an NSGA2Params, got int"),
    ],
)
def test_bad_parameters_are_named(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MulticoreGAParams(**fields)  # type: ignore[arg-type]
