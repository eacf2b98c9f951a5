r"""Branch-and-price for the partition models (Cocco).

Column generation (:mod:`accelsched.formulations.partition.colgen`) ends with the
master optimal, a bound LB proven over every column and a partition of objective
:math:`U`. Listing every column of reduced cost below :math:`U - LB` then makes the
exact models exact; when those columns are too many to list in the time (the listing
gives up, :attr:`Outcome.converged <accelsched.formulations.partition.colgen_core.Outcome>`),
this module closes the gap by branching instead (branch-and-price: Barnhart et al.,
1998), with the rule of Ryan and Foster (1981) of
:mod:`accelsched.formulations.partition.rules`.

Nodes
-----
A node is a set of pair rules (two layers together, or apart), its bound, and the
inner point its bound was proven at. Its partitions are those that keep its rules.
Solving a node is column generation under its rules
(:meth:`ColumnGeneration.solve_node
<accelsched.formulations.partition.colgen.ColumnGeneration.solve_node>`): the master
holds the columns that break a rule at 0, the pricing MILP admits only the sets that
keep them, and the generation starts from the parent's inner point, which stays one
(a child only removes columns), so a child's bound starts at its parent's.

Pruning
-------
A node is pruned when its bound shows that none of its partitions beats :math:`U`:
a bound above :math:`U - 1` when every objective is a whole number (external memory
access in bytes, :attr:`VariantTable.objective_step
<accelsched.formulations.partition.common.VariantTable>`), a bound within the proof's
tolerance :math:`n \epsilon |U|` of :math:`U` otherwise (the pricing's tolerance on each of
up to :math:`n` subgraphs, :meth:`~.colgen_params.ColumnGenerationParams.proof_tolerance`;
:meth:`BranchAndPrice.prune_level`). The generation in a node stops as soon as such a bound
is proven, and prices to that level (:mod:`~accelsched.formulations.partition.colgen`). The
same tolerance settles a node by a partition (:meth:`BranchAndPrice._meets`) and a pair of
the capacity decomposition by its bound, so a proven :math:`U` is optimal up to it.

Branching
---------
A node whose master is optimal and not pruned first gets the integer program over its
columns (under its rules): a better partition lowers :math:`U` for every node, and one
whose objective meets the node's bound settles the node. Otherwise the LP is solved
again with crossover, to a vertex, and its fractional pairs of layers :math:`(i, k)`
(together-weight :math:`\sum_{j \ni i, k} x_j` strictly between 0 and 1) are ranked,
nearest 1/2 first (ties: layers joined by an edge first, then the smallest indices). Strong
branching probes the first :attr:`BranchParams.strong_candidates
<accelsched.formulations.partition.proof_params.BranchParams>`: each one's two children are solved as
LPs over the master's columns (no pricing), and the pair whose children's LPs rise most (the
product of the two gains, each capped at the prune level) is branched on
(:meth:`BranchAndPrice._strong_pair`); the children add "together" and "apart" on it. These
set-partitioning LPs are degenerate: the pair nearest 1/2 often has a child whose LP
does not move, a node spent for one level of depth.
Every partition keeps one of the two rules, and neither
child admits the vertex, so the tree is finite (at most one rule per pair of layers).
A vertex without a fractional pair is a partition: when its subgraphs form a cycle,
the cycle is cut from the master and the node is solved again; else it settles the
node when its objective meets the node's bound (:meth:`BranchAndPrice._meets`), and
otherwise the cycle cuts the integer program added have moved the LP, and the node
is priced again. A node whose rules leave no partition is pruned by phase one
(:meth:`ColumnGeneration.solve_node
<accelsched.formulations.partition.colgen.ColumnGeneration.solve_node>`).

Tailing off
-----------
A node's master need not be optimal to branch: every partition keeps one of the two
rules whatever LP chose the pair, and the children start from the parent's inner point
and bound. A node whose LP value is at most the prune level cannot be pruned by pricing
on (its LP optimum is no larger), so once that value is within
:attr:`~accelsched.formulations.partition.colgen_params.ColumnGenerationParams.tailing_gap` of the node's bound the
node is branched (:meth:`ColumnGeneration.tails
<accelsched.formulations.partition.colgen.ColumnGeneration.tails>`; Vanderbeck's early
branching). At the root this applies once a listing below the gap gave up for time, and
a root whose pricing rounds stop at their deadline with an inner point is priced on as
the tree's first node rather than left unproven
(:func:`~accelsched.formulations.partition.fixed_capacity.prove_fixed`). A node priced again
because an integral vertex did not settle it prices to convergence (:attr:`Node.exact`).

Open nodes are taken best bound first. When none is left, :math:`U` is optimal: the
table holds its columns, so it holds an optimal partition, and the models prove it
over the table. When the time runs out first, the bound is the least over the open
nodes (at least the root's). The tree's log, one line per node (its rules, its bound,
and the pair it was branched on or how it was closed, or left open) goes into the result's
note (:func:`tree_note`); each line is also logged as its node ends (:data:`LOGGER`), so that a
proof of hours shows its tree as it grows.

Subset-row cuts
---------------
A node to be branched (its master optimal or tailing off, not pruned, not settled by its
integer program) first gets the subset-row cuts its LP vertex violates
(:mod:`~accelsched.formulations.partition.cuts`; at most ``subset_rows_per_round``, up
to ``subset_row_rounds`` rounds per node and ``subset_rows_max`` in the master,
:class:`~accelsched.formulations.partition.proof_params.BranchParams`) and
is priced again with them (:meth:`BranchAndPrice._cut`); it is branched when none is
violated or its rounds are spent. Pricing adds columns, which can only lower the LP, so a
node whose LP over the columns it has, with the new cuts, stays within the proof's tolerance
of its bound is branched at once, on that LP's vertex (:meth:`BranchAndPrice._may_rise`):
pricing it again could not raise its bound. The cuts
hold for every partition, so they stay in the master for every node, and the pricing charges
them (cut-and-price).

Resuming
--------
A tree stopped by its deadline leaves what a later run needs to go on
(:attr:`Outcome.left <accelsched.formulations.partition.colgen_core.Outcome>`, a
:class:`~accelsched.formulations.partition.common.TreeState`): each open node's rules,
inner point and bound, the least bound of the nodes closed, the prune level at the end,
the cycles cut from the master, and its subset-row cuts (a node's inner point holds their
duals after the layers'). Every partition lies in an open node or in a closed
one, so a run that starts from the open nodes (:meth:`BranchAndPrice.run` with
``resume``; :func:`~accelsched.formulations.partition.proof.prepare` with ``tree``) proves
what the stopped tree would have, as long as its incumbent prunes no less
(:meth:`BranchAndPrice.resumable`); it skips the root's column generation. The nodes'
columns are not part of the state: the capacity decomposition's ledger keeps a pair's
generated subgraphs anyway (:mod:`~accelsched.formulations.partition.ledger`), and a node
prices what it misses from its inner point.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from accelsched.formulations.partition.colgen import ColumnGeneration
from accelsched.formulations.partition.colgen_core import Outcome
from accelsched.formulations.partition.common import (
    Assignment,
    InnerPoint,
    OpenNode,
    TreeState,
    VariantTable,
)
from accelsched.formulations.partition.cuts import violated_subset_rows
from accelsched.formulations.partition.master import MasterLp, Probe
from accelsched.formulations.partition.proof_params import DEFAULT_BRANCH, BranchParams
from accelsched.formulations.partition.rules import PairRule

__all__ = [
    "LOGGER",
    "BranchAndPrice",
    "Node",
    "Separation",
    "strong_choice",
    "tree_note",
]

LOGGER = logging.getLogger(__name__)
"""Logs each node of the tree as it ends (INFO)."""

Separation = Callable[[Sequence[Sequence[int]], Sequence[float], int, int], list[tuple[int, int, int]]]
"""The subset-row separation's signature (:func:`~accelsched.formulations.partition.cuts.violated_subset_rows`):
the fractional columns' members, their values, the number of layers and the most cuts; the
violated triples."""


_FRACTIONAL = 1e-6
"""A value within this of 0 or 1 counts as integral."""


@dataclass(frozen=True, order=True)
class Node:
    """A node of the branch-and-price tree (ordered by bound, then by creation).

    Attributes
    ----------
    bound
        The best bound proven for the node's partitions (its parent's until it is solved).
    serial
        Creation number (ties, and the order of the log).
    rules
        The pair rules its partitions keep.
    inner
        The inner point its column generation starts from (cover duals; its parent's until it is
        solved).
    priced
        Whether its column generation has run (its master is optimal or tails off): it is
        branched next.
    exact
        Whether its column generation must run until the master is optimal, without the
        tailing-off control (a node priced again after an integral vertex that did not settle it).
    cut_rounds
        Rounds of subset-row cuts it has had (at most
        :attr:`BranchParams.subset_row_rounds <accelsched.formulations.partition.proof_params.BranchParams>`).
    """

    bound: float
    serial: int
    rules: frozenset[PairRule] = field(compare=False)
    inner: tuple[float, ...] = field(compare=False, repr=False)
    priced: bool = field(default=False, compare=False)
    exact: bool = field(default=False, compare=False)
    cut_rounds: int = field(default=0, compare=False)

    @classmethod
    def resumed(cls, left: OpenNode, serial: int) -> Node:
        """The node a stopped tree left open, to be priced again (the one conversion from
        :class:`~accelsched.formulations.partition.common.OpenNode`)."""
        return cls(left.inner.bound, serial, left.rules, left.inner.duals, exact=left.exact, cut_rounds=left.cut_rounds)

    def left_open(self) -> OpenNode:
        """What a stopped tree keeps of the node (the one conversion to
        :class:`~accelsched.formulations.partition.common.OpenNode`; :attr:`serial` and
        :attr:`priced` are the run's own)."""
        return OpenNode(self.rules, InnerPoint(self.inner, self.bound), self.exact, self.cut_rounds)


class BranchAndPrice:
    """Branch-and-price from the root's column generation (see the module docstring).

    Parameters
    ----------
    generation
        The root's column generation, with an incumbent and an inner point; its master optimal
        or tailing off (:attr:`Outcome.converged`), unless :meth:`run` is told otherwise. Its
        table grows with every node's columns; its parameters
        (:attr:`ColumnGeneration.params <accelsched.formulations.partition.colgen.ColumnGeneration>`)
        give the pricing's and phase one's tolerances here too.
    params
        The tree's limits (:class:`~accelsched.formulations.partition.proof_params.BranchParams`).
    separate
        The subset-row separation (:func:`~accelsched.formulations.partition.cuts.violated_subset_rows`;
        another one must return valid cuts, violated or not: a hook for tests of the tree's handling
        of cuts).
    """

    def __init__(
        self,
        generation: ColumnGeneration,
        params: BranchParams = DEFAULT_BRANCH,
        separate: Separation = violated_subset_rows,
    ) -> None:
        if generation.inner is None or generation.inner_bound is None or generation.incumbent is None:
            raise ValueError("branch-and-price starts from a column generation with an inner point and a partition")
        self.generation = generation
        self.params = params
        self.separate = separate
        self.table: VariantTable = generation.table
        self._serial = itertools.count()
        self.nodes = 0
        """Nodes solved (the root included)."""
        self.closed = math.inf
        """The least bound of the nodes pruned or settled so far."""
        self.log: list[str] = []
        """One line per node: its rules, its bound and how it ended (closed, branched on a pair,
        priced again, or left open at the deadline)."""
        self.unresolved: list[Node] = []
        """Nodes left open because their LP vertex kept an artificial variable (no pair to branch on)."""
        self.node_limited = False
        """Whether the last :meth:`run` stopped at its ``node_limit`` (rather than at its deadline)."""
        self.handled = 0
        """Nodes that went on past their pricing, neither pruned nor stopped by the deadline (to their
        integer program, cuts, branching or integral vertex; :meth:`run`'s ``node_limit``)."""

    @property
    def upper(self) -> float:
        """The incumbent's objective, :math:`U`."""
        assert self.generation.incumbent is not None
        return self.table.objective(self.generation.incumbent)

    def prune_level(self) -> float:
        """The bound above which a node holds no partition better than :math:`U`
        (:meth:`ColumnGeneration.prune_level
        <accelsched.formulations.partition.colgen.ColumnGeneration.prune_level>`), or :math:`r\\,U`
        with a ``prune_ratio`` :math:`r` (:class:`~accelsched.formulations.partition.proof_params.BranchParams`)."""
        ratio = self.params.prune_ratio
        return self.generation.prune_level() if ratio is None else ratio * self.upper

    def run(
        self,
        deadline: float | None,
        *,
        priced: bool = True,
        resume: TreeState | None = None,
        node_limit: int | None = None,
    ) -> Outcome:
        """Solve the tree until no node is open or the deadline passes.

        Parameters
        ----------
        deadline
            A :func:`time.perf_counter` value after which no node starts (the root always does; a
            resumed tree's first node does not) and a node's column generation and LPs stop (None:
            no limit). A node whose LP vertex the deadline stopped is left open as it was.
        priced
            Whether the root's column generation ended with its master optimal or tailing off;
            when not (it stopped at its deadline), the root is priced first like any node, from
            the inner point proven so far.
        resume
            The open nodes an earlier run of the tree left (:attr:`Outcome.left`), which the tree
            starts from in place of the root (:meth:`resumable` must hold).
        node_limit
            Most nodes that go on past their pricing in this run (:attr:`handled`; None: no limit):
            once they are that many, the tree stops as at its deadline (a node that proves itself
            pruned is still closed), and leaves its open nodes to be resumed.
        """
        generation = self.generation
        assert generation.inner is not None and generation.bound is not None
        if resume is None:
            heap = [Node(generation.bound, next(self._serial), frozenset(), generation.inner, priced=priced)]
            self.nodes = 1  # the root (serial 0), pruned or not
        else:
            if not self.resumable(resume):
                raise ValueError("the tree's nodes were closed at a lower prune level than this incumbent's")
            heap = [Node.resumed(node, next(self._serial)) for node in resume.nodes]
            heapq.heapify(heap)
            self.closed = resume.closed
            if generation.cuts.triples != list(resume.cuts[: len(generation.cuts)]):
                raise ValueError("the tree's subset-row cuts do not extend the column generation's")
            generation.add_cuts(resume.cuts)
            known = set(generation.master.cycles)
            for subgraphs in resume.cycles:
                cycle = tuple(sorted(self.table.column_of(members) for members in subgraphs))
                if cycle not in known:
                    generation.master.cycles.append(cycle)
                    known.add(cycle)
        first = True
        while heap:
            node = heapq.heappop(heap)
            if self._pruned(node.bound):
                self._close(node, "pruned" if node.priced or not node.rules else "pruned by its parent's bound")
                continue
            root, first = resume is None and first, False  # it always runs once, and was counted
            out_of_nodes = node_limit is not None and self.handled >= node_limit
            if not root and (out_of_nodes or (deadline is not None and time.perf_counter() > deadline)):
                heapq.heappush(heap, node)
                self.node_limited = out_of_nodes
                break
            if not root:
                self.nodes += 1
            if not node.priced:
                lp = generation.solve_node(
                    node.rules, node.inner, node.bound, deadline, self.prune_level(), tailing=not node.exact
                )
                assert generation.inner is not None and generation.bound is not None
                exact = node.exact and lp is None  # a node stopped by the deadline keeps its flag
                node = Node(
                    generation.bound, node.serial, node.rules, generation.inner, lp is not None, exact, node.cut_rounds
                )
                if lp is None:
                    heapq.heappush(heap, node)
                    break
                if self._pruned(node.bound):
                    self._close(node, "pruned")
                    continue
            for child in self._settle(node, deadline):
                heapq.heappush(heap, child)
        generation.master.rules = frozenset()
        generation.pricing.impose(())
        return self._outcome(heap)

    def resumable(self, state: TreeState) -> bool:
        """Whether the tree may resume from ``state``: every node it closed stays closed under the
        incumbent now (:class:`~accelsched.formulations.partition.common.TreeState`). The same
        incumbent evaluated again may differ in its last bits: a level above by far less than the
        pricing's tolerance is the same level."""
        eps = self.generation.params.pricing_eps
        return self.prune_level() <= state.level + eps * 1e-6 * max(1.0, abs(state.level))

    def _pruned(self, bound: float) -> bool:
        return bound > self.prune_level()

    def _close(self, node: Node, how: str) -> None:
        """Record a node that needs no branching; its bound is the least objective it may hold."""
        self.closed = min(self.closed, node.bound)
        self._record(node, how)

    def _record(self, node: Node, how: str) -> None:
        """Add a line on ``node`` to :attr:`log`, and log it (:data:`LOGGER`, INFO): a proof of hours
        shows its tree as it grows."""
        rules = " ".join(map(str, sorted(node.rules)))
        self.log.append(f"node {node.serial} [{rules}]: {how}, bound {node.bound:.12g}")
        LOGGER.info("%s; %d nodes solved, prune level %.12g", self.log[-1], self.nodes, self.prune_level())

    def _meets(self, value: float, bound: float) -> bool:
        """Whether a partition of objective ``value`` is optimal in a node of bound ``bound``: no
        whole objective lies in [bound, value) (whole bytes), or ``value`` is within the proof's
        tolerance of the bound (:meth:`~.colgen_params.ColumnGenerationParams.proof_tolerance`)."""
        if self.table.objective_step:
            return value - bound < self.table.objective_step
        return value - bound <= self.generation.params.proof_tolerance(self.table.instance.n_layers, value)

    def _offer(self, found: Assignment) -> None:
        """Make a partition the incumbent when it beats it."""
        if self.table.objective(found) < self.upper:
            self.generation.incumbent = found

    def _settle(self, node: Node, deadline: float | None) -> list[Node]:
        """A node whose master is optimal and which is not pruned: its integer program, then its
        children (none when the node is settled; the node itself, priced again, when a cycle was
        cut, and as it was when the deadline stopped its LP vertex)."""
        self.handled += 1
        master = self.generation.master
        master.rules = node.rules
        found = None
        if self.params.node_integer_s > 0:
            until = time.perf_counter() + self.params.node_integer_s
            found = master.solve_integer(None, until if deadline is None else min(until, deadline))
        if found is not None:
            self._offer(found)
            value = self.table.objective(found)
            if self._meets(value, node.bound):
                self._close(node, f"settled by its integer program ({value:.12g})")
                return []
        if self._pruned(node.bound):
            self._close(node, "pruned after a better partition")
            return []
        lp = master.solve_lp(deadline, vertex=True)
        if not math.isfinite(lp.value) and deadline is not None and time.perf_counter() > deadline:
            return [node]  # its support is no vertex: neither cut nor branched, it waits for the next run
        added = self._cut(node, lp)
        if added:
            with_cuts = master.solve_lp(deadline, vertex=True)
            how = (
                f"{added} subset-row cuts (LP {lp.value:.12g}, {with_cuts.value:.12g} over its columns with them, "
                f"{len(self.generation.cuts)} in all)"
            )
            if self._may_rise(node, with_cuts):
                again = dataclasses.replace(
                    node, serial=next(self._serial), priced=False, cut_rounds=node.cut_rounds + 1
                )
                self._record(node, f"{how}; priced again as node {again.serial}")
                return [again]
            self._record(node, f"{how}: pricing again cannot raise its bound")
            lp = with_cuts
        pairs = self.branching_pairs(lp, node.rules)
        if pairs:
            pair, probed = self._strong_pair(pairs, lp, deadline)
            self._record(node, "branched on {} and {}{}".format(*pair, probed))
            return [
                Node(node.bound, next(self._serial), node.rules | {PairRule(*pair, together)}, node.inner)
                for together in (True, False)
            ]
        chosen = list(lp.support)
        covered = sorted(i for j in chosen for i in self.table.members(j))
        if covered != list(range(self.table.instance.n_layers)):
            self.unresolved.append(node)  # the vertex keeps an artificial variable: no pair to branch on
            return []
        cycle = master.cycle(chosen)
        if cycle is not None:
            master.cycles.append(cycle)
            again = dataclasses.replace(node, serial=next(self._serial), priced=False)
            self._record(node, f"its vertex's subgraphs form a cycle, cut; priced again as node {again.serial}")
            return [again]
        variants = [self.table.variants[j] for j in chosen]
        act = max(variant.act_index for variant in variants)
        weight = max(variant.weight_index for variant in variants)
        integral = self.table.settle(chosen, [0.0] * len(chosen), act, weight)
        self._offer(integral)
        value = self.table.objective(integral)
        if not self._meets(value, node.bound):  # cycle cuts moved the LP, or it tailed off: price to the end
            again = dataclasses.replace(node, serial=next(self._serial), priced=False, exact=True)
            self._record(
                node, f"its integral vertex ({value:.12g}) does not meet it; priced again as node {again.serial}"
            )
            return [again]
        self._close(node, f"settled by an integral vertex ({value:.12g})")
        return []

    def _cut(self, node: Node, lp: MasterLp) -> int:
        """Add the subset-row cuts the node's LP vertex violates (:mod:`~accelsched.formulations.partition.cuts`);
        how many were added: 0 when no cut is violated, or the node has had its ``subset_row_rounds``
        rounds, or the master has ``subset_rows_max`` cuts (:attr:`params`), or its LP vertex keeps
        artificial variables (summing to more than phase one's tolerance, ``covered``)."""
        cuts, params = self.generation.cuts, self.params
        room = min(params.subset_rows_per_round, params.subset_rows_max - len(cuts))
        if node.cut_rounds >= params.subset_row_rounds or room <= 0 or lp.artificial > self.generation.params.covered:
            return 0
        fractional = [(j, x) for j, x in zip(lp.support, lp.weights, strict=True) if _FRACTIONAL < x < 1 - _FRACTIONAL]
        members = [self.table.members(j) for j, _ in fractional]
        triples = self.separate(members, [x for _, x in fractional], self.table.instance.n_layers, room)
        return self.generation.add_cuts(triples)

    def _may_rise(self, node: Node, with_cuts: MasterLp) -> bool:
        """Whether pricing a node again after its subset-row cuts may raise its bound: unless the LP
        over the columns it has, with the cuts (``with_cuts``, covering every layer), is within the
        proof's tolerance of the bound. Pricing adds columns, which can only lower that LP, and a
        bound is at most the LP over every column (module docstring, "Subset-row cuts")."""
        if with_cuts.artificial > self.generation.params.covered:
            return True
        gain = with_cuts.value - node.bound
        return gain > self.generation.params.proof_tolerance(self.table.instance.n_layers, with_cuts.value)

    def _strong_pair(
        self, pairs: Sequence[tuple[int, int]], lp: MasterLp, deadline: float | None
    ) -> tuple[tuple[int, int], str]:
        """The pair to branch on among the first ``strong_candidates`` of ``pairs`` (strong branching,
        :attr:`params`), and what its probe found, for the log ("" without probing).

        Each candidate's two children are probed by the LP over the master's columns
        (:meth:`RestrictedMaster.probe <accelsched.formulations.partition.master.RestrictedMaster.probe>`,
        the node's rules in place), and :func:`strong_choice` picks the pair from the probes.
        With one candidate, or a node LP its deadline stopped, nothing is probed: the first pair."""
        candidates = list(pairs[: self.params.strong_candidates])
        if len(candidates) < 2 or not math.isfinite(lp.value):  # one candidate, or an LP its deadline stopped
            return pairs[0], ""
        rules = [PairRule(*pair, together) for pair in candidates for together in (True, False)]
        start = time.perf_counter()
        probes = self.generation.master.probe(rules, deadline)
        seconds = time.perf_counter() - start
        return strong_choice(candidates, probes, lp.value, self.prune_level(), seconds, self.generation.params.covered)

    def branching_pairs(self, lp: MasterLp, rules: frozenset[PairRule] = frozenset()) -> list[tuple[int, int]]:
        """The pairs of layers, without a rule, whose together-weight in an LP solution is
        fractional, nearest 1/2 first (ties: layers joined by an edge first, then the smallest
        indices; module docstring).

        A column at 1 covers its layers alone, so its pairs have weight 1 and its layers
        weight 0 with every other; the fractional pairs are among the fractional columns'. A
        pair with a rule is fractional only where an artificial variable covers a layer, and
        is never branched on again."""
        weight: defaultdict[tuple[int, int], float] = defaultdict(float)
        for j, x in zip(lp.support, lp.weights, strict=True):
            if _FRACTIONAL < x < 1.0 - _FRACTIONAL:
                for pair in itertools.combinations(self.table.members(j), 2):
                    weight[pair] += x
        ruled = {(rule.first, rule.second) for rule in rules}
        fractional = [(p, w) for p, w in weight.items() if _FRACTIONAL < w < 1.0 - _FRACTIONAL and p not in ruled]
        edges = set(self.table.edges)

        def key(item: tuple[tuple[int, int], float]) -> tuple[float, bool, tuple[int, int]]:
            pair, w = item
            return round(abs(w - 0.5), 9), pair not in edges, pair

        return [pair for pair, _ in sorted(fractional, key=key)]

    def _outcome(self, heap: list[Node]) -> Outcome:
        """What the tree proved: the optimum when no node is open, else the least open bound."""
        generation = self.generation
        open_nodes = [*heap, *self.unresolved]
        upper = self.upper
        if not open_nodes:
            bound = min(self.closed, upper)
            if self.table.objective_step:  # every objective is whole: none lies in (U - 1, U)
                bound = min(upper, math.ceil(bound - 1e-9 * max(1.0, abs(bound))))
            return Outcome(
                True,
                bound,
                generation.incumbent,
                generation.done,
                generation.listed,
                nodes=self.nodes,
                tree=tuple(self.log),
            )
        stop = "the node limit" if self.node_limited else "the deadline"
        for node in sorted(heap):
            self._record(node, f"open at {stop}")
        for node in self.unresolved:
            self._record(node, "open: its LP vertex keeps an artificial variable")
        bound = min(self.closed, min(node.bound for node in open_nodes))
        left = TreeState(
            tuple(node.left_open() for node in open_nodes),
            self.closed,
            self.prune_level(),
            tuple(tuple(self.table.columns[k].members for k in cycle) for cycle in generation.master.cycles),
            tuple(generation.cuts.triples),
        )
        if self.unresolved:
            reason = f"branch-and-price: {len(self.unresolved)} nodes whose LP keeps an artificial variable"
        elif self.node_limited:
            reason = "node limit reached during branch-and-price"
        else:
            reason = "time limit reached during branch-and-price"
        reason += f" ({self.nodes} nodes solved, {len(open_nodes)} open, bound {bound:.12g})"
        return Outcome(
            False,
            bound,
            generation.incumbent,
            generation.done,
            generation.listed,
            stopped=reason,
            nodes=self.nodes,
            tree=tuple(self.log),
            left=left,
        )


def tree_note(log: tuple[str, ...], lines: int = DEFAULT_BRANCH.tree_note_lines) -> str:
    """The tree's log for a result's note: its first ``lines`` lines
    (:attr:`BranchParams.tree_note_lines <accelsched.formulations.partition.proof_params.BranchParams>`),
    and how many more."""
    shown = "; ".join(log[:lines])
    more = len(log) - lines
    return f"tree: {shown}" + (f"; ({more} more)" if more > 0 else "")


def strong_choice(
    candidates: Sequence[tuple[int, int]],
    probes: Sequence[Probe],
    value: float,
    level: float,
    seconds: float = 0.0,
    covered: float = 1e-6,
) -> tuple[tuple[int, int], str]:
    """The pair strong branching chooses from its children's probes, and the log's words on them.

    Parameters
    ----------
    candidates
        The pairs probed, nearest 1/2 first.
    probes
        Their children's LPs, "together" then "apart" for each pair in turn; fewer when the
        deadline cut the probing short (the pairs probed in full count).
    value
        The node's LP value.
    level
        The prune level.
    seconds
        How long the probing took, for the log.
    covered
        Artificial variables summing to at most this count as 0 (phase one's tolerance).

    Returns
    -------
    tuple
        A child's gain is how far its LP lies above ``value``, capped at the distance to ``level``
        (a child past it is as good as pruned), and the cap too where its columns leave part of a
        layer to an artificial variable or its solve stopped. The pair of the largest product of
        its children's gains (each at least a millionth of the cap; ties: the earlier pair) is
        chosen: on these degenerate LPs the pair nearest 1/2 often has a child whose LP does not
        move. Pricing can lower a child's LP, so the gains are estimates; any pair keeps the tree
        exact. Without a pair probed in full: the first pair, and "".
    """
    cap = max(level - value, 1e-9 * max(1.0, abs(value)))

    def gain(probe: Probe) -> float:
        if probe.artificial > covered or not math.isfinite(probe.value):
            return cap
        return min(max(probe.value - value, 0.0), cap)

    gains = [(gain(probes[k]), gain(probes[k + 1])) for k in range(0, len(probes) - 1, 2)]
    if not gains:  # the deadline came first
        return candidates[0], ""
    floor = 1e-6 * cap
    best = max(range(len(gains)), key=lambda k: (max(gains[k][0], floor) * max(gains[k][1], floor), -k))
    together, apart = gains[best]
    return candidates[best], (
        f" (strong branching over {len(gains)} pairs in {seconds:.1f} s: its children's LPs "
        f"+{together:.6g} together, +{apart:.6g} apart)"
    )
