r"""Capacity decomposition for co-exploration: one fixed-capacity problem per pair of candidates.

When the enumeration of the co-exploration instance stops at its column budget
(large graphs), the exact models need a bound over every column. Column
generation on the co-exploration master proves at most its LP value, and that LP
mixes capacity candidates fractionally. This module decides the
capacities outside the LP instead.

The MILP methods also take this route when the enumeration is complete but the table is
large (:attr:`ProofParams.decompose_columns
<accelsched.formulations.partition.proof_params.ProofParams>`): the
co-exploration MILP mixes the capacities in its LP there too.

No pair is enumerated again: its columns are those of the co-exploration enumeration
that fit it. A subgraph that fits a pair fits the largest capacities, so a complete
enumeration gives every pair its complete one (no column generation is needed), and
one stopped early, in growth order, gives every pair all its columns of fewer layers than
the enumeration's (:attr:`ColumnSet.listed_below
<accelsched.problems.partition_columns.ColumnSet>`), which is what the pair's column
generation needs for its bound.

Decomposition
-------------
Let :math:`p = (A, W)` range over the pairs of candidates (the shared candidates with
a shared buffer), :math:`\kappa(p) = A + W` its capacity bytes and :math:`E^*(p)` the
least metric of a partition under :math:`p` (the fixed-capacity problem, solved
exactly by :func:`~accelsched.formulations.partition.fixed_capacity.prove_fixed`: the
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
:meth:`~.colgen_params.ColumnGenerationParams.proof_tolerance`; :math:`c(p)` rounded up
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
settles it.

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
(:mod:`~accelsched.formulations.partition.ledger`).
It also starts from the best inner point proven for it or for a pair containing it, in this
run or an earlier one (:class:`~accelsched.formulations.partition.common.InnerPoint`): its bound
starts where the earlier solve's ended, and the pairs within a solved pair start from that
bound rather than from their forced traffic.

The pairs are independent given :math:`U`, so with ``threads`` above 1
(:class:`~accelsched.solvers.SolveOptions`) that many are solved at once, each in a process
of its own with one thread: the next open pairs in that order not already running, each with the
cutoff and reach of the incumbent when it starts (a better incumbent found meanwhile only lowers the
cutoffs of those started later; an earlier, larger cutoff settles a pair all the same). A proof
that takes hours per pair is so divided among the cores of a machine.

Machines divide them too. A run given some pairs (:attr:`ProofSettings.pairs
<accelsched.formulations.partition.proof_params.ProofSettings>`, the solve command's ``--pairs``)
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
import time
from collections.abc import Collection
from dataclasses import dataclass

from accelsched.fingerprint import code_fingerprint
from accelsched.formulations.partition.capacity_points import (
    CapacityPoint,
    Decomposition,
    PairState,
    capacity_points,
    check_share,
)
from accelsched.formulations.partition.common import (
    InnerPoint,
    Prepared,
    TreeState,
    VariantTable,
    keep_better_inner,
    keep_last_tree,
)
from accelsched.formulations.partition.ledger import Ledger, instance_digest, lower_ceiling
from accelsched.formulations.partition.pair_solver import (
    PairOutcome,
    PairSolver,
    PairTask,
    master_value,
    passed,
    solve_in_processes,
)
from accelsched.formulations.partition.proof_params import ProofSettings
from accelsched.problems.partition import Metric, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import ColumnSet, mask_of
from accelsched.solvers import SolveOptions

__all__ = ["LOGGER", "CapacityDecomposition", "HandedPair", "decompose"]

LOGGER = logging.getLogger(__name__)
"""Each pair as it starts and ends, at INFO (silent unless a caller shows it: the long runs of
``partition_tables coexplore`` do)."""


@dataclass(frozen=True)
class HandedPair:
    """What :attr:`CapacityDecomposition.handed` keeps of a pair's task (not the task: its seeds,
    inner point and tree may be large, and a long run hands out many).

    Attributes
    ----------
    act_bytes, weight_bytes
        The pair.
    cutoff
        Its cutoff when it was handed out.
    seeds
        How many subgraphs its column generation starts from (:meth:`CapacityDecomposition._seeds`).
    inner_bound
        The bound of the inner point it starts from, or None (none).
    resumed
        Whether it resumes the open nodes of an earlier solve's tree.
    """

    act_bytes: int
    weight_bytes: int
    cutoff: float
    seeds: int
    inner_bound: float | None
    resumed: bool

    @classmethod
    def of(cls, task: PairTask) -> HandedPair:
        """The record of ``task``."""
        inner = None if task.inner is None else task.inner.bound
        return cls(task.act_bytes, task.weight_bytes, task.cutoff, len(task.seeds), inner, task.tree is not None)


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
        self.settings = settings
        self.points = capacity_points(instance)
        self.share = None if settings.pairs is None else check_share(instance, settings.pairs, self.points)
        """The pairs this run may solve (:attr:`ProofSettings.pairs`), or None: every one."""
        self.incumbent = warm
        self.upper = math.inf if warm is None else self._objective(warm)
        self.whole_bytes = instance.metric is Metric.EMA
        """Whether every fixed-capacity objective is a whole number of bytes."""
        self.log: list[str] = []
        self.solved = 0
        self.handed: list[HandedPair] = []
        """The pairs handed out, in that order: what their tasks were (:class:`HandedPair`)."""
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
        (:meth:`~.colgen_params.ColumnGenerationParams.proof_tolerance`),
        as branch-and-price prunes a node."""
        return self.settings.params.colgen.proof_tolerance(self.instance.n_layers, self.upper)

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
        top, n, colgen = self.ceiling(point), self.instance.n_layers, self.settings.params.colgen

        def beyond(cut: float) -> bool:
            return math.isfinite(cut) and cut - colgen.proof_tolerance(n, cut) >= top

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
        and the reach of its root (module docstring, "Reach"); recorded in :attr:`handed`."""
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
        self.handed.append(HandedPair.of(task))
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
            while (point := self._next(())) is not None and not passed(deadline):
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
            deadline,
        )

    def _run_in_processes(self, deadline: float | None) -> bool:
        """Keep ``options.threads`` pairs solving in spawned processes
        (:func:`~accelsched.formulations.partition.pair_solver.solve_in_processes`), each handed out in
        the running order with the cutoff of the incumbent when it starts; False when they cannot
        start or break (the pairs left open are then solved here)."""

        def hand_out(busy: list[CapacityPoint]) -> tuple[CapacityPoint, PairTask] | None:
            point = self._next(busy)
            return None if point is None else (point, self._task(point, deadline))

        workers = self.options.threads
        return solve_in_processes(self.solver, workers, _shown_level(), deadline, hand_out, self._apply)


def _shown_level() -> int | None:
    """The least level of this module's records that the process logs, DEBUG or INFO (None: neither)."""
    return next((level for level in (logging.DEBUG, logging.INFO) if LOGGER.isEnabledFor(level)), None)


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
        Its limits: the pairs are solved until all but ``final_share`` of the time limit
        (:class:`~accelsched.formulations.partition.proof_params.ProofParams`).
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
        Column budget, round limit and MILP backend of each fixed-capacity problem, and the
        parameters (the pairs' log in the note: ``pair_log_lines`` of
        :class:`~accelsched.formulations.partition.proof_params.ProofParams`).
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
    proof_deadline = settings.params.proof_deadline(start, limit)
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
    lines = settings.params.pair_log_lines
    more = len(outcome.log) - lines
    shown = "; ".join(outcome.log[:lines]) + (f"; ({more} more)" if more > 0 else "")
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
    return Prepared(table, incumbent, tuple(notes), deadline, generated, proof_deadline=outcome.deadline)
