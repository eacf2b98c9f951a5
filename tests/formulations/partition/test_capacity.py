"""The capacity decomposition of co-exploration: its optimum is the enumeration's, its bounds are valid,
and the two facts it rests on (the metric's optimum never rises with the capacities; a cutoff proves
either the optimum or that nothing lies below it) hold on the cost model.

Most instances here run with a column budget far below their column count, so the enumeration of the
co-exploration instance stops early and the decomposition has to prove what the models claim. The
others lower ``decompose_columns`` (:class:`~accelsched.formulations.partition.proof_params.ProofParams`)
so that a complete enumeration is decomposed too, each pair's table filtered from it."""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import pytest

from accelsched.errors import InputError
from accelsched.formulations.partition import capacity as partition_capacity
from accelsched.formulations.partition import pair_solver as partition_pair_solver
from accelsched.formulations.partition.bound import forced_traffic_bound
from accelsched.formulations.partition.capacity import CapacityDecomposition, decompose
from accelsched.formulations.partition.capacity_points import CapacityPoint, capacity_points, check_share
from accelsched.formulations.partition.colgen import ColumnGeneration
from accelsched.formulations.partition.common import VariantTable
from accelsched.formulations.partition.driver import with_proof_params
from accelsched.formulations.partition.milp_model import PartitionMilp
from accelsched.formulations.partition.pair_solver import PairSolver, PairTask, master_value, start_worker
from accelsched.formulations.partition.proof import prepare
from accelsched.formulations.partition.proof_params import ProofParams, ProofSettings
from accelsched.problems.partition import PROBLEM, Metric, PartitionInstance
from accelsched.problems.partition_columns import ColumnSet, enumerate_columns
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions, Status, solve
from tests.formulations.partition.helpers import BUDGET, EXACT, generated, run, same, singletons
from tests.problems.partition_oracle import brute_force, small_instance

CO_CONFIGS: list[dict[str, Any]] = [
    {"act_kb": (2, 4, 8), "weight_kb": (1, 2)},
    {"shared": True, "act_kb": (3, 5, 8), "metric": Metric.ENERGY, "alpha": 0.01},
    {"act_kb": (3, 6), "weight_kb": (1, 2, 4), "metric": Metric.ENERGY},
    {"shared": True, "act_kb": (2, 4, 6, 8)},
    {"act_kb": (4, 8), "weight_kb": (1, 2), "alpha": 0.0},
    {"shared": True, "act_kb": (3, 6, 12), "alpha": 1.0},
]
"""Co-exploration configurations: separate and shared buffers, both metrics, alpha from 0 (capacity
alone) to 1 (capacity and traffic alike)."""


def instance_of(seed: int) -> PartitionInstance:
    return small_instance(6 + seed % 6, seed, **CO_CONFIGS[seed % len(CO_CONFIGS)])


def fixed(instance: PartitionInstance, point: tuple[int, int]) -> PartitionInstance:
    """The instance under one pair of capacities."""
    act, weight = point
    weights = () if instance.shared else (weight,)
    return dataclasses.replace(instance, act_candidates_bytes=(act,), weight_candidates_bytes=weights)


@pytest.mark.parametrize("seed", range(36))
def test_the_decomposition_reaches_the_enumeration_optimum(seed: int) -> None:
    instance = instance_of(seed)
    reference = run("enumerate", instance)
    assert reference.status is Status.OPTIMAL and reference.objective is not None
    for method in ["milp-highs"] + (["cpsat"] if seed % 3 == 0 else []):
        result = generated(method, instance)  # checked, objective equal to the evaluator's
        assert result.status is Status.OPTIMAL, (method, result.stats.native_status)
        assert same(result.objective, reference.objective), (method, result.objective, reference.objective)
        assert "capacity decomposition" in result.stats.native_status


@pytest.mark.parametrize("seed", range(6))
def test_the_decomposition_agrees_with_brute_force(seed: int) -> None:
    instance = small_instance(5 + seed % 3, 100 + seed, **CO_CONFIGS[seed % len(CO_CONFIGS)])
    best, _ = brute_force(instance)
    result = generated("milp-highs", instance)
    assert result.status is Status.OPTIMAL and same(result.objective, best)
    assert result.bound is not None and result.bound <= best + 1e-6 * abs(best)


