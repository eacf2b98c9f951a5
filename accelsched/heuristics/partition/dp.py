"""Irregular-NN style dynamic programming for the partition problem (method ``dp``).

The layers are put in depth order (longest path from an input, ties by index),
which is a topological order. A *segment* is a contiguous run of that order; its
subgraphs are its weakly connected components (a segment of a topological order
split into components never makes a cycle between subgraphs). The DP finds the
segmentation of least summed metric over all segmentations,

    f(0) = 0,    f(j) = min over i < j of f(i) + cost(segment i..j-1),

for every candidate capacity (pair) at once: a segment's cost is a vector over the
capacities (``inf`` where a component does not fit), so co-exploration costs one
pass, and the capacity with the best objective is kept.

Segments are extended one layer at a time from each start. The extension stops
when the component that the new layer joins does not fit the largest capacities:
every longer segment contains that component, and a subgraph of two or more
layers never fits where a subgraph it contains does not (its footprint only
grows). ``max_segment_layers`` bounds the segment length on top of that (default
64, for networks with hundreds of layers; the DP is exact over segmentations whose
segments are at most that long).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from accelsched.heuristics.partition.run import Search, SearchOutcome, deadline_passed, run_search, search_method
from accelsched.heuristics.partition.space import Block, Genome, PartitionSpace
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions

__all__ = ["METHODS", "DPParams", "depth_order", "segment_dp", "solve_dp"]


@dataclass(frozen=True)
class DPParams:
    """Parameters of the segment DP.

    Parameters
    ----------
    max_segment_layers
        Longest segment considered, >= 1.
    """

    max_segment_layers: int = 64

    def __post_init__(self) -> None:
        value = self.max_segment_layers
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"DPParams: field max_segment_layers must be an integer >= 1, got {value!r}")


def depth_order(space: PartitionSpace) -> list[int]:
    """Layers by depth (longest path from a layer without predecessors), ties by index."""
    depth = [0] * space.n
    for v in range(space.n):
        depth[v] = 1 + max((depth[p] for p in space.preds[v]), default=-1)
    return sorted(range(space.n), key=lambda v: (depth[v], v))


class _Capacities:
    """Every capacity pair that the DP prices at once."""

    def __init__(self, space: PartitionSpace) -> None:
        acts, weights = np.meshgrid(np.array(space.acts), np.array(space.weights), indexing="ij")
        self.pairs = [(a, w) for a in range(len(space.acts)) for w in range(len(space.weights))]
        self.act_bytes = acts.ravel()
        self.weight_bytes = weights.ravel()
        self.shared = space.shared
        self.space = space

    def cost(self, block: Block) -> np.ndarray:
        """The metric of ``block`` under every pair, ``inf`` where it does not fit."""
        out = np.full(len(self.pairs), np.inf)
        for a, w, value in reversed(self.space.modes(block)):  # the cheapest fitting mode is written last
            fits = self.act_bytes >= a + w if self.shared else (self.act_bytes >= a) & (self.weight_bytes >= w)
            out[fits] = value
        return out


def _segments_from(
    space: PartitionSpace, order: list[int], position: list[int], start: int, longest: int, caps: _Capacities
) -> list[tuple[int, np.ndarray]]:
    """``(end, cost vector)`` of every segment ``order[start:end]`` worth pricing."""
    last = (len(space.acts) - 1, len(space.weights) - 1)
    owner: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    costs: dict[int, np.ndarray] = {}
    out: list[tuple[int, np.ndarray]] = []
    for end in range(start + 1, min(space.n, start + longest) + 1):
        v = order[end - 1]
        joined = {owner[u] for u in space.neighbours[v] if start <= position[u] < end - 1}
        group = [v]
        for root in sorted(joined):
            group += members.pop(root)
            costs.pop(root)
        block = tuple(sorted(group))
        if not space.fits(block, *last):
            break
        for u in group:
            owner[u] = v
        members[v] = group
        costs[v] = caps.cost(block)
        out.append((end, np.sum(list(costs.values()), axis=0)))
    return out


def segment_dp(space: PartitionSpace, params: DPParams, options: SolveOptions, start: float) -> tuple[Genome, int]:
    """The best segmentation and its capacities; the number of segments priced.

    Once ``options.time_limit_s`` has passed, segments of one layer only are priced.
    """
    order = depth_order(space)
    position = [0] * space.n
    for k, v in enumerate(order):
        position[v] = k
    caps = _Capacities(space)
    best = np.full((space.n + 1, len(caps.pairs)), np.inf)
    best[0] = 0.0
    back = np.zeros((space.n + 1, len(caps.pairs)), dtype=np.int64)
    priced = 0
    for i in range(space.n):
        longest = 1 if deadline_passed(options, start) else params.max_segment_layers
        for end, cost in _segments_from(space, order, position, i, longest, caps):
            priced += 1
            candidate = best[i] + cost
            better = candidate < best[end]
            best[end][better] = candidate[better]
            back[end][better] = i
    instance = space.instance
    totals = np.array([space.capacity_bytes(a, w) for a, w in caps.pairs], dtype=float)
    values = totals + instance.alpha * best[space.n] if instance.co_exploration else best[space.n]
    p = int(np.argmin(values))
    groups: list[tuple[int, ...]] = []
    end = space.n
    while end > 0:
        i = int(back[end][p])
        groups.extend(space.components([order[i:end]]))
        end = i
    act, weight = caps.pairs[p]
    return space.normalize(groups, act, weight), priced


def segmentation(params: DPParams) -> Search:
    """The segment DP with ``params`` (the segment length limit): once ``options.time_limit_s`` has
    passed, the remaining segments are single layers; a better warm start is returned instead."""

    def search(space: PartitionSpace, opts: SolveOptions, warm: Genome | None, begin: float) -> SearchOutcome:
        genome, priced = segment_dp(space, params, opts, begin)
        trace = [(time.perf_counter() - begin, space.fitness(genome))]
        if warm is not None and space.fitness(warm) < trace[0][1]:
            genome = warm
            trace.append((time.perf_counter() - begin, space.fitness(warm)))
        return SearchOutcome(genome, priced, tuple(trace), f"{priced} segments priced")

    return search


def solve_dp(
    instance: PartitionInstance,
    options: SolveOptions | None = None,
    warm_start: PartitionSolution | None = None,
    params: DPParams | None = None,
) -> Result[PartitionSolution]:
    """The segment DP on ``instance`` (:func:`segmentation` with ``params``, default :class:`DPParams`;
    the arguments and the result as :func:`~.run.run_search`'s)."""
    return run_search("dp", segmentation(params or DPParams()), instance, options, warm_start)


METHODS: tuple[MethodSpec, ...] = (
    search_method(
        "dp",
        "baseline",
        "Irregular-NN style DP over contiguous segments of the depth order (every capacity at once)",
        segmentation(DPParams()),
    ),
)
"""The DP baseline."""
