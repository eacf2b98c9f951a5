r"""Column generation for the partition models (Cocco): a proven bound, and every column an optimum needs.

When the enumeration of :mod:`accelsched.problems.partition_columns` stops at its
budget (the connected convex sets that fit can be far too many to list), the exact
models would choose among a subset of the columns and prove nothing. This module
replaces the missing part of the list by two exact steps: column generation, which
proves a lower bound over *every* column, and the listing of the few columns whose
reduced cost is small enough to matter. The MILP and CP-SAT models then run on a
column set that provably holds an optimal partition. (Design notes and the
measurements behind the choices below: ``docs/notes/partition-colgen-design.md``.)

The master LP and the lower bound LB it proves from any duals (its notation is used
below: duals :math:`\pi`, charge :math:`\rho`, pricing bound :math:`\mu`) are in
:mod:`accelsched.formulations.partition.master`; the pricing is in
:mod:`accelsched.formulations.partition.pricing`. :class:`ColumnGeneration` drives the
parts, each in its own module: the shared state, bound and levels
(:mod:`~.colgen_core`), the pricing rounds (:mod:`~.colgen_rounds`), the exact pricing
and its Dinkelbach steps (:mod:`~.colgen_steps`), the listing below the gap
(:mod:`~.colgen_listing`); its limits and tolerances are a
:class:`~.colgen_params.ColumnGenerationParams`.

In-out separation
-----------------
The bound holds for any duals, not only the LP's. Moving the cover duals from
:math:`\pi` to :math:`\pi'` moves :math:`\lambda^\top b` by :math:`\sum_i (\pi'_i - \pi_i)`
and each master variant's reduced cost by :math:`-\sum_{i \in S_j} (\pi'_i - \pi_i)`
(:meth:`~.master.MasterLp.at`); the pricing MILP at :math:`\pi'` gives :math:`\mu`. The
*inner point* :math:`\pi^{in}` is the best-bound point at which the pricing proved
:math:`\mu \ge 0` (the last of the charge's Dinkelbach steps, at first), or, where it proved only
:math:`\mu < 0`, the same duals with every cover dual lowered by :math:`|\mu| / s`, at which no
missing set of :math:`s` layers or more is negative (:meth:`~.colgen_core.GenerationState.lifted`);
the next LP gives :math:`\pi^{out}`, whose sum, the LP value, exceeds the bound. On the segment
:math:`\pi(t) = \pi^{in} + t \Delta`, :math:`\Delta = \pi^{out} - \pi^{in}`, a missing set
has :math:`d_S(\pi(t)) = d_S(\pi^{in}) - t \Delta(S)`, non-negative up to
:math:`t_S = d_S(\pi^{in}) / \Delta(S)`; Dinkelbach's steps on :math:`t` (the least
:math:`t_S` of the sets met) prove the bound at :math:`\pi(t)`
(:meth:`~.colgen_steps.ExactPricing.segment`), and its sets are new columns that cut the dual
near the inner point. This is the in-out separation of Ben-Ameur and Neto (2007): the
inner point keeps what earlier rounds proved, where the uniform charge starts again
from each round's duals. Each exact round takes the charge steps first, and the
segment steps when the charge did not beat the inner point.

The forced traffic as the first inner point
-------------------------------------------
With fixed capacities a first inner point needs no pricing: the forced traffic
(:mod:`~accelsched.formulations.partition.bound`) shared among the layers that pay it,
:func:`~accelsched.formulations.partition.bound.forced_duals`, leaves every reduced cost
non-negative, so it proves its sum (the forced traffic, less the reads no single layer pays)
before the first round, and the segment steps climb from there. A bound past the cutoff, or
past the incumbent's objective, ends the work there (:meth:`ColumnGeneration.settled`). A run
may also start from an inner point proven earlier for it or for an instance whose columns
include its own (:class:`~accelsched.formulations.partition.common.InnerPoint`, kept in the ledger).

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
(:attr:`ColumnSet.complete <accelsched.problems.partition_columns.ColumnSet>`;
:class:`~.colgen_listing.GapListing`). A smaller :math:`U` lists fewer columns, so the
integer program over the master's columns (the master with integer variables, cycles
among the chosen subgraphs cut lazily: :math:`\sum_{j \in \text{cycle}} x_j \le |\text{cycle}| - 1`)
is solved first, and again over the table as the listing adds columns: a better :math:`U`
lowers :math:`\theta` for the rest of the listing. The listing may run past the end of the
pricing rounds, until its own deadline. Nothing here needs the master to be optimal: the
listing runs at the inner point, and it is tried as soon as the inner point's bound comes
within ``close_gap`` of the LP value; one that adds ``listing_limit`` columns, or runs
``listing_share`` of the time left to it, gives up, and column generation goes on with them
in the master. With fixed capacities, once the master is optimal and a listing has given up
(or the one then tried does), branch-and-price on pairs of layers closes the gap instead
(:mod:`accelsched.formulations.partition.branch`): a child keeps its parent's inner point,
which stays a valid one since a child only removes columns.

Pricing to the level
--------------------
A node whose bound must pass a prune level :math:`L` (the incumbent's, or a pair's
cutoff) needs a converged master only when the LP value is at most :math:`L`. While it
is above, LB passes :math:`L` as soon as the pricing proves :math:`\beta` above the
cutoff :math:`\beta_L < 0` that solves LB(:math:`\beta_L`) = :math:`L`
(:meth:`~.master.MasterLp.beta_above`; about :math:`(L - \text{LP}) s / n`),
which is far below the pricing's tolerance :math:`-\epsilon |\text{LP}|` when the LP
is well above :math:`L`. Every pricing step then looks for sets below
:math:`\beta_L` only (:meth:`~.colgen_core.GenerationState.pricing_cutoff`): the MILP proves that none is
left, and the node is pruned or the pair settled, or it meets one, a column that may
take the LP under :math:`L`. The sets between :math:`\beta_L` and the tolerance
cannot: the windows and the neighbour search could add them for long without moving the LP.
A duals' proof at :math:`\beta_L` is no proof of dual feasibility, so it does not make them
the inner point. The Dinkelbach steps that follow an exact pricing price to the level too,
once the bound their step proves at :math:`\mu = 0` passes it: their cutoff is then the
:math:`\mu < 0` at which that bound does, instead of 0.

Running order (:class:`ColumnGeneration`)
-----------------------------------------
0. The master starts from the smallest enumerated columns (and the warm start's): the
   pricing finds the others when they matter, and each round's LP is that much faster.
1. The master LP, by HiGHS' interior point method without crossover: the duals lie
   inside the optimal face, which these degenerate set-partitioning LPs need to
   converge in few rounds.
2. Pricing (:mod:`~.colgen_rounds`) by the neighbour search from the master's support and
   newest columns; when it finds nothing, by the pricing MILP on windows of the graph; when
   that finds nothing, by the full pricing MILP, the only step that proves :math:`\beta`,
   followed by the charge or segment steps, each but the last stopped at its first
   ``step_sets`` sets. The exact pricing also runs after ``stall_rounds`` rounds without a
   decrease of the LP value, and once the heuristics since the last exact round have taken
   ``exact_share_ratio`` times its time (``exact_first_s`` before the first): the heuristics
   can lower the LP value for long without the bound moving.
3. When the inner point's bound is close, or at convergence, the restricted integer
   program for :math:`U`, then the listing of the columns below :math:`\theta`.

A deadline or the round limit stops the work with the best LB proven so far (or
none), and the column set is marked incomplete: the models then report FEASIBLE
with that bound. What the work did is counted in :attr:`ColumnGeneration.stats`.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

from accelsched.formulations.partition.colgen_core import (
    LISTING_LOGGER,
    LOGGER,
    STATS_LOGGER,
    GenerationState,
    Outcome,
)
from accelsched.formulations.partition.colgen_listing import GapListing
from accelsched.formulations.partition.colgen_params import ColumnGenerationParams
from accelsched.formulations.partition.colgen_rounds import PricingRounds
from accelsched.formulations.partition.colgen_steps import ExactPricing
from accelsched.formulations.partition.common import Assignment, InnerPoint, VariantTable
from accelsched.formulations.partition.master import MasterLp
from accelsched.formulations.partition.rules import PairRule

__all__ = ["LISTING_LOGGER", "LOGGER", "STATS_LOGGER", "ColumnGeneration"]

_DEFAULT_PARAMS = ColumnGenerationParams()


class ColumnGeneration(GenerationState):
    """Column generation, then the listing of the columns below the gap (see the module docstring).

    The state it shares with its parts (the table, master, pricing, cuts, the bound, the inner
    point, the incumbent, the levels :attr:`upper`, :meth:`prune_level`, :meth:`reach_level`) is that
    of :class:`~.colgen_core.GenerationState`; what the work did is :attr:`stats`, a
    :class:`~.colgen_core.ColumnGenerationStats` snapshot (cumulative over every call) whose fields are ``rounds``,
    ``heuristic_rounds``, ``exact_rounds``, ``exact_by_stall``, ``exact_by_share``,
    ``exact_by_first``, ``first_exact_round``, ``rounds_to_level``, ``steps``, ``steps_to_level``,
    ``steps_cut_short``, ``listings``, ``listings_given_up``, ``listings_slow``,
    ``listings_completed``, ``listed``, ``columns_added``, ``tailed_off``, ``phase_ones``,
    ``phase_one_infeasible`` and ``phase_one_open`` (their meaning: that class). At the end of each
    :meth:`run` and :meth:`solve_node` a DEBUG record of :data:`STATS_LOGGER` carries the snapshot as its
    ``colgen_stats`` attribute (and, after :meth:`run`, the deadlines it was given as
    ``colgen_deadlines``), so that what a method's column generations did can be read from its log.

    Parameters
    ----------
    table
        The columns found so far (an incomplete enumeration, the warm start's); grown in place.
    incumbent
        A valid partition of the table's columns, or None.
    threads
        HiGHS threads.
    rounds
        Largest number of pricing rounds (None: ``params.max_rounds``).
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
    params
        Limits, shares and tolerances (:class:`~.colgen_params.ColumnGenerationParams`).
    """

    def __init__(
        self,
        table: VariantTable,
        incumbent: Assignment | None,
        threads: int = 1,
        rounds: int | None = None,
        cutoff: float = math.inf,
        start: InnerPoint | None = None,
        reach: Sequence[float] = (),
        params: ColumnGenerationParams = _DEFAULT_PARAMS,
    ) -> None:
        super().__init__(table, incumbent, threads, rounds, cutoff, start, reach, params)
        self.exact = ExactPricing(self)
        """The exact pricing and its Dinkelbach steps."""
        self.listing = GapListing(self)
        """The listing of the columns below the gap."""
        self.pricing_rounds = PricingRounds(self, self.exact, self.listing)
        """The pricing rounds."""

    def run(self, deadline: float | None, listing_deadline: float | None = None) -> Outcome:
        """Generate columns until the master is optimal, then list the columns below the gap.

        The heuristic pricing goes first; the exact pricing MILP runs when it finds nothing,
        and also after ``params.stall_rounds`` rounds without a decrease of the LP value (on
        these degenerate masters the heuristics can add columns for long without moving
        it) or once the heuristics have had ``params.exact_share_ratio`` times the last exact
        round's time (they can also lower it for long without the bound moving), for the
        bound its dual bound proves. The work is complete as soon as that bound proves that no
        partition beats :math:`U` (:meth:`settled`), the master optimal or not. A listing gives up after
        ``params.listing_limit`` columns or ``params.listing_share`` of the time left to it. With
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
        listing. Its end is logged (:data:`LOGGER`, INFO), with when the bound passed the cutoff
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
        self.run_start = time.perf_counter()
        if self.settled():  # by the inner point it starts from
            self.settled_s = 0.0
        outcome = self._root(deadline, listing_deadline)
        if self.reach:
            LOGGER.info(
                "root with a reach: %s, bound %.7g after %.1f s, %s; %s",
                "complete" if outcome.complete else "open",
                -math.inf if self.bound is None else self.bound,
                time.perf_counter() - self.run_start,
                "cutoff not passed" if self.settled_s is None else f"cutoff passed after {self.settled_s:.1f} s",
                "no round priced" if self.priced_to is None else f"last priced to {self.priced_to:.7g}",
            )
        self.run_start = None
        stats = self.stats
        STATS_LOGGER.debug(
            "column generation %s: %s",
            "complete" if outcome.complete else "open",
            stats,
            extra={"colgen_stats": stats, "colgen_deadlines": (deadline, listing_deadline)},
        )
        return outcome

    def _root(self, deadline: float | None, listing_deadline: float | None) -> Outcome:
        """The work of :meth:`run`."""
        listing_deadline = deadline if listing_deadline is None else listing_deadline
        if self.reached():
            return self.finished()
        state = self.pricing_rounds.generate(deadline, listing_deadline, early=True, tailing=True)
        if self.settled():  # short of the reach (optimal master, time, rounds), past the cutoff
            return self.finished()
        if isinstance(state, Outcome):
            return state
        if self.instance.co_exploration:  # branching on layer pairs alone cannot fix the capacities
            outcome = self.listing.close(listing_deadline)
            assert outcome is not None  # without a limit the listing ends or runs out of time
            return outcome
        if not self.slow:
            give_up = self.listing.give_up(listing_deadline)
            outcome = self.listing.close(listing_deadline, self.params.listing_limit, give_up)
            if outcome is not None:
                return outcome
        reason = (
            f"the listing below the gap of {self.theta:.6g} gave up ({self.listed} listed, "
            f"{len(self.table.columns)} columns; master LP {state.value:.12g})"
        )
        return dataclasses.replace(self.stop(reason), converged=True)

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
        that, not ``bound``, and the node's bound rises to it when it is higher.
        There is no listing in a node; the generation stops as soon as a bound above
        ``prune_above`` is proven, and, with ``tailing``, when the master tails off
        (:meth:`tails`): the node is then branched with its master not optimal.

        Under rules the LP has artificial variables
        (:meth:`~.master.RestrictedMaster.penalty`). When the generation converges
        with some of them still in the LP, phase one (:meth:`_phase_one`) decides: no
        partition keeps the rules (the bound is then infinite), or one does and the
        artificial variables' cost grows by ``params.penalty_growth`` for another round.

        Returns the last master LP (the master is optimal or tails off, or the node is pruned:
        compare :attr:`bound` with ``prune_above``), or None when the time or the round limit
        stopped the work (:attr:`bound` is then the node's best bound)."""
        self.master.rules = rules
        self.master.penalty_scale = 1.0
        self.pricing.impose(rules)
        self.inner, self.inner_bound, self.bound = self.cuts.padded(inner), bound, bound
        self.unrated = True
        self.tried = None
        lp = self._node(deadline, prune_above, tailing)
        stats = self.stats
        STATS_LOGGER.debug("node column generation: %s", stats, extra={"colgen_stats": stats})
        return lp

    def _node(self, deadline: float | None, prune_above: float, tailing: bool) -> MasterLp | None:
        """The work of :meth:`solve_node`."""
        while True:
            state = self.pricing_rounds.generate(
                deadline, deadline, early=False, prune_above=prune_above, tailing=tailing
            )
            if isinstance(state, Outcome):
                return None
            if state.artificial <= self.params.covered or (self.bound is not None and self.bound > prune_above):
                return state
            feasible = self._phase_one(deadline)
            if feasible is None:
                return None
            if not feasible:  # no fractional partition keeps the rules: none at all
                self.bound = math.inf
                return state
            self.master.penalty_scale *= self.params.penalty_growth

    def _phase_one(self, deadline: float | None) -> bool | None:
        r"""Whether some fractional partition over every column keeps the node's rules (phase one,
        with Farkas pricing); None when time runs out (counted in :attr:`stats`).

        The master LP with costs 0 for the columns and 1 for the artificial variables, priced
        with the metric's weight 0 (a set's reduced cost is :math:`-\sum_{i \in S} \pi_i`). Its
        bound (:meth:`MasterLp.bound`) above 0 proves that no partition keeps the rules; an LP
        solution without artificial variables proves that one does, fractionally."""
        self.count("phase_ones")
        decided = self._farkas(deadline)
        if decided is None:
            self.count("phase_one_open")
        elif not decided:
            self.count("phase_one_infeasible")
        return decided

    def _farkas(self, deadline: float | None) -> bool | None:
        """The phase-one loop of :meth:`_phase_one`."""
        master, pricing, covered = self.master, self.pricing, self.params.covered
        weight = pricing.weight
        master.phase_one, pricing.weight = True, 0.0
        vertex = False
        try:
            while not self.expired(deadline):
                lp = master.solve_lp(deadline, vertex=vertex)
                if not math.isfinite(lp.value):
                    return None
                if lp.artificial <= covered:
                    return True
                answer = pricing.solve(lp.duals, -covered, time_limit=self.left(deadline), max_sets=5)
                if answer.complete and lp.bound(answer.bound) > covered:
                    return False
                if not self.add(self.candidates(answer.sets)) and answer.complete and not answer.sets:
                    if vertex:  # optimal duals, nothing prices out: the LP's positive value is phase one's
                        return False
                    vertex = True  # an unfinished interior point's duals (see PricingRounds.generate)
            return None
        finally:
            master.phase_one, pricing.weight = False, weight
