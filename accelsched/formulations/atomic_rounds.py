r"""Atom-to-round scheduling as CP-SAT (method ``cpsat-rounds`` of the atomic problem).

With atoms :math:`a` of duration :math:`t_a`, edges :math:`E`, :math:`N` engines and
rounds :math:`r = 0..R-1` (:math:`R` = the number of atoms, so that no schedule is cut
off):

.. math::

    \min \sum_r d_r \quad\text{s.t.}\quad
    \sum_r x_{ar} = 1 \;\forall a, \qquad
    u_r \le \sum_a x_{ar} \le N u_r, \qquad u_r \ge u_{r+1}, \\
    d_r = \max_a t_a x_{ar}, \qquad
    \sum_r r\,x_{ar} + 1 \le \sum_r r\,x_{br} \;\forall (a, b) \in E,

:math:`x_{ar}` true when atom :math:`a` runs in round :math:`r`, :math:`u_r` when round
:math:`r` is used (used rounds first: symmetry breaking) and :math:`d_r` its duration;
the redundant cut :math:`\sum_r d_r \ge` the bounds of
:func:`accelsched.problems.atomic.lower_bounds` strengthens the bound.

What it optimizes
    The rounds' *compute* latency, the sum of the slowest atom of each round. The
    round evaluator adds the NoC and HBM time of the placed, buffered schedule,
    which the model does not see (it depends on the engines and the write-backs), so
    this is a documented proxy: the model's optimum is a valid lower bound of the
    evaluator's latency, reported as the result's ``bound``; the result's objective
    is the evaluator's latency of the decoded schedule after placement
    (:func:`accelsched.problems.atomic.placement.place_and_buffer`), and the status
    is OPTIMAL only when the two meet (always on abstract instances, where nothing
    is added).
Large DAGs: rolling horizon
    Above :attr:`RoundsParams.max_atoms` atoms the model over the whole DAG is too large
    (atoms x atoms Booleans). The method then starts from a schedule (the warm
    start, e.g. the DP's with ``--warm-start dp``, else the greedy rounds of
    :func:`greedy_rounds`) and re-optimizes it window by window: the atoms of
    consecutive rounds (about :attr:`RoundsParams.window_atoms`) form a sub-DAG whose producers
    outside it all run earlier and whose consumers outside it all run
    later, so any round schedule of the window, put in its place, keeps every rule;
    the window's model is hinted with its current rounds and replaces them only when
    it finds a shorter compute latency. The gap is stated against the global
    lower bound of :func:`accelsched.problems.atomic.lower_bounds`.

The model is hinted by the greedy rounds of :func:`greedy_rounds` or by a warm start.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from accelsched.errors import InfeasibleSolution
from accelsched.problems.atomic import (
    PROBLEM,
    AtomDag,
    AtomicInstance,
    RoundSchedule,
    check,
    lower_bounds,
    place_and_buffer,
    price,
)
from accelsched.problems.base import MethodSpec
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status, solve_cpsat

__all__ = [
    "METHODS",
    "RoundsCpSat",
    "RoundsParams",
    "compute_latency",
    "greedy_rounds",
    "rounds_method",
    "solve_rounds",
    "window_dag",
]


@dataclass(frozen=True)
class RoundsParams:
    """Sizes of the round method, validated at construction.

    Parameters
    ----------
    max_atoms
        Largest DAG the round model is built for whole (it has atoms x atoms Booleans); larger DAGs use the
        rolling horizon. >= 1.
    window_atoms
        Atoms per window of the rolling horizon (whole rounds; at least one round). >= 1.
    """

    max_atoms: int = 400
    window_atoms: int = 256

    def __post_init__(self) -> None:
        for name in ("max_atoms", "window_atoms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"RoundsParams: field {name} must be an integer >= 1, got {value!r}")


def compute_latency(dag: AtomDag, rounds: Sequence[Sequence[int]]) -> int:
    """Sum over rounds of the slowest atom: what the model minimizes."""
    durations = dag.durations
    return sum(max(durations[a] for a in r) for r in rounds)


def greedy_rounds(instance: AtomicInstance) -> RoundSchedule:
    """List scheduling into rounds: each round takes up to ``N`` ready atoms, longest first."""
    dag = instance.dag
    waiting = [len(p) for p in dag.predecessors]
    ready = [a for a in range(len(dag.atoms)) if not waiting[a]]
    rounds: list[tuple[int, ...]] = []
    while ready:
        ready.sort(key=lambda a: (-dag.atoms[a].duration_cycles, a))
        chosen, ready = ready[: instance.n_engines], ready[instance.n_engines :]
        rounds.append(tuple(sorted(chosen)))
        for a in chosen:
            for b in dag.successors[a]:
                waiting[b] -= 1
                if not waiting[b]:
                    ready.append(b)
    return RoundSchedule(tuple(rounds))


class RoundsCpSat:
    """The round model of one DAG on ``n_engines`` engines (module docstring); one method per constraint family."""

    def __init__(self, dag: AtomDag, n_engines: int, bound: int = 0, max_rounds: int | None = None) -> None:
        self.dag, self.n_engines = dag, n_engines
        self.model = cp_model.CpModel()
        n = len(dag.atoms)
        self.rounds = range(min(n, max_rounds) if max_rounds is not None else n)
        self.x = {(a, r): self.model.new_bool_var(f"x[{a},{r}]") for a in range(n) for r in self.rounds}
        self.used = [self.model.new_bool_var(f"u[{r}]") for r in self.rounds]
        longest = max(dag.durations)
        self.duration = [self.model.new_int_var(0, longest, f"d[{r}]") for r in self.rounds]
        self.assignment()
        self.capacity()
        self.durations()
        self.precedence()
        self.objective(bound)

    def assignment(self) -> None:
        """Every atom runs in exactly one round."""
        for a in range(len(self.dag.atoms)):
            self.model.add_exactly_one(self.x[a, r] for r in self.rounds)

    def capacity(self) -> None:
        """A used round holds 1..N atoms, an unused one none; used rounds come first."""
        n = len(self.dag.atoms)
        for r in self.rounds:
            members = sum(self.x[a, r] for a in range(n))
            self.model.add(members <= self.n_engines * self.used[r])
            self.model.add(members >= self.used[r])
        for r in self.rounds[:-1]:
            self.model.add_implication(self.used[r + 1], self.used[r])

    def durations(self) -> None:
        """A round lasts exactly as long as its slowest atom (0 when unused), so that every solution's objective,
        not only the optimum's, is the compute latency of the decoded rounds."""
        n = len(self.dag.atoms)
        for r in self.rounds:
            terms = [self.dag.atoms[a].duration_cycles * self.x[a, r] for a in range(n)]
            self.model.add_max_equality(self.duration[r], [0, *terms])

    def round_of(self, a: int) -> Any:
        """The round index of atom ``a`` as a linear expression."""
        return sum(r * self.x[a, r] for r in self.rounds)

    def precedence(self) -> None:
        """A consumer runs in a later round than each of its producers."""
        for a, b, _ in self.dag.edges:
            self.model.add(self.round_of(a) + 1 <= self.round_of(b))

    def objective(self, bound: int) -> None:
        """Compute latency: the sum of the round durations, at least ``bound`` (a valid lower bound)."""
        latency = sum(self.duration)
        if bound:
            self.model.add(latency >= bound)
        self.model.minimize(latency)

    def hints(self, rounds: Sequence[Sequence[int]]) -> dict[Any, int]:
        """Values of every variable for the rounds ``rounds`` (at most the model's number of rounds)."""
        where = {a: r for r, members in enumerate(rounds) for a in members}
        values: dict[Any, int] = {x: int(where[a] == r) for (a, r), x in self.x.items()}
        durations = self.dag.durations
        for r in self.rounds:
            members = rounds[r] if r < len(rounds) else ()
            values[self.used[r]] = int(bool(members))
            values[self.duration[r]] = max((durations[a] for a in members), default=0)
        return values

    def decode(self, answer: Any) -> list[tuple[int, ...]]:
        """The used rounds of a solution, in order."""
        n = len(self.dag.atoms)
        rounds = [tuple(a for a in range(n) if answer.boolean_value(self.x[a, r])) for r in self.rounds]
        return [r for r in rounds if r]


