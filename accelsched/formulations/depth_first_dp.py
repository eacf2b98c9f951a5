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
from collections.abc import Sequence
from dataclasses import dataclass

from accelsched.hardware.cost.depth_first import StackCost, stack_cost
from accelsched.problems.base import MethodSpec
from accelsched.problems.depth_first import (
    PROBLEM,
    DepthFirstInstance,
    DepthFirstSolution,
    OverlapMode,
    Stack,
    Strategy,
)
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "StrategyGrid", "best_strategy", "geometric_sizes", "solve_stack_dp", "stack_metric"]


def geometric_sizes(extent: int, count: int) -> tuple[int, ...]:
    """``count`` tile sizes from ``extent`` down to 1, evenly spaced in log scale (duplicates merged)."""
    if extent < 1 or count < 1:
        raise ValueError(f"geometric_sizes: extent and count must be positive, got {extent}, {count}")
    if count == 1 or extent == 1:
        return (extent,)
    sizes = {max(1, round(extent ** (1 - k / (count - 1)))) for k in range(count)}
    return tuple(sorted(sizes, reverse=True))


@dataclass(frozen=True)
class StrategyGrid:
    """The strategies tried for a stack: tile sizes per axis x overlap modes.

    Parameters
    ----------
    sizes_per_axis
        Tile sizes per axis, geometric from the stack's output extent down to 1
        (:func:`geometric_sizes`); 6 gives DeFiNES' 6 x 6 grid.
    modes
        Overlap modes tried (all three by default).
    extra_tiles
        Tiles tried besides the geometric ones (clipped to the output); by default
        DeFiNES' fixed depth-first tile, 4 x 72, so that the grid contains that
        baseline.
    """

    sizes_per_axis: int = 6
    modes: tuple[OverlapMode, ...] = tuple(OverlapMode)
    extra_tiles: tuple[tuple[int, int], ...] = ((4, 72),)

    def __post_init__(self) -> None:
        if isinstance(self.sizes_per_axis, bool) or not isinstance(self.sizes_per_axis, int) or self.sizes_per_axis < 1:
            raise ValueError(f"StrategyGrid: sizes_per_axis must be a positive integer, got {self.sizes_per_axis!r}")
        if not self.modes:
            raise ValueError("StrategyGrid: field modes is empty")

    def strategies(self, out_x: int, out_y: int) -> list[Strategy]:
        """Every strategy for a stack whose last output is ``out_x x out_y``; one mode for the whole-output tile."""
        tiles = {
            (tx, ty)
            for tx in geometric_sizes(out_x, self.sizes_per_axis)
            for ty in geometric_sizes(out_y, self.sizes_per_axis)
        }
        tiles |= {(min(tx, out_x), min(ty, out_y)) for tx, ty in self.extra_tiles}
        out = []
        for tx, ty in sorted(tiles, reverse=True):
            if tx == out_x and ty == out_y:
                out.append(Strategy(tx, ty, self.modes[0]))  # one tile: the modes coincide
                continue
            out.extend(Strategy(tx, ty, mode) for mode in self.modes)
        return out


def stack_metric(instance: DepthFirstInstance, cost: StackCost) -> float:
    """The instance's metric of one stack alone (for EDP: of the stack as if it were the network)."""
    if instance.metric == "energy":
        return cost.energy_pj
    if instance.metric == "latency":
        return cost.latency_cycles
    return cost.energy_pj * cost.latency_cycles


def best_strategy(
    instance: DepthFirstInstance, layers: Sequence[str], grid: StrategyGrid
) -> tuple[Strategy, StackCost]:
    """The grid's best strategy for one stack under the instance's metric (first one on ties)."""
    last = instance.workload[layers[-1]]
    best: tuple[float, Strategy, StackCost] | None = None
    for strategy in grid.strategies(last.OX, last.OY):
        cost = stack_cost(instance, layers, strategy)
        value = stack_metric(instance, cost)
        if best is None or value < best[0]:
            best = (value, strategy, cost)
    assert best is not None
    return best[1], best[2]


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
        if self.instance.metric == "energy":
            return label.energy_pj
        if self.instance.metric == "latency":
            return label.latency_cycles
        return label.energy_pj * label.latency_cycles

    def _keep(self, candidates: list[_Label]) -> list[_Label]:
        if self.instance.metric == "edp":
            return _pareto(candidates)
        return [min(candidates, key=self._value)]


def solve_stack_dp(
    instance: DepthFirstInstance, options: SolveOptions, grid: StrategyGrid | None = None
) -> Result[DepthFirstSolution]:
    """The exact best combination over the grid (module docstring); TIME_LIMIT_NO_SOLUTION when stopped."""
    start = time.perf_counter()
    deadline = None if options.time_limit_s is None else start + options.time_limit_s
    dp = StackDP(instance, grid or StrategyGrid(), deadline)
    solution = dp.run()
    elapsed = time.perf_counter() - start
    if solution is None:
        return Result.no_solution(
            Status.TIME_LIMIT_NO_SOLUTION,
            PROBLEM.name,
            "dp",
            f"time limit after pricing {dp.stacks_priced} stacks",
            runtime_s=elapsed,
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
        runtime_s=elapsed,
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
