r"""Branch-and-price for the partition models (Cocco), and the preparation of their columns.

Column generation (:mod:`accelsched.formulations.partition.colgen`) ends with the
master optimal, a bound LB proven over every column and a partition of objective
:math:`U`. Listing every column of reduced cost below :math:`U - LB` then makes the
exact models exact; when those columns are too many to list in the time (the listing
gives up, :attr:`Outcome.converged <accelsched.formulations.partition.colgen.Outcome>`),
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
up to :math:`n` subgraphs, :func:`~accelsched.formulations.partition.colgen.proof_tolerance`;
:meth:`BranchAndPrice.prune_level`). The generation in a node stops as soon as such a bound
is proven, and prices to that level (:mod:`~accelsched.formulations.partition.colgen`). The
same tolerance settles a node by a partition (:meth:`BranchAndPrice._meets`) and a pair of
the capacity decomposition by its bound, so a proven :math:`U` is optimal up to it.

An earlier prune level, :math:`U` less the pricing's tolerance :math:`\epsilon |U|` alone,
asked more of a node than the rest of the proof gives: on RandWire-A's 640 KB co-exploration
pair (energy, shared buffer; :math:`n` = 253, :math:`U` = 1.0248e9 pJ) it is 102 pJ below
:math:`U`, against 2.6e4 pJ for :math:`n \epsilon |U|`. A node whose LP optimum is at or
just below :math:`U` (the least bound of that tree's closed nodes is 1.2 pJ below it; its
nodes took about 20 minutes each) had to prove every missing column's reduced cost above
about -3 pJ to be pruned (102 pJ over up to 36 columns of at least 7 layers), where its
pricing's cutoff is now about -720 pJ; and one whose LP optimum lies between the two levels
is pruned by its column generation where it was branched.

Branching
---------
A node whose master is optimal and not pruned first gets the integer program over its
columns (under its rules): a better partition lowers :math:`U` for every node, and one
whose objective meets the node's bound settles the node. Otherwise the LP is solved
again with crossover, to a vertex, and its fractional pairs of layers :math:`(i, k)`
(together-weight :math:`\sum_{j \ni i, k} x_j` strictly between 0 and 1) are ranked,
nearest 1/2 first (ties: layers joined by an edge first, then the smallest indices). Strong
branching probes the first :data:`STRONG_CANDIDATES`: each one's two children are solved as
LPs over the master's columns (no pricing), and the pair whose children's LPs rise most (the
product of the two gains, each capped at the prune level) is branched on
(:meth:`BranchAndPrice._strong_pair`); the children add "together" and "apart" on it. These
set-partitioning LPs are degenerate: on RandWire-A's 448/216 KB separate co-exploration pair,
branched on the pair nearest 1/2 (its 19th run, before strong branching), a node at
1,123,469,172.85 pJ had a "together" child whose bound after pricing was its own, to the
last digit, while the "apart" one was pruned: a node spent for one level of depth. On the
test suite's small trees that branch alone (``TREE_ALONE``: no integer program, no pruning
by the incumbent), strong branching over 8 pairs took 3 nodes where the pair nearest 1/2
took 6, and 18 where it took 26; the other nine trees are the same size.
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
:data:`~accelsched.formulations.partition.colgen.TAILING_GAP` of the node's bound the
node is branched (:meth:`ColumnGeneration.tails
<accelsched.formulations.partition.colgen.ColumnGeneration.tails>`; Vanderbeck's early
branching). At the root this applies once a listing below the gap gave up for time, and
a root whose pricing rounds stop at their deadline with an inner point is priced on as
the tree's first node rather than left unproven (:func:`prepare`). A node priced again
because an integral vertex did not settle it prices to convergence (:attr:`Node.exact`).

Measured on RandWire-A (partition only, Fig. 11 instance), from the converged root of
an earlier column generation (dumped: 22,947 columns, bound 6,337,597 B, :math:`U` =
6,345,241 B): the root's vertex gives the pair (166, 167); the "together" child is
pruned at 6,345,240.9997 B after 608 s, the "apart" child at 6,345,240.998 B after
2,170 s in all (3 nodes; the other core busy with a benchmark for the first half), so
:math:`U` is optimal. End to end (Fig. 11 table, 8,700 s limit), the root tails off and is
branched on the same pair when its listing gives up, at about 2,250 s, and each child is
pruned after about 27 minutes: :math:`U` proven optimal in 5,558 s. With a 6,600 s limit
the "apart" child was still open, its bound 0.075 % below :math:`U`, when the tree's time
ran out.

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
(:mod:`~accelsched.formulations.partition.cuts`; at most :data:`SUBSET_ROWS_PER_ROUND`, up
to :data:`SUBSET_ROW_ROUNDS` rounds per node and :data:`SUBSET_ROWS_MAX` in the master) and
is priced again with them (:meth:`BranchAndPrice._cut`); it is branched when none is
violated or its rounds are spent. Pricing adds columns, which can only lower the LP, so a
node whose LP over the columns it has, with the new cuts, stays within the proof's tolerance
of its bound is branched at once, on that LP's vertex (:meth:`BranchAndPrice._may_rise`):
pricing it again could not raise its bound. (At a depth-2 node of RandWire-A's 448/216 KB
separate pair, 6 cuts and 16 minutes of pricing again raised its bound by 1.1 pJ.) The cuts
hold for every partition, so they stay in the master for every node, and the pricing charges
them (cut-and-price). Branching alone moved RandWire-A's 640 KB co-exploration pair (energy,
shared buffer) 7 % of the way from its root bound to the cutoff in four nodes, 10 minutes
each; at one of its depth-2 nodes, 28 cuts raise the LP over the same columns 83 % of the
rest of the way
(:mod:`~accelsched.formulations.partition.cuts`).

Resuming
--------
A tree stopped by its deadline leaves what a later run needs to go on
(:attr:`Outcome.left <accelsched.formulations.partition.colgen.Outcome>`, a
:class:`~accelsched.formulations.partition.common.TreeState`): each open node's rules,
inner point and bound, the least bound of the nodes closed, the prune level at the end,
the cycles cut from the master, and its subset-row cuts (a node's inner point holds their
duals after the layers'). Every partition lies in an open node or in a closed
one, so a run that starts from the open nodes (:meth:`BranchAndPrice.run` with
``resume``; :func:`prepare` with ``tree``) proves what the stopped tree would have, as
long as its incumbent prunes no less (:meth:`BranchAndPrice.resumable`); it skips the
root's column generation, which on RandWire-A's 640 KB co-exploration pair takes about
20 minutes of each run (its listing included) before the first branch. The nodes'
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from accelsched.formulations.partition.colgen import (
    COVERED,
    DEFAULT_ROUNDS,
    PRICING_EPS,
    ColumnGeneration,
    Outcome,
    proof_tolerance,
)
from accelsched.formulations.partition.common import (
    Assignment,
    InnerPoint,
    OpenNode,
    Prepared,
    TreeState,
    VariantTable,
    checked_warm_start,
)
from accelsched.formulations.partition.cuts import violated_subset_rows
from accelsched.formulations.partition.ledger import Ledger
from accelsched.formulations.partition.master import MasterLp, Probe
from accelsched.formulations.partition.rules import PairRule
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import DEFAULT_BUDGET, ColumnSet, enumerate_columns
from accelsched.solvers import BACKENDS, SolveOptions

__all__ = [
    "DECOMPOSE_COLUMNS",
    "FINAL_SHARE",
    "LOGGER",
    "MASTER_COLUMNS",
    "NODE_INTEGER_S",
    "STRONG_CANDIDATES",
    "SUBSET_ROWS_MAX",
    "SUBSET_ROWS_PER_ROUND",
    "SUBSET_ROW_ROUNDS",
    "TREE_NOTE_LINES",
    "BranchAndPrice",
    "Node",
    "ProofSettings",
    "master_columns",
    "prepare",
    "tree_note",
]

FINAL_SHARE = 0.05
"""Share of the time limit a listing of the columns below the gap leaves to the models' final solve."""

