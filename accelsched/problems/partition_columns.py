"""The candidate columns of the partition problem: every subgraph a partition may use.

A *column* is a set of layers that can be one subgraph of some valid partition: it
is weakly connected, it fits the largest candidate capacities in some mode, and it
is *convex* (no path leaves it and comes back: the layer on such a path would have
to run both after and before the subgraph, so no valid partition uses a
non-convex set). The exact models choose among these columns.

Algorithm
---------
Layers are topological positions ``0 .. n-1`` and sets are bit masks. A set is
listed from its smallest member ``r``, its *root*, so every set has one origin (a
``seen`` set removes the several ways of growing the same set). The search starts
from every single layer and grows a set ``S`` of root ``r`` by

    S' = closure(S + v),  v a neighbour of S (a predecessor or successor) with v > r,

where ``closure(X) = X | (desc(X) & anc(X))`` adds every layer on a path between
two members (``desc``/``anc``: the union of the members' strict descendants /
ancestors). Three facts make this exact:

* *Complete.* If ``T`` is convex and connected and ``S`` is a convex connected
  proper subset, ``T`` has a member ``v`` adjacent to ``S`` and, ``T`` being
  convex, ``closure(S + v)`` is inside ``T``; so every ``T`` is reached from
  ``{min T}`` by growth steps through convex connected sets.
* *Closed in one step.* A layer on a path from ``u`` to ``w`` has its descendants
  inside ``desc(u)`` and its ancestors inside ``anc(w)``, so adding it changes
  neither mask: one ``desc & anc`` gives the closure. It lies strictly between
  ``u`` and ``w`` in topological order, so the closure keeps ``r`` the minimum,
  and it is connected to ``S`` through the path.
* *Pruning on monotone bounds only.* The footprint of a subgraph is not monotone
  under adding layers (an update offset is an lcm capped at the tensor height,
  which can shrink), so a set that does not fit is still grown. Growth stops at a
  set whose :class:`FootprintBound` exceeds the largest capacity: the bound never decreases when layers are added,
  so no superset fits either. The bound is, for sets of two or more layers (whose
  only mode is ``resident``), the sum of the weights (the weight buffer, or the
  shared buffer with the activations) and a lower bound of the activation
  footprint: every tensor the subgraph buffers (the outputs of its members and the
  tensors entering it) holds at least ``min(H, 2)`` of its ``H`` rows, and a tensor
  read inside the subgraph holds at least ``min(H, max f_c(1) + max step_c)`` rows
  over its readers ``c`` (what ``c`` reads for one output row, plus the rows one
  update advances); the set of buffered tensors and of their readers only grows
  with the subgraph, so the bound only grows.

Sets are evaluated by the cost model in growth order (breadth first: the single
layers, then the sets one growth step away, ...) and kept when they fit the largest
capacities in some mode. The ``budget`` bounds the number of sets evaluated (so the
number of columns, and the time); when it is reached with sets left, the search
stops and the set is marked incomplete; the exact models then generate the columns
they need (:mod:`accelsched.formulations.partition.colgen`), and say so when they
cannot prove optimality. Breadth first, an incomplete set still holds every single
layer and the smallest fused subgraphs.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from accelsched.hardware.cost.partition import PartitionCostModel, SubgraphCost, Tensor
from accelsched.problems.partition import PartitionInstance

__all__ = [
    "DEFAULT_BUDGET",
    "Column",
    "ColumnSet",
    "FootprintBound",
    "enumerate_columns",
    "mask_of",
    "members_of",
    "reachability",
]

DEFAULT_BUDGET = 200_000
"""Default largest number of sets the search evaluates (and so of columns) before it gives up."""

_SLACK = 1e-9
"""Relative slack of the bound comparison (the bound sums floats, the footprint rounds up)."""


def mask_of(members: Iterable[int]) -> int:
    """The bit mask of a set of layer indices."""
    mask = 0
    for i in members:
        mask |= 1 << i
    return mask


def members_of(mask: int) -> tuple[int, ...]:
    """The layer indices of a bit mask, increasing."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return tuple(out)


@dataclass(frozen=True)
class Column:
    """One candidate subgraph.

    Attributes
    ----------
    members
        Layer indices (topological positions), increasing.
    cost
        Its cost from the shared cost model.
    """

    members: tuple[int, ...]
    cost: SubgraphCost

    @property
    def mask(self) -> int:
        """The members as a bit mask."""
        return mask_of(self.members)


