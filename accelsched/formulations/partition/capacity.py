r"""Capacity decomposition for co-exploration: one fixed-capacity problem per pair of candidates.

When the enumeration of the co-exploration instance stops at its column budget
(RandWire, NasNet), the exact models need a bound over every column. Column
generation on the co-exploration master proves at most its LP value, and that LP
mixes capacity candidates fractionally: on RandWire-A (separate buffers) its restricted
master was below the forced-traffic bound after 500 s. This module decides the
capacities outside the LP instead.

The MILP methods also take this route when the enumeration is complete but the table is
large (:data:`~accelsched.formulations.partition.branch.DECOMPOSE_COLUMNS`): the
co-exploration MILP mixes the capacities in its LP there too, and HiGHS did not prove
GoogLeNet's in 250 s where the pairs take 45-90 s.

No pair is enumerated again: its columns are those of the co-exploration enumeration
that fit it. A subgraph that fits a pair fits the largest capacities, so a complete
enumeration gives every pair its complete one (no column generation is needed), and
one stopped early, in growth order, gives every pair all its columns of fewer layers than
the enumeration's (:attr:`ColumnSet.listed_below
<accelsched.problems.partition_columns.ColumnSet>`), which is what the pair's column
generation needs for its bound. (Enumerating a RandWire-A pair again to the column budget
took 70-98 s.)

Decomposition
-------------
Let :math:`p = (A, W)` range over the pairs of candidates (the shared candidates with
a shared buffer), :math:`\kappa(p) = A + W` its capacity bytes and :math:`E^*(p)` the
least metric of a partition under :math:`p` (the fixed-capacity problem, solved
exactly by :func:`~accelsched.formulations.partition.branch.prepare`: the
enumeration, or column generation, the listing below the gap and
branch-and-price). Then

.. math::

    \mathrm{OPT} = \min_p \ \kappa(p) + \alpha\, E^*(p),

and every lower bound :math:`L(p) \le E^*(p)` gives
:math:`\mathrm{OPT} \ge \min_p \kappa(p) + \alpha L(p)`. With :math:`L(p)` the
forced traffic of :math:`p`
(:func:`~accelsched.formulations.partition.bound.forced_traffic_per_pair`) this is the
forced-traffic bound the models already report. With :math:`L(p)` the LP value of each
pair's master (its column generation converged) it is at least the LP value of the
co-exploration master: mapping each pair's copy of a column to the column maps the LP
with a copy of the columns per pair into the co-exploration LP, at the same objective,
and that LP's optimum is :math:`\min_p \kappa(p) + \alpha\,\mathrm{LP}(p)`.

Monotone bounds
---------------
A partition that fits :math:`p` fits every :math:`q \ge p` (both capacities at
least as large), and its metric under :math:`q` is no larger: each subgraph runs in
the cheapest mode the capacities hold, and :math:`q` holds every mode :math:`p` does.
So :math:`E^*` is non-increasing, and a bound proven at :math:`q` holds at every
:math:`p \le q`: :math:`L(p) \ge L(q)`.

Cutoffs
-------
With an incumbent of objective :math:`U`, a pair matters only when
:math:`E^*(p) < c(p) = (U - \kappa(p)) / \alpha`. Its fixed-capacity problem is
solved with that cutoff (:class:`~accelsched.formulations.partition.colgen.ColumnGeneration`,
``cutoff``): the gap, the listing and the pruning of branch-and-price stop at
:math:`c(p)`, and the solve proves :math:`E^*(p) \ge \min(v, c(p))` for the best
partition :math:`v` it holds (up to the proof's tolerance,
:func:`~accelsched.formulations.partition.colgen.proof_tolerance`; :math:`c(p)` rounded up
to a whole number of bytes with external memory access). Either way the pair is
settled: it improves :math:`U` to its optimum, or it cannot beat :math:`U`.

Reach
-----
A pair's solve with its own cutoff proves :math:`L(p) \ge \min(E^*(p), c(p))`, which settles none
of the pairs within it: their capacities are smaller, so their cutoffs are higher. Its root's
bound, though, holds over every column of the pair, so it bounds :math:`E^*` at every pair within
it too. So the root's column generation prices on past :math:`c(p)` to the reach
:math:`R(p) = \max \{c(r) : r \le p \text{ open}\}` (or until its master is optimal;
:class:`~accelsched.formulations.partition.colgen.ColumnGeneration`, ``reach``), and the pair's
:math:`L(p)` is that bound when it is higher: every open :math:`r \le p` with
:math:`c(r) \le L(p)` is settled with it. The listing and the tree stay at :math:`c(p)`; the
tree's bound (the least bound of its nodes, each proven over every column under the node's rules)
counts as well, as a resumed tree's does, whose root is not priced again: a node pruned past
:math:`c(p)` keeps the bound it was pruned with (:attr:`Prepared.proven_bound
<accelsched.formulations.partition.common.Prepared>`).

No bound passes the master's LP value (the bound is at most the LP optimum over every column,
which is at most the value over some of them), so the root prices only to the highest
:math:`c(r)` below that value, which falls as the pricing goes on: a pair whose cutoff is above it
cannot be settled by this root, and a level above it would also disable the pricing to the level
(:mod:`~accelsched.formulations.partition.colgen`, "Pricing to the level"), whose cutoff exists only
below the LP value. The extra work is then the root's pricing from :math:`c(p)` to the highest
cutoff it can still pass, none when the pair's LP value is below its cutoff.

Motivated by RandWire-A's separate buffers (energy): all of its 118 open pairs lay within 11 of
them, 77 had cutoffs below 1.05e9 pJ, and 24 lay within the 960/216 KB pair, whose master LP was
1.083e9 after 30 minutes (not yet optimal; its cutoff 8.82e8). Measured there with :math:`R(p)`
itself as the level (from that ledger, on about two thirds of a core beside two other proofs): the
first pair handed out, 640/648 KB (67 open within, cutoff 8.25e8, reach 1.345e9), was settled in
3,339 s with its root's bound at 9.112e8 (its master LP at 9.22e8 when the time of its column
generation ran out), and 5 pairs within it with it; the next, 576/720 KB, in 755 s at 8.540e8, with
1 within. Best bound first had settled one pair per 583-4,996 s there (results README). But the
576/720 KB pair solved twice from that first ledger (67 open within, reach 1.345e9; one process on
a machine running two proofs on its two cores), once without a reach and once with it, was
settled in 388 s without (bound 8.546e8) and in 1,373 s with (8.540e8), each settling the same
1 pair within; and the 448/792 KB pair (49 within) of the next run priced for an hour at the
pricing's tolerance, its master LP at 9.43e8 and its level 1.157e9 (the incumbent's objective,
below its reach). Hence the cap at the LP value. With it, the same 576/720 KB solve (same ledger,
same machine load) was settled in 1,438 s with its bound at 8.838e8, settling 2 pairs within
(without a reach, on this code: 362 s, 8.546e8, 1 within). One more pair for about 1,070 s is no
clear gain over solving that pair on its own, which starts from this pair's inner point. On a
maximal pair it paid: 832/360 KB (38 open within, cutoff 8.535e8, its master's LP about 9.96e8, so
its level the highest cutoff within below that, 9.93e8) was settled in 5,446 s with its bound at
its LP optimum, 9.961e8, and 12 pairs within it with it, where each pair settled by its own solve
in that ledger took 347-7,434 s. A pair with a small activation buffer gained less: 128/432 KB (4
within, its LP 1.32e9 an hour in, level 1.288e9 then) was settled in 4,072 s at 1.235e9, with 1
within. (Both on one core each, for the first 70 minutes beside a third process.)

Ceilings
--------
The same cap applies before a pair's solve starts. Any LP value of a pair's restricted master
(over any of its columns) is at least its LP optimum, so no bound its root proves passes it; and a
pair :math:`q \ge p` has every column of :math:`p`, each of no larger metric there, so that
value is a *ceiling* at :math:`q` too. A pair left open records the LP value of its master over
every subgraph its solve met (:attr:`PairOutcome.ceiling`, kept in the ledger); a pair's ceiling
:math:`C(p)` is the least recorded at it or at a pair within it (unknown, infinite, when none is).
Its root can settle only the open pairs :math:`r \le p` whose cutoff lies below it, itself
included (:meth:`CapacityDecomposition.settleable`): when :math:`C(p) \le c(p)`, only its tree
settles it. Motivated by NasNet's shared buffer (energy): its 512 KB pair, with 7 open pairs
within it, was handed out first; its root priced for 4,042 s to a bound of 9.297e8, and its tree's
first node for 2,138 s more over two runs without moving it. The LP value of its master over the
16,203 subgraphs then kept (its own and the 256 KB pair's) was 9.405e8: below its own cutoff,
9.414e8, and the cutoffs of the 6 pairs within it (9.74e8 to 1.138e9), so that its root could
settle none of them, nor the pair itself.

Running order
-------------
The open pair with the most open pairs within it that its root can settle (those below its
ceiling; ties: the least bound :math:`\kappa(p) + \alpha L(p)`, then the smaller capacity) is
solved with the time left, until
no open pair's bound is below :math:`U` (the incumbent is optimal, :attr:`Decomposition.complete`)
or the time runs out (the bound is the least over the open pairs, at least the forced traffic): the
pairs whose reach settles the most first. Without an incumbent, or with :math:`\alpha = 0`, no
bound settles a pair (the cutoffs are infinite, or the bounds are the capacities alone): the least
bound first, the order also when every open pair holds only itself. A pair
whose solve stops unsettled ends the run: it had all the time left (or its round limit
stopped it, which would stop the next pair's too). The warm start
(and each better partition) moves to the pair being solved when its subgraphs fit it.

A pair starts its column generation from the subgraphs generated for it and for the pairs
within it (they fit it), beside its smallest listed columns: those generated by the pairs
solved in this run, and those an earlier run left in the ledger for the pairs it left open
(:mod:`~accelsched.formulations.partition.ledger`). Measured on RandWire-A's 256 KB pair
(shared buffer, energy; cutoff 1.2931e9 pJ, two runs at once, one per core): started from the
1,383 subgraphs of its first run, its bound was 1.2821e9 at 1,304 s, against 1.2224e9 from the
smallest columns alone (:data:`~accelsched.formulations.partition.colgen.EXACT_FIRST_S`).
It also starts from the best inner point proven for it or for a pair containing it, in this
run or an earlier one (:class:`~accelsched.formulations.partition.common.InnerPoint`): its bound
starts where the earlier solve's ended, and the pairs within a solved pair start from that
bound rather than from their forced traffic.

The pairs are independent given :math:`U`, so with ``threads`` above 1
(:class:`~accelsched.solvers.SolveOptions`) that many are solved at once, each in a process
of its own with one thread: the next open pairs in that order not already running, each with the
cutoff and reach of the incumbent when it starts (a better incumbent found meanwhile only lowers the
cutoffs of those started later; an earlier, larger cutoff settles a pair all the same). The
proofs of RandWire-A and NasNet take hours per pair (results README), which a machine with
more cores divides among them.

Machines divide them too. A run given some pairs (:attr:`ProofSettings.pairs
<accelsched.formulations.partition.branch.ProofSettings>`, the solve command's ``--pairs``)
solves only those, in the same order, from its own copy of one ledger; the others stay open,
and a pair within one it solves may still be settled by its reach. Each run's bounds hold
whatever the others prove, so the copies merged
(:meth:`~accelsched.formulations.partition.ledger.Ledger.merge`) hold the proof.

The decomposition returns what the models need (:class:`~accelsched.formulations.partition.common.Prepared`):
when it is complete, a table of the incumbent's columns and the single layers, which
holds an optimal partition; otherwise the bound with the co-exploration table and the
incumbent's columns, incomplete (after a complete enumeration: only the incumbent's columns
and the single layers, so that the models do not face the whole table in the time left).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sys
import time
from collections.abc import Collection, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context

from accelsched.errors import InputError
from accelsched.fingerprint import code_fingerprint
from accelsched.formulations.partition import branch as partition_branch
from accelsched.formulations.partition.bound import forced_traffic_per_pair
from accelsched.formulations.partition.branch import ProofSettings
from accelsched.formulations.partition.colgen import proof_tolerance
from accelsched.formulations.partition.common import (
    InnerPoint,
    Prepared,
    TreeState,
    VariantTable,
    checked_warm_start,
    keep_better_inner,
    keep_last_tree,
)
from accelsched.formulations.partition.ledger import Ledger, instance_digest, lower_ceiling
from accelsched.formulations.partition.master import RestrictedMaster
from accelsched.formulations.partition.milp import PartitionMilp
from accelsched.logs import show_records
from accelsched.problems.partition import Metric, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import ColumnSet, mask_of
from accelsched.processes import can_spawn, exit_with_parent
from accelsched.solvers import SolveOptions, Status, solve

__all__ = [
    "LOG_LINES",
    "CapacityDecomposition",
    "CapacityPoint",
    "Decomposition",
    "PairOutcome",
    "PairSolver",
    "PairState",
    "PairTask",
    "capacity_points",
    "check_share",
    "decompose",
]

LOG_LINES = 12
"""Lines of the pairs' log that go into a result's note."""

LOGGER = logging.getLogger(__name__)
"""Each pair as it starts and ends, at INFO (silent unless a caller shows it: the long runs of
``partition_tables coexplore`` do)."""


@dataclass
class CapacityPoint:
    """A pair of candidates and what is known of its fixed-capacity problem.

    Attributes
    ----------
    act_index, weight_index
        The candidates (``weight_index`` 0 with a shared buffer).
    act_bytes, weight_bytes
        Their capacities (``weight_bytes`` 0 with a shared buffer).
    lower
        A lower bound of :math:`E^*(p)`, the least metric of a partition under the pair.
    settled
        Whether the pair's problem was solved: its best partition is the optimum, or none is
        below its cutoff.
    """

    act_index: int
    weight_index: int
    act_bytes: int
    weight_bytes: int
    lower: float
    settled: bool = False

    @property
    def capacity_bytes(self) -> int:
        """:math:`\\kappa(p)`: the bytes of both buffers."""
        return self.act_bytes + self.weight_bytes

    def within(self, other: CapacityPoint) -> bool:
        """Whether both capacities are at most ``other``'s (then :math:`E^*` here is at least there)."""
        return self.act_bytes <= other.act_bytes and self.weight_bytes <= other.weight_bytes