MASTER_COLUMNS = 20_000
"""Largest number of enumerated columns the master starts from (the smallest ones)."""

DECOMPOSE_COLUMNS = 10_000
"""Above this many columns, the MILP methods decompose a co-exploration instance even when its
enumeration is complete (the pairs' tables are then its columns that fit each pair). Measured with
Cocco's ranges, energy, alpha = 0.002: GoogLeNet's co-exploration MILP over its 76,377 columns
(shared buffer; 68,296 separate) was still 1.2 % from its bound when HiGHS stopped, 250 s into a
120 s limit (its root cuts overran it); through the decomposition the whole method proves the
optimum in 44 s (shared: 12 of 47 pairs solved) and 91 s (separate: 53 of 961), SA and the
enumeration included. ResNet-50's MILP over its 1,150 columns is proven in about a second,
faster than pair by pair."""

NODE_INTEGER_S = 60.0
"""Most seconds the integer program over a node's columns gets."""

SUBSET_ROW_ROUNDS = 3
"""Rounds of subset-row cuts a node gets before it is branched (0: no cuts)."""

SUBSET_ROWS_PER_ROUND = 50
"""Most subset-row cuts one round adds."""

SUBSET_ROWS_MAX = 600
"""Most subset-row cuts in the master (each is a variable and three rows of the pricing MILP)."""

