r"""A lower bound of the partition objective that needs no columns: the traffic each capacity forces.

The exact models prove their optimum over a column set; when the set is incomplete
(too many columns to list) and column generation has not proved a
bound either, they still owe the user a valid lower bound. The weakest one,
:func:`compulsory_bound`, charges the
smallest capacities and the traffic of the whole network fused on an unbounded
buffer. This module adds, per pair of candidates, the traffic no partition under
them can avoid, which small candidates make large.

The metric as a cut
-------------------
The metric of a partition (every subgraph in the mode the evaluator picks) is

.. math::

    \textstyle\sum_i b_i + \sum_u \big(e^w_u W_u + e^r_u R_u\big) + \sum_{\{i\}} x_i,

with :math:`b_i` what layer :math:`i` costs in any subgraph, :math:`e^w_u, e^r_u` the
cost of writing the output tensor of :math:`u` to DRAM and of reading it once
(:class:`~accelsched.formulations.partition.pricing.TrafficTerms`),
:math:`W_u \in \{0, 1\}` whether some consumer of :math:`u` is outside its subgraph,
:math:`R_u` the number of other subgraphs that hold a consumer of :math:`u`, and
:math:`x_i` the extra reads of a single-layer subgraph in a streaming mode (only
single layers have other modes than ``resident``). :math:`\sum_i b_i` is the
compulsory traffic, every other term is non-negative, and each depends on one tensor
or one layer: a lower bound of each term is a lower bound of the sum.

What a pair of candidates forces
--------------------------------
Let :math:`F` be the monotone footprint bound of the column search
(:class:`~accelsched.problems.partition_columns.FootprintBound`: no superset of a set
it rejects fits), and :math:`\mathrm{cl}(X)` the layers on paths between members of
:math:`X` (a subgraph holding :math:`X` holds :math:`\mathrm{cl}(X)`, being convex).
Under activation (or shared) capacity :math:`A` and weight capacity :math:`B`:

* *Cut tensors.* When :math:`F` rejects :math:`\mathrm{cl}(\{u\} \cup \mathrm{cons}(u))`,
  no subgraph holds :math:`u` with all its consumers: :math:`W_u = 1` and
  :math:`R_u \ge \kappa_u`, where :math:`\kappa_u \ge 1` is the size of a set of
  consumers no two of which, nor one of them with :math:`u`, fit one subgraph
  (their pairwise closures rejected; found greedily, so any such set is valid).
* *Layers alone.* When the resident mode of layer :math:`i` alone does not fit and
  :math:`F` rejects :math:`\mathrm{cl}(\{i, j\})` for every neighbour :math:`j`, the
  layer runs alone in its cheapest fitting mode: :math:`x_i` is at least that mode's
  metric minus the resident one's.
* *Infeasible pairs.* When a single layer fits no mode, no partition uses the pair.

So :math:`\mathrm{LB}(A, B) = \text{capacity terms} + w\,(\sum_i b_i + \text{forced})`
and the bound is the least :math:`\mathrm{LB}` over the pairs (one pair with fixed
capacities, whose capacity terms are 0). Every pair's value is at least the
compulsory bound. The bound is cheap (the footprint bounds of the closures are
computed once, compared with every pair) and exact when the forced cuts are the only
ones an optimum needs (a chain whose layers fit only alone).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import Protocol

from accelsched.formulations.partition.pricing import TrafficTerms, closure
from accelsched.problems.partition import PartitionInstance
from accelsched.problems.partition_columns import FootprintBound, reachability

__all__ = [
    "CapacityTerms",
    "ForcedTraffic",
    "compulsory_bound",
    "forced_duals",
    "forced_traffic_bound",
    "forced_traffic_per_pair",
]


class CapacityTerms(Protocol):
    """What the bounds read of a variant table
    (:class:`~accelsched.formulations.partition.common.VariantTable` is one): the instance, its
    candidate capacities and the objective's coefficients."""

    @property
    def instance(self) -> PartitionInstance:
        """The partition instance."""
        ...

    @property
    def act_bytes(self) -> Sequence[int]:
        """The activation (or shared) buffer's candidate capacities, in bytes."""
        ...

    @property
    def weight_bytes(self) -> Sequence[int]:
        """The weight buffer's candidate capacities, in bytes (``(0,)`` with a shared buffer)."""
        ...

    @property
    def metric_weight(self) -> float:
        """The metric's weight in the objective (:math:`w`)."""
        ...

    def act_coefficient(self, k: int) -> float:
        """The objective's term for the ``k``-th activation (or shared) candidate."""
        ...

    def weight_coefficient(self, k: int) -> float:
        """The objective's term for the ``k``-th weight candidate."""
        ...