def window_dag(dag: AtomDag, atoms: Sequence[int]) -> AtomDag:
    """The sub-DAG of ``atoms`` (renumbered in the given order) with the edges among them."""
    index = np.full(len(dag.atoms), -1, dtype=np.int64)
    index[np.asarray(atoms, dtype=np.int64)] = np.arange(len(atoms))
    src, dst, nbytes = dag.edge_array.T
    inside = (index[src] >= 0) & (index[dst] >= 0)
    edges = np.stack([index[src[inside]], index[dst[inside]], nbytes[inside]], axis=1)
    return AtomDag(f"{dag.name}[window]", [dag.atoms[a] for a in atoms], edges)


def _start(instance: AtomicInstance, warm_start: RoundSchedule | None) -> tuple[RoundSchedule, str]:
    """The schedule to hint or to improve: a valid warm start on the instance's own atoms, else greedy rounds."""
    if warm_start is None:
        return greedy_rounds(instance), ""
    try:
        check(instance, warm_start)
    except InfeasibleSolution as exc:
        return greedy_rounds(instance), f"; the warm start is ignored: {exc}"
    if warm_start.sizes is not None and warm_start.sizes != instance.sizes:
        return greedy_rounds(instance), "; the warm start is ignored: it has atom sizes of its own"
    if warm_start.engines is not None and any(len(r) > instance.n_engines for r in warm_start.rounds):
        return greedy_rounds(instance), "; the warm start is ignored: a round holds more atoms than engines"
    return RoundSchedule(warm_start.rounds), "; hinted by the warm start"


