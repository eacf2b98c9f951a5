r"""Pricing for the partition models (Cocco): the subgraph of least reduced cost, exactly.

Column generation (:mod:`accelsched.formulations.partition.colgen`) needs, for duals
:math:`\pi_i` of the cover rows, the multi-layer columns :math:`T` (convex, weakly
connected sets of layers whose resident footprint fits the largest capacities) with
the least *reduced cost*

.. math::

    \bar c(T) = w\, c(T) - \textstyle\sum_{i \in T} \pi_i,

where :math:`c(T)` is the metric of :math:`T` in its resident mode (only single
layers have other modes, and every single layer is always a column of the master)
and :math:`w` the metric's weight in the objective (:math:`\alpha` in
co-exploration, 1 otherwise). This module gives the pricing problem in two forms:
an exact MILP (:class:`PricingModel`) and a local search over neighbouring sets
(:class:`NeighbourSearch`), cheap and used first.

The metric is linear in membership
-----------------------------------
The cost model charges a subgraph its weights and on-chip energy (per layer), the
network input of each of its source layers and the network output of each of its
sink layers (per layer), the tensor of every producer :math:`u \in T` with a
consumer outside :math:`T` once (*written*), and the tensor of every producer
:math:`u \notin T` with a consumer in :math:`T` once (*read*). So, with per-layer
terms :math:`b_i` and per-tensor write and read terms :math:`e^w_u, e^r_u`
(:class:`TrafficTerms`; bytes for EMA, bytes times the DRAM energies for energy),

.. math::

    c(T) = \textstyle\sum_{i \in T} b_i + \sum_u e^w_u [u \in T, \exists c \notin T]
           + \sum_u e^r_u [u \notin T, \exists c \in T]

over the consumers :math:`c` of :math:`u`: a hypergraph cut. :math:`b_i` is read off
the cost of the single layer :math:`\{i\}` minus its own boundary terms, so the
formula is the cost model's, not a copy of it (a test checks it on random sets).

The MILP
--------
Binaries :math:`t_i` (:math:`i \in T`); :math:`W_u \ge t_u - t_c` and
:math:`R_u \ge t_c - t_u` for every consumer :math:`c` of :math:`u` (written, read);
convexity through :math:`d_v \ge t_p, d_v \ge d_p` (some strict ancestor of
:math:`v` is in :math:`T`), :math:`a_v \ge t_c, a_v \ge a_c` (some strict
descendant) and :math:`t_v \ge d_v + a_v - 1`; :math:`\sum_i t_i \ge 2`; the
weights :math:`\sum_i \mathrm{w}_i t_i` within the weight buffer; and the resident
activation footprint within the activation buffer (both in one buffer when shared),
modelled after the cost model's consumption-centric tiling: per tensor, an update
offset :math:`\Delta_u \ge \min(H_u, \Delta_c s_c)` for every consumer :math:`c` in
:math:`T` (:math:`H_u` when :math:`c` reads the whole tensor), a MAIN region
:math:`m_u \ge f_c(\Delta_c) = (\Delta_c - 1) s_c + (F_c - 1) d_c + 1` and buffered
rows :math:`r_u \ge \min(H_u, m_u + \Delta_u)` when the tensor is buffered (its
producer is in :math:`T`, or one of its consumers is), with one binary per tensor
choosing the branch of the minimum; network inputs likewise. The true values of
every variable satisfy these rows, so every column is a feasible point, with its
exact reduced cost: the MILP's optimum is a lower bound of the least reduced cost,
and :attr:`PricingAnswer.bound` is HiGHS' dual bound on it (a solve it calls optimal
stops within its gap tolerances, so the incumbent's value is no bound). It can be
lower only where the footprint model is looser than the cost model: the cost model
takes the lcm of the consumers' steps where the rows take their maximum (equal for
powers of two), and a chord replaces
:math:`\min(H_u, s_c \Delta_c)` where :math:`s_c H_c > H_u`. Every solution is weakly
connected: a flow from its first layer reaches each other member
(:meth:`PricingModel.connectivity`). Without it the MILP admits unions of sets with no
edge between them, whose reduced cost is the sum of theirs less the reads they share,
and these unions can be far below every connected set; cutting them lazily, one union
met at a time, does not end. A solution the cost model finds too large is excluded by
:math:`\sum_{i \in S} t_i - \sum_{i \in N(S)} t_i \le |S| - 1`, which removes
:math:`S` alone among the connected sets. Every answer is re-evaluated by the cost
model before it becomes a column.

Strength of the LP
------------------
The LP relaxation is weak, and branching does the work: at a converged master's duals most
:math:`t_i` take fractional values over a region several times the weight buffer, whose inner
edges cost nothing and whose boundary costs half, the convexity rows slack and only the weight row
binding. Rows valid for every column that were tried and not kept (closure-conflict cliques, the
bound's rows per tensor), and the pricing by first layer (one MILP per first layer :math:`r`, with
:math:`t_r = 1` and :math:`t_j = 0` outside the layers whose closure with :math:`r` passes
:class:`~accelsched.problems.partition_columns.FootprintBound`: exact, but slower in column
generation), are described in ``docs/notes/partition-colgen-pricing.md``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import highspy
import numpy as np

from accelsched.formulations.partition.cuts import SubsetRows
from accelsched.formulations.partition.rules import PairRule
from accelsched.problems.partition import Metric, PartitionInstance
from accelsched.problems.partition_columns import mask_of, reachability
from accelsched.solvers.highs import ensure_highs_threads

__all__ = ["NeighbourSearch", "PricingAnswer", "PricingModel", "TrafficTerms", "closure", "components"]

_INF = highspy.kHighsInf
_SLACK = 1e-9
"""Relative slack of the capacity rows (the model sums floats, the cost model rounds up)."""


@dataclass(frozen=True)
class TrafficTerms:
    """The metric of a resident subgraph as a hypergraph cut (see the module docstring).

    Attributes
    ----------
    base
        Per layer: what the layer costs in any subgraph holding it.
    write, read
        Per layer: the cost of writing its output tensor to DRAM, of reading it once.
    """

    base: tuple[float, ...]
    write: tuple[float, ...]
    read: tuple[float, ...]

    @classmethod
    def of(cls, instance: PartitionInstance) -> TrafficTerms:
        """The terms of an instance's metric, from the cost model's single-layer costs."""
        model = instance.cost_model
        n = instance.n_layers
        if instance.metric is Metric.EMA:
            read_pj, write_pj = 1.0, 1.0
        else:
            read_pj = model.offchip.read_energy_pj_per_byte
            write_pj = model.offchip.write_energy_pj_per_byte
        out = [float(layer.output_bytes) for layer in model.layers]
        write = tuple(write_pj * out[u] for u in range(n))
        read = tuple(read_pj * out[u] for u in range(n))
        base = []
        for i in range(n):
            single = model.subgraph((i,))
            boundary = sum(read[p] for p in set(model.preds[i])) + (write[i] if model.succs[i] else 0.0)
            base.append(instance.metric_of(single, single.resident) - boundary)
        return cls(tuple(base), write, read)

    def metric(self, instance: PartitionInstance, members: Iterable[int]) -> float:
        """The resident metric of a set by the formula (tests compare it with the cost model)."""
        inside = set(members)
        model = instance.cost_model
        total = math.fsum(self.base[i] for i in inside)
        for u, consumers in enumerate(model.succs):
            if u in inside and any(c not in inside for c in consumers):
                total += self.write[u]
            elif u not in inside and any(c in inside for c in consumers):
                total += self.read[u]
        return total

    def reduced_cost(
        self,
        instance: PartitionInstance,
        members: Sequence[int],
        duals: Sequence[float],
        weight: float,
        cuts: SubsetRows,
    ) -> float:
        r"""The reduced cost :math:`w\, c(T) - \sum_{i \in T} \pi_i - \sum_R \sigma_R [T \text{ hits } R]`
        of a set in its resident mode at ``duals`` (the cover duals, then the cuts'), with the
        metric's weight ``weight``."""
        metric = weight * self.metric(instance, members)
        return metric - math.fsum(duals[i] for i in members) - cuts.charge(members, duals)


@dataclass
class PricingAnswer:
    """What one pricing solve found.

    Attributes
    ----------
    sets
        Candidate sets (the solver's incumbents), each a tuple of layers, connected by the
        model's flow; not yet checked for fit by the cost model.
    bound
        A lower bound of the reduced cost of every column the model still admits
        (``inf`` when it proved that none is below the cutoff; ``-inf`` when unknown).
    complete
        Whether the solve finished (optimal, or none below the cutoff), not stopped by a limit.
    """

    sets: list[tuple[int, ...]] = field(default_factory=list)
    bound: float = -math.inf
    complete: bool = False


class PricingModel:
    """The exact pricing MILP (see the module docstring), built once, re-solved for every dual.

    Solved by highspy directly (the cuts are added between solves, the incumbents are
    collected by a callback), presolve off: HiGHS 1.12 prints a line on stdout when it
    maps an incumbent back through its presolve.

    Parameters
    ----------
    instance
        The partition instance; columns must fit its largest candidates.
    terms
        The metric as a hypergraph cut.
    weight
        The metric's weight in the objective (alpha in co-exploration, else 1).
    threads
        HiGHS threads.
    min_size
        Fewest layers of a set (at least 2): the columns with fewer are all in the master.
    subset_rows
        The master's subset-row cuts, charged to the sets that hit them (:meth:`charge_cuts`).
    """

    def __init__(
        self,
        instance: PartitionInstance,
        terms: TrafficTerms,
        weight: float,
        threads: int = 1,
        min_size: int = 2,
        subset_rows: SubsetRows | None = None,
    ) -> None:
        self.instance = instance
        self.min_size = max(2, min_size)
        self.model = instance.cost_model
        self.terms = terms
        self.weight = weight
        self.n = instance.n_layers
        self.threads = threads
        self.neighbours = [set(self.model.preds[v]) | set(self.model.succs[v]) for v in range(self.n)]
        self.highs = highspy.Highs()
        self.highs.setOptionValue("output_flag", False)
        self.highs.setOptionValue("threads", threads)
        self.highs.setOptionValue("presolve", "off")
        self._columns = 0
        self._found: list[np.ndarray] = []
        self._excluded: set[int] = set()
        self._rule_rows: dict[PairRule, int] = {}
        self.rules: frozenset[PairRule] = frozenset()
        """The branching rules the sets keep (branch-and-price; see :meth:`impose`)."""
        self.solves = 0
        """Solves of the MILP so far (:meth:`solve`), windowed ones included."""
        self.solve_s = 0.0
        """Seconds they took (the DEBUG record of each exact pricing round reports both: ``-vv``)."""
        self.subset_rows = SubsetRows(self.n) if subset_rows is None else subset_rows
        self._cut_vars: list[int] = []
        self.t = [self._var(0.0, 1.0, integer=True) for _ in range(self.n)]
        self.written: dict[int, int] = {}
        self.read: dict[int, int] = {}
        self._act_terms: list[tuple[int, float]] = []
        self.membership()
        self.traffic()
        self.convexity()
        self.activations()
        self.capacity()
        self.most_layers = self._most_layers()
        """At most this many layers fit the footprint rows (:meth:`_most_layers`)."""
        self.connectivity()
        self.highs.cbMipSolution.subscribe(self._incumbent)

    # ---------------------------------------------------------------- building
    def _var(self, lower: float, upper: float, integer: bool = False) -> int:
        self.highs.addVar(lower, upper)
        k = self._columns
        self._columns += 1
        if integer:
            self.highs.changeColIntegrality(k, highspy.HighsVarType.kInteger)
        return k

    def _row(self, lower: float, upper: float, terms: Sequence[tuple[int, float]]) -> None:
        index = np.array([k for k, _ in terms], dtype=np.int32)
        value = np.array([c for _, c in terms], dtype=np.float64)
        self.highs.addRow(lower, upper, len(terms), index, value)

    def membership(self) -> None:
        """A column has at least ``min_size`` layers: two (single layers are always in the master), or
        more when every smaller column is in the master."""
        self._row(float(self.min_size), _INF, [(t, 1.0) for t in self.t])

    def traffic(self) -> None:
        """``W_u >= t_u - t_c`` and ``R_u >= t_c - t_u`` for every consumer ``c`` of ``u``."""
        t = self.t
        for u, consumers in enumerate(self.model.succs):
            if not consumers:
                continue
            self.written[u] = self._var(0.0, 1.0)
            self.read[u] = self._var(0.0, 1.0)
            for c in consumers:
                self._row(0.0, _INF, [(self.written[u], 1.0), (t[u], -1.0), (t[c], 1.0)])
                self._row(0.0, _INF, [(self.read[u], 1.0), (t[c], -1.0), (t[u], 1.0)])

    def convexity(self) -> None:
        """A layer with an ancestor and a descendant in the set is in the set."""
        n, t = self.n, self.t
        above = [self._var(0.0, 1.0) for _ in range(n)]
        below = [self._var(0.0, 1.0) for _ in range(n)]
        for v in range(n):
            for p in set(self.model.preds[v]):
                self._row(0.0, _INF, [(above[v], 1.0), (t[p], -1.0)])
                self._row(0.0, _INF, [(above[v], 1.0), (above[p], -1.0)])
            for c in self.model.succs[v]:
                self._row(0.0, _INF, [(below[v], 1.0), (t[c], -1.0)])
                self._row(0.0, _INF, [(below[v], 1.0), (below[c], -1.0)])
            self._row(-1.0, _INF, [(t[v], 1.0), (above[v], -1.0), (below[v], -1.0)])

    def activations(self) -> None:
        """Update offsets, MAIN regions and buffered rows of every tensor (see the module docstring)."""
        model, t = self.model, self.t
        heights = [model.output_tensor(u).height for u in range(self.n)]
        delta = [self._var(1.0, float(heights[u])) for u in range(self.n)]
        for u in range(self.n):
            tensor = model.output_tensor(u)
            height = tensor.height
            main, rows = self._var(0.0, _INF), self._var(0.0, float(height))
            capped, buffered = self._var(0.0, 1.0, integer=True), self._var(0.0, 1.0)
            self._act_terms.append((rows, tensor.row_bytes))
            self._row(0.0, _INF, [(buffered, 1.0), (t[u], -1.0)])
            self._row(0.0, _INF, [(main, 1.0), (t[u], -1.0)])
            big = 2.0 * height
            for c in model.succs[u]:
                self._row(0.0, _INF, [(buffered, 1.0), (t[c], -1.0)])
                if model._reads_whole(c, tensor):
                    self._row(0.0, _INF, [(delta[u], 1.0), (t[c], -float(height))])
                    self._row(0.0, _INF, [(main, 1.0), (t[c], -float(height))])
                    continue
                _, stride, kernel, dilation = model._geometry(c)
                reach = (kernel - 1) * dilation + 1
                if stride * heights[c] <= height:
                    # delta_u >= s delta_c when c is in the set
                    gap = float(stride * heights[c])
                    self._row(-gap, _INF, [(delta[u], 1.0), (delta[c], -float(stride)), (t[c], -gap)])
                else:
                    # the chord of min(H_u, s delta_c) over delta_c in [0, H_c]
                    ratio = height / heights[c]
                    self._row(-float(height), _INF, [(delta[u], 1.0), (delta[c], -ratio), (t[c], -float(height))])
                # main_u >= s delta_c + reach - s when c is in the set
                gap = float(stride * heights[c] + reach)
                self._row(reach - stride - gap, _INF, [(main, 1.0), (delta[c], -float(stride)), (t[c], -gap)])
                big = max(big, gap + height)
            # rows >= min(H, main + delta) when the tensor is buffered: one branch per value of `capped`
            self._row(-big, _INF, [(rows, 1.0), (main, -1.0), (delta[u], -1.0), (capped, big), (buffered, -big)])
            self._row(-float(height), _INF, [(rows, 1.0), (capped, -float(height)), (buffered, -float(height))])
        for v in range(self.n):
            if model.preds[v]:
                continue
            tensor = model.network_input(v)
            height = tensor.height
            rows = self._var(0.0, float(height))
            self._act_terms.append((rows, tensor.row_bytes))
            if model._reads_whole(v, tensor):
                self._row(0.0, _INF, [(rows, 1.0), (t[v], -float(height))])
                continue
            capped = self._var(0.0, 1.0, integer=True)
            _, stride, kernel, dilation = model._geometry(v)
            reach = (kernel - 1) * dilation + 1
            big = float(2 * stride * heights[v] + reach + height)
            # rows >= min(H, f_v(delta_v) + s delta_v) when v is in the set
            self._row(
                reach - stride - big,
                _INF,
                [(rows, 1.0), (delta[v], -2.0 * stride), (capped, big), (t[v], -big)],
            )
            self._row(-float(height), _INF, [(rows, 1.0), (capped, -float(height)), (t[v], -float(height))])

    def capacity(self) -> None:
        """Weights and activations within the largest candidates (one buffer when shared)."""
        instance = self.instance
        weights = [(self.t[i], float(layer.weight_bytes)) for i, layer in enumerate(self.model.layers)]
        act_cap = instance.act_candidates_bytes[-1] * (1 + _SLACK)
        if instance.shared:
            self._row(-_INF, act_cap, [*self._act_terms, *weights])
            return
        self._row(-_INF, float(instance.weight_candidates_bytes[-1]), weights)
        self._row(-_INF, act_cap, self._act_terms)

    def _most_layers(self) -> int:
        """The most layers a set can hold within :meth:`capacity`'s rows: each member's output tensor
        buffers ``min(H, 2)`` rows at least (its MAIN region holds a row, its update offset
        another), and its weights; the largest count of the smallest such footprints that fits."""
        instance, model = self.instance, self.model
        rows = [min(model.output_tensor(u).height, 2) * model.output_tensor(u).row_bytes for u in range(self.n)]
        weights = [float(layer.weight_bytes) for layer in model.layers]
        act_cap = instance.act_candidates_bytes[-1] * (1 + _SLACK)
        if instance.shared:
            return _fitting(np.add(rows, weights), act_cap)
        return min(_fitting(rows, act_cap), _fitting(weights, float(instance.weight_candidates_bytes[-1])))

    def connectivity(self) -> None:
        r"""Every set is weakly connected: a flow from its first layer reaches each other member.

        The root :math:`r_i = 1` marks the least index in the set, through its running sum
        :math:`z_i = \sum_{j \le i} r_j` with :math:`z_{n-1} = 1`, :math:`t_i \le z_i` and
        :math:`r_i \le t_i` (integral whenever :math:`t` is). On both directions of every edge a
        flow :math:`0 \le f_{uv} \le (L - 1)\, t_u` and :math:`\le (L - 1)(t_v - r_v)` (:math:`L`
        = :attr:`most_layers`), and at every layer :math:`\sum f_{\cdot j} - \sum f_{j \cdot}
        \ge t_j - L r_j`: each member but the root takes a unit in. A connected set carries the
        flow of a spanning tree from its root (each arc its subtree's size, below :math:`L`); in
        a disconnected one, the component without the root would take units in over edges from
        layers outside the set, which carry none."""
        n, t = self.n, self.t
        root = [self._var(0.0, 1.0) for _ in range(n)]
        running = [self._var(0.0, 1.0) for _ in range(n)]
        self.highs.changeColBounds(running[-1], 1.0, 1.0)
        for i in range(n):
            before = [(running[i - 1], -1.0)] if i else []
            self._row(0.0, 0.0, [(running[i], 1.0), (root[i], -1.0), *before])
            self._row(-_INF, 0.0, [(t[i], 1.0), (running[i], -1.0)])
            self._row(-_INF, 0.0, [(root[i], 1.0), (t[i], -1.0)])
        cap = float(max(self.most_layers - 1, 0))
        inflow: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        for u in range(n):
            for v in sorted(self.neighbours[u]):
                f = self._var(0.0, cap)
                self._row(-_INF, 0.0, [(f, 1.0), (t[u], -cap)])
                self._row(-_INF, 0.0, [(f, 1.0), (t[v], -cap), (root[v], cap)])
                inflow[v].append((f, 1.0))
                inflow[u].append((f, -1.0))
        for j in range(n):
            self._row(0.0, _INF, [*inflow[j], (t[j], -1.0), (root[j], float(self.most_layers))])

    # ------------------------------------------------------------------- cuts
    def exclude(self, members: Sequence[int]) -> None:
        """Remove one set from the model: ``sum_S t - sum_N(S) t <= |S| - 1`` (once: a set excluded
        before adds no row)."""
        mask = mask_of(members)
        if mask in self._excluded:
            return
        self._excluded.add(mask)
        inside = set(members)
        border = set().union(*(self.neighbours[i] for i in inside)) - inside
        terms = [(self.t[i], 1.0) for i in sorted(inside)] + [(self.t[i], -1.0) for i in sorted(border)]
        self._row(-_INF, len(inside) - 1.0, terms)

    def reduced_cost(self, members: Sequence[int], duals: Sequence[float]) -> float:
        """The reduced cost of a set at ``duals`` (cover duals, then the subset-row cuts'), with this
        model's weight: the MILP's objective at the set."""
        return self.terms.reduced_cost(self.instance, members, duals, self.weight, self.subset_rows)

    def charge_cuts(self) -> None:
        r"""One variable per subset-row cut not charged yet, :math:`y_R \ge t_a + t_b - 1` for each pair
        of its layers: with the cost :math:`-\sigma_R \ge 0` (:meth:`solve`) it is 1 exactly when the
        set holds two of the cut's layers, the cut's coefficient."""
        for triple in self.subset_rows.triples[len(self._cut_vars) :]:
            y = self._var(0.0, 1.0)
            for a, b in itertools.combinations(triple, 2):
                self._row(-1.0, _INF, [(y, 1.0), (self.t[a], -1.0), (self.t[b], -1.0)])
            self._cut_vars.append(y)

    def impose(self, rules: Iterable[PairRule]) -> None:
        """Make the sets keep these branching rules, and only these: ``t_i = t_j`` for two layers
        together, ``t_i + t_j <= 1`` for two apart. A rule's row is added once and freed (its
        bounds made infinite) while the rule does not hold, so that the cuts added under one
        node stay in the model for the others."""
        wanted = frozenset(rules)
        for rule in wanted | set(self._rule_rows):
            if rule not in self._rule_rows:
                self._rule_rows[rule] = self.highs.getNumRow()
                t_i, t_j = self.t[rule.first], self.t[rule.second]
                if rule.together:
                    self._row(0.0, 0.0, [(t_i, 1.0), (t_j, -1.0)])
                else:
                    self._row(-_INF, 1.0, [(t_i, 1.0), (t_j, 1.0)])
            if rule in wanted:
                lower, upper = (0.0, 0.0) if rule.together else (-_INF, 1.0)
            else:
                lower, upper = -_INF, _INF
            self.highs.changeRowBounds(self._rule_rows[rule], lower, upper)
        self.rules = wanted

    # ----------------------------------------------------------------- solving
    def _incumbent(self, event: highspy.highs.HighsCallbackEvent) -> None:
        self._found.append(np.array(event.data_out.mip_solution[: self.n]))

    def solve(
        self,
        duals: Sequence[float],
        cutoff: float,
        *,
        window: Iterable[int] | None = None,
        time_limit: float | None = None,
        max_sets: int | None = None,
    ) -> PricingAnswer:
        """The sets of reduced cost below ``cutoff`` the solver meets, and a bound.

        Parameters
        ----------
        duals
            The duals :math:`\\pi_i` of the cover rows, then those of the subset-row cuts (0 for
            the cuts beyond them).
        cutoff
            Only sets of reduced cost below it are wanted; a solve that finds none proves
            that every admitted set costs at least ``cutoff``.
        window
            Layers the sets may use (all when None); a restricted solve proves nothing
            about the other sets.
        time_limit
            Seconds for this solve.
        max_sets
            Stop after this many improving sets (None: solve to the end).
        """
        h = self.highs
        self.charge_cuts()
        allowed = set(range(self.n)) if window is None else set(window)
        cost = np.zeros(self._columns)
        for s, y in enumerate(self._cut_vars):
            cost[y] = -min(0.0, duals[self.n + s]) if self.n + s < len(duals) else 0.0
        for i in range(self.n):
            cost[self.t[i]] = self.weight * self.terms.base[i] - duals[i]
            h.changeColBounds(self.t[i], 0.0, 1.0 if i in allowed else 0.0)
        for u, k in self.written.items():
            cost[k] = self.weight * self.terms.write[u]
        for u, k in self.read.items():
            cost[k] = self.weight * self.terms.read[u]
        h.changeColsCost(self._columns, np.arange(self._columns, dtype=np.int32), cost)
        h.setOptionValue("objective_bound", float(cutoff))
        h.setOptionValue("mip_max_improving_sols", 2**31 - 1 if max_sets is None else max_sets)
        h.setOptionValue("time_limit", _INF if time_limit is None else max(time_limit, 1e-3))
        self._found = []
        ensure_highs_threads(self.threads)
        start = time.perf_counter()
        h.run()
        self.solves, self.solve_s = self.solves + 1, self.solve_s + time.perf_counter() - start
        status = h.getModelStatus()
        answer = PricingAnswer()
        for x in self._found:
            members = tuple(i for i in range(self.n) if x[self.t[i]] > 0.5)
            if members not in answer.sets:
                answer.sets.append(members)
        if status == highspy.HighsModelStatus.kInfeasible:
            answer.bound, answer.complete = cutoff, True
        elif status == highspy.HighsModelStatus.kOptimal:
            # optimal within HiGHS' gap tolerances (mip_rel_gap 1e-4): the incumbent's value may
            # exceed the least reduced cost, the dual bound does not
            info = h.getInfo()
            dual_bound = info.mip_dual_bound
            answer.bound = dual_bound if math.isfinite(dual_bound) else -math.inf
            answer.complete = True
        else:
            bound = h.getInfo().mip_dual_bound
            answer.bound = bound if math.isfinite(bound) else -math.inf
        if window is not None and len(allowed) < self.n:
            answer.bound, answer.complete = -math.inf, False
        return answer


class NeighbourSearch:
    """A local search for columns of negative reduced cost: add a neighbour (with the layers
    on paths through it), or drop a first or last layer, while the set stays a column.

    Parameters
    ----------
    instance
        The partition instance.
    weight
        The metric's weight in the objective.
    """

    def __init__(self, instance: PartitionInstance, weight: float, subset_rows: SubsetRows | None = None) -> None:
        self.instance = instance
        self.model = instance.cost_model
        self.weight = weight
        self.subset_rows = SubsetRows(instance.n_layers) if subset_rows is None else subset_rows
        n = instance.n_layers
        self.neighbours = [set(self.model.preds[v]) | set(self.model.succs[v]) for v in range(n)]
        self.preds = [set(p) for p in self.model.preds]
        self.succs = [set(s) for s in self.model.succs]
        self.desc, self.anc = reachability(self.model)

    def reduced_cost(self, members: frozenset[int], duals: Sequence[float]) -> float | None:
        """Reduced cost of a set in its resident mode, or None when it does not fit."""
        cost = self.model.subgraph(members)
        if not cost.resident.fits(self.instance.shared, *self._largest()):
            return None
        metric = self.weight * self.instance.metric_of(cost, cost.resident)
        return metric - math.fsum(duals[i] for i in members) - self.subset_rows.charge(members, duals)

    def _largest(self) -> tuple[int, int]:
        instance = self.instance
        return instance.act_candidates_bytes[-1], (instance.weight_candidates_bytes or (0,))[-1]

    def moves(self, members: frozenset[int]) -> list[frozenset[int]]:
        """The sets one move away: ``closure(S + v)`` for a neighbour ``v``, ``S - v`` for a first or last layer."""
        out = []
        border = set().union(*(self.neighbours[i] for i in members)) - members
        for v in border:
            out.append(frozenset(closure(members | {v}, self.desc, self.anc)))
        if len(members) > 2:
            for v in members:
                if not self.preds[v] & members or not self.succs[v] & members:
                    rest = members - {v}
                    if len(components(rest, self.neighbours)) == 1:
                        out.append(frozenset(rest))
        return out

    def search(
        self,
        starts: Iterable[Sequence[int]],
        duals: Sequence[float],
        cutoff: float,
        known: set[int],
        *,
        steps: int = 30,
        limit: int = 200,
        deadline: float | None = None,
    ) -> list[tuple[int, ...]]:
        """Columns of reduced cost below ``cutoff`` met by steepest descent from each start.

        Parameters
        ----------
        starts
            Sets to start from.
        duals
            The duals of the cover rows, then those of the subset-row cuts.
        cutoff
            Sets below it are returned.
        known
            Masks of sets not to return (the master's columns).
        steps
            Largest number of moves from one start.
        limit
            Stop after this many sets.
        deadline
            A :func:`time.perf_counter` value at which the search stops.
        """
        found: dict[int, tuple[int, ...]] = {}
        for start in starts:
            current = frozenset(start)
            value = self.reduced_cost(current, duals) if len(current) > 1 else None
            value = math.inf if value is None else value
            for _ in range(steps):
                if deadline is not None and time.perf_counter() > deadline:
                    return list(found.values())
                best: tuple[float, frozenset[int]] | None = None
                for other in self.moves(current):
                    if len(other) < 2:
                        continue
                    cost = self.reduced_cost(other, duals)
                    if cost is None:
                        continue
                    mask = mask_of(other)
                    if cost < cutoff and mask not in known:
                        found[mask] = tuple(sorted(other))
                    if cost < value - 1e-9 * max(1.0, abs(value)) and (best is None or cost < best[0]):
                        best = (cost, other)
                if best is None or len(found) >= limit:
                    break
                value, current = best
            if len(found) >= limit:
                break
        return list(found.values())


def _fitting(sizes: Iterable[float], capacity: float) -> int:
    """How many of the smallest ``sizes`` fit ``capacity`` together."""
    count, total = 0, 0.0
    for size in sorted(sizes):
        total += size
        if total > capacity:
            break
        count += 1
    return count


def components(members: Iterable[int], neighbours: Sequence[set[int]]) -> list[set[int]]:
    """The weakly connected components of a set of layers."""
    left = set(members)
    parts = []
    while left:
        seed = left.pop()
        part, stack = {seed}, [seed]
        while stack:
            for w in neighbours[stack.pop()]:
                if w in left:
                    left.discard(w)
                    part.add(w)
                    stack.append(w)
        parts.append(part)
    return parts


def closure(members: Iterable[int], desc: Sequence[int], anc: Sequence[int]) -> set[int]:
    """The set with every layer on a path between two of its members added."""
    down = up = 0
    out = set(members)
    for u in out:
        down |= desc[u]
        up |= anc[u]
    extra = down & up
    while extra:
        low = extra & -extra
        out.add(low.bit_length() - 1)
        extra ^= low
    return out
