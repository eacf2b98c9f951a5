r"""The exact pricing of a round and the Dinkelbach steps that prove bounds after it.

The full pricing MILP at the master's duals proves :math:`\beta` (:meth:`ExactPricing.price`).
When it proves :math:`\beta` below the cutoff, Dinkelbach's steps look for better duals: on the
charge :math:`\rho` per layer of the bound (:meth:`ExactPricing.spread`), and, when the charge
did not beat the inner point, on the segment of the in-out separation from the inner point to
the master's duals (:meth:`ExactPricing.segment`; the mathematics are in :mod:`~.colgen`). Every
bound a solve proves goes to :meth:`GenerationState.prove
<accelsched.formulations.partition.colgen_core.GenerationState.prove>`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from accelsched.formulations.partition.colgen_core import GenerationState
from accelsched.formulations.partition.master import MasterLp

__all__ = ["ExactPricing", "ExactRound"]


@dataclass(frozen=True)
class ExactRound:
    """What the Dinkelbach steps after an exact pricing start from.

    Attributes
    ----------
    lp
        The round's master LP.
    sets
        The connected sets of the exact pricing's last solve.
    known
        The masks of the table's columns when the round began (the master whose bound is proven).
    deadline
        A :func:`time.perf_counter` value after which no step starts (None: no limit).
    level
        The level a step's bound must pass for the work to end (None: none), which lowers its cutoff.
    """

    lp: MasterLp
    sets: Sequence[Sequence[int]]
    known: set[int]
    deadline: float | None
    level: float | None


class ExactPricing:
    """The full pricing MILP of an exact round and the Dinkelbach steps after it.

    Parameters
    ----------
    state
        The column generation whose master is priced and whose bound and inner point the solves
        prove (:class:`~accelsched.formulations.partition.colgen_core.GenerationState`).
    """

    def __init__(self, state: GenerationState) -> None:
        self.state = state

    def price(
        self, lp: MasterLp, cutoff: float, deadline: float | None
    ) -> tuple[float | None, list[tuple[int, ...]], int]:
        """The full pricing MILP until it adds a column or finds no set.

        Returns the proven beta (None when no solve finished with a bound), the connected sets
        of the last solve (:meth:`GenerationState.candidates
        <accelsched.formulations.partition.colgen_core.GenerationState.candidates>`) and the number
        of columns added. A solve stopped at its first improving sets still proves its dual bound:
        beta is returned with the columns it added, and the round's bound uses it."""
        state = self.state
        while not state.expired(deadline):
            answer = state.pricing.solve(lp.duals, cutoff, time_limit=state.left(deadline), max_sets=5)
            sets = state.candidates(answer.sets)
            added = state.add(sets)
            if added or not answer.sets:
                return (answer.bound if math.isfinite(answer.bound) else None), sets, added
        return None, [], 0

    def spread(self, after: ExactRound) -> int:
        r"""Dinkelbach's steps on the charge per layer of the bound (:mod:`~.colgen`); columns added.

        Each step solves the full pricing MILP at the duals plus the charge :math:`\rho`, the
        least ratio :math:`d_S / |S|` of the sets met so far, and proves ``lp.bound(mu, rho)``
        (:meth:`steps`); its cutoff is 0, or the lower one at which that bound passes the level
        (:meth:`~accelsched.formulations.partition.colgen_core.GenerationState.pricing_cutoff`)."""
        state, lp = self.state, after.lp

        def ratio(members: Sequence[int]) -> float:
            return state.reduced_cost(members, lp.duals) / len(members)

        def charged(rho: float) -> list[float]:  # on the cover duals only: the cuts' rows are not layers
            n = state.instance.n_layers
            return [p + rho for p in lp.duals[:n]] + list(lp.duals[n:])

        first = min((ratio(members) for members in after.sets), default=0.0)
        return self.steps(
            after,
            first,
            0.0,
            charged,
            lambda _, mu, rho: lp.bound(mu, rho),
            lambda _, rho: state.pricing_cutoff(lp, after.level, 0.0, rho),
            ratio,
        )

    def segment(self, after: ExactRound) -> int:
        r"""Dinkelbach's steps on the segment from the inner point to the LP's duals; columns added.

        In-out separation (:mod:`~.colgen`): the points :math:`\pi(t) = \pi^{in} + t
        (\pi^{out} - \pi^{in})` for :math:`t \in [0, 1]`, where :math:`\pi^{in}` is the inner
        point and :math:`\pi^{out}` are the master's duals. A set :math:`S` keeps
        :math:`d_S(\pi(t)) \ge 0` up to :math:`t_S = d_S(\pi^{in}) / \Delta(S)`,
        :math:`\Delta = \pi^{out} - \pi^{in}`; each step solves the full pricing MILP at the least
        :math:`t_S` of the sets met so far and proves ``lp.at(pi(t)).bound(mu)`` (:meth:`steps`);
        its cutoff is 0, or the lower one at which that bound passes the level."""
        state, lp = self.state, after.lp
        start = state.inner  # fixed for the segment: a step that proves more moves the inner point
        assert start is not None
        inner = np.asarray(start, dtype=np.float64)
        delta = np.asarray(lp.duals, dtype=np.float64) - inner
        n = state.instance.n_layers

        def ratio(members: Sequence[int]) -> float:
            rows = [*members, *(n + s for s in state.cuts.hits(members))]
            rise = float(delta[rows].sum())
            return max(0.0, state.reduced_cost(members, start)) / rise if rise > 0.0 else 1.0

        def point(t: float) -> list[float]:
            return (inner + t * delta).tolist()

        first = min((ratio(members) for members in after.sets), default=1.0)
        return self.steps(
            after,
            first,
            1.0,
            point,
            lambda duals, mu, _: lp.at(duals).bound(mu),
            lambda duals, _: state.pricing_cutoff(lp.at(duals), after.level, 0.0),
            ratio,
        )

    def steps(
        self,
        after: ExactRound,
        step: float,
        end: float,
        duals_at: Callable[[float], list[float]],
        bound_at: Callable[[list[float], float, float], float],
        cutoff_at: Callable[[list[float], float], float],
        ratio: Callable[[Sequence[int]], float],
    ) -> int:
        r"""Dinkelbach's steps on a parameter of the duals, shared by :meth:`spread` and :meth:`segment`.

        From ``step`` while it is below ``end``: solve the full pricing MILP at
        ``duals_at(step)`` with the cutoff ``cutoff_at(duals, step)`` (0, or lower when a bound
        at that cutoff passes the level), prove ``bound_at(duals, mu, step)`` with its dual bound
        :math:`\mu`, and move to the least ``ratio`` of the sets met. A solve stops after
        ``params.step_sets`` improving sets: any set of negative reduced cost has a smaller ratio
        than the step, so Dinkelbach's iteration goes on from it, and only the last step, which
        meets no set below 0, must prove its minimum. The sets enter the table when they are
        columns; one not in this round's master (``after.known``: its masks) is never cut from the
        pricing MILP, whose bound must still cover it. The steps stop when the MILP proves
        :math:`\mu` at least the cutoff or meets no set of a smaller ratio, when time runs out, or
        after ``params.spread_steps``. A step gives the MILP no start: the next step is the least
        ratio of the sets met, so each of them costs at least 0 there, no better than the cutoff
        HiGHS already prunes at. Returns the columns added."""
        state, params = self.state, self.state.params
        lp, known, deadline = after.lp, after.known, after.deadline
        added = 0
        for _ in range(params.spread_steps):
            if step >= end or state.expired(deadline):
                break
            duals = duals_at(step)
            cutoff = cutoff_at(duals, step)
            answer = state.pricing.solve(duals, cutoff, time_limit=state.left(deadline), max_sets=params.step_sets)
            state.count("steps")
            if answer.sets and not answer.complete:
                state.count("steps_cut_short")
            if math.isfinite(answer.bound):
                state.prove(lp, bound_at(duals, answer.bound, step), duals, answer.bound)
            ratios = []
            for members in state.candidates(answer.sets):
                ratios.append(ratio(members))
                added += state.admit(members, known)
            if answer.bound >= cutoff or not ratios or min(ratios) >= step:
                break
            step = min(ratios)
        return added
