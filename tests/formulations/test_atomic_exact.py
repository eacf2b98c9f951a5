"""The atomic round model (``cpsat-rounds``) against brute force, and the job shop (``cpsat-jobshop``) below it."""

from __future__ import annotations

import functools
import itertools

import pytest

from accelsched.formulations.atomic_jobshop import JobShop, JobShopParams, jobshop_method, rounds_from_starts
from accelsched.formulations.atomic_rounds import (
    RoundsCpSat,
    RoundsParams,
    compute_latency,
    greedy_rounds,
    rounds_method,
)
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import (
    PROBLEM,
    AtomDag,
    AtomicInstance,
    RoundSchedule,
    check,
    lower_bounds,
)
from accelsched.registry import get_method, make_instance, run_method
from accelsched.solvers import SolveOptions, Status, solve_cpsat

ROUNDS = get_method("atomic", "cpsat-rounds")
JOBSHOP = get_method("atomic", "cpsat-jobshop")
OPTIONS = SolveOptions(time_limit_s=60, threads=1, seed=0)
SEEDS = range(120)


def random_instance(seed: int) -> AtomicInstance:
    """5-10 atoms, 2-4 engines, edge density 0.15-0.45 by seed."""
    dag = AtomDag.random(5 + seed % 6, seed, edge_probability=0.15 + 0.1 * (seed % 4))
    return AtomicInstance(dag, 2 + seed % 3)


def brute_force(instance: AtomicInstance) -> int:
    """Least round latency by dynamic programming over down-sets (sets of atoms closed under predecessors).

    From the set ``S`` already run, the next round is any non-empty set of at most ``N`` atoms whose producers are
    all in ``S``; ``f(S) = min over rounds T of max(t_T) + f(S | T)``. Independent of the CP-SAT model.
    """
    dag, n = instance.dag, len(instance.dag.atoms)
    need = [sum(1 << p for p in dag.predecessors[a]) for a in range(n)]
    full = (1 << n) - 1

    @functools.cache
    def best(done: int) -> int:
        if done == full:
            return 0
        ready = [a for a in range(n) if not done >> a & 1 and need[a] & done == need[a]]
        value = None
        for size in range(1, min(instance.n_engines, len(ready)) + 1):
            for chosen in itertools.combinations(ready, size):
                mask = sum(1 << a for a in chosen)
                total = max(dag.durations[a] for a in chosen) + best(done | mask)
                value = total if value is None else min(value, total)
        assert value is not None
        return value

    return best(0)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_round_optimum_equals_brute_force_and_bounds_the_job_shop(seed: int) -> None:
    instance = random_instance(seed)
    rounds = run_method(PROBLEM, instance, ROUNDS, OPTIONS)  # checked, and its objective equals the evaluator's
    assert rounds.status is Status.OPTIMAL and rounds.bound == rounds.objective
    assert rounds.cost is not None and rounds.objective == rounds.cost.latency_cycles
    assert rounds.objective == brute_force(instance)
    jobshop = run_method(PROBLEM, instance, JOBSHOP, OPTIONS)
    assert jobshop.bound is not None and jobshop.objective is not None
    assert jobshop.bound <= rounds.objective <= jobshop.objective  # the job shop's makespan never above the rounds
    path, work, rounds_bound = lower_bounds(instance)
    assert max(path, work) <= jobshop.bound and rounds_bound <= rounds.objective


def test_greedy_rounds_are_valid_and_never_below_the_optimum() -> None:
    for seed in range(20):
        instance = random_instance(seed)
        schedule = greedy_rounds(instance)
        check(instance, schedule)
        assert PROBLEM.evaluate(instance, schedule).latency_cycles >= brute_force(instance)


def test_the_model_objective_is_the_evaluators_latency() -> None:
    instance = random_instance(7)
    model = RoundsCpSat(instance.dag, instance.n_engines)
    answer = solve_cpsat(model.model, OPTIONS, model.hints(greedy_rounds(instance).rounds))
    schedule = RoundSchedule(tuple(model.decode(answer)))
    check(instance, schedule)
    assert answer.objective == PROBLEM.evaluate(instance, schedule).latency_cycles


def test_rounds_read_off_a_job_shop_schedule_are_valid() -> None:
    for seed in range(10):
        instance = random_instance(seed)
        shop = JobShop(instance)
        answer = solve_cpsat(shop.model, OPTIONS)
        check(instance, rounds_from_starts(instance, [answer.value(s) for s in shop.starts]))


