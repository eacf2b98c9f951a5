r"""Exact dynamic programs over the LS and LP subspaces of RA trees (SET's two classical extremes).

Subspaces
---------
Fix the workload's topological order :math:`\ell_1, \ldots, \ell_n`. A tree of the
*LS* (layer-sequential) subspace is a root T-Cut over the total batch :math:`B`
whose children, the segments, cover consecutive runs of layers; a segment is a single
layer (a leaf over :math:`B`) or a **T-Cut** over two or more consecutive layers with a
sub-batch number :math:`s \mid B` (its layers run one after the other on all tiles,
sub-batch by sub-batch, the tensors between them staying on chip). The *LP*
(layer-pipelined, Tangram-like) subspace is the same with **S-Cuts**: the layers of a
segment run at the same time on disjoint tile groups, pipelined over :math:`s`
sub-batches.

Dynamic program
---------------
Segments are independent: every tensor entering or leaving one goes through DRAM and
each has all of the tiles, so a tree's energy and latency are the sums of its
segments' (:func:`accelsched.problems.ra_tree.cost.segment_cost`). The objective
:math:`E^a D^b` is not a sum, but it increases with both :math:`E` and :math:`D`, so
an optimal tree is Pareto-optimal in :math:`(E, D)`. The program keeps, for every
prefix :math:`\ell_1..\ell_j`, the Pareto set of :math:`(E, D)` over the segmentations
of the prefix:

.. math::

    P_0 = \{(0, 0)\}, \qquad
    P_j = \operatorname{Pareto}\{(E + e_\sigma, D + d_\sigma) :
          (E, D) \in P_i,\ \sigma \text{ a segment over } \ell_{i+1}..\ell_j\},

and returns the point of :math:`P_n` with the least :math:`E^a D^b`: exact over the
subspace. A segment that breaks a rule of the problem (an S-Cut with more layers than
tiles, a tile buffer that overflows) is left out; a T-Cut that overflows a buffer
stops growing (its per-tile weights only grow with more layers).

The LS program prices its T-Cut segments incrementally
(:class:`~accelsched.problems.ra_tree.cost.TCutSegments`, a constant number of layer
shares per segment, the same costs), so a segment costs O(1) instead of a full
evaluation. S-Cut segments are priced by full evaluations (an S-Cut's tile allocation
depends on all of its children): the LP program fully evaluates, for every start layer
and sub-batch number, every segment of up to as many layers as there are tiles.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from accelsched.errors import InfeasibleSolution
from accelsched.problems.base import MethodSpec
from accelsched.problems.ra_tree import (
    PROBLEM,
    RATreeInstance,
    SegmentCost,
    TCutSegments,
    buffer_overflow,
    segment_cost,
    tree_objective,
)
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RANode, RATree
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "SegmentDP", "solve_segment_dp"]


@dataclass(frozen=True)
class _Label:
    """A Pareto point of a prefix: energy, latency, and how it was reached."""

    energy_pj: float
    latency_cycles: float
    previous: int
    """End of the prefix before the last segment."""
    previous_label: int
    subbatches: int
    """Sub-batch number of the last segment's cut (0: a single leaf)."""


