"""Halide-style greedy pairwise fusion for the partition problem (method ``greedy``).

Start from every layer alone; repeatedly merge the two subgraphs joined by an
edge whose merge lowers the summed metric most, as long as the merged subgraph
fits and the subgraph graph stays acyclic (no other path between the two); stop
when no merge lowers it. Merge benefits are kept in a heap and recomputed only for
the pairs that touch the merged subgraph.

With fixed capacities the objective is the summed metric. In co-exploration the
capacity is fixed during one greedy run, so the run is repeated for every
candidate capacity (pair) that holds every layer alone, smallest total first,
and the best objective is kept. The sweep stops at the first pair whose capacity
plus ``alpha`` times a lower bound of the metric (everything fused: weights,
network inputs and outputs cross DRAM once, and the on-chip energy, which every
partition pays) cannot beat the best objective found, since every later pair is
larger.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time

from accelsched.heuristics.partition.run import SearchOutcome, deadline_passed, run_search, search_method
from accelsched.heuristics.partition.space import Block, Genome, PartitionSpace
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions

__all__ = ["METHODS", "greedy_fusion", "solve_greedy"]


class _Fusion:
    """The state of one greedy run: live subgraphs by id, the subgraph graph, merge benefits."""

    def __init__(self, space: PartitionSpace, act: int, weight: int) -> None:
        self.space, self.act, self.weight = space, act, weight
        self.blocks: dict[int, Block] = {v: (v,) for v in range(space.n)}
        self.metric = {v: space.block_metric((v,), act, weight) for v in range(space.n)}
        self.out: dict[int, set[int]] = {v: set(space.succs[v]) for v in range(space.n)}
        self.into: dict[int, set[int]] = {v: set(space.preds[v]) for v in range(space.n)}
        self.ids = itertools.count(space.n)
        self.heap: list[tuple[float, int, int]] = []
        for a in range(space.n):
            for b in self.out[a]:
                self._push(a, b)

    def _push(self, a: int, b: int) -> None:
        """Record the benefit of merging ``a`` into its successor ``b`` when it is positive."""
        merged = tuple(sorted(self.blocks[a] + self.blocks[b]))
        value = self.space.block_metric(merged, self.act, self.weight)
        gain = self.metric[a] + self.metric[b] - value
        if math.isfinite(value) and gain > 0:
            heapq.heappush(self.heap, (-gain, a, b))

    def _other_path(self, a: int, b: int) -> bool:
        """Whether some path goes from ``a`` to ``b`` through another subgraph."""
        last = self.blocks[b][-1]
        stack = [x for x in self.out[a] if x != b]
        seen = set(stack)
        while stack:
            x = stack.pop()
            if x == b:
                return True
            for y in self.out[x]:
                if y not in seen and self.blocks[y][0] <= last:
                    seen.add(y)
                    stack.append(y)
        return False

    def _merge(self, a: int, b: int) -> None:
        c = next(self.ids)
        self.blocks[c] = tuple(sorted(self.blocks.pop(a) + self.blocks.pop(b)))
        self.metric[c] = self.space.block_metric(self.blocks[c], self.act, self.weight)
        self.out[c] = (self.out.pop(a) | self.out.pop(b)) - {a, b}
        self.into[c] = (self.into.pop(a) | self.into.pop(b)) - {a, b}
        for x in self.out[c]:
            self.into[x] -= {a, b}
            self.into[x].add(c)
        for x in self.into[c]:
            self.out[x] -= {a, b}
            self.out[x].add(c)
        for x in sorted(self.out[c]):
            self._push(c, x)
        for x in sorted(self.into[c]):
            self._push(x, c)

    def step(self) -> bool:
        """Apply the best valid merge; False when none lowers the metric."""
        blocked: list[tuple[float, int, int]] = []
        merged = False
        while self.heap:
            entry = heapq.heappop(self.heap)
            _, a, b = entry
            if a not in self.blocks or b not in self.blocks:
                continue
            if self._other_path(a, b):
                blocked.append(entry)
                continue
            self._merge(a, b)
            merged = True
            break
        for entry in blocked:
            heapq.heappush(self.heap, entry)
        return merged


def greedy_fusion(
    space: PartitionSpace, act: int, weight: int, options: SolveOptions, start: float
) -> tuple[Genome, int]:
    """The greedy partition for capacity indices ``(act, weight)`` (which must hold every
    layer), and the number of merges.

    Stops early, with the partition reached, once ``options.time_limit_s`` has passed since ``start``.
    """
    fusion = _Fusion(space, act, weight)
    merges = 0
    while not deadline_passed(options, start) and fusion.step():
        merges += 1
    return space.normalize(fusion.blocks.values(), act, weight), merges


def _metric_lower_bound(space: PartitionSpace) -> float:
    """The metric of every layer in one subgraph, resident: a lower bound of any partition's
    metric (each weight, network input and output crosses DRAM at least once; on-chip
    energy is the same for every partition)."""
    return space.modes(tuple(range(space.n)))[0][2]


def _search(space: PartitionSpace, options: SolveOptions, warm: Genome | None, start: float) -> SearchOutcome:
    pairs = [(a, w) for a in range(len(space.acts)) for w in range(len(space.weights)) if space.holds_every_layer(a, w)]
    pairs.sort(key=lambda p: (space.capacity_bytes(*p), p))
    instance = space.instance
    bound = _metric_lower_bound(space) if instance.co_exploration else 0.0
    best: Genome | None = None
    best_value = math.inf
    trace: list[tuple[float, float]] = []
    runs = merges = 0
    for a, w in pairs:
        if best is not None and instance.objective_value(space.capacity_bytes(a, w), bound) >= best_value:
            break  # pairs come by increasing capacity: no later one can win either
        if best is not None and deadline_passed(options, start):
            break
        genome, done = greedy_fusion(space, a, w, options, start)
        runs += 1
        merges += done
        value = space.fitness(genome)
        if value < best_value:
            best, best_value = genome, value
            trace.append((time.perf_counter() - start, value))
    assert best is not None
    if warm is not None and space.fitness(warm) < best_value:
        best = warm
        trace.append((time.perf_counter() - start, space.fitness(warm)))
    note = f"{merges} merges in {runs} greedy runs over {len(pairs)} capacity candidates"
    return SearchOutcome(best, merges, tuple(trace), note)


def solve_greedy(
    instance: PartitionInstance, options: SolveOptions | None = None, warm_start: PartitionSolution | None = None
) -> Result[PartitionSolution]:
    """Greedy pairwise fusion on ``instance``: ``options.time_limit_s`` stops the fusion (and the capacity
    sweep) early; a better warm start is returned instead (the arguments and the result as
    :func:`~.run.run_search`'s)."""
    return run_search("greedy", _search, instance, options, warm_start)


METHODS: tuple[MethodSpec, ...] = (
    search_method(
        "greedy",
        "baseline",
        "Halide-style greedy pairwise fusion by largest benefit (every capacity candidate in co-exploration)",
        _search,
    ),
)
"""The greedy baseline."""
