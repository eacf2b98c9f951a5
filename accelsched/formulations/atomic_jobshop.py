r"""Atoms as a job shop on ``N`` identical engines, CP-SAT (method ``cpsat-jobshop`` of the atomic problem).

One interval :math:`[s_a, s_a + t_a)` per atom of its compute cycles, precedence on
every edge, minimize the makespan. This is the asynchronous schedule, and its optimum
is a valid lower bound of the round evaluator's latency of *every* schedule, reported
as the result's ``bound``: given any schedule, start each atom's interval where the
evaluator has it begin computing; intervals on one engine do not overlap, and a
consumer begins computing after its producer has finished and its own loads are done.

Engines
    On an abstract instance, or when ``atoms x engines`` exceeds :attr:`JobShopParams.alternatives`,
    at most :math:`N` atoms run at once (a cumulative of unit demands) and
    :math:`s_b \ge s_a + t_a` on every edge. Otherwise every atom picks an engine
    (one optional interval per engine, no overlap per engine) and an edge between
    two engines waits a transfer delay

    .. math:: s_b \ge s_a + t_a + \delta_{ab} (1 - \text{same}_{ab}), \qquad
              \delta_{ab} = \lfloor \min(b_{ab} / L + 1,\ 2 b_{ab} / B) \rfloor,

    :math:`\text{same}_{ab}` implying equal engines, :math:`b_{ab}` the edge's bytes,
    :math:`L` the link and :math:`B` the HBM bandwidth in bytes per cycle. The delay
    is at most what the evaluator charges between the two computations: a transfer
    over the mesh takes at least :math:`b / L` plus one hop, and an output passed
    through HBM is stored and loaded again, each at most at the full HBM bandwidth.
    Integer starts lose nothing: flooring the starts of a schedule with integer
    durations and delays keeps it feasible.

The result's solution is the round schedule read off the job-shop starts (atoms by
start time, a new round whenever the current one is full or holds a producer of the
next atom), placed and buffered (:func:`accelsched.problems.atomic.placement.place_and_buffer`);
its objective is the evaluator's latency, at least the bound. The status is OPTIMAL
only when the two meet. Above :attr:`JobShopParams.max_atoms` atoms the method declines.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ortools.sat.python import cp_model

from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule, place_and_buffer, price
from accelsched.problems.base import MethodSpec
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status, solve_cpsat

__all__ = ["METHODS", "JobShop", "JobShopParams", "jobshop_method", "rounds_from_starts", "solve_jobshop"]


@dataclass(frozen=True)
class JobShopParams:
    """Sizes of the job-shop method, validated at construction.

    Parameters
    ----------
    alternatives
        Largest ``atoms x engines`` modelled with an engine choice per atom (and transfer delays). >= 0.
    max_atoms
        Largest DAG the job shop is built for. >= 1.
    """

    alternatives: int = 4000
    max_atoms: int = 20000

    def __post_init__(self) -> None:
        for name, least in (("alternatives", 0), ("max_atoms", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"JobShopParams: field {name} must be an integer >= {least}, got {value!r}")


class JobShop:
    """The job-shop model of an instance (module docstring); one method per constraint family."""

    def __init__(self, instance: AtomicInstance, params: JobShopParams | None = None) -> None:
        params = params or JobShopParams()
        self.instance = instance
        dag = instance.dag
        self.model = cp_model.CpModel()
        horizon = sum(dag.durations)
        self.starts = [self.model.new_int_var(0, horizon, f"s[{a}]") for a in range(len(dag.atoms))]
        self.makespan = self.model.new_int_var(0, horizon, "makespan")
        choices = len(dag.atoms) * instance.n_engines
        self.with_engines = instance.accelerator is not None and choices <= params.alternatives
        self.engine_of: list[cp_model.IntVar] = []
        if self.with_engines:
            self.engines()
        else:
            self.capacity()
        self.precedence()
        self.objective()

    def capacity(self) -> None:
        """At most ``N`` atoms compute at once."""
        dag = self.instance.dag
        intervals = [self.model.new_fixed_size_interval_var(s, d, f"atom[{a}]")
                     for a, (s, d) in enumerate(zip(self.starts, dag.durations, strict=True))]  # fmt: skip
        self.model.add_cumulative(intervals, [1] * len(intervals), self.instance.n_engines)

    def engines(self) -> None:
        """Every atom computes on one engine; an engine computes one atom at a time."""
        dag, n_engines = self.instance.dag, self.instance.n_engines
        per_engine: list[list[cp_model.IntervalVar]] = [[] for _ in range(n_engines)]
        for a, (s, d) in enumerate(zip(self.starts, dag.durations, strict=True)):
            on = [self.model.new_bool_var(f"on[{a},{e}]") for e in range(n_engines)]
            self.model.add_exactly_one(on)
            for e, literal in enumerate(on):
                per_engine[e].append(self.model.new_optional_fixed_size_interval_var(s, d, literal, f"atom[{a},{e}]"))
            engine = self.model.new_int_var(0, n_engines - 1, f"engine[{a}]")
            self.model.add(engine == sum(e * literal for e, literal in enumerate(on)))
            self.engine_of.append(engine)
        for intervals in per_engine:
            self.model.add_no_overlap(intervals)

    def delay(self, nbytes: int) -> int:
        """The transfer delay of an edge of ``nbytes`` between two engines (module docstring)."""
        acc, mesh = self.instance.accelerator, self.instance.mesh
        if acc is None or mesh is None:
            return 0
        over_mesh = nbytes / mesh.link_bandwidth_bytes_per_cycle + 1
        through_hbm = 2 * nbytes / acc.offchip.bandwidth_bytes_per_cycle
        return int(min(over_mesh, through_hbm))

    def precedence(self) -> None:
        """A consumer computes after its producer, plus the transfer delay between two engines."""
        durations = self.instance.dag.durations
        for a, b, nbytes in self.instance.dag.edges:
            delay = self.delay(nbytes) if self.with_engines else 0
            if not delay:
                self.model.add(self.starts[b] >= self.starts[a] + durations[a])
                continue
            same = self.model.new_bool_var(f"same[{a},{b}]")
            self.model.add(self.engine_of[a] == self.engine_of[b]).only_enforce_if(same)
            self.model.add(self.starts[b] >= self.starts[a] + durations[a] + delay * (1 - same))

    def objective(self) -> None:
        """Makespan: the last atom's end."""
        for s, d in zip(self.starts, self.instance.dag.durations, strict=True):
            self.model.add(self.makespan >= s + d)
        self.model.minimize(self.makespan)


