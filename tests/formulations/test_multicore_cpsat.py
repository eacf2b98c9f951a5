"""The CP-SAT allocation + schedule model (method ``cpsat`` of the multicore problem): brute force on seeded
instances, the GA never below it, the objective equal to the evaluator's, the Pareto sweep, warm starts, statuses."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from accelsched.formulations.multicore_cpsat import METHODS, pareto_front
from accelsched.formulations.multicore_cpsat_model import MulticoreCpSat
from accelsched.formulations.multicore_enumerate import METHODS as ENUMERATE_METHODS
from accelsched.formulations.multicore_enumerate import EnumerateParams, build_project, enumerate_method
from accelsched.heuristics.multicore_ga import MulticoreGAParams, ga_method
from accelsched.heuristics.multicore_manual import manual_allocation
from accelsched.heuristics.nsga2 import NSGA2Params
from accelsched.problems.multicore import PROBLEM, MulticoreInstance, MulticoreSolution, list_schedule
from accelsched.problems.result import Result
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status
from accelsched.solvers.cpsat import solve_cpsat
from tests.formulations.multicore_helpers import tiny

CPSAT = METHODS[0]
ENUMERATE = ENUMERATE_METHODS[0]
GA = ga_method(MulticoreGAParams(NSGA2Params(population_size=8, generations=5)))
OPTIONS = SolveOptions(time_limit_s=60, threads=1, seed=0)
SEEDS = range(72)
ENUMERATION_ACTIVITIES = 24
"""Enumeration limit of these tests (the default is 16): every seed but the fused EDP ones passes it."""

RELATIVE = 1e-9


def oracle(instance: MulticoreInstance) -> Result[MulticoreSolution]:
    """Brute force: every allocation, each with an exact branch-and-bound schedule; checked by the registry."""
    spec = enumerate_method(EnumerateParams(max_activities=ENUMERATION_ACTIVITIES))
    return run_method(PROBLEM, instance, spec, SolveOptions(time_limit_s=60))


def value(result: Result[MulticoreSolution]) -> float:
    assert result.objective is not None, result.stats.native_status
    return result.objective


def test_the_methods_are_registered() -> None:
    assert get_method("multicore", "cpsat") is CPSAT and get_method("multicore", "enumerate") is ENUMERATE
    assert (CPSAT.kind, ENUMERATE.kind) == ("exact", "exact")
    assert CPSAT.default_hint == "manual"  # the registry hints cpsat with the manual schedule


@pytest.mark.parametrize("seed", SEEDS)
def test_the_cpsat_optimum_equals_brute_force_and_the_ga_never_beats_it(seed: int) -> None:
    instance = tiny(seed)
    exact = run_method(PROBLEM, instance, CPSAT, OPTIONS)
    assert exact.status is Status.OPTIMAL, exact.stats.native_status
    assert exact.bound is not None and exact.bound == pytest.approx(value(exact), rel=1e-6)
    # The registry re-evaluated the solution: its objective is the evaluator's for the instance's metric.
    assert exact.cost is not None and value(exact) == pytest.approx(exact.cost.metric(instance.objective), rel=1e-6)
    brute = oracle(instance)
    if brute.status is Status.TIME_LIMIT_NO_SOLUTION:
        pytest.skip(f"beyond the enumeration: {brute.stats.native_status}")
    assert brute.status is Status.OPTIMAL
    assert value(exact) == pytest.approx(value(brute), rel=1e-6)
    ga = run_method(PROBLEM, instance, GA, SolveOptions(seed=seed))
    assert value(ga) >= value(exact) * (1 - RELATIVE)


def test_at_least_fifty_seeds_are_compared_with_brute_force() -> None:
    """The exactness claim needs at least 50 random instances within the enumeration's limits."""

    def largest(instance: MulticoreInstance) -> int:
        names = instance.workload.names
        return max(len(build_project(instance, dict(zip(names, cores, strict=True))).activities)
                   for cores in itertools.product(*(instance.allowed_cores[n] for n in names)))  # fmt: skip

    compared = [seed for seed in SEEDS if largest(tiny(seed)) <= ENUMERATION_ACTIVITIES]
    assert len(compared) >= 50
    instances = [tiny(seed) for seed in compared]
    assert {i.objective for i in instances} == {"latency", "energy", "edp"}
    assert {i.granularity.name for i in instances} == {"LAYER", "FUSED"}
    weight_memory = [
        min(i.weight_capacity_bytes(c) for c in i.accelerator.cores if c.name != "simd") for i in instances
    ]
    assert min(weight_memory) < 200  # some instances where the weight residency binds