@dataclass(frozen=True)
class PairState:
    r"""Where one pair of candidates stands (:meth:`CapacityDecomposition.states`).

    Attributes
    ----------
    act_bytes, weight_bytes
        The pair's capacities (``weight_bytes`` 0 with a shared buffer).
    floor
        :math:`\kappa(p) + \alpha L(p)`: the least objective a partition under the pair can have.
    lower
        :math:`L(p)`: the best lower bound known of :math:`E^*(p)` (the forced traffic, or a bound
        proven at the pair or at a pair above it).
    cutoff
        :math:`c(p)`: the metric a partition under the pair must beat to improve the incumbent (inf
        without one).
    open
        Whether the pair still has to be solved (its floor is below the incumbent).
    seconds
        Time the ledger's runs spent solving it (0 without a ledger or a solve).
    subgraphs
        Subgraphs the ledger keeps for its next solve.
    within
        Open pairs within it, itself included, that its root may settle by its reach: those whose
        cutoff is below its ceiling (0 when it is settled). A run solves the pair with the most
        first (module docstring, "Running order"); shares of a divided proof are best given such
        pairs.
    ceiling
        :math:`C(p)`: no bound its root's column generation proves passes it (module docstring,
        "Ceilings"; inf when unknown).
    tree_only
        Whether it is open and its ceiling is at or below its cutoff (less the proof's tolerance): its
        root cannot settle it, only its branch-and-price can.
    """

    act_bytes: int
    weight_bytes: int
    floor: float
    lower: float
    cutoff: float
    open: bool
    seconds: float
    subgraphs: int
    within: int
    ceiling: float = math.inf
    tree_only: bool = False


