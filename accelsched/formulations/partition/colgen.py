r"""Column generation for the partition models (Cocco): a proven bound, and every column an optimum needs.

When the enumeration of :mod:`accelsched.problems.partition_columns` stops at its
budget (RandWire, NasNet: the connected convex sets that fit are far too many to
list), the exact models would choose among a subset of the columns and prove
nothing. This module replaces the missing part of the list by two exact steps:
column generation, which proves a lower bound over *every* column, and the listing
of the few columns whose reduced cost is small enough to matter. The MILP and
CP-SAT models then run on a column set that provably holds an optimal partition.

The master LP and the lower bound LB it proves from any duals (its notation is used
below: duals :math:`\pi`, charge :math:`\rho`, pricing bound :math:`\mu`) are in
:mod:`accelsched.formulations.partition.master`; this module prices, stabilises the
duals and lists the columns below the gap.

In-out separation
-----------------
The bound holds for any duals, not only the LP's. Moving the cover duals from
:math:`\pi` to :math:`\pi'` moves :math:`\lambda^\top b` by :math:`\sum_i (\pi'_i - \pi_i)`
and each master variant's reduced cost by :math:`-\sum_{i \in S_j} (\pi'_i - \pi_i)`
(:meth:`~.master.MasterLp.at`); the pricing MILP at :math:`\pi'` gives :math:`\mu`. The
*inner point* :math:`\pi^{in}` is the best-bound point at which the pricing proved
:math:`\mu \ge 0` (the last of the charge's Dinkelbach steps, at first), or, where it proved only
:math:`\mu < 0`, the same duals with every cover dual lowered by :math:`|\mu| / s`, at which no
missing set of :math:`s` layers or more is negative (:meth:`ColumnGeneration._lifted`); the next LP gives
:math:`\pi^{out}`, whose sum, the LP value, exceeds the bound. On the segment
:math:`\pi(t) = \pi^{in} + t \Delta`, :math:`\Delta = \pi^{out} - \pi^{in}`, a missing set
has :math:`d_S(\pi(t)) = d_S(\pi^{in}) - t \Delta(S)`, non-negative up to
:math:`t_S = d_S(\pi^{in}) / \Delta(S)`; Dinkelbach's steps on :math:`t` (the least
:math:`t_S` of the sets met) prove the bound at :math:`\pi(t)`
(:meth:`ColumnGeneration._segment`), and its sets are new columns that cut the dual
near the inner point. This is the in-out separation of Ben-Ameur and Neto (2007): the
inner point keeps what earlier rounds proved, where the uniform charge starts again
from each round's duals. Each exact round takes the charge steps first, and the
segment steps when the charge did not beat the inner point. On RandWire-A (partition
only, 900 s of column generation) the charge beat it in every round, so LB is the
charge's 6.22 MB; the segment steps alone reached 6.07 MB in the same time.

The forced traffic as the first inner point
-------------------------------------------
With fixed capacities a first inner point needs no pricing: the forced traffic
(:mod:`~accelsched.formulations.partition.bound`) shared among the layers that pay it,
:func:`~accelsched.formulations.partition.bound.forced_duals`, leaves every reduced cost
non-negative, so it proves its sum (the forced traffic, less the reads no single layer pays)
before the first round, and the segment steps climb from there. Without it, the bound a
pair of the capacity decomposition proves starts from the master's early duals, far below
the forced traffic: RandWire-A's 1,152 KB pair (one shared buffer, energy; forced traffic
8.0007e8 pJ, cutoff 8.0226e8, seeded with 6,685 ledger subgraphs) had proven 6.94e8 after
330 s and was still open when its limit stopped it at 654 s. Started from the forced duals,
its first proven step reached 8.5066e8 at 446 s (on a third of a core at first, beside two
other solves), past the cutoff: the pair is settled. A bound past the cutoff, or past the
incumbent's objective, ends the work there (:meth:`ColumnGeneration.settled`). A pair may also
start from an inner point proven earlier for it or for a pair containing it
(:class:`~accelsched.formulations.partition.common.InnerPoint`, kept in the ledger).

Closing the gap
---------------
Let :math:`U` be the objective of a valid partition and LB a bound proven at duals
:math:`\pi`. In a partition of objective at most :math:`U`, each subgraph's variant has
:math:`d_j(\pi) \le U - LB` (the other terms of LB's sum are at least their share
of LB, and a missing column's share is at most 0). So the master's columns, the
columns of :math:`U`'s partition and every column of reduced cost at most
:math:`\theta = U - LB` hold an optimal partition: the exact models over them are
exact. The pricing MILP lists the latter with cutoff :math:`\theta`: each set it
returns is excluded and the MILP is solved again, until it proves that none is left
(:attr:`ColumnSet.complete <accelsched.problems.partition_columns.ColumnSet>`). A
smaller :math:`U` lists fewer columns, so the integer program over the master's
columns (the master with integer variables, cycles among the chosen subgraphs cut
lazily: :math:`\sum_{j \in \text{cycle}} x_j \le |\text{cycle}| - 1`) is solved
first, and again over the table as the listing adds columns (about half of the
listing's time at most): a better :math:`U` lowers :math:`\theta` for the rest of the
listing. The listing may run past the end of the pricing rounds, until the share of
the time limit left to the models
(:data:`~accelsched.formulations.partition.branch.FINAL_SHARE`). Nothing here needs the
master to be optimal: the listing runs at the inner point, and it is tried as soon
as the inner point's bound comes within :data:`CLOSE_GAP` of the LP value; one that
adds :data:`LISTING_LIMIT` columns, or runs :data:`LISTING_SHARE` of the time left to
it, gives up, and column generation goes on with them in the master. With fixed
capacities, once the master is optimal and a listing has given up (or the one then
tried does), branch-and-price closes the gap instead
(:mod:`accelsched.formulations.partition.branch`). On RandWire-A (partition only, 6,000 s limit) the master converged
after 1,557 s at 6,337,597 B, 0.12 % below the best partition known, and the listing
below that 7.6 KB gap is what stops the proof: each pricing MILP took 55-105 s for
2-12 columns, and after 2,950 s (about 260 columns, none left below 511 B) the time
given to column generation ran out (then three quarters of the limit, the listing
included). Listing one first layer :math:`r` at a time (:math:`t_r = 1`, the layers
before it and those whose closure with it cannot fit fixed to 0) was tried there and
dropped: under 1 MB / 1.125 MB the pair filter keeps 96 of the 253 layers per root on
average (187 for the first), and the first root's solves gave 1-2 columns per
20-60 s, no faster than the whole listing.

What the gap is made of there (measured on the master as its first listing began,
1,429 s, 22,947 columns, its bound already the converged 6,337,597 B, which the LP over
these columns equals): its LP vertex has 10 fractional columns, at 1/4, 1/2 and 3/4,
over 163 layers. The order of the subgraphs is not the gap: the integer program over
the same columns without its cycle cuts already gives :math:`U`. Subset-row cuts on
triples of layers (Jepsen et al., 2008) do not raise the LP (88 violated cuts in two
rounds, then an alternative fractional optimum violates none). One Ryan-Foster branch
does: with layers 87 and 167 together, or apart, the LP over the same columns is
:math:`U` in both children, and column generation in each (the pricing MILP with
:math:`t_i = t_j`, or :math:`t_i + t_j \le 1`, started from the parent's inner point,
which stays a valid one since a child only removes columns) proves over 6,345,240.99 B
after 1,447 s (together) and 2,030 s (apart). The metric is an integer number of
bytes, so both children are pruned and :math:`U` is optimal: one branching settles
what the listing below 7.6 KB would take about 12 h to. That experiment, with the
branch patched into these classes by hand, is what
:mod:`accelsched.formulations.partition.branch` implements.

Pricing to the level
--------------------
A node whose bound must pass a prune level :math:`L` (the incumbent's, or a pair's
cutoff) needs a converged master only when the LP value is at most :math:`L`. While it
is above, LB passes :math:`L` as soon as the pricing proves :math:`\beta` above the
cutoff :math:`\beta_L < 0` that solves LB(:math:`\beta_L`) = :math:`L`
(:meth:`~.master.MasterLp.beta_above`; about :math:`(L - \text{LP}) s / n`),
which is far below the pricing's tolerance :math:`-\epsilon |\text{LP}|` when the LP
is well above :math:`L`. Every pricing step then looks for sets below
:math:`\beta_L` only (:meth:`ColumnGeneration._cutoff`): the MILP proves that none is
left, and the node is pruned or the pair settled, or it meets one, a column that may
take the LP under :math:`L`. The sets between :math:`\beta_L` and the tolerance
cannot, and on these degenerate masters they are many: the windows and the neighbour
search can add them for long without moving the LP. A duals' proof at :math:`\beta_L`
is no proof of dual feasibility, so it does not make them the inner point. Measured on
RandWire-A's 320/144 KB pair of the separate buffers (energy, cutoff 1.2487e9 pJ, its
LP about 2 % above it for most of the solve; :math:`\beta_L` about -6e5 to -7e5 pJ
against a tolerance of -127): settled in 1,287 s, against 1,839 s before (one run
each, from the same ledger, beside a proof on the other core). The Dinkelbach steps
that follow an exact pricing (:meth:`ColumnGeneration._spread`, :meth:`ColumnGeneration._segment`)
price to the level too, once the bound their step proves at :math:`\mu = 0` passes it: their
cutoff is then the :math:`\mu < 0` at which that bound does, instead of 0. Profiled by py-spy
over 25 minutes of RandWire-A's proofs (one core each), the steps took 28 % of the time of
the separate buffers' 192/288 KB pair (the windows 52 %, the exact pricing 16 %) and 18 % of
a node of the shared buffer's 640 KB pair (the windows 67 %); the gain of their lower cutoff
there is not measured.

Running order (:class:`ColumnGeneration`)
-----------------------------------------
0. The master starts from the
   :data:`~accelsched.formulations.partition.branch.MASTER_COLUMNS` smallest enumerated
   columns (and the warm start's): the pricing finds the others when they matter, and each
   round's LP is that much faster (RandWire-A, partition only: 3 s a round from
   20,000 columns against 90 s from the 200,000 of the default budget, and a lower
   LP value after 5 minutes).
1. The master LP, by HiGHS' interior point method without crossover: the duals lie
   inside the optimal face, which these degenerate set-partitioning LPs need to
   converge in few rounds.
2. Pricing by the neighbour search (:class:`~.pricing.NeighbourSearch`)
   from the master's support and newest columns; when it finds nothing, by the
   pricing MILP on windows of the graph (two consecutive pieces between its
   articulation layers); when that finds nothing, by the full pricing MILP, the only
   step that proves :math:`\beta`, followed by the charge or segment steps, each but
   the last stopped at its first :data:`STEP_SETS` sets. Measured on RandWire-A
   (partition only, the root's column generation, one run on each core at once): the
   windows take two thirds of the time (1,500-1,600 s of 2,200-2,300 s); the steps
   took 105 s instead of 230 s solved to the end, and the root converged after 2,082 s
   and 1,600 s (two runs) instead of 2,314 s (one run; run-to-run variance is large,
   as the bound rises only in the exact rounds). Dropping the windows is worse: without
   those over half the layers (both of RandWire-A's) the bound was 6.27 MB after
   1,580 s, when the run with them had converged at 6.34 MB; and skipping the windows
   once a round of them took longer than the full pricing (24-40 s) lowered LB after
   900 s from 6.22 to 6.12 MB: more exact rounds, each adding fewer columns.
   Under a small buffer the windows do the opposite: they keep finding sets, the LP
   value keeps falling, so the exact pricing seldom runs and the bound stalls. RandWire-A
   with one 256 KB shared buffer, one run with and one without the windows at once, one
   per core: with energy (the co-exploration's pair, cutoff 1.2931e9 pJ) the bound was
   1.1221e9 pJ from 354 s to the end (2,594 s) with them, against 1.2300e9 at 2,019 s
   and 1.2417e9 at 2,406 s without; with external memory access (1,200 s limit, milp-highs)
   no bound beyond the forced traffic's 6.93 MB with them, 9.17 MB without. Hence
   :data:`EXACT_SHARE_RATIO`: the exact pricing also runs once the heuristics since the
   last exact round have taken twice its time. Measured with it (RandWire-A, two runs at
   once, one per core): the 256 KB energy pair's bound passed 1.1221e9 pJ at 823 s and was
   1.1982e9 at 892 s (stopped at 1,450 s; without the windows 1.2083e9 at 1,406 s); the
   Fig. 11 instance through ``milp-highs`` (SA warm start, seconds from the call, the
   column enumeration included) proved 5.47 MB at 817 s, 6.06 MB at 1,358 s and 6.22 MB at
   1,933 s (root handed to the tree, open at 2,605 s), where the same code without the rule
   stayed at 3.78 MB from 541 s to its 2,100 s limit (the forced traffic's 5.75 MB was the
   bound reported). So the rule helps under the large buffers too: the older figures above
   were taken on earlier code, and on this code without the rule the windows stalled the
   bound there as well.

   On NasNet's 486 layers the steps are what a round costs: at the shared buffer's 384 KB
   pair (from the committed ledger; level 9.9397e8 pJ) they took 4-7 solves and 75-91 % of
   each exact round (164-475 s after first solves of 37-73 s). Capping them at twice the
   time of the round's first solves was tried and not kept: the LP fell faster (at 384 KB
   1.0018e9 after 15 minutes against 1.0190e9 after 16, 9.8884e8 against 9.9747e8 after
   34), but a capped round rarely reaches the last step, the only one that proves a good
   bound, so the bound stopped rising. At the 192 KB pair it stayed at the ledger's
   9.5646e8 for the 20 minutes measured, where the uncapped steps had raised it to 9.9998e8
   after 16 (one run each, at different times, beside other solves). Neither bound moved at
   384 KB.
3. When the inner point's bound is close, or at convergence, the restricted integer
   program for :math:`U`, then the listing of the columns below :math:`\theta`.

A deadline or the round limit stops the work with the best LB proven so far (or
none), and the column set is marked incomplete: the models then report FEASIBLE
with that bound.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from accelsched.formulations.partition.bound import forced_duals
from accelsched.formulations.partition.common import (
    Assignment,
    InnerPoint,
    TreeState,
    VariantTable,
)
from accelsched.formulations.partition.master import MasterLp, RestrictedMaster
from accelsched.formulations.partition.pricing import NeighbourSearch, PricingModel, TrafficTerms, components
from accelsched.formulations.partition.rules import PairRule
from accelsched.problems.partition import PartitionInstance
from accelsched.problems.partition_columns import mask_of

__all__ = [
    "CLOSE_GAP",
    "COVERED",
    "DEFAULT_ROUNDS",
    "EXACT_FIRST_S",
    "EXACT_SHARE_FLOOR_S",
    "EXACT_SHARE_RATIO",
    "LISTING_LIMIT",
    "LISTING_SHARE",
    "PENALTY_GROWTH",
    "PRICING_EPS",
    "SPREAD_STEPS",
    "STALL_ROUNDS",
    "STEP_SETS",
    "TAILING_GAP",
    "ColumnGeneration",
    "proof_tolerance",
]

LOGGER = logging.getLogger(__name__)
"""A root's column generation with a reach, at its end (INFO): its bound and when it passed its cutoff,
so that each run's log shows what the pricing on to the reach cost."""

