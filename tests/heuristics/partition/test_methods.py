"""greedy, dp, sa and ga on the partition problem: checked results, optimality gaps against the
brute-force oracle, a hand-known optimum, determinism, warm starts, limits and infeasibility."""

from __future__ import annotations

import functools

import pytest

from accelsched.heuristics.genetic import GAParams
from accelsched.heuristics.partition import dp as partition_dp
from accelsched.heuristics.partition import ga as partition_ga
from accelsched.heuristics.partition import greedy as partition_greedy
from accelsched.heuristics.partition import sa as partition_sa
from accelsched.heuristics.partition.ga import PartitionGAParams, ga_method
from accelsched.heuristics.partition.sa import PartitionSAParams, sa_method
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, Metric, PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions, Status
from tests.heuristics.partition.helpers import chain, fused_chain_ema
from tests.problems.partition_oracle import brute_force, small_instance

SMALL_GA = ga_method(PartitionGAParams(GAParams(population_size=16, generations=8, elites=2)))
SMALL_SA = sa_method(PartitionSAParams(iterations=300))
GREEDY = partition_greedy.METHODS[0]
DP = partition_dp.METHODS[0]
METHODS = {"greedy": GREEDY, "dp": DP, "sa": SMALL_SA, "ga": SMALL_GA}

CONFIGS = [
    pytest.param({}, id="fixed-separate-ema"),
    pytest.param({"shared": True, "act_kb": (5,)}, id="fixed-shared-ema"),
    pytest.param({"metric": Metric.ENERGY}, id="fixed-separate-energy"),
    pytest.param({"act_kb": (3, 6, 12), "weight_kb": (1, 2), "metric": Metric.ENERGY}, id="co-separate-energy"),
    pytest.param({"shared": True, "act_kb": (4, 8, 16), "alpha": 0.5}, id="co-shared-ema"),
]


@functools.cache
def optimum(n: int, seed: int, config: tuple[tuple[str, object], ...]) -> tuple[PartitionInstance, float]:
    instance = small_instance(n, seed, **dict(config))  # type: ignore[arg-type]
    return instance, brute_force(instance)[0]


def run(method: MethodSpec, instance: PartitionInstance, seed: int = 0, **kwargs: object) -> Result:
    return run_method(PROBLEM, instance, method, SolveOptions(seed=seed, **kwargs))  # type: ignore[arg-type]


def value(result: Result) -> float:
    """The result's objective, which every partition method has (they always return a solution)."""
    assert result.objective is not None, result.stats.native_status
    return result.objective


def test_methods_are_exported_with_their_kinds() -> None:
    exported = {m.name: m.kind for mod in (partition_ga, partition_sa, partition_greedy, partition_dp)
                for m in mod.METHODS}  # fmt: skip
    assert exported == {"ga": "heuristic", "sa": "heuristic", "greedy": "baseline", "dp": "baseline"}
    assert all(m.problem == "partition" for mod in (partition_ga, partition_dp) for m in mod.METHODS)
    cocco = PartitionGAParams().ga
    assert (cocco.generations, cocco.population_size) == (20, 500)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", list(METHODS))
def test_results_are_checked_and_never_beat_the_optimum(name: str, config: dict[str, object]) -> None:
    for seed in range(6):
        n = 6 + seed % 3
        instance, best = optimum(n, seed, tuple(sorted(config.items())))
        result = run(METHODS[name], instance, seed)  # run_method checks and compares objectives
        assert result.status is Status.FEASIBLE and result.bound is None
        assert value(result) >= best * (1 - 1e-9)
        assert result.stats.iterations is not None and result.stats.trace
        assert result.stats.trace[-1][1] == pytest.approx(result.objective)


@pytest.mark.parametrize("name", list(METHODS))
def test_no_method_beats_brute_force_on_thirty_instances(name: str) -> None:
    for seed in range(100, 130):
        instance, best = optimum(6 + seed % 3, seed, ())
        assert value(run(METHODS[name], instance, seed)) >= best * (1 - 1e-9)


@pytest.mark.parametrize("metric", list(Metric))
@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_fuses_a_chain_that_fits_into_one_subgraph(name: str, metric: Metric) -> None:
    instance = chain(metric)
    result = run(METHODS[name], instance)
    assert result.solution is not None and len(result.solution.subgraphs) == 1
    if metric is Metric.EMA:
        assert result.objective == fused_chain_ema(instance)


@pytest.mark.parametrize(
    ("config", "least"),
    [
        ((), {"greedy": 18, "dp": 16, "sa": 18, "ga": 18}),
        ((("act_kb", (3, 6, 12)), ("metric", Metric.ENERGY), ("weight_kb", (1, 2))),
         {"greedy": 18, "dp": 13, "sa": 4, "ga": 15}),
    ],
    ids=["fixed-ema", "co-energy"],
)  # fmt: skip
def test_the_methods_reach_the_optimum_of_small_instances_most_of_the_time(
    config: tuple[tuple[str, object], ...], least: dict[str, int]
) -> None:
    hits = dict.fromkeys(METHODS, 0)
    for seed in range(100, 120):
        instance, best = optimum(6 + seed % 3, seed, config)
        for name, method in METHODS.items():
            hits[name] += value(run(method, instance, seed)) <= best * (1 + 1e-9)
    assert all(hits[name] >= least[name] for name in METHODS), hits


@pytest.mark.parametrize("name", ["sa", "ga"])
def test_same_seed_same_result(name: str) -> None:
    instance = small_instance(12, 9, act_kb=(3, 6, 12), weight_kb=(1, 2), metric=Metric.ENERGY)
    first, again = run(METHODS[name], instance, 5), run(METHODS[name], instance, 5)
    assert (first.solution, first.objective) == (again.solution, again.objective)
    assert [v for _, v in first.stats.trace] == [v for _, v in again.stats.trace]


@pytest.mark.parametrize("name", list(METHODS))
def test_a_warm_start_is_never_lost(name: str) -> None:
    instance, best = optimum(7, 21, ())
    _, solution = brute_force(instance)
    result = run_method(PROBLEM, instance, METHODS[name], SolveOptions(seed=1), solution)
    assert result.objective == pytest.approx(best)
    act, weight = instance.capacity_pairs()[-1]
    singles = PartitionSolution.from_indices(instance, [(i,) for i in range(instance.n_layers)], act, weight)
    baseline = run_method(PROBLEM, instance, METHODS[name], SolveOptions(seed=1), singles)
    assert value(baseline) <= PROBLEM.objective(instance, singles, PROBLEM.evaluate(instance, singles))


@pytest.mark.parametrize("name", list(METHODS))
def test_an_infeasible_instance_says_which_layer(name: str) -> None:
    instance = small_instance(6, 0, act_kb=(1,), weight_kb=(1,))
    result = run(METHODS[name], instance)
    assert result.status is Status.INFEASIBLE and result.solution is None
    assert "alone needs" in result.stats.native_status


def test_the_time_limit_stops_the_ga_and_the_sa() -> None:
    instance = small_instance(12, 4, act_kb=(3, 6, 12), weight_kb=(1, 2))
    endless_ga = ga_method(PartitionGAParams(GAParams(population_size=10, generations=10**6, elites=1)))
    endless_sa = sa_method(PartitionSAParams(iterations=10**8))
    for method in (endless_ga, endless_sa):  # budgets no machine gets through in the limit
        result = run(method, instance, time_limit_s=0.3)
        assert result.status is Status.FEASIBLE
        assert result.stats.iterations is not None and result.stats.iterations < 10**6
