"""Brute force of the multicore problem (method ``enumerate``): its schedule search against an independent
serial schedule generation over every activity list, the weight-memory residency, limits and statuses."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from accelsched.formulations.multicore_enumerate import (
    METHODS,
    EnumerateParams,
    Project,
    build_project,
    schedule_allocation,
    solve_enumerate,
)
from accelsched.heuristics.multicore_manual import manual_allocation
from accelsched.problems.multicore import PROBLEM, MulticoreInstance, list_schedule
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions, Status
from tests.formulations.multicore_helpers import tiny

ENUMERATE = METHODS[0]


def allocations(instance: MulticoreInstance) -> list[dict[str, int]]:
    names = instance.workload.names
    return [dict(zip(names, cores, strict=True))
            for cores in itertools.product(*(instance.allowed_cores[n] for n in names))]  # fmt: skip


def serial_optimum(pr: Project) -> int:
    """Least makespan over the serial schedules of every precedence-feasible activity list.

    Serial schedule generation: each activity in list order starts at the earliest cycle after its predecessors'
    lags at which its unary resource is idle for its whole duration (gaps may be filled). For a regular objective
    and renewable resources, the schedules of all lists contain an optimal (active) one. A depth-first search over
    lists, cut when the partial makespan reaches the best one; no weight-memory residency (callers make it slack).
    """
    n = len(pr.activities)
    preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for i, j, lag in pr.arcs:
        preds[j].append((i, lag))
    best = math.inf

    def place(busy: list[tuple[int, int]], ready: int, duration: int) -> int:
        t = ready
        for s, e in sorted(busy):
            if t + duration <= s:
                break
            t = max(t, e)
        return t

    def search(start: dict[int, int], busy: dict[str, list[tuple[int, int]]], makespan: int) -> None:
        nonlocal best
        if makespan >= best:
            return
        if len(start) == n:
            best = makespan
            return
        for j in range(n):
            if j in start or any(i not in start for i, _ in preds[j]):
                continue
            a = pr.activities[j]
            ready = max((start[i] + lag for i, lag in preds[j]), default=0)
            t = place(busy.get(a.resource, []), ready, a.duration)
            start[j] = t
            busy.setdefault(a.resource, []).append((t, t + a.duration))
            search(start, busy, max(makespan, t + a.duration))
            busy[a.resource].pop()
            del start[j]

    search({}, {}, 0)
    assert best < math.inf
    return int(best)


@pytest.mark.parametrize("seed", [s for s in range(40) if s % 4 and s % 2 == 0])
def test_the_schedule_search_matches_serial_generation_over_every_list(seed: int) -> None:
    instance = tiny(seed)  # layer granularity, ample weight memory: the residency never binds
    for allocation in allocations(instance)[:4]:
        pr = build_project(instance, allocation)
        makespan, solution = schedule_allocation(instance, allocation)
        assert makespan == serial_optimum(pr), allocation
        PROBLEM.check(instance, solution)
        assert PROBLEM.evaluate(instance, solution).latency_cycles == makespan


@pytest.mark.parametrize("seed", [1, 3, 7, 9, 13, 15])
def test_no_list_schedule_of_an_allocation_is_shorter_than_its_exact_schedule(seed: int) -> None:
    """Fused instances with ample weight memory: the list scheduler stays in the space (one load per layer)."""
    instance = tiny(seed)
    for allocation in allocations(instance)[:8]:
        makespan, _ = schedule_allocation(instance, allocation)
        for priority in type(instance.priority):
            listed = list_schedule(instance, allocation, priority)
            assert makespan <= PROBLEM.evaluate(instance, listed).latency_cycles


def test_weights_that_cannot_share_the_memory_are_never_resident_together() -> None:
    tight = [s for s in range(0, 80, 4) if any(
        sum(b for *_, b in items) > build_project(tiny(s), a).capacity[core]
        for a in allocations(tiny(s)) for core, items in build_project(tiny(s), a).residencies.items())]  # fmt: skip
    assert tight, "the helper's tight seeds must make the residency bind"
    instance = tiny(tight[0])
    for allocation in allocations(instance):
        pr = build_project(instance, allocation)
        _, solution = schedule_allocation(instance, allocation)
        PROBLEM.check(instance, solution)  # rule 5: resident loads never exceed the weight memory
        for core, items in pr.residencies.items():
            if sum(b for *_, b in items) > pr.capacity[core]:
                relaxed = dataclasses.replace(pr, residencies={})
                assert schedule_allocation(instance, allocation)[0] >= serial_optimum(relaxed)


def test_the_optimum_is_checked_and_reported_with_its_bound() -> None:
    for seed in (0, 2, 4):
        result = run_method(PROBLEM, tiny(seed), ENUMERATE, SolveOptions())
        assert result.status is Status.OPTIMAL and result.bound == result.objective
        assert result.stats.iterations == len(allocations(tiny(seed)))
        assert result.cost is not None and result.objective == pytest.approx(result.cost.metric(tiny(seed).objective))


def test_limits_and_unsupported_objectives_are_statuses() -> None:
    big = run_method(PROBLEM, tiny(5), ENUMERATE, SolveOptions())  # fused, more than 16 activities
    assert big.status is Status.TIME_LIMIT_NO_SOLUTION
    assert "activities for one allocation > 16" in big.stats.native_status
    many = solve_enumerate(tiny(0), SolveOptions(), params=EnumerateParams(max_allocations=2))
    assert many.status is Status.TIME_LIMIT_NO_SOLUTION and "allocations > 2" in many.stats.native_status
    memory = run_method(PROBLEM, dataclasses.replace(tiny(0), objective="memory"), ENUMERATE, SolveOptions())
    assert memory.status is Status.ERROR and "not supported by enumerate" in memory.stats.native_status
    # A fused EDP instance needs far more than 2000 nodes to prove: the node limit gives the best schedule so far.
    spent = solve_enumerate(tiny(5), SolveOptions(), params=EnumerateParams(max_activities=30, max_nodes=2000))
    assert spent.status in (Status.TIME_LIMIT_NO_SOLUTION, Status.FEASIBLE) and spent.bound is None
    if spent.solution is not None:
        PROBLEM.check(tiny(5), spent.solution)
    with pytest.raises(ValueError, match="field max_nodes must be an integer >= 1, got 0"):
        EnumerateParams(max_nodes=0)


def test_the_manual_allocation_is_one_of_the_enumerated_ones() -> None:
    instance = tiny(6)
    assert manual_allocation(instance) in allocations(instance)
