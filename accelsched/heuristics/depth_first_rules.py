"""DeFiNES' automatic fuse-depth rule and the depth-first baselines.

* ``auto``: stacks from the paper's rule (grow a stack by whole branch sets while
  its weights fit the largest on-chip weight memory; a branch set whose weights
  alone overflow it is run as one-layer stacks, :func:`auto_stacks`), then the
  grid's best strategy per stack;
* ``single``: the same stacks, one strategy for all of them (each stack's tile
  clipped to its output), the best of the grid of the first stack;
* ``fixed-df``: the same stacks, fully-cached 4 x 72 tiles (clipped);
* ``lbl``: layer-by-layer, the whole network as one stack with the tile equal to
  the final output, so that feature maps stay on chip where they fit;
* ``sl``: single layer, every layer its own stack with its whole output as the
  tile, every feature map through DRAM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from accelsched.problems.base import MethodSpec
from accelsched.problems.depth_first import (
    PROBLEM,
    DepthFirstInstance,
    DepthFirstSolution,
    OverlapMode,
    Stack,
    Strategy,
    StrategyGrid,
    best_strategy,
    evaluate_solution,
)
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["FIXED_STRATEGY", "METHODS", "auto_stacks", "clip", "layer_by_layer", "single_layer", "uniform_solution"]

FIXED_STRATEGY = Strategy(4, 72, OverlapMode.FULLY_CACHED)
"""DeFiNES' fixed depth-first baseline: fully-cached 4 x 72 tiles."""


def _weight_capacity_bytes(instance: DepthFirstInstance) -> int:
    """The largest on-chip memory holding weights (0 when weights live in DRAM only)."""
    core = instance.core
    return max((core.memory(n).capacity_bytes for n in core.hierarchy["W"] if core.memory(n).instances == 1), default=0)


def auto_stacks(instance: DepthFirstInstance) -> list[tuple[str, ...]]:
    """DeFiNES' fuse-depth rule: whole branch sets grouped while their weights fit the weight memory.

    The layers are cut into *units*, the runs between consecutive cut points
    (:attr:`DepthFirstInstance.cuts`; a unit holds whole branches). With ``W(u)``
    a unit's weight bytes and ``M`` the largest on-chip weight memory
    (:func:`_weight_capacity_bytes`), the units are taken in order:

    * ``W(u) > M``: the unit is broken down completely, every layer its own
      stack (the stack being grown ends before it);
    * else, when the stack being grown plus ``W(u)`` exceeds ``M``, that stack
      ends and a new one begins with ``u``;
    * else ``u`` joins the stack being grown.

    This is DeFiNES' ``DfStackCutIfWeightsOverflowStage``: a stack's weights
    always fit ``M`` unless it is a single layer.
    """
    order = instance.order
    capacity = _weight_capacity_bytes(instance)
    weights = instance.workload
    stacks: list[tuple[str, ...]] = []
    current: list[str] = []
    running = 0
    begin = 0
    for cut in sorted(instance.cuts):
        unit = order[begin : cut + 1]
        begin = cut + 1
        unit_weights = sum(weights[n].weight_bytes for n in unit)
        if unit_weights > capacity:
            if current:
                stacks.append(tuple(current))
            stacks.extend((n,) for n in unit)
            current, running = [], 0
        elif running + unit_weights > capacity:
            stacks.append(tuple(current))
            current, running = list(unit), unit_weights
        else:
            current.extend(unit)
            running += unit_weights
    if current:
        stacks.append(tuple(current))
    return stacks


def clip(instance: DepthFirstInstance, layers: Sequence[str], strategy: Strategy) -> Strategy:
    """``strategy`` with its tile clipped to the output of the stack's last layer."""
    last = instance.workload[layers[-1]]
    return Strategy(min(strategy.tile_x, last.OX), min(strategy.tile_y, last.OY), strategy.mode)