@dataclass(frozen=True)
class ColumnSet:
    """The columns of an instance.

    Attributes
    ----------
    columns
        The columns, sorted by their members.
    complete
        Whether the columns hold an optimal partition: every column was listed (False when
        the budget or a deadline stopped the search), or column generation proved that
        the missing ones are in no partition better than its own.
    budget
        The largest number of sets the search was allowed to evaluate.
    visited
        Convex connected sets evaluated by the cost model (columns and sets that did not fit).
    stopped
        Why the search stopped early (empty when complete).
    bound
        A lower bound of the objective of every partition, when column generation proved
        one (:mod:`accelsched.formulations.partition.colgen`), else None.
    listed_below
        Every column of fewer layers than this is in ``columns`` (a stopped search: the
        smallest set still waiting to be evaluated; ``n_layers + 1`` when the list is
        complete, 0 when unknown).
    """

    columns: tuple[Column, ...]
    complete: bool
    budget: int
    visited: int
    stopped: str = ""
    bound: float | None = None
    listed_below: int = 0

    def __len__(self) -> int:
        return len(self.columns)


class FootprintBound:
    """A lower bound of a multi-layer subgraph's footprints that never decreases when layers are added.

    Parameters
    ----------
    model
        The cost model of the instance.
    """

    def __init__(self, model: PartitionCostModel) -> None:
        n = len(model.layers)
        self._preds, self._succs = model.preds, model.succs
        outputs = [model.output_tensor(u) for u in range(n)]
        self._height = [t.height for t in outputs]
        self._row_bytes = [t.row_bytes for t in outputs]
        self._weights = [layer.weight_bytes for layer in model.layers]
        self._reads = [{c: self._read(model, c, outputs[u]) for c in model.succs[u]} for u in range(n)]
        self._input_bytes = [0.0] * n
        for v in range(n):
            if not model.preds[v]:
                tensor = model.network_input(v)
                need, step = self._read(model, v, tensor)
                self._input_bytes[v] = min(tensor.height, need + step) * tensor.row_bytes

    @staticmethod
    def _read(model: PartitionCostModel, consumer: int, tensor: Tensor) -> tuple[int, int]:
        """Rows ``consumer`` reads of ``tensor`` for one output row, and rows it advances per update."""
        return model._rows_needed(consumer, tensor, 1), model._step(consumer, tensor, 1)

    def weight_bytes(self, members: Sequence[int]) -> int:
        """Resident weights of the members, bytes."""
        return sum(self._weights[i] for i in members)

    def activation_bytes(self, members: Sequence[int]) -> float:
        """A lower bound of the resident activation footprint, bytes."""
        inside = set(members)
        total = 0.0
        external: set[int] = set()
        for v in members:
            total += self._input_bytes[v]
            external.update(p for p in self._preds[v] if p not in inside)
        for u in (*members, *external):
            readers = [c for c in self._succs[u] if c in inside]
            total += self._rows(u, readers) * self._row_bytes[u]
        return total

    def _rows(self, producer: int, readers: Sequence[int]) -> int:
        """Rows of a tensor buffered whatever the update offsets: ``min(H, max f_c(1) + max step_c)``."""
        height = self._height[producer]
        if not readers:
            return min(height, 2)
        reads = self._reads[producer]
        return min(height, max(reads[c][0] for c in readers) + max(reads[c][1] for c in readers))

    def exceeds(
        self, members: Sequence[int], shared: bool, act_capacity_bytes: int, weight_capacity_bytes: int
    ) -> bool:
        """Whether the set, and so every superset, cannot fit the buffer(s) in the resident mode."""
        bounds = (self.weight_bytes(members), self.activation_bytes(members))
        return self.over(bounds, shared, act_capacity_bytes, weight_capacity_bytes)

    @staticmethod
    def over(bounds: tuple[int, float], shared: bool, act_capacity_bytes: int, weight_capacity_bytes: int) -> bool:
        """Whether bounds ``(weight bytes, activation bytes)`` of a set exceed the buffer(s)."""
        weights, acts = bounds
        if shared:
            return acts + weights > act_capacity_bytes * (1 + _SLACK)
        return weights > weight_capacity_bytes or acts > act_capacity_bytes * (1 + _SLACK)


