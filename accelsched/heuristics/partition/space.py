"""The search space shared by the partition heuristics: genomes, repair and fitness.

A :class:`Genome` is a partition of the layers into subgraphs (kept in execution
order) and the index of a candidate capacity per buffer. :class:`PartitionSpace`
binds an instance and provides what every heuristic needs:

* the cost of a subgraph under given capacities, from the shared cost model,
  cached per subgraph (a subgraph's cost depends on the capacities only through
  the mode that fits);
* :meth:`PartitionSpace.normalize`, which turns any grouping of the layers into a
  valid genome: every subgraph is split into its weakly connected components;
  cycles between subgraphs are broken by cutting a subgraph on a cycle in
  topological order between a layer that leaves it and a later layer that enters
  it along the cycle; capacities too
  small for some layer alone are raised to the nearest pair that holds every
  layer; every subgraph over capacity is split in situ, in topological order,
  into the longest prefixes that fit; finally the subgraphs are ordered by a
  topological sort of the subgraph graph (ties by smallest layer index), so a
  partition has one genome;
* the fitness, which is the problem's objective.

Layer indices are topological positions (every edge goes from a smaller to a
larger index), which the repairs rely on.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from accelsched.errors import InputError
from accelsched.problems.partition import PartitionInstance, PartitionSolution

__all__ = ["Block", "Genome", "PartitionSpace"]

Block = tuple[int, ...]
"""Layer indices of one subgraph, increasing."""


@dataclass(frozen=True, slots=True)
class Genome:
    """A partition and its capacities.

    Attributes
    ----------
    blocks
        Subgraphs in execution order, each a sorted tuple of layer indices.
    act
        Index of the shared (or activation) buffer in the instance's candidates.
    weight
        Index of the weight buffer in the candidates (0 with a shared buffer).
    """

    blocks: tuple[Block, ...]
    act: int
    weight: int


class PartitionSpace:
    """Graph, capacities, cached subgraph costs and repairs of one instance.

    Parameters
    ----------
    instance
        The partition instance (must be feasible: ``instance.infeasibility`` is None).
    """

    def __init__(self, instance: PartitionInstance) -> None:
        if instance.infeasibility is not None:
            raise ValueError(f"PartitionSpace: the instance is infeasible: {instance.infeasibility}")
        self.instance = instance
        model = instance.cost_model
        self.n = len(model.layers)
        self.preds = model.preds
        self.succs = model.succs
        self.neighbours: tuple[tuple[int, ...], ...] = tuple(
            tuple(dict.fromkeys((*model.preds[v], *model.succs[v]))) for v in range(self.n)
        )
        self.shared = instance.shared
        self.acts: tuple[int, ...] = instance.act_candidates_bytes
        self.weights: tuple[int, ...] = instance.weight_candidates_bytes or (0,)
        self._modes: dict[Block, tuple[tuple[int, int, float], ...]] = {}
        self._parts: dict[Block, tuple[Block, ...]] = {}
        edges = sorted({(p, v) for v in range(self.n) for p in model.preds[v]})
        self.edge_tail = np.array([p for p, _ in edges], dtype=np.int64)
        """Producer of every edge (distinct edges, sorted)."""
        self.edge_head = np.array([v for _, v in edges], dtype=np.int64)
        """Consumer of every edge."""
        self._layer_weights = [layer.weight_bytes for layer in model.layers]
        self._min_weight = self._smallest_weights_holding_every_layer()

    # ------------------------------------------------------------- costs
    def modes(self, block: Block) -> tuple[tuple[int, int, float], ...]:
        """``(act_bytes, weight_bytes, metric)`` of every mode of ``block``, cheapest first (cached)."""
        found = self._modes.get(block)
        if found is None:
            cost = self.instance.cost_model.subgraph(block)
            found = tuple((m.act_bytes, m.weight_bytes, self.instance.metric_of(cost, m)) for m in cost.modes)
            self._modes[block] = found
        return found

    def block_metric(self, block: Block, act: int, weight: int) -> float:
        """The metric of ``block`` under capacity indices ``(act, weight)``; ``inf`` when it does not fit.

        A subgraph of several layers runs only with all its weights resident, so one whose
        weights alone exceed the buffer is rejected before its cost is computed.
        """
        capacity_a, capacity_w = self.acts[act], self.weights[weight]
        if len(block) > 1 and block not in self._modes:
            limit = capacity_a if self.shared else capacity_w
            if sum(self._layer_weights[v] for v in block) > limit:
                return math.inf
        for a, w, value in self.modes(block):
            if (a + w <= capacity_a) if self.shared else (a <= capacity_a and w <= capacity_w):
                return value
        return math.inf

    def fits(self, block: Block, act: int, weight: int) -> bool:
        """Whether ``block`` fits the capacities at indices ``(act, weight)``."""
        return self.block_metric(block, act, weight) < math.inf

    def capacity_bytes(self, act: int, weight: int) -> int:
        """Total buffer bytes of the capacity indices."""
        return self.acts[act] + self.weights[weight]

    def metric_sum(self, genome: Genome) -> float:
        """Sum of the metric over the genome's subgraphs (``inf`` if one does not fit)."""
        return sum(self.block_metric(b, genome.act, genome.weight) for b in genome.blocks)

    def fitness(self, genome: Genome) -> float:
        """The problem's objective of ``genome`` (``inf`` if a subgraph does not fit)."""
        total = self.metric_sum(genome)
        if math.isinf(total):
            return math.inf
        return self.instance.objective_value(self.capacity_bytes(genome.act, genome.weight), total)

    # ------------------------------------------------------------- capacities
    def _smallest_weights_holding_every_layer(self) -> list[int | None]:
        """Per activation (or shared) candidate, the smallest weight candidate index under which
        every layer alone fits, or None when no weight candidate is enough."""
        out: list[int | None] = []
        singles = [self.modes((v,)) for v in range(self.n)]
        for capacity in self.acts:
            if self.shared:
                ok = all(any(a + w <= capacity for a, w, _ in modes) for modes in singles)
                out.append(0 if ok else None)
                continue
            need = 0
            for modes in singles:
                least = min((w for a, w, _ in modes if a <= capacity), default=None)
                if least is None:
                    need = -1
                    break
                need = max(need, least)
            index = next((k for k, w in enumerate(self.weights) if w >= need), None) if need >= 0 else None
            out.append(index)
        return out

    def holds_every_layer(self, act: int, weight: int) -> bool:
        """Whether every layer alone fits the capacities at ``(act, weight)``."""
        least = self._min_weight[act]
        return least is not None and weight >= least

    def raise_capacity(self, act: int, weight: int) -> tuple[int, int]:
        """The nearest capacity indices at or above ``(act, weight)`` under which every layer fits.

        Nearest counts candidate steps over both buffers; ties go to the smaller activation buffer.
        """
        if self.holds_every_layer(act, weight):
            return act, weight
        best: tuple[int, int, int] | None = None
        for a in range(act, len(self.acts)):
            least = self._min_weight[a]
            if least is None:
                continue
            w = max(weight, least)
            steps = (a - act) + (w - weight)
            if best is None or steps < best[0]:
                best = (steps, a, w)
        assert best is not None, "a feasible instance holds every layer at its largest capacities"
        return best[1], best[2]

    def nearest_act(self, capacity_bytes: float) -> int:
        """Index of the activation (or shared) candidate nearest to ``capacity_bytes``."""
        return _nearest(self.acts, capacity_bytes)

    def nearest_weight(self, capacity_bytes: float) -> int:
        """Index of the weight candidate nearest to ``capacity_bytes`` (0 when shared)."""
        return _nearest(self.weights, capacity_bytes)

    # ------------------------------------------------------------- repair
    def labels(self, genome: Genome) -> list[int]:
        """Layer -> position of its subgraph in ``genome.blocks``."""
        label = [0] * self.n
        for k, block in enumerate(genome.blocks):
            for v in block:
                label[v] = k
        return label

    def normalize(self, groups: Iterable[Iterable[int]], act: int, weight: int) -> Genome:
        """A valid genome from any grouping that covers every layer once (see the module doc).

        Parameters
        ----------
        groups
            Layer indices per group; every layer in exactly one group.
        act, weight
            Capacity indices (raised when some layer alone does not fit).
        """
        blocks = self._acyclic(self.components(groups))
        act, weight = self.raise_capacity(act, weight)
        if all(self.fits(block, act, weight) for block in blocks):
            return Genome(tuple(blocks), act, weight)
        fitted: list[Block] = []
        for block in blocks:
            if self.fits(block, act, weight):
                fitted.append(block)
            else:
                fitted.extend(self._split_to_fit(block, act, weight))
        _, out = self._quotient(fitted)
        order = self._topological(fitted, out)
        return Genome(tuple(fitted[k] for k in order), act, weight)

    def components(self, groups: Iterable[Iterable[int]]) -> list[Block]:
        """Weakly connected components of every group, as sorted blocks (cached per group)."""
        out: list[Block] = []
        for group in groups:
            key = tuple(sorted(group))
            found = self._parts.get(key)
            if found is None:
                found = self._split_components(key)
                self._parts[key] = found
            out.extend(found)
        return out

    def _split_components(self, members: Block) -> tuple[Block, ...]:
        inside = set(members)
        out: list[Block] = []
        for v in members:
            if v not in inside:
                continue
            inside.discard(v)
            stack, component = [v], [v]
            while stack:
                u = stack.pop()
                for x in self.neighbours[u]:
                    if x in inside:
                        inside.discard(x)
                        stack.append(x)
                        component.append(x)
            out.append(tuple(sorted(component)))
        return tuple(out)

    def _quotient(self, blocks: Sequence[Block]) -> tuple[list[int], list[list[int]]]:
        """Layer -> block position, and the successor blocks of every block."""
        where = [0] * self.n
        for k, block in enumerate(blocks):
            for v in block:
                where[v] = k
        position = np.asarray(where)
        tail, head = position[self.edge_tail], position[self.edge_head]
        cross = tail != head
        count = len(blocks)
        out: list[list[int]] = [[] for _ in blocks]
        for key in np.unique(tail[cross] * count + head[cross]).tolist():
            out[key // count].append(key % count)
        return where, out

    def _topological(self, blocks: Sequence[Block], out: list[list[int]]) -> list[int]:
        """Block positions in a topological order of the block graph, ties by smallest layer;
        shorter than ``blocks`` when the block graph has a cycle."""
        indegree = [0] * len(blocks)
        for targets in out:
            for t in targets:
                indegree[t] += 1
        heap = [(blocks[k][0], k) for k in range(len(blocks)) if indegree[k] == 0]
        heapq.heapify(heap)
        order: list[int] = []
        while heap:
            _, k = heapq.heappop(heap)
            order.append(k)
            for t in out[k]:
                indegree[t] -= 1
                if indegree[t] == 0:
                    heapq.heappush(heap, (blocks[t][0], t))
        return order

    def _acyclic(self, blocks: list[Block]) -> list[Block]:
        """The blocks, split until the block graph is acyclic, in topological order.

        On every cycle of blocks ``B_1 -> ... -> B_k -> B_1`` some block has an exit
        (a member with a successor in the next block) before an entry (a member with a
        predecessor in the previous block) in topological order: otherwise the edge
        indices would increase all around the cycle. Such a block is cut before that
        entry into two parts (then into components); each cut adds a block, so the loop
        ends (layers alone are acyclic, since the layer graph is).
        """
        while True:
            where, out = self._quotient(blocks)
            order = self._topological(blocks, out)
            if len(order) == len(blocks):
                return [blocks[k] for k in order]
            k, cut = self._cycle_cut(blocks, where, out, set(order))
            low = [v for v in blocks[k] if v < cut]
            high = [v for v in blocks[k] if v >= cut]
            blocks = [b for j, b in enumerate(blocks) if j != k] + self.components((low, high))

    def _cycle_cut(
        self, blocks: Sequence[Block], where: list[int], out: list[list[int]], ordered: set[int]
    ) -> tuple[int, int]:
        """A block to cut and the layer before which to cut it (see :meth:`_acyclic`).

        The candidates are the blocks both reachable from a cycle (left over by the
        topological sort) and reaching one (left over by the sort of the reversed
        graph): every cycle lies among them, so one of them has an exit, to another
        candidate, before an entry from another candidate.
        """
        into: list[list[int]] = [[] for _ in blocks]
        for k, targets in enumerate(out):
            for t in targets:
                into[t].append(k)
        candidates = set(range(len(blocks))) - ordered - set(self._topological(blocks, into))
        for k in sorted(candidates, key=lambda k: blocks[k][0]):
            outside = candidates - {k}
            exits = [v for v in blocks[k] if any(where[s] in outside for s in self.succs[v])]
            if not exits:
                continue
            first = min(exits)
            entries = [v for v in blocks[k] if v > first and any(where[p] in outside for p in self.preds[v])]
            if entries:
                return k, min(entries)
        raise AssertionError("every cycle of blocks has a block with an exit before an entry")

    def _split_to_fit(self, block: Block, act: int, weight: int) -> list[Block]:
        """Split ``block`` in topological order into the longest prefixes that fit, then into components.

        Cutting a block of an acyclic block graph in topological order keeps it acyclic:
        no edge goes from a later part to an earlier one, and a path of blocks between
        them would have been a cycle through the uncut block. Components likewise. The longest fitting prefix is
        found by bisection (footprints grow with the prefix); a single layer always fits.
        """
        parts: list[Block] = []
        rest = block
        while rest:
            if self.fits(rest, act, weight):
                parts.append(rest)
                break
            low, high = 1, len(rest) - 1
            while low < high:
                mid = (low + high + 1) // 2
                if self.fits(rest[:mid], act, weight):
                    low = mid
                else:
                    high = mid - 1
            parts.append(rest[:low])
            rest = rest[low:]
        out: list[Block] = []
        for component in self.components(parts):
            if len(component) == 1 or self.fits(component, act, weight):
                out.append(component)
            else:  # footprints are not a contract of the cost model: split again if a part grew
                out.extend(self._split_to_fit(component, act, weight))
        return out

    # ------------------------------------------------------------- conversions
    def singletons(self, act: int, weight: int) -> Genome:
        """Every layer alone (valid for capacities that hold every layer)."""
        return self.normalize(((v,) for v in range(self.n)), act, weight)

    def to_solution(self, genome: Genome) -> PartitionSolution:
        """The problem's solution of a genome."""
        return PartitionSolution.from_indices(
            self.instance, genome.blocks, self.acts[genome.act], self.weights[genome.weight] if not self.shared else 0
        )

    def from_solution(self, solution: PartitionSolution) -> Genome:
        """A genome from a solution (a warm start), repaired if it is not valid.

        Capacities that are not candidates move to the nearest candidate.

        Raises
        ------
        InputError
            The solution does not list every layer of the workload exactly once.
        """
        try:
            groups = solution.indices(self.instance)
        except KeyError as exc:
            raise InputError(f"warm start names unknown layer {exc.args[0]!r}", "warm start") from None
        covered = sorted(v for g in groups for v in g)
        if covered != list(range(self.n)):
            raise InputError(
                "warm start does not put every layer in exactly one subgraph",
                "warm start",
                "give a partition of this instance's workload",
            )
        act = self.nearest_act(solution.act_capacity_bytes)
        weight = 0 if self.shared else self.nearest_weight(solution.weight_capacity_bytes)
        return self.normalize(groups, act, weight)


def _nearest(values: Sequence[int], target: float) -> int:
    """Index of the value nearest to ``target`` (the smaller on a tie)."""
    return min(range(len(values)), key=lambda i: (abs(values[i] - target), i))
