"""The strategies tried for a depth-first stack, and the best of them by the shared evaluator.

Solver-free: the exact program (:mod:`accelsched.formulations.depth_first_dp`) and the
fuse-rule heuristics (:mod:`accelsched.heuristics.depth_first_rules`) both search this grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from accelsched.hardware.cost.fused_stack import StackCost
from accelsched.problems.depth_first.evaluate import stack_cost
from accelsched.problems.depth_first.instance import DepthFirstInstance
from accelsched.problems.depth_first.solution import OverlapMode, Strategy

__all__ = ["StrategyGrid", "best_strategy", "geometric_sizes", "stack_metric"]


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
    return instance.metric_of(cost.energy_pj, cost.latency_cycles)


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