@pytest.mark.parametrize("seed", range(8))
def test_the_least_metric_never_rises_with_the_capacities(seed: int) -> None:
    """The monotone bounds' premise, on the cost model: a pair within another has an optimum at least
    as large (each fixed-capacity optimum by enumeration)."""
    instance = instance_of(seed)
    optimum = {}
    for point in instance.capacity_pairs():
        single = fixed(instance, point)
        if single.infeasibility is None:
            result = run("enumerate", single)
            assert result.objective is not None
            optimum[point] = result.objective
    assert len(optimum) >= 2
    for p, low in optimum.items():
        for q, high in optimum.items():
            if p[0] <= q[0] and p[1] <= q[1]:
                assert low >= high - 1e-9 * abs(high), (p, q, low, high)


def test_a_bound_proven_at_a_pair_holds_at_the_pairs_within_it() -> None:
    instance = instance_of(0)
    decomposition = CapacityDecomposition(
        instance, None, SolveOptions(), enumerate_columns(instance, BUDGET), ProofSettings(BUDGET, 100)
    )
    points = decomposition.points
    top = max(points, key=lambda p: (p.act_bytes, p.weight_bytes))
    before = {id(p): p.lower for p in points}
    decomposition._raise(top, 1e12)
    for p in points:
        assert p.lower == (1e12 if p.within(top) else before[id(p)])
    middle = CapacityPoint(0, 0, 4096, 1024, 0.0)
    assert middle.within(top) and not top.within(middle)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("offset", [-0.2, 0.0, 0.2])
def test_a_cutoff_proves_the_optimum_or_that_none_lies_below_it(seed: int, offset: float) -> None:
    """Column generation with a cutoff ``c`` completes its proof, and the models over its table find
    ``E*`` when ``E* < c`` (``offset``: where ``c`` lies, relative to ``E*``; below or at ``E*``, only
    the completion is checked: no partition lies below ``c`` then, whatever the table)."""
    instance = instance_of(seed)
    single = fixed(instance, instance.capacity_pairs()[-1])
    best = run("enumerate", single).objective
    assert best is not None
    cutoff = best * (1 + offset) if offset else best
    if single.metric is Metric.EMA:
        cutoff = math.ceil(cutoff)
    prepared = prepare(single, SolveOptions(), None, 0.0, ProofSettings(BUDGET), cutoff=cutoff)
    assert prepared.table.complete
    milp = PartitionMilp(prepared.table)
    answer = solve(milp.model, "highs", prepared.solver_options(SolveOptions()))
    assert answer.status is Status.OPTIMAL and answer.values is not None
    found = prepared.table.objective(milp.decode(answer.values))
    assert found >= best - 1e-9 * best
    if best < cutoff * (1 - 1e-6):
        assert same(found, best), (found, best, cutoff)


@pytest.mark.parametrize("seed", range(6))  # one per configuration
def test_a_pair_started_from_the_inner_point_of_a_pair_containing_it_stays_exact(seed: int) -> None:
    """The root inner point of the largest pair is one of every pair (their columns are some of its):
    started from it, each pair's column generation keeps a bound at least its bound and its table
    still holds the enumeration optimum."""
    instance = instance_of(seed)
    pairs = instance.capacity_pairs()
    top = prepare(fixed(instance, pairs[-1]), SolveOptions(), None, 0.0, ProofSettings(BUDGET))
    assert top.inner is not None
    for pair in pairs[:-1]:
        single = fixed(instance, pair)
        best = run("enumerate", single).objective
        if best is None:  # a layer fits no mode under the pair
            continue
        prepared = prepare(single, SolveOptions(), None, 0.0, ProofSettings(BUDGET), inner=top.inner)
        assert prepared.table.complete and prepared.inner is not None and prepared.inner.bound >= top.inner.bound
        assert prepared.table.column_set.bound is not None
        assert prepared.table.column_set.bound <= best * (1 + 1e-9), (seed, pair)
        milp = PartitionMilp(prepared.table)
        answer = solve(milp.model, "highs", prepared.solver_options(SolveOptions()))
        assert answer.status is Status.OPTIMAL and answer.values is not None
        assert same(prepared.table.objective(milp.decode(answer.values)), best), (seed, pair)