def test_a_bad_warm_start_is_ignored_with_a_note_and_other_objectives_are_refused() -> None:
    instance = random_instance(3)
    broken = RoundSchedule(((0,),))
    result = run_method(PROBLEM, instance, ROUNDS, OPTIONS, warm_start=broken)
    assert result.status is Status.OPTIMAL and "the warm start is ignored: rule 1" in result.stats.native_status
    energy = AtomicInstance(instance.dag, instance.n_engines, objective="energy")
    for method in (ROUNDS, JOBSHOP):
        refused = run_method(PROBLEM, energy, method, OPTIONS)
        assert refused.status is Status.ERROR and "minimizes latency" in refused.stats.native_status


def test_a_solution_stopped_before_its_proof_reports_the_evaluators_latency() -> None:
    """Round durations are tight in the model, so a stop short of the proof also reports the decoded schedule's
    latency. The search stops at a relative gap of one half (deterministic on one thread; the time limit is a hang
    guard only)."""
    instance = AtomicInstance(AtomDag.random(30, 5, edge_probability=0.1), 3)
    result = run_method(PROBLEM, instance, ROUNDS, SolveOptions(time_limit_s=120, threads=1, rel_gap=0.5))
    assert result.status in (Status.FEASIBLE, Status.OPTIMAL) and result.cost is not None
    assert result.objective == result.cost.latency_cycles


KC = load_accelerator("atomic-8x8-kc")


@pytest.mark.parametrize(("workload", "engines"), [("random:2:0", 3), ("random:2:1", 2), ("random:3:0", 3),
                                                   ("random:3:1", 2), ("random:2:3", 3)])  # fmt: skip
def test_on_a_mesh_the_job_shop_with_transfer_delays_bounds_every_schedule_of_its_atoms(
    workload: str, engines: int
) -> None:
    """Real atoms (10-24) on 2-3 engines: the engine-choice job shop (transfer delays between engines) of a DAG
    stays below the evaluator's latency of every schedule of that DAG, transfers and HBM included: the round
    methods' on the instance's atoms, and each baseline's on the atoms of its own sizes (a job shop stopped short of
    its proof still reports a valid bound)."""
    instance = make_instance(PROBLEM, load_workload(workload), KC, {"engines": str(engines), "atoms": "exact"})
    # the CP-SAT searches stop at a relative gap (deterministic on one thread; the job shop's bound hardly moves
    # beyond its first one on these instances); the time limit is a hang guard
    options = SolveOptions(time_limit_s=120, threads=1, seed=0, rel_gap=0.9)
    shop = run_method(PROBLEM, instance, JOBSHOP, options)
    assert "engines and transfer delays" in shop.stats.native_status and shop.bound is not None
    for name in ("cpsat-rounds", "dp", "ls", "cnn-p", "il-pipe"):
        result = run_method(PROBLEM, instance, get_method("atomic", name), options)
        assert result.solution is not None and result.objective is not None
        bound: float | None = shop.bound
        if result.solution.sizes is not None:
            own = AtomicInstance(instance.dag_for(result.solution), instance.n_engines, instance.accelerator)
            bound = run_method(PROBLEM, own, JOBSHOP, options).bound
        assert bound is not None and bound <= result.objective + 1e-6, name


def test_the_rolling_horizon_improves_a_large_schedule_window_by_window() -> None:
    """Above the whole-model size, the windows keep every rule, never lengthen the start and report the global
    bound."""
    small = rounds_method(RoundsParams(max_atoms=10, window_atoms=9))
    instance = AtomicInstance(AtomDag.random(40, 11, edge_probability=0.08), 3)
    start = greedy_rounds(instance)
    result = run_method(PROBLEM, instance, small, SolveOptions(time_limit_s=20, threads=1), warm_start=start)
    assert result.status is Status.FEASIBLE and result.solution is not None and result.objective is not None
    assert "rolling horizon" in result.stats.native_status and "hinted by the warm start" in result.stats.native_status
    assert result.objective <= compute_latency(instance.dag, start.rounds)
    assert result.bound == max(lower_bounds(instance))


def test_the_parameters_are_validated_and_steer_the_models() -> None:
    for build, field in ((lambda: RoundsParams(max_atoms=0), "max_atoms"), (lambda: RoundsParams(window_atoms=0),
                         "window_atoms"), (lambda: JobShopParams(alternatives=-1), "alternatives")):  # fmt: skip
        with pytest.raises(ValueError, match=f"field {field}"):
            build()
    instance = make_instance(PROBLEM, load_workload("random:2:0"), KC, {"engines": "2"})
    shop = run_method(PROBLEM, instance, jobshop_method(JobShopParams(alternatives=0)), OPTIONS)
    assert "(cumulative)" in shop.stats.native_status
    declined = run_method(PROBLEM, instance, jobshop_method(JobShopParams(max_atoms=1)), OPTIONS)
    assert declined.status is Status.TIME_LIMIT_NO_SOLUTION
    assert "too large for the job shop" in declined.stats.native_status
