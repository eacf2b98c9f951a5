"""The checker of depth-first solutions: the four rules of :mod:`accelsched.problems.depth_first`."""

from __future__ import annotations

from accelsched.errors import InfeasibleSolution
from accelsched.problems.depth_first.instance import DepthFirstInstance
from accelsched.problems.depth_first.solution import DepthFirstSolution

__all__ = ["check"]


def check(instance: DepthFirstInstance, solution: DepthFirstSolution) -> None:
    """Raise :class:`InfeasibleSolution` naming the first violated rule of :mod:`accelsched.problems.depth_first`."""
    order = instance.order
    position = 0
    for k, stack in enumerate(solution.stacks):
        where = f"stack {k}"
        for j, name in enumerate(stack.layers):
            if name not in instance.workload:
                raise InfeasibleSolution(f"{where}: unknown layer {name!r}")
            if position + j >= len(order) or order[position + j] != name:
                expected = order[position + j] if position + j < len(order) else "nothing"
                raise InfeasibleSolution(
                    f"{where}: layer {name!r} is out of place; stacks must be consecutive runs of the topological "
                    f"order (expected {expected!r} at position {position + j})"
                )
        start, position = position, position + len(stack.layers)
        if start < instance.first_start[position - 1]:
            inner = stack.layers[: instance.first_start[position - 1] - start]
            raise InfeasibleSolution(
                f"{where} ends after {stack.last!r} inside a branch: the output of {inner[-1]!r} is still needed "
                "after the stack (only a stack's last layer may feed later stacks; fused stacks hold whole branches)"
            )
        last = instance.workload[stack.last]
        strategy = stack.strategy
        if strategy.tile_x > last.OX or strategy.tile_y > last.OY:
            raise InfeasibleSolution(
                f"{where}: tile {strategy.tile_x}x{strategy.tile_y} is larger than the output "
                f"{last.OX}x{last.OY} (OX x OY) of its last layer {stack.last!r}"
            )
    if position != len(order):
        raise InfeasibleSolution(f"the stacks cover {position} of {len(order)} layers; missing {order[position]!r}")