def test_a_bound_past_the_cutoff_ends_the_work_without_a_listing() -> None:
    """A pair's column generation stops at the round whose bound passes its cutoff (nothing lies
    below it: complete), before a listing or convergence; a cutoff the forced traffic already passes
    needs no round."""
    passed = 0
    for seed in range(12):
        single = fixed(instance_of(seed), instance_of(seed).capacity_pairs()[-1])
        best = run("enumerate", single).objective
        assert best is not None
        table = VariantTable(single, enumerate_columns(single, BUDGET))
        start = ColumnGeneration(table, None).bound
        assert start is not None
        below = ColumnGeneration(table, None, cutoff=start * 0.999)
        outcome = below.run(None)
        assert outcome.complete and outcome.rounds == 0 and below.settled(), seed
        assert below.stats.listings == 0, "listed below a gap although the bound had passed the cutoff"
        cutoff = start + 0.5 * (best - start)  # above the forced traffic, below the LP bound here
        if cutoff <= start * (1 + 1e-6):
            continue
        generation = ColumnGeneration(VariantTable(single, enumerate_columns(single, BUDGET)), None, cutoff=cutoff)
        outcome = generation.run(None)
        assert outcome.complete and outcome.rounds > 0 and generation.settled(), seed
        assert generation.stats.listings == 0, "listed below a gap although the bound had passed the cutoff"
        assert outcome.bound is not None and outcome.bound > generation.prune_level()
        passed += 1
    assert passed >= 6, passed


REACH = (0.85, 0.9, 0.95, 0.99, 1.0)
"""Levels of a reach as fractions of the largest pair's optimum: the cutoffs pairs within it might have."""


def most_pairs_open() -> CapacityDecomposition:
    """The decomposition of a separate-buffer instance (2 x 3 pairs) from its optimum, its incumbent's
    objective raised by half: most pairs open, with finite cutoffs that differ."""
    instance = instance_of(2)
    reference = run("enumerate", instance)
    assert reference.solution is not None
    decomposition = CapacityDecomposition(
        instance, reference.solution, SolveOptions(), enumerate_columns(instance, BUDGET), ProofSettings(BUDGET, 100)
    )
    decomposition.upper *= 1.5
    return decomposition


def test_the_pair_with_the_most_open_pairs_within_goes_first_with_their_reach() -> None:
    """Each pair handed out has the most open pairs within it among those not running, and its task's
    reach is their cutoffs."""
    decomposition = most_pairs_open()
    opened = decomposition.open_points()
    busy: list[CapacityPoint] = []
    while (point := decomposition._next(busy)) is not None:
        free = [p for p in decomposition.open_points() if all(p is not other for other in busy)]
        within = [p for p in decomposition.open_points() if p.within(point)]
        assert all(len(within) >= sum(q.within(p) for q in decomposition.open_points()) for p in free)
        task = decomposition._task(point, None)
        assert task.reach == tuple(sorted(decomposition.cutoff(p) for p in within))
        assert max(task.reach) >= task.cutoff
        busy.append(point)
    assert len(busy) == len(opened) >= 4
    assert len(decomposition.open_within(busy[0])) > len(decomposition.open_within(busy[-1])) == 1


@pytest.mark.parametrize("seed", range(6))
def test_a_ceiling_is_at_least_the_lp_optimum_at_its_pair_and_at_every_pair_above_it(seed: int) -> None:
    """The LP value of a pair's master over some of its columns (:func:`master_value`) is at least the LP
    optimum over every column of the pair and of each pair containing it, whose columns include the
    pair's at no larger metric (module docstring, "Ceilings"); here over every other subgraph it has,
    which leaves it above its own optimum on some pairs (the test would notice a ceiling that is not)."""
    instance = instance_of(seed)
    points = capacity_points(instance)
    nothing = ColumnSet((), False, 0, 0)
    optimum = {}
    for point in points:
        pair = fixed(instance, (point.act_bytes, point.weight_bytes))
        columns = enumerate_columns(pair)
        assert columns.complete
        optimum[id(point)] = master_value(VariantTable(pair, columns))
    above = 0
    for point in points:
        pair = fixed(instance, (point.act_bytes, point.weight_bytes))
        some = [column.members for column in enumerate_columns(pair).columns[::2]]
        ceiling = master_value(VariantTable(pair, nothing, some))
        assert ceiling is not None
        for other in points:
            lp = optimum[id(other)]
            if point.within(other):
                assert lp is not None and lp <= ceiling + 1e-7 * max(1.0, abs(ceiling)), (seed, point, other)
        own = optimum[id(point)]
        assert own is not None
        above += ceiling > own + 1e-6 * max(1.0, abs(own))
    assert above >= 1, seed


