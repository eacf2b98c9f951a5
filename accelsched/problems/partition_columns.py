"""The candidate columns of the partition problem: every subgraph a partition may use.

A *column* is a set of layers that can be one subgraph of some valid partition: it
is weakly connected, it fits the largest candidate capacities in some mode, and it
is *convex* (no path leaves it and comes back: the layer on such a path would have
to run both after and before the subgraph, so no valid partition uses a
non-convex set). The exact models choose among these columns.

Algorithm
---------
Layers are topological positions ``0 .. n-1`` and sets are bit masks. For each
root ``r``, the search lists the convex connected sets whose smallest member is
``r``, so every set is listed once (a per-root ``seen`` set removes the several
ways of growing the same set). It starts from ``{r}`` and grows a set ``S`` by

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
  under adding layers (the lcm of the update offsets can shrink), so a set that
  does not fit is still grown. Growth stops at a set whose :func:`footprint_bound`
  exceeds the largest capacity: the bound never decreases when layers are added,
  so no superset fits either. The bound is, for sets of two or more layers (whose
  only mode is ``resident``), the sum of the weights (the weight buffer, or the
  shared buffer with the activations) and a lower bound of the activation
  footprint: every tensor the subgraph buffers (the outputs of its members and the
  tensors entering it) holds at least ``min(H, 2)`` of its ``H`` rows, and a tensor
  read inside the subgraph holds at least ``min(H, max f_c(1) + max step_c)`` rows
  over its readers ``c`` (what ``c`` reads for one output row, plus the rows one
  update advances); the set of buffered tensors and of their readers only grows
  with the subgraph, so the bound only grows.

Every set visited is evaluated by the cost model and kept when it fits the largest
capacities in some mode. When the number of columns would exceed ``budget`` the
search stops and the set is marked incomplete: the exact models then cannot prove
optimality and say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from accelsched.hardware.cost.partition import PartitionCostModel, SubgraphCost, Tensor
from accelsched.problems.partition import PartitionInstance

__all__ = ["DEFAULT_BUDGET", "Column", "ColumnSet", "FootprintBound", "enumerate_columns", "mask_of", "members_of"]

DEFAULT_BUDGET = 200_000
"""Default largest number of columns listed before the search gives up."""

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
        Whether every column was listed (False when the budget stopped the search).
    budget
        The largest number of columns the search was allowed to list.
    visited
        Convex connected sets evaluated by the cost model (columns and sets that did not fit).
    """

    columns: tuple[Column, ...]
    complete: bool
    budget: int
    visited: int

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
        self._model = model
        self._outputs = [model.output_tensor(i) for i in range(n)]
        self._inputs = [model.network_input(i) if not model.preds[i] else None for i in range(n)]
        self._weights = [layer.weight_bytes for layer in model.layers]

    def weight_bytes(self, members: Sequence[int]) -> int:
        """Resident weights of the members, bytes."""
        return sum(self._weights[i] for i in members)

    def activation_bytes(self, members: Sequence[int]) -> float:
        """A lower bound of the resident activation footprint, bytes."""
        model = self._model
        inside = set(members)
        readers: dict[int, list[int]] = {}
        total = 0.0
        for v in members:
            net_input = self._inputs[v]
            if net_input is not None:
                total += self._tensor_rows(net_input, [v]) * net_input.row_bytes
            for p in model.preds[v]:
                if p not in inside:
                    readers.setdefault(p, []).append(v)
        for u in members:
            readers[u] = [c for c in model.succs[u] if c in inside]
        for producer, consumers in readers.items():
            tensor = self._outputs[producer]
            total += self._tensor_rows(tensor, consumers) * tensor.row_bytes
        return total

    def _tensor_rows(self, tensor: Tensor, consumers: Sequence[int]) -> int:
        """Rows of ``tensor`` buffered whatever the update offsets: ``min(H, max f_c(1) + max step_c)``."""
        if not consumers:
            return min(tensor.height, 2)
        model = self._model
        need = max(model._rows_needed(c, tensor, 1) for c in set(consumers))
        step = max(model._step(c, tensor, 1) for c in set(consumers))
        return min(tensor.height, need + step)

    def exceeds(
        self, members: Sequence[int], shared: bool, act_capacity_bytes: int, weight_capacity_bytes: int
    ) -> bool:
        """Whether the set, and so every superset, cannot fit the buffer(s) in the resident mode."""
        weights = self.weight_bytes(members)
        acts = self.activation_bytes(members)
        if shared:
            return acts + weights > act_capacity_bytes * (1 + _SLACK)
        return weights > weight_capacity_bytes or acts > act_capacity_bytes * (1 + _SLACK)


def enumerate_columns(instance: PartitionInstance, budget: int = DEFAULT_BUDGET) -> ColumnSet:
    """Every convex, weakly connected set of layers that fits the largest capacities.

    Parameters
    ----------
    instance
        The partition instance.
    budget
        Largest number of columns to list; reaching it stops the search with
        ``complete=False``.

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
    model = instance.cost_model
    n = instance.n_layers
    desc, anc = _reachability(model)
    neighbours = [mask_of((*model.preds[v], *model.succs[v])) for v in range(n)]
    bound = FootprintBound(model)
    act_cap = instance.act_candidates_bytes[-1]
    weight_cap = instance.weight_candidates_bytes[-1] if instance.weight_candidates_bytes else 0
    columns: list[Column] = []
    visited = 0
    for root in range(n):
        above = ~((2 << root) - 1)
        seen = {1 << root}
        stack = [(1 << root, desc[root], anc[root], neighbours[root])]
        while stack:
            mask, down, up, near = stack.pop()
            members = members_of(mask)
            cost = model.subgraph(members)
            visited += 1
            if instance.fits_largest(cost):
                if len(columns) == budget:
                    return ColumnSet(tuple(sorted(columns, key=_key)), False, budget, visited)
                columns.append(Column(members, cost))
            frontier = near & above & ~mask
            while frontier:
                low = frontier & -frontier
                frontier ^= low
                v = low.bit_length() - 1
                grown_down, grown_up = down | desc[v], up | anc[v]
                grown = mask | low | (grown_down & grown_up)
                if grown in seen:
                    continue
                seen.add(grown)
                grown_members = members_of(grown)
                if bound.exceeds(grown_members, instance.shared, act_cap, weight_cap):
                    continue
                grown_near = near
                for u in members_of(grown & ~mask):
                    grown_near |= neighbours[u]
                stack.append((grown, grown_down, grown_up, grown_near))
    return ColumnSet(tuple(sorted(columns, key=_key)), True, budget, visited)


def _key(column: Column) -> tuple[int, ...]:
    return column.members


def _reachability(model: PartitionCostModel) -> tuple[list[int], list[int]]:
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
