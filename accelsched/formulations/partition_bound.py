r"""A lower bound of the partition objective that needs no columns: the traffic each capacity forces.

The exact models prove their optimum over a column set; when the set is incomplete
(RandWire, NasNet: too many columns to list) and column generation has not proved a
bound either, they still owe the user a valid lower bound. The weakest one,
:func:`~accelsched.formulations.partition_common.compulsory_bound`, charges the
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
(:class:`~accelsched.formulations.partition_pricing.TrafficTerms`),
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
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING

from accelsched.formulations.partition_pricing import TrafficTerms, closure
from accelsched.problems.partition_columns import FootprintBound, reachability

if TYPE_CHECKING:
    from accelsched.formulations.partition_common import VariantTable

__all__ = ["ForcedTraffic", "forced_traffic_bound", "forced_traffic_per_pair"]


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
    hull: tuple[int, float]
    """Bounds of the closure of the producer and all its consumers."""
    with_producer: tuple[tuple[int, float], ...]
    """Per consumer: bounds of the closure of it and the producer."""
    between: dict[tuple[int, int], tuple[int, float]]
    """Per pair of consumers (positions in ``with_producer``): bounds of their closure."""


def forced_traffic_bound(table: VariantTable) -> ForcedTraffic | None:
    """The least, over the pairs of candidates, of the objective the forced traffic gives.

    Parameters
    ----------
    table
        The variant table of the instance (its capacity and metric coefficients).

    Returns
    -------
    ForcedTraffic or None
        None when no pair of candidates holds every single layer (the instance is
        infeasible).
    """
    return min(forced_traffic_per_pair(table), key=attrgetter("value"), default=None)


def forced_traffic_per_pair(table: VariantTable) -> tuple[ForcedTraffic, ...]:
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
    instance = table.instance
    model = instance.cost_model
    n = instance.n_layers
    terms = TrafficTerms.of(instance)
    footprint = FootprintBound(model)
    desc, anc = reachability(model)

    def bounds(members: set[int]) -> tuple[int, float]:
        inside = sorted(members)
        return footprint.weight_bytes(inside), footprint.activation_bytes(inside)

    tensors = []
    for u, consumers in enumerate(model.succs):
        if not consumers:
            continue
        readers = sorted(set(consumers))
        pairs = {
            (a, b): bounds(closure((readers[a], readers[b]), desc, anc))
            for a in range(len(readers))
            for b in range(a + 1, len(readers))
        }
        with_producer = tuple(bounds(closure((u, c), desc, anc)) for c in readers)
        tensors.append(_Tensor(u, bounds(closure((u, *readers), desc, anc)), with_producer, pairs))
    neighbour_bounds = [
        [bounds(closure((i, j), desc, anc)) for j in {*model.preds[i], *model.succs[i]}] for i in range(n)
    ]
    singles = [model.subgraph((i,)) for i in range(n)]
    compulsory = math.fsum(terms.base)

    found: list[ForcedTraffic] = []
    for a, act in enumerate(table.act_bytes):
        for w, weight in enumerate(table.weight_bytes):
            over = partial(
                FootprintBound.over, shared=instance.shared, act_capacity_bytes=act, weight_capacity_bytes=weight
            )
            extra, alone, feasible = 0.0, 0, True
            for i, single in enumerate(singles):
                mode = single.mode_for(instance.shared, act, weight)
                if mode is None:
                    feasible = False
                    break
                if mode is not single.resident and all(over(b) for b in neighbour_bounds[i]):
                    extra += instance.metric_of(single, mode) - instance.metric_of(single, single.resident)
                    alone += 1
            if not feasible:
                continue
            cut = 0
            for tensor in tensors:
                if not over(tensor.hull):
                    continue
                exiled: list[int] = []
                for k, b in enumerate(tensor.with_producer):
                    if over(b) and all(over(tensor.between[j, k]) for j in exiled):
                        exiled.append(k)
                u = tensor.producer
                extra += terms.write[u] + max(1, len(exiled)) * terms.read[u]
                cut += 1
            metric = compulsory + extra
            value = table.act_coefficient(a) + table.weight_coefficient(w) + table.metric_weight * metric
            found.append(ForcedTraffic(value, a, w, cut, alone, metric))
    return tuple(found)
