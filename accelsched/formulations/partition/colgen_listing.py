r"""The listing of every column below the gap, which completes column generation's proof.

With :math:`U` the objective of a valid partition and LB a bound proven at duals :math:`\pi`,
the master's columns, the columns of :math:`U`'s partition and every column of reduced cost at
most :math:`\theta = U - LB` hold an optimal partition (:mod:`~.colgen`, "Closing the gap").
:class:`GapListing` finds :math:`U` by the restricted integer program, then lists the columns
below :math:`\theta` at the inner point with the pricing MILP, each set it returns excluded and
the MILP solved again, until it proves that none is left.
"""

from __future__ import annotations

import time

from accelsched.formulations.partition.colgen_core import LISTING_LOGGER, GenerationState, Outcome
from accelsched.formulations.partition.master import MasterLp

__all__ = ["GapListing"]


class GapListing:
    """The listing of the columns below the gap, and when to try it.

    Parameters
    ----------
    state
        The column generation whose table the listing completes
        (:class:`~accelsched.formulations.partition.colgen_core.GenerationState`; its
        :attr:`~.colgen_core.GenerationState.theta`, :attr:`~.colgen_core.GenerationState.duals`,
        :attr:`~.colgen_core.GenerationState.listed`, :attr:`~.colgen_core.GenerationState.tried`
        and :attr:`~.colgen_core.GenerationState.slow` are the listing's).
    """

    def __init__(self, state: GenerationState) -> None:
        self.state = state

    def close(self, deadline: float | None, limit: int | None = None, give_up: float | None = None) -> Outcome | None:
        r"""The incumbent from the integer program, then every column below the gap at the inner
        point, until ``deadline`` (the listing deadline of :meth:`~.colgen.ColumnGeneration.run`).

        The gap follows the incumbent: when the listing has added columns and has run at
        least as long as the first integer program took since that program last ran, the
        program runs again over the table (from the incumbent, for at most that long, and at
        least ``params.tighten_min_s``), and a better partition lowers :math:`\theta` for the
        solves that follow. Every column of reduced cost at most the final :math:`\theta` is then
        in the table, which is what exactness needs, and the columns listed at a larger
        :math:`\theta` stay in it, harmless. The first integer program runs until ``deadline``, or
        for at most ``params.listing_integer_s``.

        With a ``limit``, the listing gives up once it has added that many columns (with 0,
        before its first solve), and with ``give_up`` (a :func:`time.perf_counter` value) once
        that time has passed; it then returns None. Before the master is optimal, column
        generation goes on with the columns listed in the master; after, branching may take over
        (:meth:`~.colgen.ColumnGeneration.run`). Each listing is counted in
        :attr:`~.colgen_core.GenerationState.stats` as it starts (before its integer program), and
        how it ends when it gives up or completes; the start of its listing proper is logged at DEBUG
        (:data:`~.colgen_core.LISTING_LOGGER`)."""
        state, params = self.state, self.state.params
        assert state.inner is not None and state.inner_bound is not None
        state.count("listings")
        begun = time.perf_counter()
        until = deadline
        if params.listing_integer_s is not None:
            until = (
                begun + params.listing_integer_s
                if deadline is None
                else min(deadline, begun + params.listing_integer_s)
            )
        state.incumbent = state.master.solve_integer(state.incumbent, until)
        if state.incumbent is None:
            return state.stop("time limit reached before a partition was found")
        integer_s = time.perf_counter() - begun
        state.duals = state.inner
        state.theta = theta = self.gap()
        LISTING_LOGGER.debug("listing the columns below the gap of %.6g (%d columns)", theta, len(state.table.columns))
        for column in state.table.columns:
            if len(column.members) > 1 and state.reduced_cost(column.members, state.duals) <= theta:
                state.pricing.exclude(column.members)
        listed, since = state.listed, time.perf_counter()
        if limit == 0:
            state.count("listings_given_up")
            return None
        while not state.expired(deadline):
            answer = state.pricing.solve(state.duals, theta, time_limit=state.left(deadline), max_sets=10)
            added = 0
            for members in state.candidates(answer.sets):
                state.pricing.exclude(members)
                if not state.table.has(members) and state.fits(members):
                    added += bool(state.table.add(members))
            state.listed += added
            if answer.complete and not answer.sets:
                state.count("listings_completed")
                return state.finished()
            if limit is not None and state.listed - listed >= limit:
                state.count("listings_given_up")
                return None
            if give_up is not None and time.perf_counter() > give_up:
                state.slow = True
                state.count("listings_given_up")
                state.count("listings_slow")
                return None
            if added and time.perf_counter() - since >= integer_s:
                state.theta = theta = self.tighten(integer_s, deadline)
                since = time.perf_counter()
        return state.stop(
            f"time limit reached while listing the columns below the gap of {theta:.6g} "
            f"({state.listed} listed, {len(state.table.columns)} columns)"
        )

    def give_up(self, deadline: float | None) -> float | None:
        """When a listing starting now gives up: after ``params.listing_share`` of the time left."""
        now = time.perf_counter()
        return None if deadline is None else now + self.state.params.listing_share * (deadline - now)

    def gap(self) -> float:
        r""":math:`\theta = U - LB` at the incumbent and the inner point's bound (with the pricing's tolerance)."""
        state = self.state
        assert state.incumbent is not None and state.inner_bound is not None
        upper = state.upper
        return upper - state.inner_bound + state.params.tolerance(upper)

    def tighten(self, seconds: float, deadline: float | None) -> float:
        """Run the integer program over the table again, for at most ``seconds`` (at least
        ``params.tighten_min_s``, and not past the deadline), from the incumbent; the gap at the
        incumbent it returns (never larger: the program starts from the incumbent)."""
        state = self.state
        until = time.perf_counter() + max(seconds, state.params.tighten_min_s)
        state.incumbent = state.master.solve_integer(
            state.incumbent, until if deadline is None else min(until, deadline)
        )
        return self.gap()

    def near(self, lp: MasterLp) -> bool:
        """Whether the inner point's bound has risen to within ``params.close_gap`` of the LP value
        since the last listing tried before the master is optimal."""
        state = self.state
        if state.inner_bound is None or state.inner_bound == state.tried:
            return False
        near = lp.value - state.inner_bound <= state.params.close_gap * max(1.0, abs(lp.value))
        if near:
            state.tried = state.inner_bound
        return near