def test_a_pair_left_open_records_its_ceiling_above_its_bound() -> None:
    """A pair's solve stopped by its round limit records the LP value of its master, which is at least
    its lower bound and its LP optimum over every column; a settled pair records none."""
    instance = instance_of(2)
    decomposition = CapacityDecomposition(
        instance, None, SolveOptions(), enumerate_columns(instance, BUDGET), ProofSettings(BUDGET, 1)
    )
    top = max(decomposition.points, key=lambda p: (p.act_bytes, p.weight_bytes))
    outcome = decomposition.solver.solve(PairTask(top.act_bytes, top.weight_bytes, math.inf, None, None))
    pair = decomposition.fixed(top)
    lp = master_value(VariantTable(pair, enumerate_columns(pair)))
    assert not outcome.settled and outcome.ceiling is not None and lp is not None
    assert outcome.lower <= lp * (1 + 1e-7) <= outcome.ceiling * (1 + 2e-7)
    settled = CapacityDecomposition(
        instance, None, SolveOptions(), enumerate_columns(instance, BUDGET), ProofSettings(BUDGET, 100)
    ).solver.solve(PairTask(top.act_bytes, top.weight_bytes, math.inf, None, None))
    assert settled.settled and settled.ceiling is None


def test_a_pair_whose_ceiling_is_below_the_cutoffs_within_it_goes_after_the_pairs_whose_roots_may_settle() -> None:
    """A ceiling at a pair (and so at every pair containing it) leaves it only the open pairs within it
    whose cutoffs lie below it to settle; below every cutoff, its root settles none, itself included
    (only its tree can), and a pair that does not contain it goes first."""
    decomposition = most_pairs_open()
    first = decomposition._next([])
    assert first is not None
    within = decomposition.open_within(first)
    cutoffs = sorted(decomposition.cutoff(p) for p in within)
    assert len(decomposition.settleable(first)) == len(within) >= 3 and cutoffs[0] < cutoffs[-1]
    key = (first.act_bytes, first.weight_bytes)
    decomposition.ceilings[key] = ceiling = (cutoffs[0] + cutoffs[-1]) / 2
    below = [p for p in within if decomposition.cutoff(p) < ceiling]
    assert [id(p) for p in decomposition.settleable(first)] == [id(p) for p in below] and 0 < len(below) < len(within)
    decomposition.ceilings[key] = cutoffs[0] / 2
    assert decomposition.settleable(first) == []
    state = next(s for s in decomposition.states() if (s.act_bytes, s.weight_bytes) == key)
    assert state.open and state.tree_only and state.within == 0 and state.ceiling == cutoffs[0] / 2
    following = decomposition._next([])
    assert following is not None and not first.within(following) and decomposition.settleable(following)
    assert all(not decomposition.settleable(p) for p in decomposition.open_points() if first.within(p))


def test_a_pair_solved_with_a_reach_records_its_root_bound_for_the_pairs_within_it() -> None:
    """A task with a cutoff at 0.8 of the largest pair's optimum and a reach up to it: the pair is
    settled, and its lower bound, which the decomposition raises at every pair within it, is the
    root's bound (:attr:`Prepared.proven_bound`, over every column), valid at each of them (all are
    within the largest: the metric's optimum never rises with the capacities) and above the cutoff
    on some instances (without the reach the root stops as soon as its bound passes the cutoff)."""
    higher = 0
    for seed in range(12):
        instance = instance_of(seed)
        decomposition = CapacityDecomposition(
            instance, None, SolveOptions(), enumerate_columns(instance, BUDGET), ProofSettings(BUDGET, 100)
        )
        top = max(decomposition.points, key=lambda p: (p.act_bytes, p.weight_bytes))
        best = run("enumerate", decomposition.fixed(top)).objective
        assert best is not None
        lowers = []
        for reach in ((), tuple(f * best for f in REACH)):
            task = PairTask(top.act_bytes, top.weight_bytes, 0.8 * best, None, None, reach=reach)
            outcome = decomposition.solver.solve(task)
            assert outcome.settled, (seed, reach)
            lowers.append(outcome.lower)
        for point in decomposition.points:
            optimum = run("enumerate", decomposition.fixed(point)).objective
            assert optimum is None or lowers[1] <= optimum * (1 + 1e-9), (seed, point, lowers, optimum)
        higher += lowers[1] > max(lowers[0], 0.8 * best) * (1 + 1e-6)
    assert higher >= 4, higher


