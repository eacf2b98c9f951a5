"""The depth-first evaluator: a solution's stacks priced one after the other (DeFiNES).

Each stack is priced by :func:`accelsched.hardware.cost.fused_stack.price_stack` with its
strategy's tile and overlap caching; a stack reads its inputs from DRAM and writes its
output there, so energy, latency and DRAM bytes add up over the stacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from accelsched.hardware.cost.fused_stack import StackCost, StackTile, price_stack
from accelsched.hardware.cost.report import CostReport
from accelsched.problems.depth_first.instance import DepthFirstInstance
from accelsched.problems.depth_first.solution import DepthFirstSolution, Stack, Strategy

__all__ = [
    "DepthFirstEvaluation",
    "combine",
    "evaluate",
    "evaluate_solution",
    "objective",
    "single_stack_solution",
    "stack_cost",
]


@dataclass(frozen=True)
class DepthFirstEvaluation:
    """A whole solution: one :class:`~accelsched.hardware.cost.fused_stack.StackCost` per stack and the combined
    report."""

    stacks: tuple[StackCost, ...]
    report: CostReport
    energy_by_operand_pj: Mapping[str, float]


def stack_cost(instance: DepthFirstInstance, layers: Sequence[str], strategy: Strategy) -> StackCost:
    """Cost of running ``layers`` (consecutive, whole branches) as one stack with ``strategy``.

    Cached on the instance per (stack, strategy). The strategy's tile must fit the
    stack's last output (see :func:`accelsched.problems.depth_first.check`).
    """
    cache = instance.cost_cache
    key = ("stack", tuple(layers), strategy)
    cost = cache.get(key)
    if cost is None:
        tile = StackTile(strategy.tile_x, strategy.tile_y, strategy.mode.caches_x, strategy.mode.caches_y)
        cost = price_stack(instance.workload, instance.core, instance.accelerator.offchip, key[1], tile, cache)
        cache[key] = cost
    return cost


def evaluate_solution(instance: DepthFirstInstance, solution: DepthFirstSolution) -> DepthFirstEvaluation:
    """Cost of a (checked) solution: its stacks one after the other."""
    costs = tuple(stack_cost(instance, stack.layers, stack.strategy) for stack in solution.stacks)
    return combine(instance, costs)


def combine(instance: DepthFirstInstance, costs: Sequence[StackCost]) -> DepthFirstEvaluation:
    """The report of stacks run one after the other."""
    component: dict[str, float] = {}
    operand: dict[str, float] = {}
    for cost in costs:
        for key, value in cost.energy_by_component_pj.items():
            component[key] = component.get(key, 0.0) + value
        for key, value in cost.energy_by_operand_pj.items():
            operand[key] = operand.get(key, 0.0) + value
    latency = sum(c.latency_cycles for c in costs)
    macs = sum(c.macs for c in costs)
    n_macs = instance.core.n_macs
    report = CostReport(
        energy_pj=sum(component.values()),
        latency_cycles=latency,
        dram_bytes=sum(c.dram_bytes for c in costs),
        noc_byte_hops=0.0,
        peak_memory_bytes=max(c.peak_memory_bytes for c in costs),
        utilization=min(1.0, macs / (latency * n_macs)) if latency > 0 else 0.0,
        macs=macs,
        energy_breakdown_pj=component,
    )
    return DepthFirstEvaluation(tuple(costs), report, MappingProxyType(operand))


def single_stack_solution(layers: Sequence[str], strategy: Strategy) -> DepthFirstSolution:
    """A solution with one stack (convenience for tests and sweeps)."""
    return DepthFirstSolution((Stack(tuple(layers), strategy),))


def evaluate(instance: DepthFirstInstance, solution: DepthFirstSolution) -> CostReport:
    """The shared depth-first evaluator's cost report."""
    return evaluate_solution(instance, solution).report


def objective(instance: DepthFirstInstance, solution: DepthFirstSolution, report: CostReport) -> float:
    """The instance's metric."""
    return instance.objective(report)