DEFAULT_ROUNDS = 100_000
"""Default largest number of pricing rounds."""

STALL_ROUNDS = 10
"""Rounds without a decrease of the master's LP value after which the exact pricing runs."""

EXACT_SHARE_RATIO = 2.0
"""The exact pricing also runs once the heuristic pricing since the last exact round has taken this
many times as long as that round (and at least :data:`EXACT_SHARE_FLOOR_S`): the exact rounds, the
only ones that prove a bound, keep about a third of the pricing time however long the heuristics go on
finding sets."""

EXACT_SHARE_FLOOR_S = 10.0
"""Fewest seconds of heuristic pricing after which :data:`EXACT_SHARE_RATIO` can call the exact pricing
(on small graphs a round takes milliseconds, and the rule would only make the runs depend on timing)."""

EXACT_FIRST_S = 60.0
"""Seconds of heuristic pricing after which the first exact round runs although the heuristics go on
finding sets (before it, :data:`EXACT_SHARE_RATIO` has no exact round to measure). Without it the
first bound waited for the heuristics to run dry: RandWire-A's 256 KB energy pair (one shared
buffer) proved its first bound after 436 s of pricing from the smallest columns, and none in
1,250 s when started from the 1,383 subgraphs an earlier run had generated for it, whose better
master kept the windows finding sets. With it (two runs at once, one per core, 1,800 s): from the
smallest columns 1.1319e9 pJ at 380 s and 1.2224e9 at 1,133 s (before: 1.1221e9 at 567 s,
1.1982e9 at 1,244 s); from the 1,383 subgraphs 1.2651e9 at 799 s and 1.2821e9 at 1,304 s, where
the run that generated them had reached 1.2891e9 in 6,104 s (cutoff 1.2931e9)."""

