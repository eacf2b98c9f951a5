"""A generic simulated-annealing loop, written once for every problem.

The caller supplies the state, a cost function, a neighbour function (one random
move, or None when the drawn move does not apply), a temperature schedule and a
stopping criterion. A worse neighbour is accepted with the probability given by
the acceptance rule, by default ``exp(-(dC / C) / T)`` (the relative rule of SET),
so that temperatures do not depend on the magnitude of the cost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np

from accelsched.heuristics.checks import require_int, require_positive
from accelsched.heuristics.stopping import StoppingCriterion

__all__ = [
    "AnnealOutcome",
    "GeometricSchedule",
    "HyperbolicSchedule",
    "Schedule",
    "anneal",
    "relative_acceptance",
]

S = TypeVar("S")


class Schedule(Protocol):
    """``schedule(iteration) -> temperature`` (>= 0) for iterations 0, 1, 2, ..."""

    def __call__(self, iteration: int) -> float:
        """The temperature of ``iteration``."""
        ...


@dataclass(frozen=True)
class GeometricSchedule:
    """``T_n = t0 * rate ** n``.

    Parameters
    ----------
    t0
        Initial temperature, > 0.
    rate
        Cooling factor per iteration, in (0, 1].
    """

    t0: float
    rate: float

    def __post_init__(self) -> None:
        require_positive("GeometricSchedule", "t0", self.t0)
        require_positive("GeometricSchedule", "rate", self.rate)
        if self.rate > 1:
            raise ValueError(f"GeometricSchedule: field rate must be in (0, 1], got {self.rate!r}")

    def __call__(self, iteration: int) -> float:
        """The temperature of ``iteration``."""
        return self.t0 * self.rate**iteration


@dataclass(frozen=True)
class HyperbolicSchedule:
    """``T_n = t0 * (1 - n / N) / (1 + alpha * n / N)`` for ``n < N``, 0 afterwards (SET's schedule).

    Parameters
    ----------
    t0
        Initial temperature, > 0.
    alpha
        Curvature, >= 0 (0 gives a linear decrease).
    horizon
        ``N``: the iteration at which the temperature reaches 0, >= 1.
    """

    t0: float
    alpha: float
    horizon: int

    def __post_init__(self) -> None:
        require_positive("HyperbolicSchedule", "t0", self.t0)
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, int | float) or not self.alpha >= 0:
            raise ValueError(f"HyperbolicSchedule: field alpha must be a number >= 0, got {self.alpha!r}")
        require_int("HyperbolicSchedule", "horizon", self.horizon, 1)

    def __call__(self, iteration: int) -> float:
        """The temperature of ``iteration``."""
        x = iteration / self.horizon
        return self.t0 * (1 - x) / (1 + self.alpha * x) if x < 1 else 0.0


def relative_acceptance(delta: float, current: float, temperature: float) -> float:
    """Probability ``exp(-(delta / |current|) / temperature)`` of accepting a worse move.

    Parameters
    ----------
    delta
        Cost increase of the move, > 0 (improving moves are always accepted).
    current
        Cost of the current state (its magnitude scales ``delta``; floored at 1e-12).
    temperature
        Current temperature; 0 accepts no worse move.
    """
    if temperature <= 0:
        return 0.0
    return math.exp(-(delta / max(abs(current), 1e-12)) / temperature)


@dataclass(frozen=True)
class AnnealOutcome(Generic[S]):
    """What one annealing run found.

    Attributes
    ----------
    best
        The best state visited.
    best_cost
        Its cost.
    iterations
        Moves drawn (including those that did not apply).
    accepted
        Moves accepted (improving or not).
    trace
        ``(time_s, cost)`` of the initial state and of every new best, in time order.
    """

    best: S
    best_cost: float
    iterations: int
    accepted: int
    trace: tuple[tuple[float, float], ...]


def anneal(
    initial: S,
    cost: Callable[[S], float],
    neighbour: Callable[[S, np.random.Generator], S | None],
    schedule: Schedule,
    stop: StoppingCriterion,
    rng: np.random.Generator,
    *,
    acceptance: Callable[[float, float, float], float] = relative_acceptance,
    clock: Callable[[], float] = time.perf_counter,
    start_time: float | None = None,
) -> AnnealOutcome[S]:
    """Run simulated annealing from ``initial`` until ``stop`` holds.

    Parameters
    ----------
    initial
        Start state.
    cost
        Cost of a state (minimized; ``inf`` marks a state never to be accepted).
    neighbour
        One random move from a state, or None when the drawn move does not apply.
    schedule
        Temperature per iteration.
    stop
        Called with the best cost before every iteration.
    rng
        The only source of randomness (seeded by the caller).
    acceptance
        ``acceptance(delta, current_cost, temperature)``: probability of accepting a
        move that raises the cost by ``delta > 0``.
    clock, start_time
        Time source and the time the trace counts from (default: the call).

    Returns
    -------
    AnnealOutcome
        The best state, its cost, counters and the convergence trace.
    """
    start = clock() if start_time is None else start_time
    current, current_cost = initial, cost(initial)
    best, best_cost = current, current_cost
    trace = [(max(0.0, clock() - start), best_cost)] if math.isfinite(best_cost) else []
    iterations = accepted = 0
    while not stop(best_cost):
        temperature = schedule(iterations)
        iterations += 1
        candidate = neighbour(current, rng)
        if candidate is None:
            continue
        candidate_cost = cost(candidate)
        if not math.isfinite(candidate_cost):
            continue
        delta = candidate_cost - current_cost
        if delta <= 0 or not math.isfinite(current_cost) or rng.random() < acceptance(delta, current_cost, temperature):
            current, current_cost = candidate, candidate_cost
            accepted += 1
            if current_cost < best_cost:
                best, best_cost = current, current_cost
                trace.append((max(trace[-1][0] if trace else 0.0, clock() - start), best_cost))
    return AnnealOutcome(best, best_cost, iterations, accepted, tuple(trace))