STRONG_CANDIDATES = 8
"""Pairs nearest 1/2 whose children strong branching probes (:meth:`BranchAndPrice._strong_pair`;
at most 1: the pair nearest 1/2, unprobed)."""

TREE_NOTE_LINES = 12
"""Most lines of the branch-and-price tree's log a result's note repeats."""

LOGGER = logging.getLogger(__name__)
"""Logs each node of the tree as it ends (INFO)."""


@dataclass(frozen=True)
class ProofSettings:
    """How an exact partition method lists its columns and proves its bound (validated on creation).

    Attributes
    ----------
    budget
        Column budget of the enumeration
        (:func:`~accelsched.problems.partition_columns.enumerate_columns`); beyond it, column
        generation completes the column set.
    rounds
        Largest number of column-generation rounds (of each pair, in co-exploration).
    decompose_above
        A complete co-exploration table of more columns than this is solved pair by pair too
        (None: only incomplete ones; the MILP methods use :data:`DECOMPOSE_COLUMNS`).
    backend
        The linear backend (:data:`accelsched.solvers.BACKENDS`) of the MILPs of the capacity
        decomposition's pairs.
    pairs
        The pairs of candidates (activation bytes, weight bytes; 0 with a shared buffer) the
        capacity decomposition may solve, the others left as they are: a run's share of a proof
        divided between runs, each recording in its own copy of one ledger
        (:meth:`Ledger.merge <accelsched.formulations.partition.ledger.Ledger.merge>` puts them
        together). None: every pair.

    Raises
    ------
    ValueError
        A budget or round limit below 1, a negative ``decompose_above``, an unknown backend, an
        empty ``pairs`` or one with a negative capacity.
    """

    budget: int = DEFAULT_BUDGET
    rounds: int = DEFAULT_ROUNDS
    decompose_above: int | None = None
    backend: str = "highs"
    pairs: frozenset[tuple[int, int]] | None = None

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError(f"the column budget must be at least 1, got {self.budget}")
        if self.rounds < 1:
            raise ValueError(f"the round limit must be at least 1, got {self.rounds}")
        if self.decompose_above is not None and self.decompose_above < 0:
            raise ValueError(f"decompose_above must be None or at least 0, got {self.decompose_above}")
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown linear backend {self.backend!r}; known: {', '.join(BACKENDS)}")
        if self.pairs is not None and (not self.pairs or any(min(pair) < 0 for pair in self.pairs)):
            raise ValueError(f"pairs must be None or pairs of capacities of at least 0 bytes, got {self.pairs}")


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
        Rounds of subset-row cuts it has had (:data:`SUBSET_ROW_ROUNDS`).
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
        table grows with every node's columns.
    """

    def __init__(self, generation: ColumnGeneration) -> None:
        if generation.inner is None or generation.inner_bound is None or generation.incumbent is None:
            raise ValueError("branch-and-price starts from a column generation with an inner point and a partition")
        self.generation = generation
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

    @property
    def upper(self) -> float:
        """The incumbent's objective, :math:`U`."""
        assert self.generation.incumbent is not None
        return self.table.objective(self.generation.incumbent)

    def prune_level(self) -> float:
        """The bound above which a node holds no partition better than :math:`U`
        (:meth:`ColumnGeneration.prune_level
        <accelsched.formulations.partition.colgen.ColumnGeneration.prune_level>`)."""
        return self.generation.prune_level()

    def run(self, deadline: float | None, *, priced: bool = True, resume: TreeState | None = None) -> Outcome:
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
            if not root and deadline is not None and time.perf_counter() > deadline:
                heapq.heappush(heap, node)
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
        return self.prune_level() <= state.level + PRICING_EPS * 1e-6 * max(1.0, abs(state.level))

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
        tolerance of the bound (:func:`~accelsched.formulations.partition.colgen.proof_tolerance`)."""
        if self.table.objective_step:
            return value - bound < self.table.objective_step
        return value - bound <= proof_tolerance(self.table.instance.n_layers, value)

    def _offer(self, found: Assignment) -> None:
        """Make a partition the incumbent when it beats it."""
        if self.table.objective(found) < self.upper:
            self.generation.incumbent = found

    def _settle(self, node: Node, deadline: float | None) -> list[Node]:
        """A node whose master is optimal and which is not pruned: its integer program, then its
        children (none when the node is settled; the node itself, priced again, when a cycle was
        cut, and as it was when the deadline stopped its LP vertex)."""
        master = self.generation.master
        master.rules = node.rules
        until = time.perf_counter() + NODE_INTEGER_S
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
        how many were added: 0 when no cut is violated, or the node has had its
        :data:`SUBSET_ROW_ROUNDS` rounds, or the master has :data:`SUBSET_ROWS_MAX` cuts, or its
        LP vertex keeps artificial variables (summing to more than :data:`COVERED`, phase one's
        tolerance)."""
        cuts = self.generation.cuts
        room = min(SUBSET_ROWS_PER_ROUND, SUBSET_ROWS_MAX - len(cuts))
        if node.cut_rounds >= SUBSET_ROW_ROUNDS or room <= 0 or lp.artificial > COVERED:
            return 0
        fractional = [(j, x) for j, x in zip(lp.support, lp.weights, strict=True) if _FRACTIONAL < x < 1 - _FRACTIONAL]
        members = [self.table.members(j) for j, _ in fractional]
        triples = violated_subset_rows(members, [x for _, x in fractional], self.table.instance.n_layers, room)
        return self.generation.add_cuts(triples)

    def _may_rise(self, node: Node, with_cuts: MasterLp) -> bool:
        """Whether pricing a node again after its subset-row cuts may raise its bound: unless the LP
        over the columns it has, with the cuts (``with_cuts``, covering every layer), is within the
        proof's tolerance of the bound. Pricing adds columns, which can only lower that LP, and a
        bound is at most the LP over every column (module docstring, "Subset-row cuts")."""
        if with_cuts.artificial > COVERED:
            return True
        gain = with_cuts.value - node.bound
        return gain > proof_tolerance(self.table.instance.n_layers, with_cuts.value)

    def _strong_pair(
        self, pairs: Sequence[tuple[int, int]], lp: MasterLp, deadline: float | None
    ) -> tuple[tuple[int, int], str]:
        """The pair to branch on among the first :data:`STRONG_CANDIDATES` of ``pairs`` (strong
        branching), and what its probe found, for the log ("" without probing).

        Each candidate's two children are probed by the LP over the master's columns
        (:meth:`RestrictedMaster.probe <accelsched.formulations.partition.master.RestrictedMaster.probe>`,
        the node's rules in place): a child's gain is how far its LP lies above ``lp``'s, capped at
        the distance to the prune level (a child past it is as good as pruned), and the cap too
        where its columns leave part of a layer to an artificial variable. The pair of the largest
        product of its children's gains (each at least a millionth of the cap; ties: the earlier
        pair) is chosen: on these degenerate LPs the pair nearest 1/2 often has a child whose LP
        does not move. Pricing can lower a child's LP, so the gains are estimates; any pair keeps
        the tree exact."""
        candidates = list(pairs[:STRONG_CANDIDATES])
        if len(candidates) < 2 or not math.isfinite(lp.value):  # one candidate, or an LP its deadline stopped
            return pairs[0], ""
        rules = [PairRule(*pair, together) for pair in candidates for together in (True, False)]
        start = time.perf_counter()
        probes = self.generation.master.probe(rules, deadline)
        seconds = time.perf_counter() - start
        cap = max(self.prune_level() - lp.value, 1e-9 * max(1.0, abs(lp.value)))

        def gain(probe: Probe) -> float:
            if probe.artificial > COVERED or not math.isfinite(probe.value):
                return cap
            return min(max(probe.value - lp.value, 0.0), cap)

        gains = [(gain(probes[k]), gain(probes[k + 1])) for k in range(0, len(probes) - 1, 2)]
        if not gains:  # the deadline came first
            return pairs[0], ""
        floor = 1e-6 * cap
        best = max(range(len(gains)), key=lambda k: (max(gains[k][0], floor) * max(gains[k][1], floor), -k))
        together, apart = gains[best]
        return candidates[best], (
            f" (strong branching over {len(gains)} pairs in {seconds:.1f} s: its children's LPs "
            f"+{together:.6g} together, +{apart:.6g} apart)"
        )

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
        for node in sorted(heap):
            self._record(node, "open at the deadline")
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