SPREAD_STEPS = 5
"""Most Dinkelbach steps on the charge per layer of the bound after one exact pricing."""

STEP_SETS = 5
"""Improving sets after which a Dinkelbach step stops (its dual bound still holds): only the last
step, which meets none below the cutoff, must prove its minimum."""

CLOSE_GAP = 1e-3
"""Relative gap between the LP value and the inner point's bound below which the columns below the
gap are listed before the master is optimal (:data:`LISTING_LIMIT` at most)."""

LISTING_LIMIT = 2_000
"""Most columns a listing adds before it gives up: column generation goes on before the master is
optimal, branching after."""

LISTING_SHARE = 0.1
"""Share of the time left to it that the listing after the master is optimal takes before it gives up
(branching then closes the gap)."""

TAILING_GAP = 1e-3
"""Relative gap between the LP value and the bound proven below which a master that cannot be pruned
stops pricing and branches (tailing-off control: :meth:`ColumnGeneration.tails`); :data:`CLOSE_GAP`'s,
so that at the root a listing that gives up for time hands over to the tree at once."""

_TIGHTEN_MIN_S = 0.5
"""Fewest seconds the integer program gets when it runs again during a listing."""

PENALTY_GROWTH = 10.0
"""Factor on the artificial variables' cost when a node's LP keeps one though phase one found the
node feasible."""

COVERED = 1e-6
"""Artificial variables summing to at most this count as 0 (phase one's tolerance, in layers)."""

PRICING_EPS = 1e-7
"""Relative tolerance of the pricing: a column is new when its reduced cost is below -eps x |objective|."""


def proof_tolerance(n_layers: int, value: float) -> float:
    r"""The precision of every proof whose objectives are not whole numbers (energy): the pricing's
    tolerance on each of up to ``n_layers`` subgraphs, :math:`n \epsilon \max(1, |v|)` at the
    objective ``value`` :math:`v`.

    A master called optimal when the pricing finds no column below :math:`-\epsilon |v|` has an LP
    value within this of the LP optimum over every column (a partition has at most :math:`n`
    subgraphs), so it is what a converged column generation proves. The branch-and-price prunes a
    node whose bound is within it of :math:`U` (:meth:`ColumnGeneration.prune_level`) and settles one
    whose partition is (:meth:`BranchAndPrice._meets
    <accelsched.formulations.partition.branch.BranchAndPrice._meets>`); the capacity decomposition
    settles a pair whose floor is (:mod:`~accelsched.formulations.partition.capacity`). A proven
    optimum :math:`U` is therefore optimal up to this: no partition is below :math:`U` by more. On
    RandWire-A (253 layers) it is :math:`2.5 \times 10^{-5}` of :math:`U`."""
    return n_layers * PRICING_EPS * max(1.0, abs(value))


@dataclass
class Outcome:
    """What column generation proved and found.

    Attributes
    ----------
    complete
        Whether the table's columns hold an optimal partition.
    bound
        The best lower bound proven (None when no exact pricing finished and the forced traffic
        gave no inner point).
    incumbent
        The best valid partition found (the warm start or better), as an assignment.
    rounds
        Pricing rounds.
    listed
        Columns added by the listing of the columns below the gap.
    stopped
        Why the work stopped before completing (empty when complete).
    converged
        Whether branching can go on from the inner point: the work stopped short of the proof
        with the master optimal, or tailing off (:meth:`ColumnGeneration.tails`).
    nodes
        Nodes of the branch-and-price tree solved (0 when column generation alone decided).
    tree
        The tree's log (:attr:`BranchAndPrice.log
        <accelsched.formulations.partition.branch.BranchAndPrice.log>`), one line per node.
    left
        The tree's open nodes when it stopped short of the proof, for a later run to resume
        (None when it completed, or the work stopped before branching).
    """

    complete: bool
    bound: float | None
    incumbent: Assignment | None
    rounds: int
    listed: int = 0
    stopped: str = ""
    converged: bool = False
    nodes: int = 0
    tree: tuple[str, ...] = ()
    left: TreeState | None = None


