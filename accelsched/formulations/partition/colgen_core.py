r"""The state column generation's steps share: the models, the bound and inner point, the levels, the counts.

:class:`GenerationState` holds what every step of column generation reads and updates: the
table, the restricted master, the pricing MILP and local search, the subset-row cuts, the best
bound proven, the in-out separation's inner point, the incumbent and the levels derived from it
(:math:`U`, the prune level, the reach level), the state of the listing below the gap, and the
counts of :class:`ColumnGenerationStats`. The steps themselves are the pricing rounds
(:mod:`~.colgen_rounds`), the Dinkelbach steps that prove bounds (:mod:`~.colgen_steps`) and the
listing of the columns below the gap (:mod:`~.colgen_listing`), driven by
:class:`~.colgen.ColumnGeneration`, which is a :class:`GenerationState`.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from accelsched.formulations.partition.bound import forced_duals
from accelsched.formulations.partition.colgen_params import ColumnGenerationParams
from accelsched.formulations.partition.common import Assignment, InnerPoint, TreeState, VariantTable
from accelsched.formulations.partition.master import MasterLp, RestrictedMaster
from accelsched.formulations.partition.pricing import NeighbourSearch, PricingModel, TrafficTerms, components
from accelsched.problems.partition_columns import mask_of

__all__ = ["ColumnGenerationStats", "GenerationState", "Outcome"]

LOGGER = logging.getLogger("accelsched.formulations.partition.colgen")
"""The logger of column generation (the :mod:`~.colgen` module's): the exact rounds (DEBUG), a root's
end with a reach (INFO), a disconnected set from the pricing (WARNING)."""

STATS_LOGGER = logging.getLogger(f"{LOGGER.name}.stats")
"""Its child for the statistics (DEBUG): one record at the end of each run and node, whose
``colgen_stats`` attribute is the :class:`ColumnGenerationStats` snapshot."""

LISTING_LOGGER = logging.getLogger(f"{LOGGER.name}.listing")
"""Its child for the listing below the gap (DEBUG): one record as each listing starts, after its
integer program."""


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
        with the master optimal, or tailing off (:meth:`~.colgen.ColumnGeneration.tails`).
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


@dataclass(frozen=True)
class ColumnGenerationStats:
    """What a :class:`~.colgen.ColumnGeneration` has done so far (:attr:`GenerationState.stats`).

    The counts cover every call of the object (the root's :meth:`~.colgen.ColumnGeneration.run`
    and each node's :meth:`~.colgen.ColumnGeneration.solve_node`).

    Attributes
    ----------
    rounds
        Pricing rounds (:attr:`GenerationState.done`).
    heuristic_rounds
        Rounds that ran the heuristic pricing (the neighbour search, then the windows).
    exact_rounds
        Rounds that ran the full pricing MILP (the only pricing that proves a bound).
    exact_by_stall
        Exact rounds called because the LP value had not decreased for ``stall_rounds`` rounds.
    exact_by_share
        Exact rounds called because the heuristics since the last exact round had had their share
        of the time (``exact_share_ratio``, ``exact_share_floor_s``).
    exact_by_first
        Exact rounds called, before any other exact round, because the heuristics had had
        ``exact_first_s``. The other exact rounds ran because the heuristics found nothing.
    first_exact_round
        The round (1 = the first) of the first exact pricing; None before one.
    rounds_to_level
        Pricing rounds whose cutoff was lowered below the pricing's tolerance to the level the
        bound must pass (:meth:`GenerationState.pricing_cutoff`; "Pricing to the level").
    steps
        Dinkelbach steps (pricing MILP solves on the charge or on the in-out segment).
    steps_to_level
        Steps whose cutoff was lowered below 0 to the level.
    steps_cut_short
        Steps whose solve stopped with improving sets before proving its minimum (at ``step_sets``
        sets, or at the deadline).
    listings
        Listings of the columns below the gap started, counted on entry (before the integer program
        each starts with: one stopped there, by its deadline before a partition was found, counts
        too). How they ended: ``listings_given_up``, ``listings_completed`` (the others stopped at
        their deadline).
    listings_given_up
        Listings that gave up, for ``listing_limit`` columns or for time (``listing_share``).
    listings_slow
        Of those, the ones that gave up for time (:attr:`GenerationState.slow`).
    listings_completed
        Listings that proved that no column below the gap is missing.
    listed
        Columns the listings added (:attr:`GenerationState.listed`).
    columns_added
        Columns the pricing rounds and steps added to the table (the listings' apart).
    tailed_off
        Times the pricing ended for branching because the master tailed off
        (:meth:`GenerationState.tails`).
    phase_ones
        Phase-one solves of a node whose LP kept artificial variables.
    phase_one_infeasible
        Of those, the ones that proved that no partition keeps the node's rules.
    phase_one_open
        Of those, the ones the deadline stopped undecided.
    """

    rounds: int = 0
    heuristic_rounds: int = 0
    exact_rounds: int = 0
    exact_by_stall: int = 0
    exact_by_share: int = 0
    exact_by_first: int = 0
    first_exact_round: int | None = None
    rounds_to_level: int = 0
    steps: int = 0
    steps_to_level: int = 0
    steps_cut_short: int = 0
    listings: int = 0
    listings_given_up: int = 0
    listings_slow: int = 0
    listings_completed: int = 0
    listed: int = 0
    columns_added: int = 0
    tailed_off: int = 0
    phase_ones: int = 0
    phase_one_infeasible: int = 0
    phase_one_open: int = 0


class GenerationState:
    """The models, proofs and levels column generation's steps share (module docstring).

    Its parameters are those of :class:`~accelsched.formulations.partition.colgen.ColumnGeneration`,
    which is the one class that builds it.
    """

    def __init__(
        self,
        table: VariantTable,
        incumbent: Assignment | None,
        threads: int,
        rounds: int | None,
        cutoff: float,
        start: InnerPoint | None,
        reach: Sequence[float],
        params: ColumnGenerationParams,
    ) -> None:
        self.params = params
        self.table = table
        self.instance = table.instance
        self.incumbent = incumbent
        self.cutoff = cutoff
        self.reach = tuple(sorted(level for level in reach if level > cutoff))
        self.rounds = params.max_rounds if rounds is None else rounds
        self.master = RestrictedMaster(table, threads)
        self.terms = TrafficTerms.of(self.instance)
        self.cuts = self.master.subset_rows
        """The subset-row cuts (:mod:`~accelsched.formulations.partition.cuts`), shared by the master,
        the pricing MILP and the local search; the duals here are the cover duals followed by
        theirs (:meth:`add_cuts`)."""
        self.pricing = PricingModel(
            self.instance, self.terms, table.metric_weight, threads, self.master.min_size, self.cuts
        )
        self.search = NeighbourSearch(self.instance, table.metric_weight, self.cuts)
        self.bound: float | None = None
        """The best lower bound proven so far (None before one)."""
        self.done = 0
        """Pricing rounds so far."""
        self.listed = 0
        """Columns the listings below the gap added."""
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
        """Whether a listing gave up for time (``listing_share``): no listing is tried before the
        master is optimal then, nor, with fixed capacities, after (branching takes over at once)."""
        self.exact_s: float | None = None
        """Seconds the last exact round took (its pricing MILP and steps; None before the first)."""
        self.settled_s: float | None = None
        """Seconds into :meth:`~.colgen.ColumnGeneration.run` at which its bound first settled the
        root (:meth:`settled`), or None: with a reach, the rest of the root's time is what pricing
        on to the reach cost."""
        self.unrated = False
        """Whether :attr:`inner_bound` is a node's bound rather than the inner point's own
        (:meth:`~.colgen.ColumnGeneration.solve_node`)."""
        self.priced_to: float | None = None
        """The level the last pricing round of the root priced to (:meth:`reach_level` at its LP
        value; None before the first round, and in the tree's nodes, which price to their prune level)."""
        self.run_start: float | None = None
        """The :func:`time.perf_counter` value at which the running :meth:`~.colgen.ColumnGeneration.run`
        began (None outside it)."""
        self.counts: Counter[str] = Counter()
        """The counts of :attr:`stats`, by field name."""
        self.first_exact_round: int | None = None
        """The round of the first exact pricing (:attr:`ColumnGenerationStats.first_exact_round`)."""
        self._start_inside(start)

    # ------------------------------------------------------------------ statistics
    @property
    def stats(self) -> ColumnGenerationStats:
        """A snapshot of what the object has done so far (:class:`ColumnGenerationStats`)."""
        return ColumnGenerationStats(
            **self.counts, rounds=self.done, listed=self.listed, first_exact_round=self.first_exact_round
        )

    def count(self, name: str, n: int = 1) -> None:
        """Add ``n`` to the count ``name`` of :attr:`stats` (a field of :class:`ColumnGenerationStats`)."""
        if name not in _COUNTED:
            raise KeyError(f"no count {name!r} in ColumnGenerationStats")
        self.counts[name] += n

    # ------------------------------------------------------------------ the inner point and the bound
    def _start_inside(self, start: InnerPoint | None) -> None:
        """With fixed capacities, the forced traffic's duals
        (:func:`~accelsched.formulations.partition.bound.forced_duals`) are the first inner point:
        every reduced cost is non-negative there, so they prove their sum before any pricing, and
        the segment steps climb from it; ``start`` replaces them when its bound is higher."""
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

    def prove(self, lp: MasterLp, bound: float, duals: Sequence[float], mu: float) -> None:
        """Keep the best lower bound proven so far, and the best inner point.

        ``bound`` is proven at ``duals`` (the cover rows', then the cuts') by the pricing MILP's
        bound ``mu`` there on the reduced cost of every column missing from ``lp``'s master. With
        ``mu`` at least the pricing's tolerance below 0, the duals are an inner point of that bound;
        with ``mu`` lower they are none, but :meth:`lifted` makes one of them. Either becomes the
        inner point when its bound is above the inner point's."""
        self.bound = bound if self.bound is None else max(self.bound, bound)
        if self.settled_s is None and self.run_start is not None and self.settled():
            self.settled_s = time.perf_counter() - self.run_start
        if mu >= -self.tolerance(lp):
            point, value = tuple(float(v) for v in duals), bound
        else:
            point, value = self.lifted(lp, duals, mu)
        if self.inner_bound is None or value > self.inner_bound:
            self.inner, self.inner_bound = point, value

    def lifted(self, lp: MasterLp, duals: Sequence[float], mu: float) -> tuple[tuple[float, ...], float]:
        r"""An inner point from duals at which the pricing proved only :math:`\mu < 0`, and its bound.

        Every cover dual moves by :math:`\mu / s` (down; :math:`s`: the fewest layers of a column
        missing from the master, :attr:`MasterLp.min_size`); the cuts' stay. A missing set
        :math:`S`, with :math:`d_S \ge \mu` at ``duals`` and :math:`|S| \ge s`, then has
        :math:`d_S \ge \mu - \mu |S| / s \ge 0`, so the point proves its bound at
        :math:`\mu = 0` (:meth:`MasterLp.at`, which also charges the master's variants their
        reduced costs there): about :math:`n \mu / s` below the bound of ``duals``, the corner of
        LB with every layer in a missing column (module docstring of
        :mod:`~accelsched.formulations.partition.master`). A Dinkelbach step stopped at its first
        sets, or one that proves only the level's cutoff (:meth:`pricing_cutoff`), thus still moves the
        inner point, which the segment steps of later rounds start from."""
        shift, n = mu / lp.min_size, self.instance.n_layers
        point = tuple(float(v) + shift if i < n else float(v) for i, v in enumerate(duals))
        return point, lp.at(point).bound(0.0)

    def reduced_cost(self, members: Sequence[int], duals: Sequence[float]) -> float:
        """The reduced cost of a multi-layer set in its resident mode (cover duals, then the cuts')."""
        return self.terms.reduced_cost(self.instance, members, duals, self.table.metric_weight, self.cuts)

    def tolerance(self, lp: MasterLp) -> float:
        """The pricing's tolerance at ``lp``'s value (``params.pricing_eps`` relative)."""
        return self.params.tolerance(lp.value)

    def pricing_cutoff(
        self, lp: MasterLp, level: float | None, ceiling: float | None = None, per_layer: float = 0.0
    ) -> float:
        """The reduced cost below which the pricing looks for columns at ``lp``: ``ceiling`` (the
        pricing's tolerance when None; a Dinkelbach step's is 0), or, when LB can pass ``level``
        (the prune level of a node, or of the root's incumbent or cutoff) before the master is
        optimal, the lower :meth:`~accelsched.formulations.partition.master.MasterLp.beta_above`
        (with the charge ``per_layer`` of a step on the charge): a pricing that meets no set below
        it proves LB above ``level``, and the columns between it and the ceiling could not take the
        LP under ``level`` (:mod:`~.colgen`, *Pricing to the level*). Each lowered cutoff is counted
        (:attr:`ColumnGenerationStats.rounds_to_level`, :attr:`ColumnGenerationStats.steps_to_level`)."""
        top = -self.tolerance(lp) if ceiling is None else ceiling
        if level is None or not math.isfinite(level):
            return top
        needed = lp.beta_above(level, per_layer)
        if needed is None or needed >= top:
            return top
        self.count("rounds_to_level" if ceiling is None else "steps_to_level")
        return needed

    # ------------------------------------------------------------------ new columns
    def candidates(self, sets: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
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

    def add(self, sets: Sequence[Sequence[int]]) -> int:
        """Add the connected sets that are new columns (fitting, keeping the node's branching rules)
        to the table and cut the others from the pricing MILP (a master column met again, with the
        interior point's inexact duals, is cut too: the bound covers it through the master's
        reduced costs); how many were added."""
        return sum(self.admit(members) for members in sets if len(members) > 1 and self.master.admits(members))

    def admit(self, members: Sequence[int], known: set[int] | None = None) -> bool:
        """Add a connected set to the table when it is a new column; cut it from the pricing MILP
        when it does not fit or is a column of the master whose bound is being proven (``known``:
        their masks; None: every column of the table). Whether it was added."""
        listed = self.table.has(members)
        in_master = listed if known is None else mask_of(members) in known
        if in_master or not self.fits(members):
            self.pricing.exclude(members)
            return False
        added = not listed and bool(self.table.add(members))
        if added:
            self.count("columns_added")
        return added

    def fits(self, members: Sequence[int]) -> bool:
        """Whether the set's resident footprint fits the largest capacities."""
        return self.instance.fits_largest(self.instance.cost_model.subgraph(members))

    # ------------------------------------------------------------------ time
    @staticmethod
    def expired(deadline: float | None) -> bool:
        """Whether the :func:`time.perf_counter` value ``deadline`` has passed (never when None)."""
        return deadline is not None and time.perf_counter() > deadline

    @staticmethod
    def left(deadline: float | None) -> float | None:
        """Seconds until ``deadline`` (None when None)."""
        return None if deadline is None else deadline - time.perf_counter()

    # ------------------------------------------------------------------ levels
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
        (:meth:`~.colgen_params.ColumnGenerationParams.proof_tolerance`; inf without an incumbent
        or a cutoff)."""
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
        return upper - self.params.proof_tolerance(self.instance.n_layers, upper)

    def settled(self) -> bool:
        """Whether the bound proven is above :meth:`prune_level`: no partition beats :math:`U`, so the
        incumbent is optimal (it is in the table) or none lies below the cutoff, and the work is done."""
        return self.bound is not None and self.bound > self.prune_level()

    def reached(self, value: float = math.inf) -> bool:
        """Whether the bound proven is above :meth:`reach_level` at the LP value ``value`` (then
        :meth:`settled` too)."""
        return self.bound is not None and self.bound > self.reach_level(value)

    def tails(self, lp: MasterLp, prune_above: float | None = None) -> bool:
        """Tailing-off control (early branching, Vanderbeck 2005): whether a master that is not
        optimal yet should stop pricing and branch.

        With fixed capacities only, in a node (``prune_above`` given) or at the root once a
        listing gave up for time (:attr:`slow`; the level is then :meth:`prune_level`): when the
        LP value is at most the level, so that its optimum is too and converging could not
        prune the node (it would be branched anyway), and within ``params.tailing_gap`` of the
        bound proven, from which the children start. Branching is valid at any LP; only the
        choice of the pair follows a master that is not optimal. The exact pricing can go on
        finding columns just below its cutoff long after the bound has stopped rising."""
        if self.instance.co_exploration or self.bound is None:
            return False
        if prune_above is None:
            if not self.slow or self.incumbent is None:
                return False
            prune_above = self.prune_level()
        return lp.value <= prune_above and lp.value - self.bound <= self.params.tailing_gap * max(1.0, abs(lp.value))

    # ------------------------------------------------------------------ outcomes
    def finished(self) -> Outcome:
        """The outcome of completed work."""
        return Outcome(True, self.bound, self.incumbent, self.done, self.listed)

    def stop(self, reason: str) -> Outcome:
        """The outcome of work stopped short of the proof, for ``reason``."""
        return Outcome(False, self.bound, self.incumbent, self.done, self.listed, reason)


_COUNTED = frozenset(ColumnGenerationStats.__dataclass_fields__) - {"rounds", "listed", "first_exact_round"}
