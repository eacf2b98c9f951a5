r"""The pricing rounds of column generation: the heuristic pricing first, the exact pricing when it is due.

Each round solves the master LP, then prices: by the neighbour search
(:class:`~accelsched.formulations.partition.pricing.NeighbourSearch`) from the master's support
and newest columns; when it finds nothing, by the pricing MILP on windows of the graph (two
consecutive pieces between its articulation layers, :func:`windows`); when that finds nothing,
or after ``stall_rounds`` rounds without a decrease of the LP value, or once the heuristics
have had their share of the time (``exact_share_ratio``, ``exact_share_floor_s``,
``exact_first_s``), by the full pricing MILP and the Dinkelbach steps
(:class:`~.colgen_steps.ExactPricing`), the only step that proves a bound.
"""

from __future__ import annotations

import math
import time

import networkx as nx

from accelsched.formulations.partition.colgen_core import LOGGER, GenerationState, Outcome
from accelsched.formulations.partition.colgen_listing import GapListing
from accelsched.formulations.partition.colgen_steps import ExactPricing, ExactRound
from accelsched.formulations.partition.master import MasterLp
from accelsched.problems.partition import PartitionInstance
from accelsched.problems.partition_columns import mask_of

__all__ = ["PricingRounds", "windows"]


class PricingRounds:
    """The pricing rounds of :meth:`~.colgen.ColumnGeneration.run` and :meth:`~.colgen.ColumnGeneration.solve_node`.

    Parameters
    ----------
    state
        The column generation whose master is priced
        (:class:`~accelsched.formulations.partition.colgen_core.GenerationState`).
    exact
        Its exact pricing and Dinkelbach steps.
    listing
        Its listing below the gap, tried before the master is optimal when the bound is near.
    """

    def __init__(self, state: GenerationState, exact: ExactPricing, listing: GapListing) -> None:
        self.state = state
        self.exact = exact
        self.listing = listing
        self.windows = windows(state.instance)

    def generate(
        self,
        deadline: float | None,
        listing_deadline: float | None,
        *,
        early: bool,
        prune_above: float | None = None,
        tailing: bool = False,
    ) -> MasterLp | Outcome:
        """Pricing rounds until the master is optimal, a level is passed or the work stops.

        Returns the last master LP when the exact pricing proved that no column is missing at
        its duals, or when a bound above ``prune_above`` is proven. The interior point method
        without crossover may stop with status unknown and duals short of optimal (whose
        bound, valid, is then below the LP value); when no column prices out at such duals, the
        LP is solved again with crossover and priced once more, so that a master called optimal
        has optimal duals. With ``tailing``, also returns it when the master tails off
        (:meth:`~.colgen_core.GenerationState.tails`) after an exact pricing that added columns.
        Returns an outcome when the work stops, or when a listing before the master is optimal
        (only when ``early``, until ``listing_deadline``) completed the proof, or (only when
        ``early``) the bound reached the reach level."""
        state, params = self.state, self.state.params
        lp = state.master.solve_lp(deadline)
        if state.unrated and state.inner is not None and math.isfinite(lp.value):  # a node's (solve_node)
            state.inner_bound, state.unrated = lp.at(state.inner).bound(0.0), False
            state.bound = state.inner_bound if state.bound is None else max(state.bound, state.inner_bound)
        best_value, stalled, vertex = lp.value, 0, False
        heuristic_s = 0.0  # heuristic pricing since the last exact round
        while True:
            if state.expired(deadline):
                return state.stop("time limit reached during column generation")
            if not math.isfinite(lp.value):
                return state.stop(f"the master LP was not solved ({lp.status})")
            if state.done >= state.rounds:
                return state.stop(f"column generation stopped after {state.rounds} rounds")
            state.done += 1
            level = prune_above if prune_above is not None else state.reach_level(lp.value) if early else None
            if early:
                state.priced_to = level
            cutoff = state.pricing_cutoff(lp, level)
            known = {mask_of(column.members) for column in state.table.columns}
            starts = [state.table.members(j) for j in lp.support] + [c.members for c in state.table.columns[-30:]]
            added = 0
            due = stalled < params.stall_rounds and self.exact_due(heuristic_s)
            if stalled < params.stall_rounds and not due:
                state.count("heuristic_rounds")
                start = time.perf_counter()
                added = state.add(state.search.search(starts, lp.duals, cutoff, known, deadline=deadline))
                for window in self.windows if not added else []:
                    left = state.left(deadline)
                    answer = state.pricing.solve(lp.duals, cutoff, window=window, time_limit=left, max_sets=5)
                    added += state.add(state.candidates(answer.sets))
                heuristic_s += time.perf_counter() - start
            if not added:
                self._count_exact(stalled >= params.stall_rounds, due)
                before_s, stalled, heuristic_s, start = heuristic_s, 0, 0.0, time.perf_counter()
                counted = [(state.pricing.solves, state.pricing.solve_s)]
                beta, sets, added = self.exact.price(lp, cutoff, deadline)
                counted.append((state.pricing.solves, state.pricing.solve_s))
                if beta is not None:
                    state.prove(lp, lp.bound(beta), lp.duals, beta)
                    if beta < cutoff:
                        inner, after = state.inner, ExactRound(lp, sets, known, deadline, level)
                        added += self.exact.spread(after)
                        if inner is not None and state.inner == inner:  # the charge did not beat it
                            added += self.exact.segment(after)
                state.exact_s = time.perf_counter() - start
                self._log_exact(lp, (beta, cutoff), added, (state.exact_s, before_s), level, counted)
                if prune_above is not None and state.bound is not None and state.bound > prune_above:
                    return lp
                if early and state.reached(lp.value):
                    return state.finished()
                if added and early and not state.slow and not state.settled() and self.listing.near(lp):
                    give_up = self.listing.give_up(listing_deadline)
                    closed = self.listing.close(listing_deadline, params.listing_limit, give_up)
                    if closed is not None:
                        return closed
                if added and tailing and state.tails(lp, prune_above):
                    state.count("tailed_off")
                    return lp
                if not added:
                    if beta is None or beta < cutoff:
                        return state.stop("time limit reached during column generation")
                    if lp.status == "Optimal":
                        return lp
                    vertex = True  # an unfinished interior point's duals: price once more at a basis'
            lp = state.master.solve_lp(deadline, vertex=vertex)
            vertex = False
            if lp.value < best_value - state.tolerance(lp):
                best_value, stalled = lp.value, 0
            else:
                stalled += 1

    def exact_due(self, heuristic_s: float) -> bool:
        """Whether the heuristic pricing since the last exact round has had its share of the time
        (``params.exact_share_ratio`` times that round's, at least ``params.exact_share_floor_s``;
        ``params.exact_first_s`` before the first exact round)."""
        state, params = self.state, self.state.params
        if state.exact_s is None:
            return heuristic_s >= params.exact_first_s
        return heuristic_s >= max(params.exact_share_floor_s, params.exact_share_ratio * state.exact_s)

    def _count_exact(self, stalled: bool, due: bool) -> None:
        """Count an exact round in the stats, by what called it."""
        state = self.state
        state.count("exact_rounds")
        if state.first_exact_round is None:
            state.first_exact_round = state.done
        if stalled:
            state.count("exact_by_stall")
        elif due:
            state.count("exact_by_share" if state.exact_s is not None else "exact_by_first")

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
        state = self.state
        (start, start_s), (after, after_s) = counted
        beta, cutoff = proof
        first, first_s = after - start, after_s - start_s
        steps, steps_s = state.pricing.solves - after, state.pricing.solve_s - after_s
        LOGGER.debug(
            "exact pricing, round %d: master LP %.10g (%s, least reduced cost %.4g) over %d columns, bound %.10g "
            "(inner point %s), level %s; "
            "beta %s (cutoff %.4g), %d columns added; %.1f s (pricing MILP %d solves %.1f s, "
            "Dinkelbach steps %d solves %.1f s; heuristic pricing before it %.1f s)",
            state.done,
            lp.value,
            lp.status,
            lp.least,
            len(state.table.columns),
            -math.inf if state.bound is None else state.bound,
            "none" if state.inner_bound is None else f"{state.inner_bound:.10g}",
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


def windows(instance: PartitionInstance) -> list[set[int]]:
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
