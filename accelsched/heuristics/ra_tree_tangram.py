"""A Tangram-like baseline for RA trees (method ``tangram``): pipelined segments chosen by a DP on a proxy.

Tangram (ASPLOS'19) pipelines consecutive layers spatially and picks the segments by
dynamic programming over the layer order, pricing each segment on its own. This
baseline keeps that recipe within the RA-tree model: segments of consecutive layers in
the workload's order, each a single layer or an S-Cut pipelining its layers at the
finest granularity (one sample per sub-batch, ``n = B``), tiles allocated by the
analyzer (proportional to the layers' NPTs); the segmentation minimizes the sum of the
segments' energy-delay products, ``sum_s E_s D_s`` — additive, so a plain shortest
path, but only a proxy of the instance's ``E^a D^b``, which the result reports.
Segments that overflow a tile buffer are skipped.

Compare with :mod:`accelsched.formulations.ra_tree_dp`, which searches the same kind
of trees with every sub-batch number and optimizes the true objective exactly over
the subspace: the gap between the two is what the proxy and the fixed granularity cost.
"""

from __future__ import annotations

import math
import time

from accelsched.problems.base import MethodSpec
from accelsched.problems.ra_tree import PROBLEM, RATreeInstance, buffer_overflow, segment_cost, tree_objective
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RANode, RATree
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "solve_tangram"]


def solve_tangram(
    instance: RATreeInstance, options: SolveOptions | None = None, warm_start: RATree | None = None
) -> Result[RATree]:
    """The Tangram-like tree (module docstring).

    Returns
    -------
    Result
        FEASIBLE, or TIME_LIMIT_NO_SOLUTION / INFEASIBLE with the reason.
    """
    options = options or SolveOptions()
    start = time.perf_counter()
    names, batch, tiles = instance.workload.names, instance.batch, instance.n_tiles
    best = [math.inf] * (len(names) + 1)
    choice: list[tuple[int, RANode] | None] = [None] * (len(names) + 1)
    best[0] = 0.0
    evaluated = 0
    for first in range(len(names)):
        if not math.isfinite(best[first]):
            continue
        if options.time_limit_s is not None and time.perf_counter() - start > options.time_limit_s:
            reason = f"time limit reached at layer {first}"
            status = Status.TIME_LIMIT_NO_SOLUTION
            return Result.no_solution(status, PROBLEM.name, "tangram", reason, iterations=evaluated)
        for end in range(first + 1, min(len(names), first + tiles) + 1):
            run = names[first:end]
            segment: RANode = (
                Leaf(run[0], batch)
                if len(run) == 1
                else Cut(CutKind.S, batch, batch, tuple(Leaf(name, 1) for name in run))
            )
            cost = segment_cost(instance, segment)
            evaluated += 1
            if buffer_overflow(instance, [cost]):
                continue
            value = best[first] + sum(cost.energy_breakdown_pj.values()) * cost.latency_cycles
            if value < best[end]:
                best[end], choice[end] = value, (first, segment)
    if choice[len(names)] is None:
        reason = "no segmentation fits the tile buffers"
        return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, "tangram", reason, iterations=evaluated)
    children: list[RANode] = []
    end = len(names)
    while end > 0:
        step = choice[end]
        assert step is not None
        end, segment = step
        children.append(segment)
    tree = RATree(Cut(CutKind.T, batch, 1, tuple(reversed(children))))
    return Result(
        Status.FEASIBLE,
        PROBLEM.name,
        "tangram",
        solution=tree,
        objective=tree_objective(instance, tree),
        stats=SolveStats(iterations=evaluated, native_status=f"{len(children)} segments, {evaluated} evaluated"),
    )


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "tangram",
        PROBLEM.name,
        "baseline",
        solve_tangram,
        "Tangram-like: finest-grain pipelined segments chosen by a DP on the sum of segment EDPs",
    ),
)
"""The Tangram-like baseline: ``tangram``."""
