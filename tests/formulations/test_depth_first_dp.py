"""The exact stack DP against brute force over every partition and strategy, and against the rules."""

from __future__ import annotations

import itertools
import math

import pytest

from accelsched.errors import InfeasibleSolution
from accelsched.formulations.depth_first_dp import solve_stack_dp
from accelsched.hardware import load_accelerator
from accelsched.models.random_dag import random_workload
from accelsched.models.workload import Workload
from accelsched.problems.depth_first import (
    DepthFirstInstance,
    DepthFirstSolution,
    OverlapMode,
    Stack,
    StrategyGrid,
    check,
    evaluate_solution,
    geometric_sizes,
)
from accelsched.registry import get_problem, methods, run_method
from accelsched.solvers import SolveOptions, Status

GRID = StrategyGrid(sizes_per_axis=2, modes=(OverlapMode.FULLY_RECOMPUTE, OverlapMode.FULLY_CACHED), extra_tiles=())


def small_workloads(count: int) -> list[Workload]:
    """Seeded random DAGs of 4-5 layers with one output (branches, strides, pooling, adds)."""
    out: list[Workload] = []
    seed = 0
    while len(out) < count:
        workload = random_workload(4 + seed % 2, seed, channels=(4, 8), height=12, width=12)
        seed += 1
        if len(workload.sinks) == 1:
            out.append(workload)
    return out


def brute_force(instance: DepthFirstInstance, grid: StrategyGrid) -> float:
    """Every partition the checker accepts x every strategy per stack, each whole solution evaluated."""
    order = instance.order
    n = len(order)
    best = math.inf
    for k in range(n):
        for chosen in itertools.combinations(range(n - 1), k):
            ends = [*chosen, n - 1]
            starts = [0, *(e + 1 for e in chosen)]
            stacks = [order[s : e + 1] for s, e in zip(starts, ends, strict=True)]
            try:
                check(instance, DepthFirstSolution(tuple(Stack(s, grid.strategies(1, 1)[0]) for s in stacks)))
            except InfeasibleSolution:
                continue
            options = [grid.strategies(instance.workload[s[-1]].OX, instance.workload[s[-1]].OY) for s in stacks]
            for strategies in itertools.product(*options):
                solution = DepthFirstSolution(tuple(Stack(s, t) for s, t in zip(stacks, strategies, strict=True)))
                check(instance, solution)
                best = min(best, instance.objective(evaluate_solution(instance, solution).report))
    return best


@pytest.mark.parametrize("metric", ["energy", "latency", "edp"])
def test_dp_matches_brute_force_on_random_small_networks(metric: str) -> None:
    acc = load_accelerator("defines-meta-proto-df")
    for workload in small_workloads(5):
        instance = DepthFirstInstance(workload, acc, metric)
        result = solve_stack_dp(instance, SolveOptions(), GRID)
        assert result.status is Status.OPTIMAL
        assert result.objective == pytest.approx(brute_force(instance, GRID), rel=1e-12)


def test_dp_is_never_worse_than_the_rules_and_baselines() -> None:
    problem = get_problem("depth-first")
    table = methods("depth-first")
    acc = load_accelerator("defines-edge-tpu-df")
    for workload in small_workloads(2):
        for metric in ("energy", "edp"):
            instance = DepthFirstInstance(workload, acc, metric)
            results = {name: run_method(problem, instance, m, SolveOptions()) for name, m in table.items()}
            best = results["dp"].objective
            assert best is not None
            assert results["dp"].status is Status.OPTIMAL
            for name, result in results.items():
                assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
                assert result.objective is not None and best <= result.objective * (1 + 1e-12), name


def test_dp_reports_a_time_limit_as_a_status() -> None:
    instance = DepthFirstInstance(small_workloads(1)[0], load_accelerator("defines-meta-proto-df"))
    result = solve_stack_dp(instance, SolveOptions(time_limit_s=1e-9))
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION
    assert result.solution is None


def test_geometric_sizes_span_the_output() -> None:
    assert geometric_sizes(960, 6) == (960, 243, 62, 16, 4, 1)
    assert geometric_sizes(1, 6) == (1,)
    assert geometric_sizes(3, 6) == (3, 2, 1)
    grid = StrategyGrid()
    strategies = grid.strategies(960, 540)
    assert len(strategies) == len(set(strategies))
    assert any(s.tile_x == 4 and s.tile_y == 72 for s in strategies)
    whole = [s for s in strategies if (s.tile_x, s.tile_y) == (960, 540)]
    assert len(whole) == 1
