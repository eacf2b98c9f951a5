"""Cocco's genome operators for the partition problem, shared by the GA and SA.

* :func:`random_genome`: random capacities and a random grouping in topological
  order: each layer starts a new subgraph with a per-genome probability, else joins
  the subgraph of a random predecessor; subgraphs that do not fit are then split in
  situ (and cycles broken) by the repair.
* :func:`crossover`: capacities averaged (rounded to the nearest candidate); the
  partition rebuilt layer by layer in topological order, each layer following one
  parent (the parent changes at ``crossover_points`` random cut points): a layer
  joins the child subgraphs of its predecessors that share its subgraph in that
  parent (merging them on conflict), else starts a new one (a split).
* mutations: *modify-node* (a layer moves to the subgraph of a neighbour),
  *split-subgraph* (a subgraph cut at a random point of its topological order),
  *merge-subgraph* (two subgraphs joined by an edge merge, with every subgraph on a
  path between them so that no cycle appears) and *mutation-DSE* (each capacity
  moves by a normal step around its value, to the nearest candidate; only when
  capacities are explored).

Every operator ends with :meth:`PartitionSpace.normalize`, so each returns a valid
genome: components, broken cycles, capacities that hold every layer, in-situ
splitting of subgraphs over capacity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from accelsched.heuristics.partition.space import Block, Genome, PartitionSpace

__all__ = [
    "MoveParams",
    "crossover",
    "merge_subgraph",
    "modify_node",
    "mutate",
    "mutate_capacity",
    "random_genome",
    "split_subgraph",
]


@dataclass(frozen=True)
class MoveParams:
    """Parameters of the genome operators, validated at construction.

    Parameters
    ----------
    new_subgraph_low, new_subgraph_high
        A random genome draws its probability of starting a new subgraph at a layer
        (with predecessors) uniformly in this range, 0 <= low <= high <= 1.
    crossover_points
        Cut points of the topological order at which the crossover switches parent, >= 0.
    dse_sigma
        Standard deviation of a mutation-DSE step, as a fraction of the span of the
        candidate capacities, > 0.
    """

    new_subgraph_low: float = 0.02
    new_subgraph_high: float = 0.3
    crossover_points: int = 2
    dse_sigma: float = 0.15

    def __post_init__(self) -> None:
        for name in ("new_subgraph_low", "new_subgraph_high", "dse_sigma"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"MoveParams: field {name} must be a number in [0, 1], got {value!r}")
        if self.new_subgraph_low > self.new_subgraph_high:
            raise ValueError(
                f"MoveParams: field new_subgraph_low={self.new_subgraph_low!r} is above "
                f"new_subgraph_high={self.new_subgraph_high!r}"
            )
        if self.dse_sigma == 0:
            raise ValueError("MoveParams: field dse_sigma must be > 0, got 0")
        points = self.crossover_points
        if isinstance(points, bool) or not isinstance(points, int) or points < 0:
            raise ValueError(f"MoveParams: field crossover_points must be an integer >= 0, got {points!r}")


def random_genome(space: PartitionSpace, params: MoveParams, rng: np.random.Generator) -> Genome:
    """A random valid genome (see the module doc)."""
    act, weight = space.raise_capacity(int(rng.integers(len(space.acts))), int(rng.integers(len(space.weights))))
    chance = float(rng.uniform(params.new_subgraph_low, params.new_subgraph_high))
    label = list(range(space.n))
    groups: dict[int, list[int]] = {}
    for v in range(space.n):
        preds = space.preds[v]
        if preds and rng.random() >= chance:
            label[v] = label[preds[int(rng.integers(len(preds)))]]
        groups.setdefault(label[v], []).append(v)
    return space.normalize(groups.values(), act, weight)


def crossover(space: PartitionSpace, a: Genome, b: Genome, params: MoveParams, rng: np.random.Generator) -> Genome:
    """A child of ``a`` and ``b`` (see the module doc)."""
    act = space.nearest_act((space.acts[a.act] + space.acts[b.act]) / 2)
    weight = space.nearest_weight((space.weights[a.weight] + space.weights[b.weight]) / 2)
    n = space.n
    parent = np.zeros(n, dtype=np.int64)
    first = int(rng.integers(2))
    for cut in rng.integers(1, max(2, n), size=params.crossover_points):
        parent[int(cut) :] ^= 1
    parent ^= first
    labels = np.stack([np.asarray(space.labels(a)), np.asarray(space.labels(b))])
    followed = labels[parent, np.arange(n)]
    key = (parent * n + followed).tolist()
    root: dict[int, int] = {}

    def find(k: int) -> int:
        while root.get(k, k) != k:
            k = root[k]
        return k

    tail, head = space.edge_tail, space.edge_head
    across = np.flatnonzero(parent[tail] != parent[head])
    for p, v in zip(tail[across].tolist(), head[across].tolist(), strict=True):
        if labels[parent[v], p] == labels[parent[v], v]:
            root[find(key[p])] = find(key[v])
    representative = {k: find(k) for k in set(key)}
    groups: dict[int, list[int]] = {}
    for v, k in enumerate(key):
        groups.setdefault(representative[k], []).append(v)
    return space.normalize(groups.values(), act, weight)


def modify_node(space: PartitionSpace, genome: Genome, rng: np.random.Generator) -> Genome | None:
    """Move a random layer with a neighbour in another subgraph into that subgraph (None if there is none)."""
    label = space.labels(genome)
    boundary = [v for v in range(space.n) if any(label[u] != label[v] for u in space.neighbours[v])]
    if not boundary:
        return None
    v = boundary[int(rng.integers(len(boundary)))]
    targets = sorted({label[u] for u in space.neighbours[v]} - {label[v]})
    target = targets[int(rng.integers(len(targets)))]
    groups = [list(block) for block in genome.blocks]
    groups[label[v]].remove(v)
    groups[target].append(v)
    return space.normalize((g for g in groups if g), genome.act, genome.weight)


def split_subgraph(space: PartitionSpace, genome: Genome, rng: np.random.Generator) -> Genome | None:
    """Cut a random subgraph of two or more layers at a random point of its topological order."""
    splittable = [k for k, block in enumerate(genome.blocks) if len(block) > 1]
    if not splittable:
        return None
    k = splittable[int(rng.integers(len(splittable)))]
    block = genome.blocks[k]
    cut = int(rng.integers(1, len(block)))
    groups: list[Block] = [*genome.blocks[:k], block[:cut], block[cut:], *genome.blocks[k + 1 :]]
    return space.normalize(groups, genome.act, genome.weight)


def merge_subgraph(space: PartitionSpace, genome: Genome, rng: np.random.Generator) -> Genome | None:
    """Merge two subgraphs joined by an edge, with every subgraph on a path between them."""
    label = space.labels(genome)
    edges = sorted({(label[p], label[v]) for v in range(space.n) for p in space.preds[v] if label[p] != label[v]})
    if not edges:
        return None
    first, last = edges[int(rng.integers(len(edges)))]
    out: list[set[int]] = [set() for _ in genome.blocks]
    for k, j in edges:
        out[k].add(j)
    after = _reach(out, first, last)
    into: list[set[int]] = [set() for _ in genome.blocks]
    for k, j in edges:
        into[j].add(k)
    before = _reach(into, last, first)
    merged = after & before
    groups = [list(b) for k, b in enumerate(genome.blocks) if k not in merged]
    groups.append([v for k in sorted(merged) for v in genome.blocks[k]])
    return space.normalize(groups, genome.act, genome.weight)


def _reach(adjacent: list[set[int]], start: int, bound: int) -> set[int]:
    """Blocks reachable from ``start`` without passing block positions beyond ``bound``
    (positions are a topological order, so nothing past ``bound`` leads back to it)."""
    low, high = min(start, bound), max(start, bound)
    seen, stack = {start}, [start]
    while stack:
        k = stack.pop()
        for j in adjacent[k]:
            if low <= j <= high and j not in seen:
                seen.add(j)
                stack.append(j)
    return seen


def mutate_capacity(
    space: PartitionSpace, genome: Genome, params: MoveParams, rng: np.random.Generator
) -> Genome | None:
    """Mutation-DSE: move each capacity by a normal step (None when there is one candidate)."""
    if len(space.acts) == 1 and len(space.weights) == 1:
        return None
    act, weight = genome.act, genome.weight
    if len(space.acts) > 1:
        span = space.acts[-1] - space.acts[0]
        act = space.nearest_act(space.acts[act] + rng.normal(0.0, params.dse_sigma * span))
    if len(space.weights) > 1:
        span = space.weights[-1] - space.weights[0]
        weight = space.nearest_weight(space.weights[weight] + rng.normal(0.0, params.dse_sigma * span))
    return space.normalize(genome.blocks, act, weight)


def mutate(space: PartitionSpace, genome: Genome, params: MoveParams, rng: np.random.Generator) -> Genome | None:
    """One of the four mutations, drawn uniformly among those that apply (None if none does)."""
    moves: list[Callable[[], Genome | None]] = [
        lambda: modify_node(space, genome, rng),
        lambda: split_subgraph(space, genome, rng),
        lambda: merge_subgraph(space, genome, rng),
    ]
    if len(space.acts) > 1 or len(space.weights) > 1:
        moves.append(lambda: mutate_capacity(space, genome, params, rng))
    while moves:
        move = moves.pop(int(rng.integers(len(moves))))
        child = move()
        if child is not None:
            return child
    return None