class SegmentDP:
    """The Pareto dynamic program over one subspace.

    Parameters
    ----------
    instance
        The RA-tree instance.
    kind
        ``CutKind.T`` for the LS subspace, ``CutKind.S`` for LP.
    deadline
        A :func:`time.perf_counter` value at which the search stops.
    """

    def __init__(self, instance: RATreeInstance, kind: CutKind, deadline: float | None = None) -> None:
        self.instance = instance
        self.kind = kind
        self.deadline = deadline
        self.order = instance.workload.names
        self.evaluated = 0
        self.stopped = ""
        self._t_segments: dict[int, TCutSegments] = {}

    def segments(self, start: int) -> Iterator[tuple[int, int, SegmentCost]]:
        """Feasible segments starting at layer ``start``: ``(end, sub-batches, cost)``, shortest first
        (sub-batches 0 for the single leaf)."""
        batch = self.instance.batch
        cost = self._cost(Leaf(self.order[start], batch))
        if cost is not None:
            yield start + 1, 0, cost
        growing = {s: self._grow(start, s) for s in range(1, batch + 1) if batch % s == 0}
        for end in range(start + 2, len(self.order) + 1):
            if self.kind is CutKind.S and end - start > self.instance.n_tiles:
                return
            for s in sorted(growing):
                cost = growing[s](end)
                if cost is None:
                    if self.kind is CutKind.T:
                        del growing[s]  # more layers only add weights to every tile
                    continue
                yield end, s, cost
            if not growing:
                return

    def _grow(self, start: int, subbatches: int) -> Callable[[int], SegmentCost | None]:
        """The priced segments ``start .. end - 1`` of one sub-batch number, asked for by increasing ``end``.

        T-Cuts are priced incrementally (:class:`~accelsched.problems.ra_tree.cost.TCutSegments`),
        S-Cuts by :func:`~accelsched.problems.ra_tree.cost.segment_cost` (their tile
        allocation depends on every child).
        """
        if self.kind is CutKind.S:
            return lambda end: self._cost(self.node(start, end, subbatches))
        if subbatches not in self._t_segments:
            self._t_segments[subbatches] = TCutSegments(self.instance, subbatches)
        priced = self._t_segments[subbatches].grow(start)

        def next_cost(end: int) -> SegmentCost | None:
            reached, cost = next(priced)
            assert reached == end
            self.evaluated += 1
            return None if buffer_overflow(self.instance, [cost]) else cost

        return next_cost

    def _cost(self, segment: RANode) -> SegmentCost | None:
        """The segment's cost, or None when a tile buffer overflows."""
        self.evaluated += 1
        cost = segment_cost(self.instance, segment)
        return None if buffer_overflow(self.instance, [cost]) else cost

    def node(self, start: int, end: int, subbatches: int) -> RANode:
        """The segment over layers ``start .. end - 1`` (a leaf when ``subbatches`` is 0)."""
        batch = self.instance.batch
        if subbatches == 0:
            return Leaf(self.order[start], batch)
        leaves = tuple(Leaf(name, batch // subbatches) for name in self.order[start:end])
        return Cut(self.kind, batch, subbatches, leaves)

    def run(self) -> RATree | None:
        """The best tree of the subspace, or None when stopped (``stopped`` says why) or none is feasible."""
        n = len(self.order)
        labels: list[list[_Label]] = [[] for _ in range(n + 1)]
        labels[0] = [_Label(0.0, 0.0, -1, -1, 0)]
        for start in range(n):
            if not labels[start]:
                continue
            if self.deadline is not None and time.perf_counter() > self.deadline:
                self.stopped = f"time limit reached at layer {start} of {n}"
                return None
            for end, subbatches, cost in self.segments(start):
                energy = sum(cost.energy_breakdown_pj.values())
                for k, label in enumerate(labels[start]):
                    _insert(
                        labels[end],
                        _Label(
                            label.energy_pj + energy, label.latency_cycles + cost.latency_cycles, start, k, subbatches
                        ),
                    )
        if not labels[n]:
            self.stopped = "no tree of the subspace fits the tile buffers"
            return None
        a, b = self.instance.energy_exponent, self.instance.delay_exponent
        best = min(range(len(labels[n])), key=lambda k: labels[n][k].energy_pj ** a * labels[n][k].latency_cycles ** b)
        children: list[RANode] = []
        end, k = n, best
        while end > 0:
            label = labels[end][k]
            children.append(self.node(label.previous, end, label.subbatches))
            end, k = label.previous, label.previous_label
        return RATree(Cut(CutKind.T, self.instance.batch, 1, tuple(reversed(children))))


def _insert(labels: list[_Label], new: _Label) -> None:
    """Add ``new`` unless a label is no worse in energy and latency; drop the labels it dominates."""
    for old in labels:
        if old.energy_pj <= new.energy_pj and old.latency_cycles <= new.latency_cycles:
            return
    labels[:] = [
        old for old in labels if not (new.energy_pj <= old.energy_pj and new.latency_cycles <= old.latency_cycles)
    ]
    labels.append(new)


def solve_segment_dp(
    instance: RATreeInstance, options: SolveOptions, warm_start: RATree | None = None, *, kind: CutKind
) -> Result[RATree]:
    """The optimum of the LS (``kind=T``) or LP (``kind=S``) subspace.

    Returns
    -------
    Result
        FEASIBLE (optimal in the subspace, said in ``stats.native_status``; not a
        bound on the whole problem), or TIME_LIMIT_NO_SOLUTION / INFEASIBLE with the
        reason.
    """
    limit = options.time_limit_s
    dp = SegmentDP(instance, kind, None if limit is None else time.perf_counter() + limit)
    tree = dp.run()
    name = "dp-ls" if kind is CutKind.T else "dp-lp"
    subspace = "LS" if kind is CutKind.T else "LP"
    if tree is None:
        status = Status.TIME_LIMIT_NO_SOLUTION if dp.stopped.startswith("time") else Status.INFEASIBLE
        return Result.no_solution(status, PROBLEM.name, name, dp.stopped, iterations=dp.evaluated)
    try:
        PROBLEM.check(instance, tree)
    except InfeasibleSolution as exc:  # pragma: no cover - segments were checked one by one
        raise AssertionError(f"{name} built an invalid tree: {exc}") from exc
    return Result(
        Status.FEASIBLE,
        PROBLEM.name,
        name,
        solution=tree,
        objective=tree_objective(instance, tree),
        stats=SolveStats(
            iterations=dp.evaluated,
            native_status=f"optimal in the {subspace} subspace ({dp.evaluated} segments evaluated)",
        ),
    )


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "dp-ls",
        PROBLEM.name,
        "baseline",
        partial(solve_segment_dp, kind=CutKind.T),
        "exact Pareto DP over the layer-sequential subspace (segments of T-Cuts with a sub-batch choice)",
    ),
    MethodSpec(
        "dp-lp",
        PROBLEM.name,
        "baseline",
        partial(solve_segment_dp, kind=CutKind.S),
        "exact Pareto DP over the layer-pipelined subspace (segments of S-Cuts with a sub-batch choice)",
    ),
)
"""The subspace methods: ``dp-ls``, ``dp-lp``."""
