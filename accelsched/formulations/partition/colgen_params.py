r"""The parameters that steer column generation (:class:`~.colgen.ColumnGeneration`), and the proof's tolerance.

Every limit, share and tolerance of the pricing rounds, the Dinkelbach steps, the listing of the
columns below the gap and phase one is a field of one frozen :class:`ColumnGenerationParams`, which
the method's options pass down (the defaults are the methods'); a test builds the parameters it needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ColumnGenerationParams"]


@dataclass(frozen=True)
class ColumnGenerationParams:
    r"""Limits, shares and tolerances of column generation.

    Parameters
    ----------
    max_rounds
        Default largest number of pricing rounds (``rounds`` of :class:`~.colgen.ColumnGeneration`
        overrides it).
    stall_rounds
        Rounds without a decrease of the master's LP value after which the exact pricing runs.
    exact_share_ratio
        The exact pricing also runs once the heuristic pricing since the last exact round has taken
        this many times as long as that round (and at least ``exact_share_floor_s``): the exact rounds,
        the only ones that prove a bound, keep about a third of the pricing time however long the
        heuristics go on finding sets.
    exact_share_floor_s
        Fewest seconds of heuristic pricing after which ``exact_share_ratio`` can call the exact
        pricing (on small graphs a round takes milliseconds, and the rule would only make the runs
        depend on timing).
    exact_first_s
        Seconds of heuristic pricing after which the first exact round runs although the heuristics
        go on finding sets (before it, ``exact_share_ratio`` has no exact round to measure). Without it
        the first bound waits for the heuristics to run dry.
    spread_steps
        Most Dinkelbach steps on the charge per layer of the bound (or on the in-out segment) after
        one exact pricing.
    step_sets
        Improving sets after which a Dinkelbach step stops (its dual bound still holds): only the
        last step, which meets none below the cutoff, must prove its minimum.
    close_gap
        Relative gap between the LP value and the inner point's bound below which the columns below
        the gap are listed before the master is optimal (``listing_limit`` at most). ``inf`` lists at
        every new bound of the inner point, ``-inf`` only at convergence.
    listing_limit
        Most columns a listing adds before it gives up: column generation goes on before the master
        is optimal, branching after.
    listing_share
        Share of the time left to it that the listing after the master is optimal takes before it
        gives up (branching then closes the gap).
    tailing_gap
        Relative gap between the LP value and the bound proven below which a master that cannot be
        pruned stops pricing and branches (tailing-off control: :meth:`~.colgen.ColumnGeneration.tails`);
        ``close_gap``'s by default, so that at the root a listing that gives up for time hands over
        to the tree at once.
    tighten_min_s
        Fewest seconds the integer program gets when it runs again during a listing.
    listing_integer_s
        Most seconds the integer program at the start of a listing gets (None: until the
        listing's deadline; 0 returns its start, which leaves the gap to follow the incumbent as
        the listing adds columns).
    penalty_growth
        Factor on the artificial variables' cost when a node's LP keeps one though phase one found
        the node feasible.
    covered
        Artificial variables summing to at most this count as 0 (phase one's tolerance, in layers).
    pricing_eps
        Relative tolerance :math:`\epsilon` of the pricing: a column is new when its reduced cost is
        below :math:`-\epsilon |v|` at the LP value :math:`v` (:meth:`proof_tolerance`).

    Raises
    ------
    ValueError
        When a field is out of its range; the message names the field and the value.
    """

    max_rounds: int = 100_000
    stall_rounds: int = 10
    exact_share_ratio: float = 2.0
    exact_share_floor_s: float = 10.0
    exact_first_s: float = 60.0
    spread_steps: int = 5
    step_sets: int = 5
    close_gap: float = 1e-3
    listing_limit: int = 2_000
    listing_share: float = 0.1
    tailing_gap: float = 1e-3
    tighten_min_s: float = 0.5
    listing_integer_s: float | None = None
    penalty_growth: float = 10.0
    covered: float = 1e-6
    pricing_eps: float = 1e-7

    def __post_init__(self) -> None:
        for name in ("max_rounds", "stall_rounds", "listing_limit"):
            _check(name, getattr(self, name), isinstance(getattr(self, name), int) and getattr(self, name) >= 0)
        for name in ("spread_steps", "step_sets"):
            _check(name, getattr(self, name), isinstance(getattr(self, name), int) and getattr(self, name) >= 1)
        for name in ("exact_share_ratio", "exact_share_floor_s", "exact_first_s", "tailing_gap", "tighten_min_s"):
            _check(name, getattr(self, name), getattr(self, name) >= 0.0)
        _check(
            "listing_integer_s", self.listing_integer_s, self.listing_integer_s is None or self.listing_integer_s >= 0
        )
        _check("close_gap", self.close_gap, not math.isnan(self.close_gap))
        _check("listing_share", self.listing_share, 0.0 <= self.listing_share <= 1.0)
        _check("penalty_growth", self.penalty_growth, self.penalty_growth > 1.0 and math.isfinite(self.penalty_growth))
        for name in ("covered", "pricing_eps"):
            _check(name, getattr(self, name), 0.0 < getattr(self, name) < 1.0)

    def tolerance(self, value: float) -> float:
        r"""The pricing's tolerance :math:`\epsilon \max(1, |v|)` at the LP value ``value`` :math:`v`."""
        return self.pricing_eps * max(1.0, abs(value))

    def proof_tolerance(self, n_layers: int, value: float) -> float:
        r"""The precision of every proof whose objectives are not whole numbers (energy): the pricing's
        tolerance on each of up to ``n_layers`` subgraphs, :math:`n \epsilon \max(1, |v|)` at the
        objective ``value`` :math:`v`.

        A master called optimal when the pricing finds no column below :math:`-\epsilon |v|` has an LP
        value within this of the LP optimum over every column (a partition has at most :math:`n`
        subgraphs), so it is what a converged column generation proves. The branch-and-price prunes a
        node whose bound is within it of :math:`U` (:meth:`~.colgen.ColumnGeneration.prune_level`) and
        settles one whose partition is; the capacity decomposition settles a pair whose floor is
        (:mod:`~accelsched.formulations.partition.capacity`). A proven optimum :math:`U` is therefore
        optimal up to this: no partition is below :math:`U` by more. With 250 layers and the default
        :math:`\epsilon = 10^{-7}` it is :math:`2.5 \times 10^{-5}` of :math:`U`."""
        return n_layers * self.tolerance(value)


def _check(name: str, value: object, valid: bool) -> None:
    if not valid:
        raise ValueError(f"ColumnGenerationParams.{name} is out of range: {value!r}")