class ColumnGeneration:
    """Column generation, then the listing of the columns below the gap (see the module docstring).

    Parameters
    ----------
    table
        The columns found so far (an incomplete enumeration, the warm start's); grown in place.
    incumbent
        A valid partition of the table's columns, or None.
    threads
        HiGHS threads.
    rounds
        Largest number of pricing rounds.
    cutoff
        An objective no partition of interest reaches (the capacity decomposition's,
        :mod:`accelsched.formulations.partition.capacity`): :math:`U` is at most it
        (:attr:`upper`), so the gap, the pruning and a completed proof are for the partitions
        below it. A complete outcome then says that the table holds an optimal partition *or*
        that none lies below the cutoff (:meth:`prune_level`).
    start
        An inner point proven earlier for this instance or for one whose columns include its
        own (:class:`~accelsched.formulations.partition.common.InnerPoint`; fixed capacities
        only): the first inner point when its bound beats the forced traffic's.
    reach
        Levels above the cutoff that the root's bound is pushed to (:meth:`run`): a bound
        proven here also holds for every instance whose columns are among these, and the
        capacity decomposition's pairs within this one have higher cutoffs
        (:mod:`accelsched.formulations.partition.capacity`, "Reach"). The root prices to the
        highest of them below its master's LP value (:meth:`reach_level`), and its work stops
        there or when the master is optimal; the partitions, the listing and the tree stay at
        the cutoff. Levels at or below the cutoff are ignored.
    """

    def __init__(
        self,
        table: VariantTable,
        incumbent: Assignment | None,
        threads: int = 1,
        rounds: int = DEFAULT_ROUNDS,
        cutoff: float = math.inf,
        start: InnerPoint | None = None,
        reach: Sequence[float] = (),
    ) -> None:
        self.table = table
        self.instance = table.instance
        self.incumbent = incumbent
        self.cutoff = cutoff
        self.reach = tuple(sorted(level for level in reach if level > cutoff))
        self.rounds = rounds
        self.master = RestrictedMaster(table, threads)
        self.terms = TrafficTerms.of(self.instance)
        self.cuts = self.master.subset_rows
        """The subset-row cuts (:mod:`~accelsched.formulations.partition.cuts`), shared by the master,
        the pricing MILP and the local search; the duals of this class are the cover duals followed
        by theirs (:meth:`add_cuts`)."""
        self.pricing = PricingModel(
            self.instance, self.terms, table.metric_weight, threads, self.master.min_size, self.cuts
        )
        self.search = NeighbourSearch(self.instance, table.metric_weight, self.cuts)
        self.windows = _windows(self.instance)
        self.bound: float | None = None
        self.done = 0
        self.listed = 0
        self.theta: float | None = None
        """The gap below which every column is listed (set by the last listing)."""
        self.duals: tuple[float, ...] = ()
        """The duals the last listing ran at (the inner point then)."""
        self.inner: tuple[float, ...] | None = None
        """The in-out separation's inner point: the best-bound cover duals at which every missing
        column's reduced cost was proven non-negative."""
        self.inner_bound: float | None = None
        """The bound proven at :attr:`inner`."""
        self.tried: float | None = None
        """The bound with which the last listing before the master is optimal was tried."""
        self.slow = False
        """Whether a listing gave up for time (:data:`LISTING_SHARE`): no listing is tried before the
        master is optimal then, nor, with fixed capacities, after (branching takes over at once)."""
        self.exact_s: float | None = None
        """Seconds the last exact round took (its pricing MILP and steps; None before the first)."""
        self.settled_s: float | None = None
        """Seconds into :meth:`run` at which its bound first settled the root (:meth:`settled`), or None:
        with a reach, the rest of the root's time is what pricing on to the reach cost."""
        self._unrated = False
        """Whether :attr:`inner_bound` is a node's bound rather than the inner point's own (:meth:`solve_node`)."""
        self.priced_to: float | None = None
        """The level the last pricing round of the root priced to (:meth:`reach_level` at its LP value;
        None before the first round, and in the tree's nodes, which price to their prune level)."""
        self._run_start: float | None = None
        self._start_inside(start)

    def _start_inside(self, start: InnerPoint | None) -> None:
        """With fixed capacities, the forced traffic's duals
        (:func:`~accelsched.formulations.partition.bound.forced_duals`) are the first inner point:
        every reduced cost is non-negative there, so they prove their sum before any pricing, and
        the segment steps climb from it (module docstring, "The forced traffic as the first inner
        point"); ``start`` replaces them when its bound is higher."""
        if self.instance.co_exploration:
            if start is not None:
                raise ValueError("an inner point to start from needs fixed capacities")
            return
        duals = forced_duals(self.table)
        points = [] if duals is None else [InnerPoint(duals, math.fsum(duals))]
        if start is not None:
            if len(start.duals) != self.instance.n_layers:
                raise ValueError(f"the inner point has {len(start.duals)} duals for {self.instance.n_layers} layers")
            points.append(start)
        best = max(points, key=lambda point: point.bound, default=None)
        if best is not None:
            self.inner, self.inner_bound, self.bound = self.cuts.padded(best.duals), best.bound, best.bound

    def add_cuts(self, triples: Sequence[Sequence[int]]) -> int:
        """Add subset-row cuts (layer triples) to the master and the pricing; how many were new.

        They are valid for every partition, so for every node. The inner point gets the dual 0 on
        each, at which its bound still holds (a zero dual adds nothing to it)."""
        added = self.cuts.add(triples)
        if added and self.inner is not None:
            self.inner = self.cuts.padded(self.inner)
        return added

    @property
    def inner_point(self) -> InnerPoint | None:
        """The inner point and its bound (None before one is proven)."""
        if self.inner is None or self.inner_bound is None:
            return None
        return InnerPoint(self.inner, self.inner_bound)

    def _tolerance(self, lp: MasterLp) -> float:
        return PRICING_EPS * max(1.0, abs(lp.value))

    def _candidates(self, sets: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
        """The sets of several layers among the pricing MILP's that keep the node's branching rules.

        The MILP's flow makes each set connected (:meth:`PricingModel.connectivity
        <accelsched.formulations.partition.pricing.PricingModel.connectivity>`); a set that is not,
        which only the solver's tolerances could give, is logged, cut from the MILP (its
        exclusion row keeps every connected set) and dropped."""
        found = []
        for members in sets:
            if len(members) < 2 or not self.master.admits(members):
                continue
            if len(components(members, self.pricing.neighbours)) > 1:
                LOGGER.warning("the pricing MILP met a disconnected set (%d layers): cut and dropped", len(members))
                self.pricing.exclude(members)
                continue
            found.append(tuple(members))
        return found

    def _add(self, sets: Sequence[Sequence[int]]) -> int:
        """Add the connected sets that are new columns (fitting, keeping the node's branching rules)
        to the table and cut the others from the pricing MILP (a master column met again, with the
        interior point's inexact duals, is cut too: the bound covers it through the master's
        reduced costs)."""
        return sum(self._admit(members) for members in sets if len(members) > 1 and self.master.admits(members))

    def _admit(self, members: Sequence[int], known: set[int] | None = None) -> bool:
        """Add a connected set to the table when it is a new column; cut it from the pricing MILP
        when it does not fit or is a column of the master whose bound is being proven (``known``:
        their masks; None: every column of the table). Whether it was added."""
        listed = self.table.has(members)
        in_master = listed if known is None else mask_of(members) in known
        if in_master or not self._fits(members):
            self.pricing.exclude(members)
            return False
        return not listed and bool(self.table.add(members))

    def _fits(self, members: Sequence[int]) -> bool:
        return self.instance.fits_largest(self.instance.cost_model.subgraph(members))

    def _expired(self, deadline: float | None) -> bool:
        return deadline is not None and time.perf_counter() > deadline

    def _left(self, deadline: float | None) -> float | None:
        return None if deadline is None else deadline - time.perf_counter()

    def run(self, deadline: float | None, listing_deadline: float | None = None) -> Outcome:
        """Generate columns until the master is optimal, then list the columns below the gap.

        The heuristic pricing goes first; the exact pricing MILP runs when it finds nothing,
        and also after :data:`STALL_ROUNDS` rounds without a decrease of the LP value (on
        these degenerate masters the heuristics can add columns for long without moving
        it) or once the heuristics have had :data:`EXACT_SHARE_RATIO` times the last exact
        round's time (they can also lower it for long without the bound moving), for the
        bound its dual bound proves. The work is complete as soon as that bound proves that no
        partition beats :math:`U` (:meth:`settled`), the master optimal or not. A listing gives up after
        :data:`LISTING_LIMIT` columns or :data:`LISTING_SHARE` of the time left to it. With
        fixed capacities, when the listing at the end gives up, or is skipped because an
        earlier one gave up for time (:attr:`slow`), the outcome says that the master is
        optimal (:attr:`Outcome.converged`), and branching on pairs of layers
        (:class:`~accelsched.formulations.partition.branch.BranchAndPrice`) closes the gap
        instead; once such a listing gave up, a master that tails off (:meth:`tails`) ends
        the pricing for branching too. In co-exploration the listing at the end runs to the
        end: there the master's LP also mixes capacities, which such branching leaves
        fractional. (The exact models do not run it on co-exploration tables: the capacity
        decomposition, :mod:`accelsched.formulations.partition.capacity`, runs it on each pair
        of candidates instead, whose bounds the mixed LP cannot reach.)

        With a ``reach``, the pricing goes on past :meth:`settled` until the bound passes
        :meth:`reach_level` at the master's LP value or the master is optimal (or the time or the
        round limit stops it); a bound past :meth:`prune_level` then completes the work without a
        listing. Its end is logged (:data:`LOGGER`), with when the bound passed the cutoff
        (:attr:`settled_s`; the time after it is what the reach cost) and the level its last round
        priced to (:attr:`priced_to`).

        Parameters
        ----------
        deadline
            A :func:`time.perf_counter` value after which no pricing round starts (None: no limit).
        listing_deadline
            Until when a listing of the columns below the gap, the step that completes the
            proof, may run (default: ``deadline``; a later one lets a listing started before
            ``deadline`` go on).
        """
        self._run_start = time.perf_counter()
        if self.settled():  # by the inner point it starts from
            self.settled_s = 0.0
        outcome = self._root(deadline, listing_deadline)
        if self.reach:
            LOGGER.info(
                "root with a reach: %s, bound %.7g after %.1f s, %s; %s",
                "complete" if outcome.complete else "open",
                -math.inf if self.bound is None else self.bound,
                time.perf_counter() - self._run_start,
                "cutoff not passed" if self.settled_s is None else f"cutoff passed after {self.settled_s:.1f} s",
                "no round priced" if self.priced_to is None else f"last priced to {self.priced_to:.7g}",
            )
        self._run_start = None
        return outcome

    def _root(self, deadline: float | None, listing_deadline: float | None) -> Outcome:
        """The work of :meth:`run`."""
        listing_deadline = deadline if listing_deadline is None else listing_deadline
        if self.reached():
            return self._done()
        state = self._generate(deadline, listing_deadline, early=True, tailing=True)
        if self.settled():  # short of the reach (optimal master, time, rounds), past the cutoff
            return self._done()
        if isinstance(state, Outcome):
            return state
        if self.instance.co_exploration:  # branching on layer pairs alone cannot fix the capacities
            outcome = self._close(listing_deadline)
            assert outcome is not None  # without a limit the listing ends or runs out of time
            return outcome
        if not self.slow:
            outcome = self._close(listing_deadline, LISTING_LIMIT, self._give_up(listing_deadline))
            if outcome is not None:
                return outcome
        reason = (
            f"the listing below the gap of {self.theta:.6g} gave up ({self.listed} listed, "
            f"{len(self.table.columns)} columns; master LP {state.value:.12g})"
        )
        return dataclasses.replace(self._stop(reason), converged=True)

    def solve_node(
        self,
        rules: frozenset[PairRule],
        inner: tuple[float, ...],
        bound: float,
        deadline: float | None,
        prune_above: float,
        *,
        tailing: bool = True,
    ) -> MasterLp | None:
        """Column generation under branching rules, from an inner point its parent proved.

        The parent's inner point stays one here: a node's partitions are some of its
        parent's, and its pricing MILP admits a subset of the sets, so every missing set
        keeps a non-negative reduced cost there, and the node's bound starts at the
        parent's, ``bound``. That bound may have been proven at other duals than the inner
        point's (a Dinkelbach step's, whose pricing proved a bound below 0 there), so the inner
        point's own bound is taken at the node's first LP (:meth:`MasterLp.at
        <accelsched.formulations.partition.master.MasterLp.at>`): a new inner point must beat
        that, not ``bound``, and the node's bound rises to it when it is higher. (The inner point
        of 128/288 KB's resumed node in NasNet's separate-buffer decomposition sums to 9.66e8 pJ
        under a node bound of 1.0287e9: rated by that bound, no later point could replace it, and
        the segment steps started 6 % below it.)
        There is no listing in a node; the generation stops as soon as a bound above
        ``prune_above`` is proven, and, with ``tailing``, when the master tails off
        (:meth:`tails`): the node is then branched with its master not optimal.

        Under rules the LP has artificial variables
        (:meth:`~.master.RestrictedMaster.penalty`). When the generation converges
        with some of them still in the LP, phase one (:meth:`_phase_one`) decides: no
        partition keeps the rules (the bound is then infinite), or one does and the
        artificial variables' cost grows by :data:`PENALTY_GROWTH` for another round.

        Returns the last master LP (the master is optimal or tails off, or the node is pruned:
        compare :attr:`bound` with ``prune_above``), or None when the time or the round limit
        stopped the work (:attr:`bound` is then the node's best bound)."""
        self.master.rules = rules
        self.master.penalty_scale = 1.0
        self.pricing.impose(rules)
        self.inner, self.inner_bound, self.bound = self.cuts.padded(inner), bound, bound
        self._unrated = True
        self.tried = None
        while True:
            state = self._generate(deadline, deadline, early=False, prune_above=prune_above, tailing=tailing)
            if isinstance(state, Outcome):
                return None
            if state.artificial <= COVERED or (self.bound is not None and self.bound > prune_above):
                return state
            feasible = self._phase_one(deadline)
            if feasible is None:
                return None
            if not feasible:  # no fractional partition keeps the rules: none at all
                self.bound = math.inf
                return state
            self.master.penalty_scale *= PENALTY_GROWTH

    def _phase_one(self, deadline: float | None) -> bool | None:
        r"""Whether some fractional partition over every column keeps the node's rules (phase one,
        with Farkas pricing); None when time runs out.

        The master LP with costs 0 for the columns and 1 for the artificial variables, priced
        with the metric's weight 0 (a set's reduced cost is :math:`-\sum_{i \in S} \pi_i`). Its
        bound (:meth:`MasterLp.bound`) above 0 proves that no partition keeps the rules; an LP
        solution without artificial variables proves that one does, fractionally."""
        master, pricing = self.master, self.pricing
        weight = pricing.weight
        master.phase_one, pricing.weight = True, 0.0
        vertex = False
        try:
            while not self._expired(deadline):
                lp = master.solve_lp(deadline, vertex=vertex)
                if not math.isfinite(lp.value):
                    return None
                if lp.artificial <= COVERED:
                    return True
                answer = pricing.solve(lp.duals, -COVERED, time_limit=self._left(deadline), max_sets=5)
                if answer.complete and lp.bound(answer.bound) > COVERED:
                    return False
                if not self._add(self._candidates(answer.sets)) and answer.complete and not answer.sets:
                    if vertex:  # optimal duals, nothing prices out: the LP's positive value is phase one's
                        return False
                    vertex = True  # an unfinished interior point's duals (see _generate)
            return None
        finally:
            master.phase_one, pricing.weight = False, weight

    def _generate(
        self,
        deadline: float | None,
        listing_deadline: float | None,
        *,
        early: bool,
        prune_above: float | None = None,
        tailing: bool = False,
    ) -> MasterLp | Outcome:
        """The pricing rounds of :meth:`run` and :meth:`solve_node`.

        Returns the last master LP when the exact pricing proved that no column is missing at
        its duals, or when a bound above ``prune_above`` is proven. The interior point method
        without crossover may stop with status unknown and duals short of optimal (whose
        bound, valid, is then below the LP value: crossed(600) with x and y together, 4160
        for an LP of 4672); when no column prices out at such duals, the LP is solved again
        with crossover and priced once more, so that a master called optimal has optimal
        duals. With ``tailing``, also returns it when the master tails off (:meth:`tails`) after
        an exact pricing that added columns. Returns an outcome when the work stops, or when a
        listing before the master is optimal (only when ``early``, until ``listing_deadline``)
        completed the proof, or (only when ``early``) the bound settled it (:meth:`settled`)."""
        lp = self.master.solve_lp(deadline)
        if self._unrated and self.inner is not None and math.isfinite(lp.value):  # a node's (solve_node)
            self.inner_bound, self._unrated = lp.at(self.inner).bound(0.0), False
            self.bound = self.inner_bound if self.bound is None else max(self.bound, self.inner_bound)
        best_value, stalled, vertex = lp.value, 0, False
        heuristic_s = 0.0  # heuristic pricing since the last exact round
        while True:
            if self._expired(deadline):
                return self._stop("time limit reached during column generation")
            if not math.isfinite(lp.value):
                return self._stop(f"the master LP was not solved ({lp.status})")
            if self.done >= self.rounds:
                return self._stop(f"column generation stopped after {self.rounds} rounds")
            self.done += 1
            level = prune_above if prune_above is not None else self.reach_level(lp.value) if early else None
            if early:
                self.priced_to = level
            cutoff = self._cutoff(lp, level)
            known = {mask_of(column.members) for column in self.table.columns}
            starts = [self.table.members(j) for j in lp.support] + [c.members for c in self.table.columns[-30:]]
            added = 0
            if stalled < STALL_ROUNDS and not self._exact_due(heuristic_s):
                start = time.perf_counter()
                added = self._add(self.search.search(starts, lp.duals, cutoff, known, deadline=deadline))
                for window in self.windows if not added else []:
                    left = self._left(deadline)
                    answer = self.pricing.solve(lp.duals, cutoff, window=window, time_limit=left, max_sets=5)
                    added += self._add(self._candidates(answer.sets))
                heuristic_s += time.perf_counter() - start
            if not added:
                before_s, stalled, heuristic_s, start = heuristic_s, 0, 0.0, time.perf_counter()
                counted = [(self.pricing.solves, self.pricing.solve_s)]
                beta, sets, added = self._price_exactly(lp, cutoff, deadline)
                counted.append((self.pricing.solves, self.pricing.solve_s))
                if beta is not None:
                    self._prove(lp, lp.bound(beta), lp.duals, beta)
                    if beta < cutoff:
                        inner = self.inner
                        added += self._spread(lp, sets, known, deadline, level)
                        if inner is not None and self.inner == inner:  # the charge did not beat it
                            added += self._segment(lp, sets, known, deadline, level)
                self.exact_s = time.perf_counter() - start
                self._log_exact(lp, (beta, cutoff), added, (self.exact_s, before_s), level, counted)
                if prune_above is not None and self.bound is not None and self.bound > prune_above:
                    return lp
                if early and self.reached(lp.value):
                    return self._done()
                if added and early and not self.slow and not self.settled() and self._near(lp):
                    closed = self._close(listing_deadline, LISTING_LIMIT, self._give_up(listing_deadline))
                    if closed is not None:
                        return closed
                if added and tailing and self.tails(lp, prune_above):
                    return lp
                if not added:
                    if beta is None or beta < cutoff:
                        return self._stop("time limit reached during column generation")
                    if lp.status == "Optimal":
                        return lp
                    vertex = True  # an unfinished interior point's duals: price once more at a basis'
            lp = self.master.solve_lp(deadline, vertex=vertex)
            vertex = False
            if lp.value < best_value - self._tolerance(lp):
                best_value, stalled = lp.value, 0
            else:
                stalled += 1

    def _log_exact(
        self,
        lp: MasterLp,
        proof: tuple[float | None, float],
        added: int,
        seconds: tuple[float, float],
        level: float | None,
        counted: list[tuple[int, float]],
    ) -> None:
        """A DEBUG record of an exact pricing round (``-vv`` on the command line): where the master's LP
        value (with HiGHS' status and the least reduced cost of a master variant at its duals, which
        the bound may charge every layer), the bound and the inner point's bound (what the segment
        steps start from) stand against the ``level`` that would end the work, the pricing's bound
        beta against the cutoff it looked below (``proof``; the Dinkelbach steps run when beta is
        below it), and what the round and the heuristic pricing before it cost (``seconds``), the
        round's first pricing MILP solves apart from its Dinkelbach steps' (``counted``: the pricing
        model's solves and seconds before the round and after its first solves). On a long proof it
        tells a bound still rising from one stuck below an LP value that only branching can pass,
        and where the round's time goes."""
        (start, start_s), (after, after_s) = counted
        beta, cutoff = proof
        first, first_s = after - start, after_s - start_s
        steps, steps_s = self.pricing.solves - after, self.pricing.solve_s - after_s
        LOGGER.debug(
            "exact pricing, round %d: master LP %.10g (%s, least reduced cost %.4g) over %d columns, bound %.10g "
            "(inner point %s), level %s; "
            "beta %s (cutoff %.4g), %d columns added; %.1f s (pricing MILP %d solves %.1f s, "
            "Dinkelbach steps %d solves %.1f s; heuristic pricing before it %.1f s)",
            self.done,
            lp.value,
            lp.status,
            lp.least,
            len(self.table.columns),
            -math.inf if self.bound is None else self.bound,
            "none" if self.inner_bound is None else f"{self.inner_bound:.10g}",
            "none" if level is None else f"{level:.10g}",
            "unproven" if beta is None else f"{beta:.4g}",
            cutoff,
            added,
            seconds[0],
            first,
            first_s,
            steps,
            steps_s,
            seconds[1],
        )

    def _cutoff(self, lp: MasterLp, level: float | None, ceiling: float | None = None, per_layer: float = 0.0) -> float:
        """The reduced cost below which the pricing looks for columns at ``lp``: ``ceiling`` (the
        pricing's tolerance when None; a Dinkelbach step's is 0), or, when LB can pass ``level``
        (the prune level of a node, or of the root's incumbent or cutoff) before the master is
        optimal, the lower :meth:`~accelsched.formulations.partition.master.MasterLp.beta_above`
        (with the charge ``per_layer`` of a step of :meth:`_spread`): a pricing that meets no set
        below it proves LB above ``level``, and the columns between it and the ceiling could not
        take the LP under ``level`` (module docstring, *Pricing to the level*)."""
        top = -self._tolerance(lp) if ceiling is None else ceiling
        if level is None or not math.isfinite(level):
            return top
        needed = lp.beta_above(level, per_layer)
        return top if needed is None else min(top, needed)

    def _exact_due(self, heuristic_s: float) -> bool:
        """Whether the heuristic pricing since the last exact round has had its share of the time
        (:data:`EXACT_SHARE_RATIO`, :data:`EXACT_SHARE_FLOOR_S`; :data:`EXACT_FIRST_S` before the
        first exact round)."""
        if self.exact_s is None:
            return heuristic_s >= EXACT_FIRST_S
        return heuristic_s >= max(EXACT_SHARE_FLOOR_S, EXACT_SHARE_RATIO * self.exact_s)

    @property
    def upper(self) -> float:
        """:math:`U`: the incumbent's objective, or the cutoff when it is lower (inf without either)."""
        return min(self._found(), self.cutoff)

    def _found(self) -> float:
        """The incumbent's objective (inf without one)."""
        return math.inf if self.incumbent is None else self.table.objective(self.incumbent)

    def prune_level(self) -> float:
        r"""The bound above which no partition beats :math:`U` (:attr:`upper`): :math:`U`
        less one step when every objective is a whole number of steps (bytes,
        :attr:`VariantTable.objective_step <accelsched.formulations.partition.common.VariantTable>`),
        :math:`U` less the proof's tolerance :math:`n \epsilon |U|` otherwise
        (:func:`proof_tolerance`; inf without an incumbent or a cutoff)."""
        return self._below(self.upper)

    def reach_level(self, value: float = math.inf) -> float:
        """The level the root prices to: :meth:`prune_level` of the highest level of the reach below
        ``value``, the master's LP value, or of the cutoff when none is; or of the incumbent's
        objective when it is lower. No bound passes a level at or above the LP value: the bound is
        at most the LP optimum over every column, which is at most the LP value of the master over
        some of them (and at most the optimum)."""
        top = max((level for level in self.reach if level < value), default=self.cutoff)
        return self._below(min(self._found(), top))

    def _below(self, upper: float) -> float:
        """The bound above which no partition is below ``upper`` (:meth:`prune_level`)."""
        if not math.isfinite(upper):
            return math.inf
        if self.table.objective_step:
            return upper - self.table.objective_step + 1e-9 * max(1.0, abs(upper))
        return upper - proof_tolerance(self.instance.n_layers, upper)

    def settled(self) -> bool:
        """Whether the bound proven is above :meth:`prune_level`: no partition beats :math:`U`, so the
        incumbent is optimal (it is in the table) or none lies below the cutoff, and the work is done."""
        return self.bound is not None and self.bound > self.prune_level()

    def reached(self, value: float = math.inf) -> bool:
        """Whether the bound proven is above :meth:`reach_level` at the LP value ``value`` (then
        :meth:`settled` too)."""
        return self.bound is not None and self.bound > self.reach_level(value)

    def _done(self) -> Outcome:
        return Outcome(True, self.bound, self.incumbent, self.done, self.listed)

    def tails(self, lp: MasterLp, prune_above: float | None = None) -> bool:
        """Tailing-off control (early branching, Vanderbeck 2005): whether a master that is not
        optimal yet should stop pricing and branch.

        With fixed capacities only, in a node (``prune_above`` given) or at the root once a
        listing gave up for time (:attr:`slow`; the level is then :meth:`prune_level`): when the
        LP value is at most the level, so that its optimum is too and converging could not
        prune the node (it would be branched anyway), and within :data:`TAILING_GAP` of the
        bound proven, from which the children start. Branching is valid at any LP; only the
        choice of the pair follows a master that is not optimal. On RandWire-A (partition only)
        the exact pricing found columns just below its cutoff for thousands of seconds after
        the bound had stopped rising, and the root never reached the tree in a 6,600 s run."""
        if self.instance.co_exploration or self.bound is None:
            return False
        if prune_above is None:
            if not self.slow or self.incumbent is None:
                return False
            prune_above = self.prune_level()
        return lp.value <= prune_above and lp.value - self.bound <= TAILING_GAP * max(1.0, abs(lp.value))

    def _near(self, lp: MasterLp) -> bool:
        """Whether the inner point's bound has risen to within :data:`CLOSE_GAP` of the LP value
        since the last listing tried before the master is optimal."""
        if self.inner_bound is None or self.inner_bound == self.tried:
            return False
        near = lp.value - self.inner_bound <= CLOSE_GAP * max(1.0, abs(lp.value))
        if near:
            self.tried = self.inner_bound
        return near

    def _price_exactly(
        self, lp: MasterLp, cutoff: float, deadline: float | None
    ) -> tuple[float | None, list[tuple[int, ...]], int]:
        """The full pricing MILP until it adds a column or finds no set.

        Returns the proven beta (None when no solve finished with a bound), the connected sets
        of the last solve (:meth:`_candidates`) and the number of columns added. A solve stopped at its first
        improving sets still proves its dual bound: beta is returned with the columns it
        added, and the bound of :meth:`run` uses it."""
        while not self._expired(deadline):
            answer = self.pricing.solve(lp.duals, cutoff, time_limit=self._left(deadline), max_sets=5)
            sets = self._candidates(answer.sets)
            added = self._add(sets)
            if added or not answer.sets:
                return (answer.bound if math.isfinite(answer.bound) else None), sets, added
        return None, [], 0

    def _spread(
        self,
        lp: MasterLp,
        sets: Sequence[Sequence[int]],
        known: set[int],
        deadline: float | None,
        level: float | None,
    ) -> int:
        """Dinkelbach's steps on the charge per layer of the bound (module docstring); columns added.

        Each step solves the full pricing MILP at the duals plus the charge :math:`\\rho`, the
        least ratio :math:`d_S / |S|` of the sets met so far, and proves ``lp.bound(mu, rho)``
        (:meth:`_steps`); its cutoff is 0, or the lower one at which that bound passes ``level``
        (:meth:`_cutoff`)."""

        def ratio(members: Sequence[int]) -> float:
            return self.reduced_cost(members, lp.duals) / len(members)

        def charged(rho: float) -> list[float]:  # on the cover duals only: the cuts' rows are not layers
            n = self.instance.n_layers
            return [p + rho for p in lp.duals[:n]] + list(lp.duals[n:])

        first = min((ratio(members) for members in sets), default=0.0)
        return self._steps(
            lp,
            first,
            0.0,
            charged,
            lambda _, mu, rho: lp.bound(mu, rho),
            lambda _, rho: self._cutoff(lp, level, 0.0, rho),
            ratio,
            known,
            deadline,
        )

    def _segment(
        self,
        lp: MasterLp,
        sets: Sequence[Sequence[int]],
        known: set[int],
        deadline: float | None,
        level: float | None,
    ) -> int:
        r"""Dinkelbach's steps on the segment from the inner point to the LP's duals; columns added.

        In-out separation (module docstring): the points :math:`\pi(t) = \pi^{in} + t
        (\pi^{out} - \pi^{in})` for :math:`t \in [0, 1]`, where :math:`\pi^{in}` is the inner
        point (:attr:`inner`) and :math:`\pi^{out}` are the master's duals. A set
        :math:`S` keeps :math:`d_S(\pi(t)) \ge 0` up to :math:`t_S = d_S(\pi^{in}) /
        \Delta(S)`, :math:`\Delta = \pi^{out} - \pi^{in}`; each step solves the full pricing
        MILP at the least :math:`t_S` of the sets met so far and proves
        ``lp.at(pi(t)).bound(mu)`` (:meth:`_steps`); its cutoff is 0, or the lower one at which
        that bound passes ``level`` (:meth:`_cutoff`)."""
        start = self.inner  # fixed for the segment: a step that proves more moves self.inner
        assert start is not None
        inner = np.asarray(start, dtype=np.float64)
        delta = np.asarray(lp.duals, dtype=np.float64) - inner
        n = self.instance.n_layers

        def ratio(members: Sequence[int]) -> float:
            rows = [*members, *(n + s for s in self.cuts.hits(members))]
            rise = float(delta[rows].sum())
            return max(0.0, self.reduced_cost(members, start)) / rise if rise > 0.0 else 1.0

        def point(t: float) -> list[float]:
            return (inner + t * delta).tolist()

        first = min((ratio(members) for members in sets), default=1.0)
        return self._steps(
            lp,
            first,
            1.0,
            point,
            lambda duals, mu, _: lp.at(duals).bound(mu),
            lambda duals, _: self._cutoff(lp.at(duals), level, 0.0),
            ratio,
            known,
            deadline,
        )

    def _steps(
        self,
        lp: MasterLp,
        step: float,
        end: float,
        duals_at: Callable[[float], list[float]],
        bound_at: Callable[[list[float], float, float], float],
        cutoff_at: Callable[[list[float], float], float],
        ratio: Callable[[Sequence[int]], float],
        known: set[int],
        deadline: float | None,
    ) -> int:
        """Dinkelbach's steps on a parameter of the duals, shared by :meth:`_spread` and :meth:`_segment`.

        From ``step`` while it is below ``end``: solve the full pricing MILP at
        ``duals_at(step)`` with the cutoff ``cutoff_at(duals, step)`` (0, or lower when a bound
        at that cutoff passes the level: :meth:`_cutoff`), prove ``bound_at(duals, mu, step)``
        with its dual bound :math:`\\mu`, and move to the least ``ratio`` of the sets met. A solve stops after
        :data:`STEP_SETS` improving sets: any set of negative reduced cost has a smaller ratio
        than the step, so Dinkelbach's iteration goes on from it, and only the last step, which
        meets no set below 0, must prove its minimum. (Solved to the end at RandWire-A's
        converged root duals, the pricing MILP found its optimum after 4 s and proved it after
        42 s: :mod:`~.pricing`, "Strength of the LP".) The sets enter the table when
        they are columns; one not in this round's master (``known``: its masks) is never cut
        from the pricing MILP, whose bound must still cover it. The steps stop when the MILP
        proves :math:`\\mu` at least the cutoff or meets no set of a smaller ratio, when time runs out, or
        after :data:`SPREAD_STEPS`. A step gives the MILP no start: the next step is the least
        ratio of the sets met, so each of them costs at least 0 there, no better than the cutoff
        HiGHS already prunes at. Returns the columns added."""
        added = 0
        for _ in range(SPREAD_STEPS):
            if step >= end or self._expired(deadline):
                break
            duals = duals_at(step)
            cutoff = cutoff_at(duals, step)
            answer = self.pricing.solve(duals, cutoff, time_limit=self._left(deadline), max_sets=STEP_SETS)
            if math.isfinite(answer.bound):
                self._prove(lp, bound_at(duals, answer.bound, step), duals, answer.bound)
            ratios = []
            for members in self._candidates(answer.sets):
                ratios.append(ratio(members))
                added += self._admit(members, known)
            if answer.bound >= cutoff or not ratios or min(ratios) >= step:
                break
            step = min(ratios)
        return added

    def _prove(self, lp: MasterLp, bound: float, duals: Sequence[float], mu: float) -> None:
        """Keep the best lower bound proven so far, and the best inner point.

        ``bound`` is proven at ``duals`` (the cover rows', then the cuts') by the pricing MILP's
        bound ``mu`` there on the reduced cost of every column missing from ``lp``'s master. With
        ``mu`` at least the pricing's tolerance below 0, the duals are an inner point of that bound;
        with ``mu`` lower they are none, but :meth:`_lifted` makes one of them. Either becomes the
        inner point when its bound is above the inner point's."""
        self.bound = bound if self.bound is None else max(self.bound, bound)
        if self.settled_s is None and self._run_start is not None and self.settled():
            self.settled_s = time.perf_counter() - self._run_start
        if mu >= -self._tolerance(lp):
            point, value = tuple(float(v) for v in duals), bound
        else:
            point, value = self._lifted(lp, duals, mu)
        if self.inner_bound is None or value > self.inner_bound:
            self.inner, self.inner_bound = point, value

    def _lifted(self, lp: MasterLp, duals: Sequence[float], mu: float) -> tuple[tuple[float, ...], float]:
        r"""An inner point from duals at which the pricing proved only :math:`\mu < 0`, and its bound.

        Every cover dual moves by :math:`\mu / s` (down; :math:`s`: the fewest layers of a column
        missing from the master, :attr:`MasterLp.min_size`); the cuts' stay. A missing set
        :math:`S`, with :math:`d_S \ge \mu` at ``duals`` and :math:`|S| \ge s`, then has
        :math:`d_S \ge \mu - \mu |S| / s \ge 0`, so the point proves its bound at
        :math:`\mu = 0` (:meth:`MasterLp.at`, which also charges the master's variants their
        reduced costs there): about :math:`n \mu / s` below the bound of ``duals``, the corner of
        LB with every layer in a missing column (module docstring of
        :mod:`~accelsched.formulations.partition.master`). A step of :meth:`_spread` stopped at its
        first sets, or one that proves only the level's cutoff (:meth:`_cutoff`), thus still moves
        the inner point, which the segment steps of later rounds start from."""
        shift, n = mu / lp.min_size, self.instance.n_layers
        point = tuple(float(v) + shift if i < n else float(v) for i, v in enumerate(duals))
        return point, lp.at(point).bound(0.0)

    def _close(self, deadline: float | None, limit: int | None = None, give_up: float | None = None) -> Outcome | None:
        """The incumbent from the integer program, then every column below the gap at the inner
        point (module docstring), until ``deadline`` (the listing deadline of :meth:`run`).

        The gap follows the incumbent: when the listing has added columns and has run at
        least as long as the first integer program took since that program last ran, the
        program runs again over the table (from the incumbent, for at most that long), and a
        better partition lowers :math:`\theta` for the solves that follow. Every column of
        reduced cost at most the final :math:`\theta` is then in the table, which is what
        exactness needs (module docstring), and the columns listed at a larger
        :math:`\theta` stay in it, harmless.

        With a ``limit``, the listing gives up once it has added that many columns, and with
        ``give_up`` (a :func:`time.perf_counter` value) once that time has passed; it then
        returns None. Before the master is optimal, column generation goes on with the columns
        listed in the master; after, branching may take over (:meth:`run`)."""
        assert self.inner is not None and self.inner_bound is not None
        begun = time.perf_counter()
        self.incumbent = self.master.solve_integer(self.incumbent, deadline)
        if self.incumbent is None:
            return self._stop("time limit reached before a partition was found")
        integer_s = time.perf_counter() - begun
        self.duals = self.inner
        self.theta = theta = self._gap()
        for column in self.table.columns:
            if len(column.members) > 1 and self.reduced_cost(column.members, self.duals) <= theta:
                self.pricing.exclude(column.members)
        listed, since = self.listed, time.perf_counter()
        while not self._expired(deadline):
            answer = self.pricing.solve(self.duals, theta, time_limit=self._left(deadline), max_sets=10)
            added = 0
            for members in self._candidates(answer.sets):
                self.pricing.exclude(members)
                if not self.table.has(members) and self._fits(members):
                    added += bool(self.table.add(members))
            self.listed += added
            if answer.complete and not answer.sets:
                return self._done()
            if limit is not None and self.listed - listed >= limit:
                return None
            if give_up is not None and time.perf_counter() > give_up:
                self.slow = True
                return None
            if added and time.perf_counter() - since >= integer_s:
                self.theta = theta = self._tighten(integer_s, deadline)
                since = time.perf_counter()
        return self._stop(
            f"time limit reached while listing the columns below the gap of {theta:.6g} "
            f"({self.listed} listed, {len(self.table.columns)} columns)"
        )

    def _give_up(self, deadline: float | None) -> float | None:
        """When a listing starting now gives up: after :data:`LISTING_SHARE` of the time left."""
        now = time.perf_counter()
        return None if deadline is None else now + LISTING_SHARE * (deadline - now)

    def _gap(self) -> float:
        """:math:`\theta = U - LB` at the incumbent and the inner point's bound (with the pricing's tolerance)."""
        assert self.incumbent is not None and self.inner_bound is not None
        upper = self.upper
        return upper - self.inner_bound + PRICING_EPS * max(1.0, abs(upper))

    def _tighten(self, seconds: float, deadline: float | None) -> float:
        """Run the integer program over the table again, for at most ``seconds`` (and not past
        the deadline), from the incumbent; the gap at the incumbent it returns (never larger:
        the program starts from the incumbent)."""
        until = time.perf_counter() + max(seconds, _TIGHTEN_MIN_S)
        self.incumbent = self.master.solve_integer(self.incumbent, until if deadline is None else min(until, deadline))
        return self._gap()

    def reduced_cost(self, members: Sequence[int], duals: Sequence[float]) -> float:
        """The reduced cost of a multi-layer set in its resident mode (cover duals, then the cuts')."""
        weight = self.table.metric_weight
        metric = weight * self.terms.metric(self.instance, members)
        return metric - math.fsum(duals[i] for i in members) - self.cuts.charge(members, duals)

    def _stop(self, reason: str) -> Outcome:
        return Outcome(False, self.bound, self.incumbent, self.done, self.listed, reason)


def _windows(instance: PartitionInstance) -> list[set[int]]:
    """Pieces of the graph for the restricted pricing: two consecutive runs of its biconnected
    components, each run of at least a tenth of the layers (none for small graphs)."""
    n = instance.n_layers
    if n < 40:
        return []
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((p, v) for v, preds in enumerate(instance.cost_model.preds) for p in preds)
    found: list[set[int]] = [set(b) for b in nx.biconnected_components(graph)]  # type: ignore[arg-type]
    blocks = sorted(found, key=lambda b: (min(b), max(b)))
    pieces: list[set[int]] = []
    current: set[int] = set()
    for block in blocks:
        current |= block
        if len(current) >= n // 10:
            pieces.append(current)
            current = set()
    if current and pieces:
        pieces[-1] |= current
    return [pieces[k] | pieces[k + 1] for k in range(len(pieces) - 1)]