@pytest.mark.parametrize("seed", range(6))
def test_a_round_limit_leaves_a_valid_bound_at_least_the_forced_traffic(seed: int) -> None:
    instance = instance_of(seed)
    best = run("enumerate", instance).objective
    result = generated("milp-highs", instance, rounds=1)
    assert best is not None and result.bound is not None and result.objective is not None
    assert result.bound <= best + 1e-6 * abs(best) <= result.objective + 2e-6 * abs(best)
    if instance.alpha > 0:
        assert result.status is Status.FEASIBLE and "below the incumbent still" in result.stats.native_status
        assert result.stats.native_status.count("column budget reached") == 1  # said once, on the bound
    else:  # the objective is the capacity alone: any partition under the least pair is optimal
        assert result.status is Status.OPTIMAL and same(result.objective, best)
    forced = forced_traffic_bound(VariantTable(instance, ColumnSet((), False, 0, 0)))
    assert forced is not None and result.bound >= forced.value - 1e-6 * abs(forced.value)


def test_a_good_incumbent_prunes_pairs_by_their_bounds() -> None:
    """Started from the optimum, the decomposition proves it without solving every pair."""
    solved = pairs = 0
    for seed in range(12):
        instance = instance_of(seed)
        reference = run("enumerate", instance)
        assert reference.solution is not None and reference.objective is not None
        columns = enumerate_columns(instance, BUDGET)
        outcome = CapacityDecomposition(
            instance, reference.solution, SolveOptions(), columns, ProofSettings(BUDGET, 100)
        ).run(None)
        assert outcome.complete and outcome.unsettled == 0 and same(outcome.bound, reference.objective)
        solved, pairs = solved + outcome.solved, pairs + outcome.pairs
    assert solved < pairs / 2, (solved, pairs)


def test_the_pairs_leave_the_final_share_of_the_limit_to_the_models() -> None:
    """The pairs (as the fixed-capacity proof) run until :meth:`ProofParams.proof_deadline`, all but the
    final share of the limit (the deadline the decomposition ran to, :attr:`Prepared.proof_deadline`);
    the models' deadline is the whole limit."""
    start = time.perf_counter()
    params = ProofParams()
    assert params.proof_deadline(start, 400.0) == start + (1 - params.final_share) * 400.0
    assert ProofParams(final_share=0.25).proof_deadline(start, 400.0) == start + 300.0
    assert params.proof_deadline(start, None) is None
    prepared = prepare(instance_of(0), SolveOptions(time_limit_s=400.0), None, start, ProofSettings(BUDGET))
    assert prepared.table.complete and prepared.deadline == start + 400.0
    assert prepared.proof_deadline == start + (1 - params.final_share) * 400.0
    quarter = ProofSettings(BUDGET, params=ProofParams(final_share=0.25))
    prepared = prepare(instance_of(0), SolveOptions(time_limit_s=400.0), None, start, quarter)
    assert prepared.proof_deadline == start + 300.0 and prepared.deadline == start + 400.0
    assert prepare(instance_of(0), SolveOptions(), None, start, ProofSettings(BUDGET)).proof_deadline is None


def test_the_cutoff_caps_the_incumbents_objective() -> None:
    instance = instance_of(1)
    single = fixed(instance, instance.capacity_pairs()[-1])
    table = VariantTable(single, enumerate_columns(single, BUDGET))
    incumbent = table.assignment(singletons(single))
    value = table.objective(incumbent)
    assert ColumnGeneration(table, incumbent).upper == value
    capped = ColumnGeneration(table, incumbent, cutoff=value / 2)
    assert capped.upper == value / 2 and capped.prune_level() <= value / 2


