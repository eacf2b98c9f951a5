r"""Atoms as a job shop on ``N`` identical engines, CP-SAT (method ``cpsat-jobshop`` of the atomic problem).

One interval :math:`[s_a, s_a + t_a)` per atom, at most :math:`N` running at once
(a cumulative of unit demands), :math:`s_b \ge s_a + t_a` on every edge, minimize
the makespan. This is the asynchronous schedule: every round schedule is one of its
solutions (rounds back to back), so its optimum is a valid lower bound of the round
latency, reported as the result's ``bound``.

The result's solution is the round schedule read off the job-shop schedule (atoms by
start time, a new round whenever the current one is full or holds a producer of the
next atom); its objective is that schedule's round latency from the evaluator, which
is at least the bound. The status is OPTIMAL only when the two meet. On a mesh the rounds'
atoms are placed by :func:`accelsched.formulations.atomic_mapping.assign_engines`.
"""

from __future__ import annotations

import time

from ortools.sat.python import cp_model

from accelsched.formulations.atomic_mapping import assign_engines
from accelsched.hardware.cost.rounds import round_durations
from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule
from accelsched.problems.base import MethodSpec
from accelsched.solvers import Result, SolveOptions, Status, solve_cpsat

__all__ = ["METHODS", "jobshop_model", "rounds_from_starts", "solve_jobshop"]


def jobshop_model(instance: AtomicInstance) -> tuple[cp_model.CpModel, list[cp_model.IntVar], cp_model.IntVar]:
    """The model, the start of every atom and the makespan."""
    dag = instance.dag
    model = cp_model.CpModel()
    horizon = sum(dag.durations)
    starts = [model.new_int_var(0, horizon, f"s[{a}]") for a in range(len(dag.atoms))]
    intervals = [model.new_fixed_size_interval_var(starts[a], dag.durations[a], f"atom[{a}]")
                 for a in range(len(dag.atoms))]  # fmt: skip
    model.add_cumulative(intervals, [1] * len(intervals), instance.n_engines)
    for a, b, _ in dag.edges:
        model.add(starts[b] >= starts[a] + dag.durations[a])
    makespan = model.new_int_var(0, horizon, "makespan")
    for a, s in enumerate(starts):
        model.add(makespan >= s + dag.durations[a])
    model.minimize(makespan)
    return model, starts, makespan


def rounds_from_starts(instance: AtomicInstance, starts: list[int]) -> RoundSchedule:
    """Rounds of the atoms taken by start time: a new round when full or when it holds a producer of the atom."""
    preds = instance.dag.predecessors
    rounds: list[list[int]] = [[]]
    for a in sorted(range(len(starts)), key=lambda a: (starts[a], a)):
        current = rounds[-1]
        if len(current) == instance.n_engines or any(p in current for p in preds[a]):
            rounds.append([])
        rounds[-1].append(a)
    return RoundSchedule(tuple(tuple(sorted(r)) for r in rounds))


def solve_jobshop(
    instance: AtomicInstance, options: SolveOptions, warm_start: RoundSchedule | None = None
) -> Result[RoundSchedule]:
    """Solve the job shop; the bound of the round latency and a round schedule read off it (module docstring)."""
    start = time.perf_counter()
    if instance.objective != "latency":
        return Result.no_solution(Status.ERROR, PROBLEM.name, "cpsat-jobshop",
                                  f"objective {instance.objective!r}: the job shop minimizes latency",
                                  backend="cpsat")  # fmt: skip
    model, starts, _ = jobshop_model(instance)
    answer = solve_cpsat(model, options)
    runtime = time.perf_counter() - start
    if not answer.status.has_solution:
        return Result.no_solution(answer.status, PROBLEM.name, "cpsat-jobshop", answer.native_status,
                                  runtime_s=runtime, backend="cpsat")  # fmt: skip
    schedule = rounds_from_starts(instance, [answer.value(s) for s in starts])
    if instance.mesh is not None:
        schedule = assign_engines(instance, schedule)
    latency = float(sum(round_durations(instance, schedule)))
    bound = answer.bound
    status = Status.OPTIMAL if bound is not None and latency <= bound else Status.FEASIBLE
    note = f"{answer.native_status}; job-shop makespan {answer.objective:g}"
    stats = type(answer.stats)(nodes=answer.stats.nodes, trace=answer.stats.trace, native_status=note)
    return Result(status, PROBLEM.name, "cpsat-jobshop", solution=schedule, objective=latency, bound=bound,
                  runtime_s=runtime, backend="cpsat", seed=options.seed, stats=stats)  # fmt: skip


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "cpsat-jobshop",
        PROBLEM.name,
        "exact",
        solve_jobshop,
        "CP-SAT job shop on N engines: asynchronous makespan, a lower bound of the round latency",
    ),
)
"""The job-shop method: ``cpsat-jobshop``."""