def rounds_from_starts(instance: AtomicInstance, starts: list[int]) -> RoundSchedule:
    """Rounds of the atoms taken by start time: a new round when full or when it holds a producer of the atom."""
    preds = instance.dag.predecessors
    rounds: list[list[int]] = [[]]
    members: set[int] = set()
    for a in sorted(range(len(starts)), key=lambda a: (starts[a], a)):
        if len(rounds[-1]) == instance.n_engines or any(p in members for p in preds[a]):
            rounds.append([])
            members = set()
        rounds[-1].append(a)
        members.add(a)
    return RoundSchedule(tuple(tuple(sorted(r)) for r in rounds))


def solve_jobshop(
    instance: AtomicInstance,
    options: SolveOptions,
    warm_start: RoundSchedule | None = None,
    params: JobShopParams | None = None,
) -> Result[RoundSchedule]:
    """Solve the job shop; the bound of the latency and a round schedule read off it (module docstring). The warm
    start is not used; ``params``: :class:`JobShopParams` (default ``JobShopParams()``)."""
    params = params or JobShopParams()
    if instance.objective != "latency":
        return Result.no_solution(Status.ERROR, PROBLEM.name, "cpsat-jobshop",
                                  f"objective {instance.objective!r}: the job shop minimizes latency",
                                  backend="cpsat")  # fmt: skip
    if len(instance.dag.atoms) > params.max_atoms:
        return Result.no_solution(Status.TIME_LIMIT_NO_SOLUTION, PROBLEM.name, "cpsat-jobshop",
                                  f"too large for the job shop ({len(instance.dag.atoms)} atoms > {params.max_atoms}); "
                                  "use dp, or cpsat-rounds for its rolling horizon", backend="cpsat")  # fmt: skip
    shop = JobShop(instance, params)
    answer = solve_cpsat(shop.model, options)
    if not answer.status.has_solution:
        return Result.no_solution(answer.status, PROBLEM.name, "cpsat-jobshop", answer.native_status, backend="cpsat")
    schedule = place_and_buffer(instance, rounds_from_starts(instance, [answer.value(s) for s in shop.starts]))
    value, failure = price(instance, schedule)
    if value is None:
        return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, "cpsat-jobshop", str(failure), backend="cpsat")
    bound = answer.bound
    status = Status.OPTIMAL if bound is not None and value <= bound else Status.FEASIBLE
    kind = "engines and transfer delays" if shop.with_engines else "cumulative"
    note = f"{answer.native_status}; job-shop makespan {answer.objective:g} ({kind})"
    stats = SolveStats(nodes=answer.stats.nodes, trace=answer.stats.trace, native_status=note)
    return Result(status, PROBLEM.name, "cpsat-jobshop", solution=schedule, objective=value, bound=bound,
                  backend="cpsat", seed=options.seed, stats=stats)  # fmt: skip


def jobshop_method(params: JobShopParams | None = None) -> MethodSpec:
    """The ``cpsat-jobshop`` method with ``params`` (default ``JobShopParams()``), e.g. to run it through
    :func:`accelsched.registry.run_method` with other model sizes."""
    run = solve_jobshop if params is None else functools.partial(solve_jobshop, params=params)
    return MethodSpec(
        "cpsat-jobshop",
        PROBLEM.name,
        "exact",
        run,
        "CP-SAT job shop on N engines: asynchronous makespan, a lower bound of every schedule's latency",
    )


METHODS: tuple[MethodSpec, ...] = (jobshop_method(),)
"""The job-shop method: ``cpsat-jobshop``."""