def layer_by_layer(instance: DepthFirstInstance) -> DepthFirstSolution:
    """LBL: one stack, one tile (the final output)."""
    last = instance.workload[instance.order[-1]]
    return DepthFirstSolution((Stack(instance.order, Strategy(last.OX, last.OY, OverlapMode.FULLY_CACHED)),))


def single_layer(instance: DepthFirstInstance) -> DepthFirstSolution:
    """SL: every layer its own stack, its whole output as the tile."""
    workload = instance.workload
    return DepthFirstSolution(
        tuple(Stack((n,), Strategy(workload[n].OX, workload[n].OY, OverlapMode.FULLY_CACHED)) for n in instance.order)
    )


def _auto(instance: DepthFirstInstance, grid: StrategyGrid) -> DepthFirstSolution:
    return DepthFirstSolution(tuple(Stack(s, best_strategy(instance, s, grid)[0]) for s in auto_stacks(instance)))


def _single(instance: DepthFirstInstance, grid: StrategyGrid) -> DepthFirstSolution:
    first = instance.workload[auto_stacks(instance)[0][-1]]
    best: tuple[float, DepthFirstSolution] | None = None
    for strategy in grid.strategies(first.OX, first.OY):
        solution = uniform_solution(instance, strategy)
        value = instance.objective(evaluate_solution(instance, solution).report)
        if best is None or value < best[0]:
            best = (value, solution)
    assert best is not None
    return best[1]


def uniform_solution(instance: DepthFirstInstance, strategy: Strategy) -> DepthFirstSolution:
    """The fuse rule's stacks, every one with ``strategy`` (its tile clipped to the stack's output)."""
    return DepthFirstSolution(tuple(Stack(s, clip(instance, s, strategy)) for s in auto_stacks(instance)))


def _fixed(instance: DepthFirstInstance, grid: StrategyGrid) -> DepthFirstSolution:
    return uniform_solution(instance, FIXED_STRATEGY)


def _method(
    name: str, build: Callable[[DepthFirstInstance, StrategyGrid], DepthFirstSolution], note: str
) -> Callable[[DepthFirstInstance, SolveOptions, object], Result[DepthFirstSolution]]:
    def run(instance: DepthFirstInstance, options: SolveOptions, warm_start: object) -> Result[DepthFirstSolution]:
        solution = build(instance, StrategyGrid())
        report = PROBLEM.evaluate(instance, solution)
        return Result(
            Status.FEASIBLE,
            PROBLEM.name,
            name,
            solution=solution,
            objective=PROBLEM.objective(instance, solution, report),
            stats=SolveStats(native_status=note),
        )

    return run


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "auto",
        PROBLEM.name,
        "heuristic",
        _method("auto", _auto, "DeFiNES' fuse rule, best strategy per stack"),
        "DeFiNES' fuse-depth rule (weights fit on chip, whole branches), best grid strategy per stack",
    ),
    MethodSpec(
        "single",
        PROBLEM.name,
        "heuristic",
        _method("single", _single, "fuse rule, one strategy for every stack"),
        "the fuse rule's stacks with the best single strategy for all of them",
    ),
    MethodSpec(
        "fixed-df",
        PROBLEM.name,
        "baseline",
        _method("fixed-df", _fixed, "fuse rule, fully-cached 4x72"),
        "the fuse rule's stacks, fully-cached 4x72 tiles",
    ),
    MethodSpec(
        "lbl",
        PROBLEM.name,
        "baseline",
        _method("lbl", lambda inst, grid: layer_by_layer(inst), "one stack, one tile"),
        "layer-by-layer: whole feature maps, kept on chip where they fit",
    ),
    MethodSpec(
        "sl",
        PROBLEM.name,
        "baseline",
        _method("sl", lambda inst, grid: single_layer(inst), "every layer its own stack"),
        "single layer: every feature map through DRAM",
    ),
)
"""The methods of this module, for the registry."""