def test_the_model_objective_equals_the_evaluator_for_latency_and_energy() -> None:
    for seed, metric in ((1, "latency"), (2, "energy"), (6, "latency"), (7, "energy")):
        instance = dataclasses.replace(tiny(seed), objective=metric)
        model = MulticoreCpSat(instance)
        answer = solve_cpsat(model.model, OPTIONS, {}, model.minimize(metric))
        assert answer.status is Status.OPTIMAL
        solution = model.decode(answer)
        PROBLEM.check(instance, solution)
        report = PROBLEM.evaluate(instance, solution)
        assert model.latency(answer) == report.latency_cycles
        assert model.energy_pj(answer) == pytest.approx(report.energy_pj, rel=1e-9)


def test_the_pareto_sweep_is_a_front_whose_ends_are_the_single_objective_optima() -> None:
    instance = tiny(2)
    front = pareto_front(instance, OPTIONS, warm_start=list_schedule(instance, manual_allocation(instance)))
    assert front.complete and len(front.points) >= 1
    latencies = [p.latency_cycles for p in front.points]
    energies = [p.energy_pj for p in front.points]
    assert latencies == sorted(latencies) and energies == sorted(energies, reverse=True)
    assert len(set(latencies)) == len(latencies)  # strictly non-dominated
    for point in front.points:
        PROBLEM.check(instance, point.solution)
        report = PROBLEM.evaluate(instance, point.solution)
        assert (report.latency_cycles, report.energy_pj) == (point.latency_cycles, pytest.approx(point.energy_pj))
    fastest = run_method(PROBLEM, dataclasses.replace(instance, objective="latency"), CPSAT, OPTIONS)
    cheapest = run_method(PROBLEM, dataclasses.replace(instance, objective="energy"), CPSAT, OPTIONS)
    assert latencies[0] == value(fastest)
    assert energies[-1] == pytest.approx(value(cheapest), rel=1e-6)


def test_a_warm_start_is_used_and_a_bad_one_is_ignored_with_a_note() -> None:
    instance = tiny(3)
    warm = list_schedule(instance, manual_allocation(instance))
    hinted = run_method(PROBLEM, instance, CPSAT, OPTIONS, warm_start=warm)
    assert hinted.status is Status.OPTIMAL and value(hinted) <= PROBLEM.evaluate(instance, warm).latency_cycles
    broken = dataclasses.replace(warm, starts={name: -5 for name in warm.starts})
    ignored = run_method(PROBLEM, instance, CPSAT, OPTIONS, warm_start=broken)
    assert ignored.status is Status.OPTIMAL and value(ignored) == value(hinted)
    assert "the warm start is ignored" in ignored.stats.native_status


def test_unsupported_objectives_and_spent_time_limits_are_statuses() -> None:
    memory = run_method(PROBLEM, dataclasses.replace(tiny(0), objective="memory"), CPSAT, OPTIONS)
    assert memory.status is Status.ERROR and "use manual or ga for memory" in memory.stats.native_status
    spent = run_method(PROBLEM, tiny(5), CPSAT, SolveOptions(time_limit_s=1e-6, threads=1))
    assert spent.status in (Status.TIME_LIMIT_NO_SOLUTION, Status.FEASIBLE)
    if spent.solution is not None:
        PROBLEM.check(tiny(5), spent.solution)
