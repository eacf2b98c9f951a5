r"""Exact layer-core allocation and CN scheduling on a multi-core with a bus by CP-SAT (method ``cpsat``).

The model and the space it covers are in :mod:`accelsched.formulations.multicore_cpsat_model`
(OPTIMAL and the bound hold over that space).

Objectives
----------
``latency``: the makespan, at or after the end of every present activity; the
objective reported is the last end of the decoded schedule, the evaluator's latency
(output stores included). ``energy``: the model's linear energy, its coefficients
scaled to integers; the objective reported is the float sum of the unrounded
coefficients (verified against the evaluator within 1e-6 relative), the bound CP-SAT's
minus the summed rounding errors, so it stays valid (see the model module). ``edp``: the least energy x
latency over :func:`pareto_front` (an epsilon-constraint sweep): OPTIMAL when the sweep
is complete, FEASIBLE when a limit cuts it. ``memory`` is not supported.

Warm start
----------
A checked :class:`~accelsched.problems.multicore.MulticoreSolution` is given as a hint
(:meth:`~accelsched.formulations.multicore_cpsat_model.MulticoreCpSat.hints`) and
returned instead of a worse or missing result (FEASIBLE, without a bound above it);
without one the model is solved unhinted. The
``cpsat`` method names ``manual`` as its default warm start, so through the registry
it is hinted by Stream's manual allocation, list-scheduled, unless the caller gives
another warm start.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from accelsched.errors import InfeasibleSolution
from accelsched.formulations.multicore_cpsat_model import MulticoreCpSat
from accelsched.problems.base import Hint, MethodSpec
from accelsched.problems.multicore import PROBLEM, MulticoreInstance, MulticoreSolution
from accelsched.problems.result import Result, verify_objective
from accelsched.solvers import SolveOptions, SolveStats, Status, solve_cpsat

__all__ = ["METHODS", "SUPPORTED_OBJECTIVES", "ParetoFront", "ParetoPoint", "pareto_front", "solve_multicore_cpsat"]

SUPPORTED_OBJECTIVES = ("latency", "energy", "edp")
"""Objectives of the instance the ``cpsat`` method optimizes."""


class ParetoPoint(NamedTuple):
    """A point of the latency-energy front and a schedule reaching it."""

    latency_cycles: int
    energy_pj: float
    solution: MulticoreSolution


@dataclass(frozen=True)
class ParetoFront:
    """What :func:`pareto_front` returns: the points by increasing latency (decreasing energy); ``complete`` when
    the sweep ended by infeasibility (the exact front of the model's space); CP-SAT solves run."""

    points: tuple[ParetoPoint, ...]
    complete: bool
    solves: int


def _left(options: SolveOptions, deadline: float | None) -> SolveOptions | None:
    """``options`` with the time left before ``deadline``; None when none is left."""
    if deadline is None:
        return options
    left = deadline - time.perf_counter()
    return None if left <= 0.01 else dataclasses.replace(options, time_limit_s=left)


def pareto_front(
    instance: MulticoreInstance, options: SolveOptions | None = None, warm_start: MulticoreSolution | None = None
) -> ParetoFront:
    """The latency-energy front by an epsilon-constraint sweep over the energy.

    Repeat: minimize the latency under the energy cap (none at first), then the energy at that latency, record
    the point and cap the scaled energy just below it. The sweep is complete when the cap leaves no solution;
    a solve not proven optimal, or the time limit (over the whole sweep), cuts it.

    Parameters
    ----------
    instance
        The instance (its objective is not used).
    options
        Limits, workers, seed.
    warm_start
        Hint of the first solve (none by default); later solves are hinted by the previous point.
    """
    options = options or SolveOptions()
    start = time.perf_counter()
    deadline = None if options.time_limit_s is None else start + options.time_limit_s
    hint = warm_start
    points: list[ParetoPoint] = []
    cap: int | None = None
    complete, solves = False, 0
    while (opts := _left(options, deadline)) is not None:
        fastest = MulticoreCpSat(instance, energy_cap=cap)
        hints = fastest.hints(hint) if hint is not None else {}
        answer = solve_cpsat(fastest.model, opts, hints, fastest.minimize("latency"))
        solves += 1
        complete = answer.status is Status.INFEASIBLE
        if answer.status is not Status.OPTIMAL or (opts := _left(options, deadline)) is None:
            break
        hint = fastest.decode(answer)
        cheapest = MulticoreCpSat(instance, energy_cap=cap, latency_cap=fastest.latency(answer))
        answer = solve_cpsat(cheapest.model, opts, cheapest.hints(hint), cheapest.minimize("energy"))
        solves += 1
        if answer.status is not Status.OPTIMAL:
            break
        hint = cheapest.decode(answer)
        points.append(ParetoPoint(cheapest.latency(answer), cheapest.energy_pj(answer), hint))
        cap = cheapest.scaled_energy(answer) - 1
    return ParetoFront(tuple(points), complete, solves)


def _solve(instance: MulticoreInstance, options: SolveOptions, hint: MulticoreSolution | None) -> tuple[Any, ...]:
    """``(status, solution, objective, bound, stats)`` of one solve (latency, energy) or of the sweep (edp)."""
    if instance.objective == "edp":
        front = pareto_front(instance, options, hint)
        note = f"epsilon-constraint sweep: {len(front.points)} Pareto points in {front.solves} solves, " + (
            "complete" if front.complete else "cut by a limit")  # fmt: skip
        stats = SolveStats(iterations=front.solves, native_status=note)
        if not front.points:
            return Status.TIME_LIMIT_NO_SOLUTION, None, None, None, stats
        best = min(front.points, key=lambda p: p.latency_cycles * p.energy_pj)
        value = best.latency_cycles * best.energy_pj
        status = Status.OPTIMAL if front.complete else Status.FEASIBLE
        return status, best.solution, value, value if front.complete else None, stats
    cpsat = MulticoreCpSat(instance)
    hints = cpsat.hints(hint) if hint is not None else {}
    answer = solve_cpsat(cpsat.model, options, hints, cpsat.minimize(instance.objective))
    if not answer.status.has_solution:
        return answer.status, None, None, None, answer.stats
    solution = cpsat.decode(answer)
    if instance.objective == "latency":
        return answer.status, solution, float(cpsat.latency(answer)), answer.bound, answer.stats
    value = cpsat.energy_pj(answer)
    verify_objective(value, PROBLEM.evaluate(instance, solution).energy_pj, what="multicore/cpsat energy (model)")
    bound = cpsat.energy_bound(answer)
    return answer.status, solution, value, None if bound is None else min(bound, value), answer.stats


def solve_multicore_cpsat(
    instance: MulticoreInstance,
    options: SolveOptions,
    warm_start: MulticoreSolution | Hint[MulticoreSolution] | None = None,
) -> Result[MulticoreSolution]:
    """Solve the instance with the CP-SAT model for its objective (latency, energy, or EDP by :func:`pareto_front`).

    Parameters
    ----------
    instance
        The instance; the ``memory`` objective gives an ERROR result naming the supported ones.
    options
        Limits (the time limit covers the whole EDP sweep), workers, seed.
    warm_start
        A solution (checked first; a rejected one is ignored and said so) hinted to CP-SAT, and returned instead
        of a worse or missing result (FEASIBLE; without bound if the bound exceeds it: it reloads weights); or a
        :class:`~accelsched.problems.base.Hint`, only hinted to CP-SAT (the registry hands the ``manual``
        method's solution so, the method's default hint); None: no hint.

    Returns
    -------
    Result
        OPTIMAL, FEASIBLE or TIME_LIMIT_NO_SOLUTION from CP-SAT's status; ``bound`` from its best bound, valid over
        the model's space (:mod:`accelsched.formulations.multicore_cpsat_model`); a time limit never raises.
    """
    if instance.objective not in SUPPORTED_OBJECTIVES:
        reason = (f"objective {instance.objective!r} is not supported by cpsat (supported: "
                  f"{', '.join(SUPPORTED_OBJECTIVES)}); use manual or ga for {instance.objective}")  # fmt: skip
        return Result.no_solution(Status.ERROR, PROBLEM.name, "cpsat", reason, backend="cpsat")
    hint_only = isinstance(warm_start, Hint)
    warm, notes = (warm_start.solution if isinstance(warm_start, Hint) else warm_start), []
    if warm is not None:
        try:
            PROBLEM.check(instance, warm)
        except (InfeasibleSolution, AttributeError, TypeError) as exc:
            warm, notes = None, [f"the warm start is ignored: {exc}"]
    status, solution, value, bound, stats = _solve(instance, options, warm)
    if hint_only:
        warm = None
    if warm is not None:
        warm_value = PROBLEM.objective(instance, warm, PROBLEM.evaluate(instance, warm))
        if value is None or warm_value < value:
            notes.append("the warm start is returned: the solver found nothing better")
            status, solution, value = Status.FEASIBLE, warm, warm_value
            bound = None if bound is None or bound > value else bound
    stats = dataclasses.replace(stats, native_status="; ".join([stats.native_status, *notes]))
    if solution is None:
        return Result.no_solution(status, PROBLEM.name, "cpsat", stats.native_status, backend="cpsat")
    return Result(status, PROBLEM.name, "cpsat", solution=solution, objective=value, bound=bound, backend="cpsat",
                  seed=options.seed, stats=stats)  # fmt: skip


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "cpsat",
        PROBLEM.name,
        "exact",
        solve_multicore_cpsat,
        "CP-SAT allocation + CN schedule (cores, bus, DRAM port, weight memory); latency, energy, or EDP by sweep",
        default_hint="manual",
    ),
)
"""The CP-SAT method: ``cpsat``, hinted (not warm-started) by the ``manual`` method's solution through the
registry, as Stream's manual allocation hints it by default."""