def compulsory_bound(table: CapacityTerms) -> float:
    """A lower bound of the objective that needs no columns: compulsory traffic, smallest capacities.

    The whole network as one subgraph on an unbounded buffer moves every weight once,
    reads the network input once per source layer and writes the network output: the
    traffic every partition has (splitting only adds the tensors that cross subgraphs,
    and streaming modes only add reads), while the on-chip energy does not depend on
    the partition. So its metric bounds every partition's, and the cheapest
    candidates bound the capacity term of co-exploration.
    """
    model = table.instance.cost_model
    whole = model.subgraph(range(table.instance.n_layers))
    capacity = table.act_coefficient(0) + table.weight_coefficient(0)
    return capacity + table.metric_weight * table.instance.metric_of(whole, whole.resident)


@dataclass(frozen=True)
class ForcedTraffic:
    """The bound and the pair of candidates that gives it.

    Attributes
    ----------
    value
        The lower bound of the objective.
    act_index, weight_index
        The pair of candidates (``weight_index`` 0 with a shared buffer).
    cut_tensors
        Tensors every partition under that pair writes to DRAM.
    alone_layers
        Layers every partition under that pair runs alone in a streaming mode.
    """

    value: float
    act_index: int
    weight_index: int
    cut_tensors: int
    alone_layers: int
    metric: float
    """The lower bound of the metric of every partition under the pair (bytes or pJ)."""


@dataclass(frozen=True)
class _Tensor:
    """The footprint bounds a tensor's cut depends on."""

    producer: int
    readers: tuple[int, ...]
    """Its consumers, each once, in order."""
    hull: tuple[int, float]
    """Bounds of the closure of the producer and all its consumers."""
    with_producer: tuple[tuple[int, float], ...]
    """Per consumer: bounds of the closure of it and the producer."""
    between: dict[tuple[int, int], tuple[int, float]]
    """Per pair of consumers (positions in ``with_producer``): bounds of their closure."""


def forced_traffic_bound(table: CapacityTerms) -> ForcedTraffic | None:
    """The least, over the pairs of candidates, of the objective the forced traffic gives: the
    :func:`forced_traffic_per_pair` of least value, or None when no pair of candidates holds every
    single layer (the instance is infeasible)."""
    return min(forced_traffic_per_pair(table), key=attrgetter("value"), default=None)


def forced_traffic_per_pair(table: CapacityTerms) -> tuple[ForcedTraffic, ...]:
    """The forced traffic of every pair of candidates that holds every single layer.

    Parameters
    ----------
    table
        The variant table of the instance (its capacity and metric coefficients).

    Returns
    -------
    tuple of ForcedTraffic
        One per feasible pair, in the order of the candidates (activation or shared first).
    """
    cuts = _Cuts(table.instance)
    found: list[ForcedTraffic] = []
    for a, act in enumerate(table.act_bytes):
        for w, weight in enumerate(table.weight_bytes):
            forced = cuts.under(act, weight)
            if forced is None:
                continue
            metric = cuts.compulsory + forced.extra
            value = table.act_coefficient(a) + table.weight_coefficient(w) + table.metric_weight * metric
            found.append(ForcedTraffic(value, a, w, forced.cut, forced.alone, metric))
    return tuple(found)