def prepare(
    instance: PartitionInstance,
    options: SolveOptions,
    warm_start: PartitionSolution | None,
    start: float,
    settings: ProofSettings = ProofSettings(),
    *,
    cutoff: float = math.inf,
    listed: ColumnSet | None = None,
    ledger: Ledger | None = None,
    seeds: Sequence[Sequence[int]] = (),
    inner: InnerPoint | None = None,
    tree: TreeState | None = None,
    reach: Sequence[float] = (),
) -> Prepared:
    """Check the warm start, list the columns, build the table; generate columns when the list stops early.

    The enumeration gets at most a quarter of the time limit; when it is incomplete,
    column generation (:class:`ColumnGeneration`) starts no pricing round after three
    quarters of it, a listing of the columns below the gap may go on until all but
    :data:`FINAL_SHARE` of it (the last step of the proof: the models then solve over
    a table that already holds the incumbent), and its best partition becomes the
    solvers' start when it beats the warm start. When that listing gives up with the
    master optimal or tailing off, branch-and-price (:class:`BranchAndPrice`) takes the
    same time; so does it, with fixed capacities, when the pricing rounds stop at their
    deadline with an inner point and a partition (the root is then priced on in the tree).
    Its proof that the incumbent is optimal completes the table too (the table holds the
    incumbent's columns).
    In co-exploration the capacity decomposition
    (:func:`~accelsched.formulations.partition.capacity.decompose`) takes the place of
    column generation: it solves one fixed-capacity problem per pair of candidates, each
    with this function, and ``cutoff`` (:class:`ColumnGeneration`) is the objective above
    which a pair cannot matter. A complete co-exploration table of more than
    ``settings.decompose_above`` columns is decomposed too, each pair's table filtered from it;
    ``settings.backend`` solves the pairs' MILPs (the MILP methods pass their own; CP-SAT's
    method has none and leaves HiGHS). ``start``: the :func:`time.perf_counter` value the time
    limit counts from. ``listed``: the instance's
    columns when they are known already (the decomposition's pairs), in place of the
    enumeration. ``ledger``: the decomposition starts from it and writes each solved pair
    to it (:mod:`~accelsched.formulations.partition.ledger`). ``seeds``: subgraphs (layer
    indices, each a valid column of the instance) that column generation starts from beside
    the smallest listed columns: those an earlier solve of the same pair or of a pair within
    it generated. ``inner``: an inner point proven for the instance or for a pair containing it,
    which column generation starts from (:class:`ColumnGeneration`); the returned
    :attr:`Prepared.inner` is the root's, before any branching (a node's holds only under its rules).
    ``tree``: the open nodes an earlier run's tree left for the instance (fixed capacities); the
    work resumes from them, skipping the root's column generation, when the incumbent's prune
    level allows it (:meth:`BranchAndPrice.resumable`) and a partition is known (the warm start's,
    or one over the master's columns). :attr:`Prepared.tree` is what the tree leaves, when it stops
    short of the proof. ``reach``: levels above ``cutoff`` that the root's column generation pushes
    its bound to (:class:`ColumnGeneration`; the cutoffs of the decomposition's pairs within this
    one). Its bound and the tree's, each valid over every column (a tree's is the least bound of its
    nodes, each proven by pricing every column under the node's rules, past the cutoff when a
    node's pricing passed it), give :attr:`Prepared.proven_bound`.
    Presolve is switched off for the solvers (:meth:`Prepared.solver_options`): on these
    set-partitioning models with tens of thousands of columns, HiGHS' presolve probing
    takes minutes and CP-SAT's presolve weakens the bound of its linear relaxation.
    """
    warm, note = checked_warm_start(instance, warm_start)
    limit = options.time_limit_s
    columns = (
        enumerate_columns(instance, settings.budget, None if limit is None else start + limit / 4)
        if listed is None
        else listed
    )
    notes = [note] if note else []
    master = master_columns(columns)
    table = VariantTable(instance, master, [*(warm.indices(instance) if warm else ()), *seeds])
    assignment = table.assignment(warm) if warm else None
    if assignment is not None:
        notes = [f"{note} (objective {table.objective(assignment):.12g})"]
    deadline = None if limit is None else start + limit
    large = settings.decompose_above is not None and len(columns) > settings.decompose_above
    if columns.complete and not (instance.co_exploration and large):
        if settings.pairs is not None:
            notes.append(f"every column listed ({len(columns)}): solved whole, not pair by pair as the pairs given ask")
        return Prepared(table, assignment, tuple(notes), deadline)
    if instance.co_exploration:
        from accelsched.formulations.partition.capacity import decompose  # it imports this module

        return decompose(instance, options, table, warm, notes, start, columns, settings, ledger)
    if master is not columns:
        notes.append(f"column generation starts from the {MASTER_COLUMNS} smallest of {len(columns)} columns")
    generation = ColumnGeneration(table, assignment, options.threads, settings.rounds, cutoff, inner, reach)
    proof_deadline = None if limit is None else start + (1 - FINAL_SHARE) * limit
    root, proven = generation.inner_point, None
    proven_by_tree: Outcome | None = None
    resumed = _resumed_tree(generation, tree, proof_deadline)
    if resumed is not None:
        assert tree is not None
        outcome = proven_by_tree = resumed
        nodes = f"{len(tree.nodes)} open node{'s' if len(tree.nodes) > 1 else ''}"
        cuts = f", with {len(tree.cuts)} subset-row cuts" if tree.cuts else ""
        notes.append(f"branch-and-price resumed from {nodes} of an earlier run{cuts}")
    else:
        outcome = generation.run(None if limit is None else start + 3 * limit / 4, proof_deadline)
        root, proven = generation.inner_point, generation.bound
        handover = outcome.converged or _unfinished_root(generation, outcome, proof_deadline)
        if handover and generation.incumbent is None:  # a stopped root, with no warm start and no listing yet
            generation.incumbent = generation.master.solve_integer(None, proof_deadline)
        if handover and generation.incumbent is not None:
            outcome = proven_by_tree = BranchAndPrice(generation).run(proof_deadline, priced=outcome.converged)
    if proven_by_tree is not None and proven_by_tree.bound is not None:  # its nodes' bounds, past any cutoff
        proven = max(proven_by_tree.bound, -math.inf if proven is None else proven)
    reason = columns.stopped if outcome.complete else f"{columns.stopped}; {outcome.stopped}"
    table.column_set = dataclasses.replace(
        master, complete=outcome.complete, stopped=reason, bound=outcome.bound, columns=tuple(table.columns)
    )
    table.complete = outcome.complete
    # an incomplete set's stop reasons are in the result's note on the bound (partition_result)
    progress = f"column generation: {outcome.rounds} rounds, {len(table.columns)} columns"
    if outcome.nodes:
        progress += f", branch-and-price: {outcome.nodes} nodes"
    if outcome.complete and outcome.nodes:
        notes.append(f"{columns.stopped}; {progress}, the incumbent proven optimal by branch-and-price")
    elif outcome.complete:
        notes.append(f"{columns.stopped}; {progress}, every column below the gap listed ({outcome.listed} added)")
    else:
        notes.append(progress)
    if outcome.tree:
        notes.append(tree_note(outcome.tree))
    better = outcome.incumbent is not None and (
        assignment is None or table.objective(outcome.incumbent) < table.objective(assignment)
    )
    warm_or_better = outcome.incumbent if better else assignment
    return Prepared(table, warm_or_better, tuple(notes), deadline, better, root, outcome.left, proven)