def _rolling(
    instance: AtomicInstance, rounds: list[tuple[int, ...]], options: SolveOptions, deadline: float, window_atoms: int
) -> tuple[list[tuple[int, ...]], int, int]:
    """Improve ``rounds`` window by window (module docstring): the rounds, windows solved and windows improved."""
    dag, engines = instance.dag, instance.n_engines
    per_window = max(1, window_atoms // engines)
    starts = list(range(0, len(rounds), per_window))
    out: list[tuple[int, ...]] = []
    solved = improved = 0
    for i, first in enumerate(starts):
        window = rounds[first : first + per_window]
        left = deadline - time.perf_counter()
        if left <= 0.05:
            out.extend(window)
            continue
        atoms = [a for r in window for a in r]
        sub = window_dag(dag, atoms)
        local = {a: k for k, a in enumerate(atoms)}
        current = [tuple(local[a] for a in r) for r in window]
        model = RoundsCpSat(sub, engines, max(lower_bounds(AtomicInstance(sub, engines), sub)), len(window) + 2)
        share = SolveOptions(time_limit_s=left / (len(starts) - i), threads=options.threads, seed=options.seed)
        answer = solve_cpsat(model.model, share, model.hints(current))
        solved += 1
        if answer.status.has_solution and answer.objective is not None:
            better = model.decode(answer)
            if compute_latency(sub, better) < compute_latency(sub, current):
                improved += 1
                out.extend(tuple(atoms[k] for k in r) for r in better)
                continue
        out.extend(window)
    return out, solved, improved


def solve_rounds(
    instance: AtomicInstance,
    options: SolveOptions,
    warm_start: RoundSchedule | None = None,
    params: RoundsParams | None = None,
) -> Result[RoundSchedule]:
    """Solve the round model, or improve a schedule by its rolling horizon on large DAGs (module docstring);
    latency objective only (other objectives give an ERROR result). A warm start that breaks a rule, brings its own
    atom sizes or puts more atoms than engines in a round is ignored, and the statistics say so. ``params``:
    :class:`RoundsParams` (default ``RoundsParams()``)."""
    params = params or RoundsParams()
    start = time.perf_counter()  # the rolling horizon's deadline
    if instance.objective != "latency":
        return Result.no_solution(Status.ERROR, PROBLEM.name, "cpsat-rounds",
                                  f"objective {instance.objective!r}: the round model minimizes latency",
                                  backend="cpsat")  # fmt: skip
    hint, note = _start(instance, warm_start)
    global_bound = max(lower_bounds(instance))
    if len(instance.dag.atoms) > params.max_atoms:
        deadline = start + (options.time_limit_s if options.time_limit_s is not None else 60.0)
        before = compute_latency(instance.dag, hint.rounds)
        rounds, solved, improved = _rolling(instance, list(hint.rounds), options, deadline, params.window_atoms)
        status, bound = Status.FEASIBLE, float(global_bound)
        native = (f"rolling horizon: {solved} windows of {max(1, params.window_atoms // instance.n_engines)} rounds, "
                  f"{improved} improved; compute latency {before} -> {compute_latency(instance.dag, rounds)} "
                  f"cycles{note}")  # fmt: skip
        stats = SolveStats(iterations=solved, native_status=native)
    else:
        cpsat = RoundsCpSat(instance.dag, instance.n_engines, global_bound)
        answer = solve_cpsat(cpsat.model, options, cpsat.hints(hint.rounds))
        stats = SolveStats(nodes=answer.stats.nodes, trace=answer.stats.trace,
                           native_status=answer.stats.native_status + note)  # fmt: skip
        if not answer.status.has_solution:
            return Result.no_solution(answer.status, PROBLEM.name, "cpsat-rounds", stats.native_status,
                                      backend="cpsat")  # fmt: skip
        rounds = cpsat.decode(answer)
        status = answer.status
        bound = max(float(global_bound), answer.bound if answer.bound is not None else 0.0)
    schedule = place_and_buffer(instance, RoundSchedule(tuple(rounds)))
    value, failure = price(instance, schedule)
    if value is None:
        return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, "cpsat-rounds", str(failure), backend="cpsat")
    if status is Status.OPTIMAL and value > bound * (1 + 1e-9):
        status = Status.FEASIBLE  # the compute optimum, but transfers add time the model does not see
    return Result(status, PROBLEM.name, "cpsat-rounds", solution=schedule, objective=value, bound=bound,
                  backend="cpsat", seed=options.seed, stats=stats)  # fmt: skip


def rounds_method(params: RoundsParams | None = None) -> MethodSpec:
    """The ``cpsat-rounds`` method with ``params`` (default ``RoundsParams()``), e.g. to run it through
    :func:`accelsched.registry.run_method` with a smaller whole-model size."""
    run = solve_rounds if params is None else functools.partial(solve_rounds, params=params)
    return MethodSpec(
        "cpsat-rounds",
        PROBLEM.name,
        "exact",
        run,
        "CP-SAT: atoms to synchronous rounds of at most N atoms, minimum sum of round durations (rolling horizon on "
        "large DAGs)",
    )


METHODS: tuple[MethodSpec, ...] = (rounds_method(),)
"""The CP-SAT round method: ``cpsat-rounds``."""