@dataclass(frozen=True)
class Decomposition:
    """What the decomposition proved and found.

    Attributes
    ----------
    complete
        Whether the incumbent is proven optimal (no open pair's bound is below it).
    bound
        A lower bound of the co-exploration objective.
    incumbent
        The best partition found, with its capacities, or None.
    solved
        Pairs whose fixed-capacity problem was solved (or tried, when the time ran out).
    pairs
        Pairs of candidates that hold every single layer.
    unsettled
        Pairs whose bound is still below the incumbent's objective (0 when complete).
    log
        One line per solved pair, in the order they finished: its capacities, cutoff, whether it was
        settled (or why it stopped open), its best partition, bound and time.
    workers
        Pairs solved at once: 1 when one after another in this process.
    """

    complete: bool
    bound: float
    incumbent: PartitionSolution | None
    solved: int
    pairs: int
    unsettled: int
    log: tuple[str, ...]
    workers: int = 1


def capacity_points(instance: PartitionInstance) -> list[CapacityPoint]:
    """The pairs of candidates of a co-exploration instance that hold every single layer, each with
    its forced traffic as its first bound (activation or shared candidates first)."""
    table = VariantTable(instance, ColumnSet((), False, 0, 0))
    return [
        CapacityPoint(
            forced.act_index,
            forced.weight_index,
            table.act_bytes[forced.act_index],
            0 if instance.shared else table.weight_bytes[forced.weight_index],
            forced.metric,
        )
        for forced in forced_traffic_per_pair(table)
    ]