def master_columns(columns: ColumnSet) -> ColumnSet:
    """The listed columns the master starts from (:func:`prepare`): all of them, or, when the listing
    stopped early with more than :data:`MASTER_COLUMNS`, that many of the smallest, with
    :attr:`~accelsched.problems.partition_columns.ColumnSet.listed_below` lowered to the size of the
    first one left out (every column the master misses has at least that many layers)."""
    if columns.complete or len(columns.columns) <= MASTER_COLUMNS:
        return columns
    smallest = sorted(columns.columns, key=lambda column: (len(column.members), column.members))
    kept = tuple(sorted(smallest[:MASTER_COLUMNS], key=attrgetter("members")))
    below = min(columns.listed_below, len(smallest[MASTER_COLUMNS].members))
    return dataclasses.replace(columns, columns=kept, listed_below=below)


def tree_note(log: tuple[str, ...]) -> str:
    """The tree's log for a result's note: its first :data:`TREE_NOTE_LINES` lines, and how many more."""
    shown = "; ".join(log[:TREE_NOTE_LINES])
    more = len(log) - TREE_NOTE_LINES
    return f"tree: {shown}" + (f"; ({more} more)" if more > 0 else "")


def _resumed_tree(generation: ColumnGeneration, tree: TreeState | None, deadline: float | None) -> Outcome | None:
    """The tree resumed from an earlier run's open nodes until ``deadline``; None when there are
    none, the incumbent's prune level does not allow it (:meth:`BranchAndPrice.resumable`), or no
    partition is known (the warm start, else the integer program over the master's columns)."""
    if tree is None or generation.instance.co_exploration or generation.inner is None:
        return None
    if generation.incumbent is None:
        generation.incumbent = generation.master.solve_integer(None, deadline)
        if generation.incumbent is None:
            return None
    branching = BranchAndPrice(generation)
    return branching.run(deadline, resume=tree) if branching.resumable(tree) else None


def _unfinished_root(generation: ColumnGeneration, outcome: Outcome, deadline: float | None) -> bool:
    """Whether a root column generation stopped at its deadline goes on in the tree until ``deadline``:
    with fixed capacities and an inner point, before the round limit, with time left (and a partition,
    which :func:`prepare` finds over the master when neither the warm start nor a listing gave one)."""
    return (
        not outcome.complete
        and not outcome.converged
        and not generation.instance.co_exploration
        and generation.inner is not None
        and generation.done < generation.rounds
        and deadline is not None
        and time.perf_counter() < deadline
    )