class _Set(NamedTuple):
    """A convex connected set during the search, with what growing it needs."""

    mask: int
    down: int
    """Union of the members' strict descendants."""
    up: int
    """Union of the members' strict ancestors."""
    near: int
    """Union of the members' predecessors and successors."""
    above: int
    """Layers after the root (the only ones the set may take)."""


class _Growth:
    """The growth step of the search on one instance: ``closure(S + v)`` for the neighbours ``v``."""

    def __init__(self, instance: PartitionInstance) -> None:
        model = instance.cost_model
        self.instance = instance
        self.desc, self.anc = reachability(model)
        self.neighbours = [mask_of((*model.preds[v], *model.succs[v])) for v in range(instance.n_layers)]
        self.bound = FootprintBound(model)
        self.act_cap = instance.act_candidates_bytes[-1]
        self.weight_cap = instance.weight_candidates_bytes[-1] if instance.weight_candidates_bytes else 0

    def single(self, v: int) -> _Set:
        """The set ``{v}``."""
        return _Set(1 << v, self.desc[v], self.anc[v], self.neighbours[v], ~((2 << v) - 1))

    def children(self, node: _Set, seen: set[int]) -> Iterator[_Set]:
        """The unseen sets one growth step away whose bound fits (each is marked seen)."""
        frontier = node.near & node.above & ~node.mask
        while frontier:
            low = frontier & -frontier
            frontier ^= low
            v = low.bit_length() - 1
            down, up = node.down | self.desc[v], node.up | self.anc[v]
            grown = node.mask | low | (down & up)
            if grown in seen:
                continue
            seen.add(grown)
            if self.bound.exceeds(members_of(grown), self.instance.shared, self.act_cap, self.weight_cap):
                continue
            near = node.near
            for u in members_of(grown & ~node.mask):
                near |= self.neighbours[u]
            yield _Set(grown, down, up, near, node.above)


def enumerate_columns(
    instance: PartitionInstance, budget: int = DEFAULT_BUDGET, deadline: float | None = None
) -> ColumnSet:
    """Every convex, weakly connected set of layers that fits the largest capacities.

    Sets are evaluated in growth order (every single layer first, then the sets one
    growth step away, and so on), so a search stopped early keeps the small columns.

    Parameters
    ----------
    instance
        The partition instance.
    budget
        Largest number of sets evaluated by the cost model (every column is one of
        them); reaching it with sets left to evaluate stops the search with
        ``complete=False``.
    deadline
        A :func:`time.perf_counter` value at which the search stops (``complete=False``).

    Returns
    -------
    ColumnSet
        The columns and whether the list is complete.

    Raises
    ------
    ValueError
        If ``budget`` is not a positive integer.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"enumerate_columns: budget must be a positive integer, got {budget!r}")
    growth = _Growth(instance)
    queue = deque(growth.single(v) for v in range(instance.n_layers))
    seen = {node.mask for node in queue}
    columns: list[Column] = []
    visited = 0
    stopped = ""
    while queue:
        if visited == budget:
            stopped = f"column budget reached ({budget} sets evaluated)"
            break
        if deadline is not None and visited % 256 == 0 and time.perf_counter() > deadline:
            stopped = "time limit reached during column enumeration"
            break
        node = queue.popleft()
        members = members_of(node.mask)
        cost = instance.cost_model.subgraph(members)
        visited += 1
        if instance.fits_largest(cost):
            columns.append(Column(members, cost))
        queue.extend(growth.children(node, seen))
    # The stopped search is a prefix of the complete one, in which every set is grown from a
    # strictly smaller one: a set not evaluated has an ancestor (or is one) waiting in the queue.
    below = min((node.mask.bit_count() for node in queue), default=instance.n_layers + 1) if stopped else 0
    below = below or instance.n_layers + 1
    return ColumnSet(tuple(sorted(columns, key=_key)), not stopped, budget, visited, stopped, listed_below=below)


def _key(column: Column) -> tuple[int, ...]:
    return column.members


def reachability(model: PartitionCostModel) -> tuple[list[int], list[int]]:
    """Strict descendants and ancestors of every layer as bit masks."""
    n = len(model.layers)
    desc = [0] * n
    for u in reversed(range(n)):
        for c in model.succs[u]:
            desc[u] |= (1 << c) | desc[c]
    anc = [0] * n
    for v in range(n):
        for p in model.preds[v]:
            anc[v] |= (1 << p) | anc[p]
    return desc, anc