def check_share(
    instance: PartitionInstance, pairs: Collection[tuple[int, int]], points: Sequence[CapacityPoint] | None = None
) -> frozenset[tuple[int, int]]:
    """The pairs a run is given to solve (activation bytes, weight bytes), checked against the
    instance's pairs of candidates (``points``: :func:`capacity_points`, computed when None).

    Raises
    ------
    InputError
        A pair is not one of the instance's pairs of candidates, or some layer fits none of its
        buffers: the error names the pair and the candidates.
    """
    points = capacity_points(instance) if points is None else points
    known = {(point.act_bytes, point.weight_bytes) for point in points}
    for act, weight in sorted(pairs):
        if (act, weight) in known:
            continue
        kb = ", ".join(str(size // 1024) for size in instance.act_candidates_bytes)
        if instance.shared:
            options = f"the shared candidates are {kb} KB, with weight 0"
        else:
            weights = ", ".join(str(size // 1024) for size in instance.weight_candidates_bytes)
            options = f"the activation candidates are {kb} KB and the weight candidates {weights} KB"
        if act in instance.act_candidates_bytes and (
            weight in instance.weight_candidates_bytes or (instance.shared and weight == 0)
        ):
            options = "some layer does not fit its capacities, so no partition runs under it"
        raise InputError(
            f"pair {act // 1024}/{weight // 1024} KB ({act}/{weight} B) is not a pair of candidates of "
            f"{instance.workload.name} that holds every layer: {options}",
            "the pairs to solve (--pairs)",
            "give pairs listed by `python -m accelsched.bench.partition_tables ledger`, as ACT/WEIGHT in KB",
        )
    return frozenset(pairs)


class CapacityDecomposition:
    """The fixed-capacity problems solved pair by pair, each with its cutoff and reach (see the module
    docstring).

    Parameters
    ----------
    instance
        A co-exploration instance.
    warm
        A checked solution of it, or None.
    options
        Threads and seed of the fixed-capacity solves (their time limits are set here).
    columns
        The co-exploration instance's enumeration (complete or not): each pair starts from its
        columns that fit the pair (module docstring).
    settings
        Column budget, round limit and MILP backend of each fixed-capacity problem.
    ledger
        A ledger of earlier runs to start from, which each solved pair is written to
        (:mod:`~accelsched.formulations.partition.ledger`), or None.
    """

    def __init__(
        self,
        instance: PartitionInstance,
        warm: PartitionSolution | None,
        options: SolveOptions,
        columns: ColumnSet,
        settings: ProofSettings,
        ledger: Ledger | None = None,
    ) -> None:
        if not instance.co_exploration:
            raise ValueError("the capacity decomposition needs a co-exploration instance (several candidates)")
        self.instance = instance
        self.options = options
        pair_options = dataclasses.replace(options, threads=1) if options.threads > 1 else options
        self.solver = PairSolver(instance, pair_options, columns, settings)
        self.points = capacity_points(instance)
        self.share = None if settings.pairs is None else check_share(instance, settings.pairs, self.points)
        """The pairs this run may solve (:attr:`ProofSettings.pairs`), or None: every one."""
        self.incumbent = warm
        self.upper = math.inf if warm is None else self._objective(warm)
        self.whole_bytes = instance.metric is Metric.EMA
        """Whether every fixed-capacity objective is a whole number of bytes."""
        self.log: list[str] = []
        self.solved = 0
        self.ledger = ledger
        self.generated: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = {}
        """The subgraphs each solved pair's column generation found (:attr:`PairOutcome.generated`)."""
        self.inner: dict[tuple[int, int], InnerPoint] = {}
        """Per pair solved (in this run or, from the ledger, an earlier one): its best root inner point."""
        self.trees: dict[tuple[int, int], TreeState] = {}
        """Per pair whose last solve stopped in branch-and-price: the open nodes its next solve resumes."""
        self.ceilings: dict[tuple[int, int], float] = {}
        """Per pair left open by a solve (of this run or, from the ledger, an earlier one): the least LP
        value of its master recorded (module docstring, "Ceilings")."""
        self.code = code_fingerprint() if ledger is not None else ""
        """The code's fingerprint, recorded with each pair in the ledger."""
        if ledger is not None:
            self._restore(ledger)

    def _restore(self, ledger: Ledger) -> None:
        """Start from a ledger: its pairs' bounds (within them too), its partition when better, its
        pairs' ceilings (an open pair's, when the ledger kept its subgraphs but no ceiling: the LP
        value of its master over them, :func:`master_value`)."""
        if ledger.instance is not self.instance and instance_digest(ledger.instance) != instance_digest(self.instance):
            raise ValueError("the ledger was opened for another instance")
        for point in self.points:
            known = ledger.pairs.get((point.act_bytes, point.weight_bytes))
            if known is not None:
                self._raise(point, known.lower)
        self.inner.update(ledger.inner)
        self.trees.update(ledger.trees)
        self.ceilings.update((key, pair.ceiling) for key, pair in ledger.pairs.items() if pair.ceiling is not None)
        if ledger.incumbent is not None:
            value = self._objective(ledger.incumbent)
            if value < self.upper:
                self.incumbent, self.upper = ledger.incumbent, value
        for point in self.open_points():  # a ledger written before ceilings were kept
            key = (point.act_bytes, point.weight_bytes)
            if key not in self.ceilings and ledger.columns.get(key):
                nothing = ColumnSet((), False, 0, 0)  # the single layers, beside the subgraphs kept
                ceiling = master_value(VariantTable(self.fixed(point), nothing, self._seeds(point)))
                if ceiling is not None:
                    self.ceilings[key] = ceiling

    # ---------------------------------------------------------- bounds
    def floor(self, point: CapacityPoint) -> float:
        """:math:`\\kappa(p) + \\alpha L(p)`: the least objective a partition under the pair can have."""
        return point.capacity_bytes + self.instance.alpha * point.lower

    def _tolerance(self) -> float:
        """Below :math:`U` by less than this, a bound settles a pair: the proof's tolerance
        (:func:`~accelsched.formulations.partition.colgen.proof_tolerance`), as branch-and-price
        prunes a node."""
        return proof_tolerance(self.instance.n_layers, self.upper)

    def open_points(self) -> list[CapacityPoint]:
        """The pairs not settled whose bound is below :math:`U` (all of them without an incumbent)."""
        level = self.upper - self._tolerance() if math.isfinite(self.upper) else math.inf
        return [p for p in self.points if not p.settled and self.floor(p) < level]

    def bound(self) -> float:
        """The least objective any partition can have: :math:`U`, or a pair's bound below it."""
        return min([self.upper, *(self.floor(p) for p in self.points)])

    def cutoff(self, point: CapacityPoint) -> float:
        """:math:`c(p) = (U - \\kappa(p)) / \\alpha`, rounded up to whole bytes with external memory
        access; inf without an incumbent or with :math:`\\alpha = 0`."""
        alpha = self.instance.alpha
        if math.isinf(self.upper) or alpha == 0:
            return math.inf
        cut = (self.upper - point.capacity_bytes) / alpha
        return math.ceil(cut - 1e-9 * max(1.0, abs(cut))) if self.whole_bytes else cut

    def ceiling(self, point: CapacityPoint) -> float:
        """:math:`C(p)`: the least ceiling recorded at the pair or at a pair within it (inf: none is)."""
        return min(
            (
                value
                for (act, weight), value in self.ceilings.items()
                if act <= point.act_bytes and weight <= point.weight_bytes
            ),
            default=math.inf,
        )

    def settleable(self, point: CapacityPoint) -> list[CapacityPoint]:
        """The open pairs within ``point`` (itself too when it is open) but those whose finite cutoff,
        less the proof's tolerance, is at or above its ceiling: those its root's bound may still
        settle (module docstring, "Ceilings"); every open pair within it while its ceiling is
        unknown or without an incumbent."""
        top, n = self.ceiling(point), self.instance.n_layers

        def beyond(cut: float) -> bool:
            return math.isfinite(cut) and cut - proof_tolerance(n, cut) >= top

        return [other for other in self.open_within(point) if not beyond(self.cutoff(other))]

    def _raise(self, point: CapacityPoint, lower: float) -> None:
        """Record a bound proven at ``point``: it holds at every pair within it."""
        for other in self.points:
            if other.within(point):
                other.lower = max(other.lower, lower)

    def states(self) -> list[PairState]:
        """Every pair's bound, cutoff, ceiling, open pairs within it that its root may settle and
        (with a ledger) the time spent on it, in capacity order."""
        still = [id(point) for point in self.open_points()]
        states = []
        for point in sorted(self.points, key=lambda p: (p.capacity_bytes, p.act_bytes)):
            key = (point.act_bytes, point.weight_bytes)
            known = None if self.ledger is None else self.ledger.pairs.get(key)
            kept = () if self.ledger is None else self.ledger.columns.get(key, ())
            settleable = [id(other) for other in self.settleable(point)] if id(point) in still else []
            states.append(
                PairState(
                    *key,
                    self.floor(point),
                    point.lower,
                    self.cutoff(point),
                    id(point) in still,
                    0.0 if known is None else known.seconds,
                    len(kept),
                    len(settleable),
                    self.ceiling(point),
                    id(point) in still and id(point) not in settleable,
                )
            )
        return states

    # ---------------------------------------------------------- solving
    def fixed(self, point: CapacityPoint) -> PartitionInstance:
        """The fixed-capacity instance of a pair."""
        return self.solver.fixed(point.act_bytes, point.weight_bytes)

    def pair_columns(self, fixed: PartitionInstance) -> ColumnSet:
        """The columns of the co-exploration enumeration that fit a pair's instance ``fixed``."""
        return self.solver.pair_columns(fixed)

    def _objective(self, solution: PartitionSolution) -> float:
        """The co-exploration objective of a valid solution."""
        act, weight = solution.act_capacity_bytes, solution.weight_capacity_bytes
        metrics = (self.instance.subgraph_metric(members, act, weight) for members in solution.indices(self.instance))
        return self.instance.objective_value(act + weight, math.fsum(metrics))

    def open_within(self, point: CapacityPoint) -> list[CapacityPoint]:
        """The open pairs within ``point`` (itself too when it is open): those its bound can settle."""
        return [other for other in self.open_points() if other.within(point)]

    def reach(self, point: CapacityPoint) -> tuple[float, ...]:
        """The cutoffs of the open pairs within the pair, ascending: the levels its root prices to
        (module docstring, "Reach"); :math:`R(p)` is the largest."""
        return tuple(sorted(self.cutoff(other) for other in self.open_within(point)))

    def _task(self, point: CapacityPoint, deadline: float | None) -> PairTask:
        """A pair's solve with the cutoff of the incumbent now, which moves to the pair (checked there),
        and the reach of its root (module docstring, "Reach")."""
        moved = None
        if self.incumbent is not None:
            moved = dataclasses.replace(
                self.incumbent, act_capacity_bytes=point.act_bytes, weight_capacity_bytes=point.weight_bytes
            )
        limit = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
        task = PairTask(
            point.act_bytes,
            point.weight_bytes,
            self.cutoff(point),
            moved,
            limit,
            self._seeds(point),
            self._inner_point(point),
            self.trees.get((point.act_bytes, point.weight_bytes)),
            self.reach(point),
        )
        LOGGER.info(
            "pair %d/%d KB starts: floor %.7g, cutoff %.7g, reach %.7g over %d open within, %d open",
            point.act_bytes // 1024,
            point.weight_bytes // 1024,
            self.floor(point),
            task.cutoff,
            max(task.reach, default=task.cutoff),
            len(task.reach),  # one cutoff per open pair within it
            len(self.open_points()),
        )
        return task

    def _seeds(self, point: CapacityPoint) -> tuple[tuple[int, ...], ...]:
        """The subgraphs generated for the pair and for the pairs within it, by earlier runs (the
        ledger's) and by this one: they fit it (a subgraph that fits a pair fits every pair above it).
        The pair's own come first."""
        key = (point.act_bytes, point.weight_bytes)
        recorded = {} if self.ledger is None else self.ledger.columns
        found = [
            columns
            for source in (recorded, self.generated)
            for (act, weight), columns in sorted(source.items(), key=lambda item: item[0] != key)
            if act <= key[0] and weight <= key[1]
        ]
        seen: dict[int, tuple[int, ...]] = {}
        for columns in found:
            for members in columns:
                seen.setdefault(mask_of(members), members)
        return tuple(seen.values())

    def _inner_point(self, point: CapacityPoint) -> InnerPoint | None:
        """The inner point of highest bound proven for the pair or a pair containing it (it is one of
        the pair's, :class:`~accelsched.formulations.partition.common.InnerPoint`), or None."""
        found = [
            inner
            for (act, weight), inner in self.inner.items()
            if act >= point.act_bytes and weight >= point.weight_bytes
        ]
        return max(found, key=lambda inner: inner.bound, default=None)

    def _apply(self, point: CapacityPoint, task: PairTask, outcome: PairOutcome) -> bool:
        """Record a pair's outcome (its bound, within it too; a better incumbent); whether it was settled."""
        self.solved += 1
        key = (point.act_bytes, point.weight_bytes)
        self.generated[key] = outcome.generated
        keep_better_inner(self.inner, key, outcome.inner)
        tree = None if outcome.settled else outcome.tree
        keep_last_tree(self.trees, key, tree)
        ceiling = lower_ceiling(outcome.ceiling, self.ceilings.get(key))
        if ceiling is not None:
            self.ceilings[key] = ceiling
        self._raise(point, outcome.lower)
        point.settled = point.settled or outcome.settled
        result = "no partition"
        if outcome.best is not None:
            value = self._objective(outcome.best)
            result = f"{outcome.metric:.12g} (objective {value:.12g})"
            if value < self.upper:
                self.incumbent, self.upper = outcome.best, value
        if self.ledger is not None:
            columns = () if outcome.settled else outcome.generated  # to start from when solved again
            self.ledger.record(
                point.act_bytes,
                point.weight_bytes,
                point.lower,
                outcome.seconds,
                self.code,
                columns,
                outcome.inner,
                tree,
                outcome.ceiling,
            )
            self._write_ledger()
        self.log.append(
            f"{point.act_bytes // 1024}/{point.weight_bytes // 1024} KB: cutoff {task.cutoff:.12g}, "
            f"{'settled' if outcome.settled else f'open ({outcome.stopped})'}, best {result}, "
            f"bound {point.lower:.12g}, {outcome.seconds:.1f} s"
        )
        LOGGER.info(
            "pair %s; incumbent %.7g, bound %.7g, %d open",
            self.log[-1],
            self.upper,
            self.bound(),
            len(self.open_points()),
        )
        return outcome.settled

    def _write_ledger(self) -> None:
        """Write the ledger with the incumbent (the pairs are recorded as they are solved)."""
        assert self.ledger is not None
        if self.incumbent is not None:
            self.ledger.offer(self.incumbent, self.upper)
        self.ledger.save()

    def _next(self, busy: Collection[CapacityPoint]) -> CapacityPoint | None:
        """The open pair not being solved with the most open pairs within it that its root may settle
        (:meth:`settleable`; ties: the least bound, then the smaller capacity), if any; the least
        bound first without a finite cutoff (module docstring, "Running order")."""
        points = [p for p in self._mine() if all(p is not other for other in busy)]
        bounded = math.isfinite(self.upper) and self.instance.alpha > 0

        def key(point: CapacityPoint) -> tuple[int, float, int]:
            return (-len(self.settleable(point)) if bounded else 0, self.floor(point), point.capacity_bytes)

        return min(points, key=key, default=None)

    def _mine(self) -> list[CapacityPoint]:
        """The open pairs this run may solve (:attr:`share`)."""
        share = self.share
        return [p for p in self.open_points() if share is None or (p.act_bytes, p.weight_bytes) in share]

    def run(self, deadline: float | None) -> Decomposition:
        """Solve the pairs in their order (module docstring) until the incumbent is proven or the deadline passes
        (those of :attr:`share` only, when given: until none of them is open).

        With ``options.threads`` above 1 and several open pairs, that many pairs are solved at once,
        each in a process of its own with one thread (:meth:`_run_in_processes`); otherwise one after
        another here.
        """
        workers = self.options.threads
        # open pairs only become fewer: with one, a pool would only cost its start
        if workers == 1 or len(self._mine()) < 2 or not self._run_in_processes(deadline):
            workers = 1
            while (point := self._next(())) is not None and not _passed(deadline):
                task = self._task(point, deadline)
                if not self._apply(point, task, self.solver.solve(task)):
                    break
        if self.ledger is not None:  # also when no pair was solved: the incumbent
            self._write_ledger()
        complete = not self.open_points() and self.incumbent is not None
        return Decomposition(
            complete,
            self.upper if complete else self.bound(),
            self.incumbent,
            self.solved,
            len(self.points),
            len(self.open_points()),
            tuple(self.log),
            workers,
        )

    def _run_in_processes(self, deadline: float | None) -> bool:
        """Keep ``options.threads`` pairs solving in spawned processes; False when they cannot start or break.

        Each process receives the instance and the enumeration once, and a task per pair: the
        cutoff of the incumbent when the pair starts, which is valid whatever the others find
        later (a smaller incumbent only lowers the cutoff). A pair left unsettled stops the
        hand-out, as in the serial order (it had all the time left, or its round limit stopped
        it), and the pairs still running are waited for. Which pairs get solved, and so the
        incumbent reached when the time runs out, depends on the order in which they finish;
        a complete run's optimum does not.

        Spawned processes import the caller's main module again, which fails when it has no
        file (a script piped to ``python -``), and a daemonic process may not start any: the
        pairs are then solved here, one after another, as are those left open when a process
        dies (the pool is then broken).
        """
        if not can_spawn():
            return False
        running: dict[Future[PairOutcome], tuple[CapacityPoint, PairTask]] = {}
        handing_out = True
        try:
            with ProcessPoolExecutor(
                max_workers=self.options.threads,
                mp_context=get_context("spawn"),
                initializer=_start_worker,
                initargs=(self.solver, os.getpid(), _shown_level()),
            ) as pool:
                while True:
                    while handing_out and len(running) < self.options.threads and not _passed(deadline):
                        point = self._next([point for point, _ in running.values()])
                        if point is None:
                            break
                        task = self._task(point, deadline)
                        running[pool.submit(_solve_in_worker, task)] = (point, task)
                    if not running:
                        return True
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        point, task = running.pop(future)
                        handing_out = self._apply(point, task, future.result()) and handing_out
        except BrokenProcessPool:
            return not handing_out  # its pairs are still open: solved here, unless the hand-out had stopped


class PairSolver:
    """Solves one pair's fixed-capacity problem with its cutoff (a copy lives in each worker process).

    Parameters
    ----------
    instance
        The co-exploration instance.
    options
        Threads and seed of each solve (its time limit comes with each task).
    columns
        The co-exploration instance's enumeration, which each pair's columns are filtered from.
    settings
        Column budget, round limit and MILP backend of each fixed-capacity problem.
    """

    def __init__(
        self, instance: PartitionInstance, options: SolveOptions, columns: ColumnSet, settings: ProofSettings
    ) -> None:
        self.instance = instance
        self.options = options
        self.columns = columns
        self.settings = settings

    def fixed(self, act_bytes: int, weight_bytes: int) -> PartitionInstance:
        """The fixed-capacity instance of a pair."""
        weights = () if self.instance.shared else (weight_bytes,)
        return dataclasses.replace(self.instance, act_candidates_bytes=(act_bytes,), weight_candidates_bytes=weights)

    def pair_columns(self, fixed: PartitionInstance) -> ColumnSet:
        """The columns of the co-exploration enumeration that fit a pair's instance ``fixed``: all of
        the pair's, or (the enumeration stopped early) all those of fewer layers than it listed."""
        fitting = tuple(column for column in self.columns.columns if fixed.fits_largest(column.cost))
        return dataclasses.replace(self.columns, columns=fitting)

    def solve(self, task: PairTask) -> PairOutcome:
        """The pair's table from its columns, with the cutoff (:func:`partition_branch.prepare`),
        solved by the MILP over it; the bound it proves of :math:`E^*(p)`, and its best partition."""
        start = time.perf_counter()
        fixed = self.fixed(task.act_bytes, task.weight_bytes)
        options = dataclasses.replace(self.options, time_limit_s=task.limit_s)
        warm, _ = checked_warm_start(fixed, task.warm)
        listed = self.pair_columns(fixed)
        run = partition_branch.prepare(
            fixed,
            options,
            warm,
            start,
            self.settings,
            cutoff=task.cutoff,
            listed=listed,
            seeds=task.seeds,
            inner=task.inner,
            tree=task.tree,
            reach=task.reach,
        )
        milp = PartitionMilp(run.table)
        start_values = milp.start(run.warm) if run.warm else None
        answer = solve(milp.model, self.settings.backend, run.solver_options(options), start_values)
        found = [run.warm] if run.warm is not None else []
        if answer.values is not None:
            found.append(milp.decode(answer.values))
        best = min(found, key=run.table.objective, default=None)
        if run.table.complete and answer.bound is not None:
            whole_bytes = self.instance.metric is Metric.EMA
            floor = task.cutoff if whole_bytes else task.cutoff - proof_tolerance(self.instance.n_layers, task.cutoff)
            lower = min(answer.bound, floor)
        else:
            lower = run.table.column_set.bound if run.table.column_set.bound is not None else -math.inf
        if run.proven_bound is not None:  # over every column: past the cutoff (up to the reach at the root)
            lower = max(lower, run.proven_bound)
        settled = run.table.complete and answer.status is Status.OPTIMAL
        ceiling = None if settled or listed.complete else master_value(run.table)
        return PairOutcome(
            lower,
            settled,
            None if best is None else run.table.solution(best),
            None if best is None else run.table.objective(best),
            time.perf_counter() - start,
            () if listed.complete else _generated(run.table, listed),
            run.inner,
            "" if settled else _why_open(run.table, listed, answer.status),
            run.tree,
            ceiling,
        )


@dataclass(frozen=True)
class PairTask:
    r"""One pair's solve as the decomposition hands it out.

    Attributes
    ----------
    act_bytes, weight_bytes
        The pair's capacities (``weight_bytes`` 0 with a shared buffer).
    cutoff
        :math:`c(p)` at the incumbent when the pair starts.
    warm
        The incumbent's subgraphs under the pair's capacities (checked by the solve), or None.
    limit_s
        Seconds the solve may take, or None.
    seeds
        Subgraphs (layer indices) the pair's column generation starts from: those generated by
        earlier solves of the pair (its ledger) and of pairs within it, which fit it.
    inner
        The inner point its column generation starts from: the best proven by earlier solves of
        the pair or of pairs containing it, or None.
    tree
        The open nodes of the branch-and-price tree its last solve stopped in, which this one
        resumes (:func:`~accelsched.formulations.partition.branch.prepare`), or None.
    reach
        The cutoffs of the open pairs within it, the levels its root's bound is pushed to (module
        docstring, "Reach"; those at or below :math:`c(p)` count for nothing); none: the cutoff.
    """

    act_bytes: int
    weight_bytes: int
    cutoff: float
    warm: PartitionSolution | None
    limit_s: float | None
    seeds: tuple[tuple[int, ...], ...] = ()
    inner: InnerPoint | None = None
    tree: TreeState | None = None
    reach: tuple[float, ...] = ()


@dataclass(frozen=True)
class PairOutcome:
    r"""What one pair's solve proved and found.

    Attributes
    ----------
    lower
        A lower bound of :math:`E^*(p)` (at least :math:`\min(E^*(p), c(p))`, less the proof's
        tolerance with energy, when settled).
    settled
        Whether the pair's best partition is its optimum, or none is below its cutoff.
    best
        The best partition found under the pair, or None.
    metric
        Its metric (the fixed-capacity objective), or None.
    seconds
        Time the solve took.
    generated
        The subgraphs of its table that its master did not start from: those column
        generation found, listed or not (and the warm start's, the seeds).
    inner
        The root inner point of its column generation (None when its columns were all listed).
    stopped
        Why an open pair's solve stopped where it did (:func:`_why_open`); empty when settled.
    tree
        The open nodes of its branch-and-price tree when it stopped there, or None.
    ceiling
        When it is left open with its columns generated: the LP value of its master over every
        column its solve met (:func:`master_value`; module docstring, "Ceilings"), else None.
    """

    lower: float
    settled: bool
    best: PartitionSolution | None
    metric: float | None
    seconds: float
    generated: tuple[tuple[int, ...], ...] = ()
    inner: InnerPoint | None = None
    stopped: str = ""
    tree: TreeState | None = None
    ceiling: float | None = None


def master_value(table: VariantTable) -> float | None:
    """The LP value of the master over a fixed-capacity table's columns, without branching rules, at a
    vertex (crossover): at least the LP optimum over every column, so at least every bound column
    generation proves. None when the LP is not solved to optimality."""
    lp = RestrictedMaster(table).solve_lp(vertex=True)
    return lp.value if lp.status == "Optimal" and math.isfinite(lp.value) else None


def _why_open(table: VariantTable, listed: ColumnSet, status: Status) -> str:
    """Why a pair's solve left it open: where its column generation, listing or tree stopped (the
    pricing round, the master LP's value when a listing gave up, the nodes solved and left open),
    without the enumeration's stop reason, which every pair shares; or, over a complete table,
    the MILP's status."""
    if table.complete:
        return f"the MILP over its {len(table.columns)} columns ended {status.name}"
    return table.column_set.stopped.removeprefix(f"{listed.stopped}; ")


def _generated(table: VariantTable, listed: ColumnSet) -> tuple[tuple[int, ...], ...]:
    """The subgraphs of more than one layer in ``table`` that its master did not start from
    (:func:`~accelsched.formulations.partition.branch.master_columns` of ``listed``): a listed
    column beyond the master's start is one the pair's next solve would have to generate again."""
    known = {mask_of(column.members) for column in partition_branch.master_columns(listed).columns}
    return tuple(
        tuple(column.members)
        for column in table.columns
        if len(column.members) > 1 and mask_of(column.members) not in known
    )


_WORKER: PairSolver | None = None
"""The pair solver of a worker process (:func:`_start_worker`)."""


def _start_worker(solver: PairSolver, parent: int, level: int | None = None) -> None:
    """Keep the pair solver of this worker process; exit when ``parent`` dies
    (:func:`~accelsched.processes.exit_with_parent`). With a ``level`` (the least the parent logs of
    this module's records, :func:`_shown_level`), the package's records of the pair's solve from that
    level up (its root, its tree's nodes; at DEBUG its exact pricing rounds too) go to stderr, which
    the worker shares with its parent, each with the worker's pid."""
    global _WORKER
    _WORKER = solver
    exit_with_parent(parent)
    if level is not None:
        show_records(sys.stderr, "%(asctime)s %(name)s [pid %(process)d]: %(message)s", level=level)


def _shown_level() -> int | None:
    """The least level of this module's records that the process logs, DEBUG or INFO (None: neither)."""
    return next((level for level in (logging.DEBUG, logging.INFO) if LOGGER.isEnabledFor(level)), None)


def _solve_in_worker(task: PairTask) -> PairOutcome:
    assert _WORKER is not None, "the worker process was not started by _start_worker"
    return _WORKER.solve(task)


def _passed(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def decompose(
    instance: PartitionInstance,
    options: SolveOptions,
    table: VariantTable,
    warm: PartitionSolution | None,
    notes: list[str],
    start: float,
    columns: ColumnSet,
    settings: ProofSettings,
    ledger: Ledger | None = None,
) -> Prepared:
    """Run the decomposition for a co-exploration instance.

    Parameters
    ----------
    instance
        The co-exploration instance.
    options
        Its limits: the pairs are solved until all but
        :data:`~accelsched.formulations.partition.branch.FINAL_SHARE` of the time limit.
    table
        Its table over (the smallest of) the enumerated columns, with the warm start's columns.
    columns
        Its enumeration, complete or not: the pairs' columns are filtered from it.
    warm
        The checked warm start, or None.
    notes
        What the stats say so far.
    start
        The :func:`time.perf_counter` value the time limit counts from.
    settings
        Column budget, round limit and MILP backend of each fixed-capacity problem.
    ledger
        A ledger to start from and write each solved pair to, or None.

    Returns
    -------
    Prepared
        A complete table holding the proven optimum. Otherwise, when the time ran out: with an
        incomplete enumeration its table, with the bound and the best partition found; with a
        complete one a table of that partition's columns and the single layers, incomplete, with
        the bound (the models then return the partition rather than solve the whole table in the
        time left, which the pairs were there to avoid).
    """
    limit = options.time_limit_s
    proof_deadline = None if limit is None else start + (1 - partition_branch.FINAL_SHARE) * limit
    decomposition = CapacityDecomposition(instance, warm, options, columns, settings, ledger)
    if ledger is not None:
        restored = "no incumbent" if ledger.incumbent is None else f"its incumbent (objective {ledger.objective:.12g})"
        notes = [*notes, f"pair ledger {ledger.path}: started from {ledger.provenance()} and {restored}"]
    if decomposition.share is not None:
        given = ", ".join(f"{act // 1024}/{weight // 1024}" for act, weight in sorted(decomposition.share))
        notes = [*notes, f"a share of a divided proof: this run solves only the pairs given (KB: {given})"]
    outcome = decomposition.run(proof_deadline)
    at_once = f" ({outcome.workers} at a time)" if outcome.workers > 1 else ""
    progress = f"capacity decomposition: {outcome.solved} of {outcome.pairs} pairs of candidates solved{at_once}, " + (
        "the others pruned by their bounds, the incumbent proven optimal"
        if outcome.complete
        else f"{outcome.unsettled} below the incumbent still, bound {outcome.bound:.12g}"
    )
    more = len(outcome.log) - LOG_LINES
    shown = "; ".join(outcome.log[:LOG_LINES]) + (f"; ({more} more)" if more > 0 else "")
    enumeration = f"every column listed ({len(columns)}), solved pair by pair" if columns.complete else columns.stopped
    # an unfinished run's table says why the enumeration stopped, in the note on the bound
    lead = [enumeration] if outcome.complete or columns.complete else []
    notes = [*notes, "; ".join([*lead, progress]), f"pairs: {shown}"]
    extra = () if outcome.incumbent is None else outcome.incumbent.indices(instance)
    if outcome.complete:
        table = VariantTable(
            instance, ColumnSet((), True, settings.budget, columns.visited, bound=outcome.bound), extra
        )
    elif columns.complete:
        stopped = "the capacity decomposition stopped at the time limit"
        table = VariantTable(
            instance, ColumnSet((), False, settings.budget, columns.visited, stopped, outcome.bound), extra
        )
    else:
        for members in extra:
            table.add(members)
        stopped = f"{table.column_set.stopped}; the capacity decomposition stopped"
        table.column_set = dataclasses.replace(table.column_set, bound=outcome.bound, stopped=stopped)
    incumbent = None if outcome.incumbent is None else table.assignment(outcome.incumbent)
    deadline = None if limit is None else start + limit
    generated = outcome.incumbent is not None and outcome.incumbent != warm
    return Prepared(table, incumbent, tuple(notes), deadline, generated)
