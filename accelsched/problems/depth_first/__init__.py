"""Depth-first (layer-fused) scheduling of a single core (DeFiNES, HPCA'23).

Instance
--------
A convolutional workload (branches allowed), an accelerator with one core and a
memory hierarchy (registers, local and global buffers, DRAM), and the metric to
minimize: ``energy`` (pJ, the default), ``latency`` (cycles) or ``edp``.

Solution
--------
The workload's layers, taken in the workload's topological order, are cut into
*stacks* of consecutive layers. Each stack is run tile by tile: its last layer's
output is cut into tiles of ``tile_x`` columns by ``tile_y`` rows (the leftover,
smaller tile first in each direction), and for each tile every layer of the stack
computes what the tile needs, back-calculated from the tile. The overlap between
neighbouring tiles is recomputed or cached according to the stack's mode:

* ``fully-recompute``: nothing is cached, every tile recomputes its halo;
* ``h-cached``: the horizontal overlap (with the tile to the left) is cached, the
  vertical one recomputed ("H-cached V-recompute");
* ``fully-cached``: both overlaps are cached.

Rules checked by :func:`check` (:mod:`accelsched.problems.depth_first.check`):

1. every layer is in exactly one stack, stacks are consecutive runs of the
   topological order, in that order;
2. only a stack's last layer's output is used outside the stack: every other
   layer of the stack has all its consumers inside it. A stack reads the tensors
   it needs from DRAM (the network input, outputs of earlier stacks) and writes
   one tensor there. Fused stacks thus hold whole branches (a stack that starts
   and ends where the network narrows to one tensor, :func:`cut_points`, always
   qualifies), and every single layer is a valid stack, which makes single-layer
   execution part of the space;
3. ``1 <= tile_x <= OX`` and ``1 <= tile_y <= OY`` of the stack's last layer;
4. the mode is one of the three above.

Single-layer (SL) execution is every layer its own stack with the tile equal to
its output; layer-by-layer (LBL) is the whole network as one stack with the tile
equal to the final output, so that intermediate feature maps stay in the lowest
memory level that holds them.
"""

from accelsched.problems.depth_first.check import check
from accelsched.problems.depth_first.evaluate import (
    DepthFirstEvaluation,
    combine,
    evaluate,
    evaluate_solution,
    objective,
    single_stack_solution,
    stack_cost,
)
from accelsched.problems.depth_first.instance import METRICS, DepthFirstInstance, cut_points
from accelsched.problems.depth_first.problem import OPTIONS, PROBLEM, make_instance
from accelsched.problems.depth_first.solution import DepthFirstSolution, OverlapMode, Stack, Strategy, parse_tile
from accelsched.problems.depth_first.strategies import StrategyGrid, best_strategy, geometric_sizes, stack_metric

__all__ = [
    "METRICS",
    "OPTIONS",
    "PROBLEM",
    "DepthFirstEvaluation",
    "DepthFirstInstance",
    "DepthFirstSolution",
    "OverlapMode",
    "Stack",
    "Strategy",
    "StrategyGrid",
    "best_strategy",
    "check",
    "combine",
    "cut_points",
    "evaluate",
    "evaluate_solution",
    "geometric_sizes",
    "make_instance",
    "objective",
    "parse_tile",
    "single_stack_solution",
    "stack_cost",
    "stack_metric",
]
