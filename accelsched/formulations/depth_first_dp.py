"""Exact best combination of depth-first stacks and strategies (DeFiNES), by dynamic programming.

The space
---------
A solution cuts the topological order into stacks, each a run of consecutive
layers of which only the last feeds later stacks (rule 2 of
:mod:`accelsched.problems.depth_first`), and gives each stack a strategy from its
grid (:class:`StrategyGrid`: tile sizes per axis x the
three overlap modes). Stacks run one after the other, and the evaluator prices a
stack from the stack alone (its input comes from DRAM and its output goes there),
so energy and latency are sums over stacks.

The program
-----------
Shortest path over the positions: ``best[b] = min over valid starts a <= b of
best[a - 1] + c(a..b)``, with ``c`` the best strategy of the stack, found by
pricing its whole grid; the valid starts of ``b`` are a range ending at ``b``.
For energy or latency this is exact by additivity. For the energy-delay product,
which is not a sum, every position keeps the Pareto front of its (energy, latency)
pairs and the front of the last position is scanned for the
smallest product: also exact, since a dominated prefix can only lead to a
dominated whole.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from accelsched.hardware.cost.fused_stack import StackCost
from accelsched.problems.base import MethodSpec
from accelsched.problems.depth_first import (
    PROBLEM,
    DepthFirstInstance,
    DepthFirstSolution,
    Stack,
    Strategy,
    StrategyGrid,
    best_strategy,
    stack_cost,
)
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "StackDP", "solve_stack_dp"]


@dataclass(frozen=True)
class _Label:
    """A way to reach a cut position: energy, latency, and the stacks so far."""

    energy_pj: float
    latency_cycles: float
    stacks: tuple[Stack, ...]


def _pareto(labels: list[_Label]) -> list[_Label]:
    """The labels no other label beats in both energy and latency."""
    labels.sort(key=lambda lab: (lab.energy_pj, lab.latency_cycles))
    front: list[_Label] = []
    best_latency = math.inf
    for label in labels:
        if label.latency_cycles < best_latency:
            front.append(label)
            best_latency = label.latency_cycles
    return front


class StackDP:
    """The shortest-path program of the module docstring on one instance."""

    def __init__(self, instance: DepthFirstInstance, grid: StrategyGrid, deadline: float | None) -> None:
        self.instance = instance
        self.grid = grid
        self.deadline = deadline
        self.stacks_priced = 0
        self.order = instance.order

    def _stack_options(self, start: int, end: int) -> list[tuple[Strategy, StackCost]]:
        """Strategies worth keeping for the stack ``order[start..end]``: the best one, or the Pareto set for EDP."""
        layers = self.order[start : end + 1]
        self.stacks_priced += 1
        if self.instance.metric != "edp":
            return [best_strategy(self.instance, layers, self.grid)]
        last = self.instance.workload[layers[-1]]
        priced = [(s, stack_cost(self.instance, layers, s)) for s in self.grid.strategies(last.OX, last.OY)]
        labels = [_Label(c.energy_pj, c.latency_cycles, (Stack(layers, s),)) for s, c in priced]
        keep = {lab.stacks[0].strategy for lab in _pareto(labels)}
        return [(s, c) for s, c in priced if s in keep]

    def run(self) -> DepthFirstSolution | None:
        """The best solution, or None when the deadline passed."""
        labels: dict[int, list[_Label]] = {-1: [_Label(0.0, 0.0, ())]}
        for end in range(len(self.order)):
            candidates: list[_Label] = []
            for prev in range(self.instance.first_start[end] - 1, end):
                if self.deadline is not None and time.perf_counter() > self.deadline:
                    return None
                for strategy, cost in self._stack_options(prev + 1, end):
                    stack = Stack(self.order[prev + 1 : end + 1], strategy)
                    for label in labels[prev]:
                        candidates.append(
                            _Label(
                                label.energy_pj + cost.energy_pj,
                                label.latency_cycles + cost.latency_cycles,
                                (*label.stacks, stack),
                            )
                        )
            labels[end] = self._keep(candidates)
        final = labels[len(self.order) - 1]
        best = min(final, key=self._value)
        return DepthFirstSolution(best.stacks)

    def _value(self, label: _Label) -> float:
        return self.instance.metric_of(label.energy_pj, label.latency_cycles)

    def _keep(self, candidates: list[_Label]) -> list[_Label]:
        if self.instance.metric == "edp":
            return _pareto(candidates)
        return [min(candidates, key=self._value)]


def solve_stack_dp(
    instance: DepthFirstInstance, options: SolveOptions, grid: StrategyGrid | None = None
) -> Result[DepthFirstSolution]:
    """The exact best combination over the grid (module docstring); TIME_LIMIT_NO_SOLUTION when stopped."""
    deadline = None if options.time_limit_s is None else time.perf_counter() + options.time_limit_s
    dp = StackDP(instance, grid or StrategyGrid(), deadline)
    solution = dp.run()
    if solution is None:
        return Result.no_solution(
            Status.TIME_LIMIT_NO_SOLUTION,
            PROBLEM.name,
            "dp",
            f"time limit after pricing {dp.stacks_priced} stacks",
            iterations=dp.stacks_priced,
        )
    report = PROBLEM.evaluate(instance, solution)
    value = PROBLEM.objective(instance, solution, report)
    return Result(
        Status.OPTIMAL,
        PROBLEM.name,
        "dp",
        solution=solution,
        objective=value,
        bound=value,
        stats=SolveStats(
            iterations=dp.stacks_priced,
            native_status=f"optimal over the {dp.grid.sizes_per_axis}x{dp.grid.sizes_per_axis} x modes grid "
            f"and every valid stack ({dp.stacks_priced} stacks priced)",
        ),
    )


def _run(instance: DepthFirstInstance, options: SolveOptions, warm_start: object) -> Result[DepthFirstSolution]:
    return solve_stack_dp(instance, options)


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "dp",
        PROBLEM.name,
        "exact",
        _run,
        "exact best combination of stacks x strategies (shortest path over the cuts, 6x6 tiles x 3 modes)",
    ),
)
"""The methods of this module, for the registry."""