def decomposed(name: str, instance: PartitionInstance) -> Any:
    """Run an exact method through the registry, decomposing every co-exploration table, however few
    its columns (``decompose_columns`` 0)."""
    method = with_proof_params(EXACT[name], ProofParams(decompose_columns=0))
    return run_method(PROBLEM, instance, method, SolveOptions())


@pytest.mark.parametrize("seed", range(24))
def test_a_complete_table_solved_pair_by_pair_reaches_the_enumeration_optimum(seed: int) -> None:
    instance = instance_of(seed)
    reference = run("enumerate", instance)
    assert reference.status is Status.OPTIMAL and reference.objective is not None
    result = decomposed("milp-highs", instance)  # the full column budget: the enumeration completes
    assert result.status is Status.OPTIMAL, result.stats.native_status
    assert same(result.objective, reference.objective), (result.objective, reference.objective)
    assert "solved pair by pair" in result.stats.native_status


@pytest.mark.parametrize("seed", range(4))
def test_a_complete_table_solved_pair_by_pair_agrees_with_brute_force(seed: int) -> None:
    instance = small_instance(5 + seed % 3, 200 + seed, **CO_CONFIGS[(seed + 1) % len(CO_CONFIGS)])
    best, _ = brute_force(instance)
    result = decomposed("milp-highs", instance)
    assert result.status is Status.OPTIMAL and same(result.objective, best)
    assert "solved pair by pair" in result.stats.native_status


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("method", "backend"), [("milp-cbc", "pulp-cbc"), ("milp-pyomo", "pyomo-highs")])
def test_the_pairs_are_solved_by_the_methods_own_backend(
    seed: int, method: str, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    solve_pair = partition_pair_solver.solve

    def spy(model: Any, backend: str = "highs", *args: Any) -> Any:
        seen.append(backend)
        return solve_pair(model, backend, *args)

    monkeypatch.setattr(partition_pair_solver, "solve", spy)
    instance = instance_of(seed)
    reference = run("enumerate", instance)
    assert reference.objective is not None
    result = decomposed(method, instance)
    assert result.status is Status.OPTIMAL and same(result.objective, reference.objective)
    assert seen and set(seen) == {backend}


def test_cpsat_solves_a_complete_table_whole() -> None:
    """CP-SAT proves the co-exploration model over a complete table itself, by default (where the MILPs
    decompose it above ``decompose_columns``)."""
    instance = instance_of(1)
    result = run("cpsat", instance)
    assert result.status is Status.OPTIMAL and "pair by pair" not in result.stats.native_status


def test_a_stopped_decomposition_of_a_complete_table_returns_its_incumbent_and_bound() -> None:
    """Out of time before any pair, the models get a small incomplete table: the incumbent's columns
    and the single layers, with the least pair floor as the bound (not the whole table to solve)."""
    instance = instance_of(2)
    reference = run("enumerate", instance)
    assert reference.objective is not None
    columns = enumerate_columns(instance)
    assert columns.complete
    table = VariantTable(instance, columns)
    warm = singletons(instance)
    now = time.perf_counter()
    options = SolveOptions(time_limit_s=1.0)
    prepared = decompose(instance, options, table, warm, [], now - 10.0, columns, ProofSettings(BUDGET, 100))
    assert not prepared.table.complete and prepared.warm is not None
    assert prepared.table.solution(prepared.warm).subgraphs == warm.subgraphs
    assert len(prepared.table.columns) < len(columns)
    bound = prepared.table.column_set.bound
    forced = forced_traffic_bound(VariantTable(instance, ColumnSet((), False, 0, 0)))
    assert bound is not None and forced is not None
    assert same(bound, min(forced.value, table.objective(table.assignment(warm))))
    assert bound <= reference.objective + 1e-6 * abs(reference.objective)
    assert "stopped at the time limit" in prepared.table.column_set.stopped
    assert "solved pair by pair" in prepared.notes[-2]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("budget", [BUDGET, 12, None])
def test_a_pair_starts_from_its_own_columns_of_fewer_layers_than_the_enumeration_listed(
    seed: int, budget: int | None
) -> None:
    """Filtered from the co-exploration enumeration (complete, or stopped at a budget), a pair's
    columns are its own enumeration's, all of them or all of fewer layers than ``listed_below``."""
    instance = instance_of(seed)
    columns = enumerate_columns(instance) if budget is None else enumerate_columns(instance, budget)
    assert columns.complete or budget is not None
    decomposition = CapacityDecomposition(instance, None, SolveOptions(), columns, ProofSettings(BUDGET, 100))
    for point in decomposition.points:
        single = decomposition.fixed(point)
        own = {column.members for column in enumerate_columns(single).columns}
        listed = decomposition.pair_columns(single)
        members = {column.members for column in listed.columns}
        assert members <= own and listed.complete is columns.complete
        assert listed.listed_below == columns.listed_below
        assert {m for m in own if len(m) < listed.listed_below or listed.complete} <= members


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pairs_solved_in_two_processes_reach_the_enumeration_optimum(seed: int) -> None:
    """With two threads two pairs are solved at once, in spawned processes, and the proof is the same."""
    instance = instance_of(seed)
    reference = run("enumerate", instance)
    assert reference.objective is not None
    columns = enumerate_columns(instance, BUDGET)
    outcome = CapacityDecomposition(instance, None, SolveOptions(threads=2), columns, ProofSettings(BUDGET, 100)).run(
        None
    )
    assert outcome.workers == 2 and outcome.solved >= 2, outcome
    assert outcome.complete and outcome.unsettled == 0 and same(outcome.bound, reference.objective)
    assert len(outcome.log) == outcome.solved
    result = generated("milp-highs", instance, threads=2)  # checked, objective equal to the evaluator's
    assert result.status is Status.OPTIMAL and same(result.objective, reference.objective)
    assert "(2 at a time)" in result.stats.native_status


@pytest.mark.parametrize("threads", [1, 2])
def test_a_run_given_a_share_of_the_pairs_solves_those_alone(threads: int) -> None:
    """Given every other pair (a share of a divided proof), a run solves none of the rest, one after
    another or two at once; they stay open unless the incumbent it finds settles them."""
    instance = instance_of(13)  # the share's incumbent leaves one of the others open
    columns = enumerate_columns(instance, BUDGET)
    points = capacity_points(instance)
    share = frozenset((p.act_bytes, p.weight_bytes) for p in points[::2])
    settings = ProofSettings(BUDGET, 100, pairs=share)
    decomposition = CapacityDecomposition(instance, None, SolveOptions(threads=threads), columns, settings)
    outcome = decomposition.run(None)
    solved = {tuple(int(kb) * 1024 for kb in line.split(" KB:")[0].split("/")) for line in outcome.log}
    assert len(solved) == outcome.solved >= 2 and solved <= share
    assert outcome.workers == threads
    assert not outcome.complete and outcome.unsettled >= 1  # the other share's pairs: left to another run
    assert {(p.act_bytes, p.weight_bytes) for p in decomposition.open_points()}.isdisjoint(share)


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ((1000 * 1024, 1024), "pair 1000/1 KB (1024000/1024 B) is not a pair of candidates of"),
        ((1000 * 1024, 1024), "the activation candidates are 2, 4, 8 KB and the weight candidates 1, 2 KB"),
        ((2048, 1024), "some layer does not fit its capacities, so no partition runs under it"),
    ],
)
def test_a_share_with_a_pair_that_is_not_one_says_which(pair: tuple[int, int], message: str) -> None:
    instance = instance_of(0)  # 2 KB activation buffers hold some layer of it in neither pair
    assert {(p.act_bytes, p.weight_bytes) for p in capacity_points(instance)} == {
        (act * 1024, weight * 1024) for act in (4, 8) for weight in (1, 2)
    }
    with pytest.raises(InputError, match=re.escape(message)):
        check_share(instance, {(4096, 1024), pair})
    settings = ProofSettings(BUDGET, 100, pairs=frozenset({pair}))
    with pytest.raises(InputError, match="--pairs"):
        CapacityDecomposition(instance, None, SolveOptions(), enumerate_columns(instance, BUDGET), settings)


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG, None])
def test_a_worker_logs_its_solves_to_the_shared_stderr_when_the_run_is_verbose(
    level: int | None, capfd: pytest.CaptureFixture[str]
) -> None:
    """A pair solved in a worker process logs its root and tree nodes as the parent does: the worker
    started with a level sends the package's records from that level up to stderr (with its pid), at
    DEBUG its exact pricing rounds too; started without, nothing."""
    instance = instance_of(1)
    solver = PairSolver(instance, SolveOptions(), enumerate_columns(instance, BUDGET), ProofSettings(BUDGET))
    branch = logging.getLogger("accelsched.formulations.partition.branch")
    colgen = logging.getLogger("accelsched.formulations.partition.colgen")
    with ProcessPoolExecutor(
        1, get_context("spawn"), start_worker, (solver, os.getpid(), level)
    ) as pool:
        pool.submit(branch.info, "node 0 []: pruned").result()
        pool.submit(colgen.debug, "exact pricing, round 1").result()
    err = capfd.readouterr().err
    nodes = [line for line in err.splitlines() if "partition.branch [pid " in line]
    rounds = [line for line in err.splitlines() if "partition.colgen [pid " in line]
    assert (nodes and nodes[0].endswith("]: node 0 []: pruned")) if level else not nodes, err
    assert bool(rounds) == (level == logging.DEBUG), err


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG, logging.WARNING])
def test_a_run_starts_its_workers_at_the_level_it_logs_its_pairs(
    level: int, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The workers of a run whose pairs are logged (INFO, as ``--verbose`` sets; DEBUG, as ``-vv``) are
    started at that level; otherwise quiet."""
    started: list[tuple[Any, ...]] = []

    class Recording(ProcessPoolExecutor):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(kwargs["initargs"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(partition_pair_solver, "ProcessPoolExecutor", Recording)
    caplog.set_level(level, logger="accelsched")
    instance = instance_of(1)
    columns = enumerate_columns(instance, BUDGET)
    CapacityDecomposition(instance, None, SolveOptions(threads=2), columns, ProofSettings(BUDGET, 100)).run(None)
    assert [args[2] for args in started] == [None if level == logging.WARNING else level]


def test_pairs_are_solved_here_when_no_process_can_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A main module without a file (a script piped to ``python -``) cannot be imported by spawned
    processes: the pairs are then solved one after another, with the same proof."""
    monkeypatch.setattr(sys.modules["__main__"], "__file__", "/nonexistent/piped-script.py", raising=False)
    instance = instance_of(2)
    reference = run("enumerate", instance).objective
    columns = enumerate_columns(instance, BUDGET)
    outcome = CapacityDecomposition(instance, None, SolveOptions(threads=2), columns, ProofSettings(BUDGET, 100)).run(
        None
    )
    assert outcome.workers == 1 and outcome.solved >= 1
    assert reference is not None and outcome.complete and same(outcome.bound, reference)


def test_each_pair_is_logged_as_it_starts_and_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=partition_capacity.LOGGER.name)
    instance = instance_of(1)
    columns = enumerate_columns(instance, BUDGET)
    outcome = CapacityDecomposition(instance, None, SolveOptions(), columns, ProofSettings(BUDGET, 100)).run(None)
    messages = [record.getMessage() for record in caplog.records]
    starts = [m for m in messages if " starts: floor " in m]
    ends = [m for m in messages if ": cutoff " in m and " open" in m]
    assert len(starts) == len(ends) == outcome.solved >= 1
    assert ends[-1].startswith(f"pair {outcome.log[-1]}; incumbent ")


def test_an_open_pair_is_logged_with_why_its_solve_stopped() -> None:
    """A round limit leaves pairs open; each says where its column generation stopped, without the
    enumeration's stop reason (said once, on the bound)."""
    for seed in (1, 3):
        instance = instance_of(seed)
        columns = enumerate_columns(instance, BUDGET)
        assert not columns.complete
        outcome = CapacityDecomposition(instance, None, SolveOptions(), columns, ProofSettings(BUDGET, 1)).run(None)
        opened = [line for line in outcome.log if ", open (" in line]
        assert opened and len(opened) == sum(", settled, " not in line for line in outcome.log), outcome.log
        for line in opened:
            assert "open (column generation stopped after 1 rounds)" in line and columns.stopped not in line, line