def forced_duals(table: CapacityTerms) -> tuple[float, ...] | None:
    r"""The forced traffic of a fixed-capacity instance as cover duals: a share of it per layer.

    Each forced term of the module docstring is paid by every subgraph holding one layer:
    the write of a cut tensor :math:`u` by the subgraph of :math:`u` (none holds :math:`u`
    with all its consumers), one read of :math:`u` by the subgraph of each consumer in its
    set of size :math:`\kappa_u` (none holds it with :math:`u` or with another of them), and a
    layer alone's extra reads by its single-layer subgraph. With :math:`\pi_i` layer
    :math:`i`'s base cost :math:`b_i` plus the terms it pays, every subgraph that fits, in
    every mode, costs at least :math:`\sum_{i \in S} \pi_i`: every reduced cost is
    non-negative at :math:`\pi`, a point of the dual of the master's LP over all columns,
    which proves :math:`\sum_i \pi_i` (column generation's first inner point,
    :mod:`~accelsched.formulations.partition.colgen`). That is the forced traffic less one
    read of each cut tensor whose consumers can each share a subgraph with it (the bound
    counts one read there, which no single layer pays).

    Parameters
    ----------
    table
        The variant table of an instance with one candidate per buffer.

    Returns
    -------
    tuple of float or None
        :math:`w \pi_i` per layer (:math:`w` the metric's weight in the objective), or None
        when a single layer fits no mode.
    """
    if len(table.act_bytes) != 1 or len(table.weight_bytes) != 1:
        raise ValueError("forced_duals needs one candidate per buffer (fixed capacities)")
    forced = _Cuts(table.instance).under(table.act_bytes[0], table.weight_bytes[0])
    return None if forced is None else tuple(table.metric_weight * share for share in forced.shares)


@dataclass(frozen=True)
class _Forced:
    """What one pair of candidates forces."""

    extra: float
    """The forced metric beyond the compulsory traffic."""
    shares: tuple[float, ...]
    """Per layer: its base cost and the forced terms every subgraph holding it pays (:func:`forced_duals`)."""
    cut: int
    alone: int


class _Cuts:
    """The footprint bounds of the closures the forced terms depend on, computed once per instance."""

    def __init__(self, instance: PartitionInstance) -> None:
        self.instance = instance
        model = instance.cost_model
        self.terms = TrafficTerms.of(instance)
        footprint = FootprintBound(model)
        desc, anc = reachability(model)

        def bounds(members: set[int]) -> tuple[int, float]:
            inside = sorted(members)
            return footprint.weight_bytes(inside), footprint.activation_bytes(inside)

        self.tensors = []
        for u, consumers in enumerate(model.succs):
            if not consumers:
                continue
            readers = tuple(sorted(set(consumers)))
            pairs = {
                (a, b): bounds(closure((readers[a], readers[b]), desc, anc))
                for a in range(len(readers))
                for b in range(a + 1, len(readers))
            }
            with_producer = tuple(bounds(closure((u, c), desc, anc)) for c in readers)
            self.tensors.append(_Tensor(u, readers, bounds(closure((u, *readers), desc, anc)), with_producer, pairs))
        self.neighbour_bounds = [
            [bounds(closure((i, j), desc, anc)) for j in {*model.preds[i], *model.succs[i]}]
            for i in range(instance.n_layers)
        ]
        self.singles = [model.subgraph((i,)) for i in range(instance.n_layers)]
        self.compulsory = math.fsum(self.terms.base)

    def under(self, act_bytes: int, weight_bytes: int) -> _Forced | None:
        """The forced terms under one pair of candidates; None when a single layer fits no mode."""
        instance, terms = self.instance, self.terms
        over = partial(
            FootprintBound.over,
            shared=instance.shared,
            act_capacity_bytes=act_bytes,
            weight_capacity_bytes=weight_bytes,
        )
        shares = list(terms.base)
        extra, alone = 0.0, 0
        for i, single in enumerate(self.singles):
            mode = single.mode_for(instance.shared, act_bytes, weight_bytes)
            if mode is None:
                return None
            if mode is not single.resident and all(over(b) for b in self.neighbour_bounds[i]):
                more = instance.metric_of(single, mode) - instance.metric_of(single, single.resident)
                extra += more
                shares[i] += more
                alone += 1
        cut = 0
        for tensor in self.tensors:
            if not over(tensor.hull):
                continue
            exiled: list[int] = []
            for k, b in enumerate(tensor.with_producer):
                if over(b) and all(over(tensor.between[j, k]) for j in exiled):
                    exiled.append(k)
            u = tensor.producer
            extra += terms.write[u] + max(1, len(exiled)) * terms.read[u]
            shares[u] += terms.write[u]
            for k in exiled:
                shares[tensor.readers[k]] += terms.read[u]
            cut += 1
        return _Forced(extra, tuple(shares), cut, alone)
