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
the redundant cut :math:`\sum_r d_r \ge \max(\text{longest path}, \lceil \sum_a t_a / N \rceil)`
strengthens the bound.
The objective is the evaluator's latency of the decoded schedule (a test asserts it).
The model is hinted by the greedy rounds of :func:`greedy_rounds` or by a warm start. On a mesh the
result's atoms are placed on engines by :func:`accelsched.formulations.atomic_mapping.assign_engines`.
"""

from __future__ import annotations

import time
from typing import Any

from ortools.sat.python import cp_model

from accelsched.errors import InfeasibleSolution
from accelsched.formulations.atomic_mapping import assign_engines
from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule, check, lower_bounds
from accelsched.problems.base import MethodSpec
from accelsched.solvers import Result, SolveOptions, Status, solve_cpsat

__all__ = ["MAX_ATOMS", "METHODS", "RoundsCpSat", "greedy_rounds", "solve_rounds"]

MAX_ATOMS = 400
"""Largest DAG the round model is built for: it has atoms x atoms Booleans (160,000 at this size)."""


def greedy_rounds(instance: AtomicInstance) -> RoundSchedule:
    """List scheduling into rounds: each round takes up to ``N`` ready atoms, longest first."""
    dag = instance.dag
    done: set[int] = set()
    rounds: list[tuple[int, ...]] = []
    while len(done) < len(dag.atoms):
        ready = [a for a in range(len(dag.atoms)) if a not in done and all(p in done for p in dag.predecessors[a])]
        ready.sort(key=lambda a: (-dag.atoms[a].duration_cycles, a))
        chosen = tuple(sorted(ready[: instance.n_engines]))
        rounds.append(chosen)
        done.update(chosen)
    return RoundSchedule(tuple(rounds))


class RoundsCpSat:
    """The round model of one instance (module docstring); one method per constraint family."""

    def __init__(self, instance: AtomicInstance) -> None:
        self.instance = instance
        self.model = cp_model.CpModel()
        n = len(instance.dag.atoms)
        self.rounds = range(n)
        self.x = {(a, r): self.model.new_bool_var(f"x[{a},{r}]") for a in range(n) for r in self.rounds}
        self.used = [self.model.new_bool_var(f"u[{r}]") for r in self.rounds]
        longest = max(instance.dag.durations)
        self.duration = [self.model.new_int_var(0, longest, f"d[{r}]") for r in self.rounds]
        self.assignment()
        self.capacity()
        self.durations()
        self.precedence()
        self.objective()

    def assignment(self) -> None:
        """Every atom runs in exactly one round."""
        for a in range(len(self.instance.dag.atoms)):
            self.model.add_exactly_one(self.x[a, r] for r in self.rounds)

    def capacity(self) -> None:
        """A used round holds 1..N atoms, an unused one none; used rounds come first."""
        n = len(self.instance.dag.atoms)
        for r in self.rounds:
            members = sum(self.x[a, r] for a in range(n))
            self.model.add(members <= self.instance.n_engines * self.used[r])
            self.model.add(members >= self.used[r])
        for r in self.rounds[:-1]:
            self.model.add_implication(self.used[r + 1], self.used[r])

    def durations(self) -> None:
        """A round lasts exactly as long as its slowest atom (0 when unused), so that every solution's objective,
        not only the optimum's, is the evaluator's latency."""
        n = len(self.instance.dag.atoms)
        for r in self.rounds:
            terms = [self.instance.dag.atoms[a].duration_cycles * self.x[a, r] for a in range(n)]
            self.model.add_max_equality(self.duration[r], [0, *terms])

    def round_of(self, a: int) -> Any:
        """The round index of atom ``a`` as a linear expression."""
        return sum(r * self.x[a, r] for r in self.rounds)

    def precedence(self) -> None:
        """A consumer runs in a later round than each of its producers."""
        for a, b, _ in self.instance.dag.edges:
            self.model.add(self.round_of(a) + 1 <= self.round_of(b))

    def objective(self) -> None:
        """Latency: the sum of the round durations, at least the longest path and the work over N engines."""
        latency = sum(self.duration)
        self.model.add(latency >= max(lower_bounds(self.instance)))
        self.model.minimize(latency)

    def hints(self, schedule: RoundSchedule) -> dict[Any, int]:
        """Values of every variable for ``schedule``."""
        where = schedule.round_of(len(self.instance.dag.atoms))
        values: dict[Any, int] = {x: int(where[a] == r) for (a, r), x in self.x.items()}
        durations = self.instance.dag.durations
        for r in self.rounds:
            members = schedule.rounds[r] if r < len(schedule.rounds) else ()
            values[self.used[r]] = int(bool(members))
            values[self.duration[r]] = max((durations[a] for a in members), default=0)
        return values

    def decode(self, answer: Any) -> RoundSchedule:
        """The schedule of a solution: the used rounds in order."""
        n = len(self.instance.dag.atoms)
        rounds = [tuple(a for a in range(n) if answer.boolean_value(self.x[a, r])) for r in self.rounds]
        return RoundSchedule(tuple(r for r in rounds if r))


def solve_rounds(
    instance: AtomicInstance, options: SolveOptions, warm_start: RoundSchedule | None = None
) -> Result[RoundSchedule]:
    """Solve the round model (latency objective; other objectives give an ERROR result).

    A warm start that breaks a rule is ignored and said so in the statistics; otherwise it hints the search
    (the greedy rounds do by default).
    """
    start = time.perf_counter()
    if instance.objective != "latency":
        return Result.no_solution(Status.ERROR, PROBLEM.name, "cpsat-rounds",
                                  f"objective {instance.objective!r}: the round model minimizes latency",
                                  backend="cpsat")  # fmt: skip
    if len(instance.dag.atoms) > MAX_ATOMS:
        return Result.no_solution(Status.TIME_LIMIT_NO_SOLUTION, PROBLEM.name, "cpsat-rounds",
                                  f"too large for the round model ({len(instance.dag.atoms)} atoms > {MAX_ATOMS}); "
                                  "use dp, or cpsat-jobshop for a bound", backend="cpsat")  # fmt: skip
    hint, note = greedy_rounds(instance), ""
    if warm_start is not None:
        try:
            check(instance, warm_start)
            hint = warm_start
        except InfeasibleSolution as exc:
            note = f"; the warm start is ignored: {exc}"
    cpsat = RoundsCpSat(instance)
    answer = solve_cpsat(cpsat.model, options, cpsat.hints(hint))
    runtime = time.perf_counter() - start
    stats = answer.stats
    if note:
        stats = type(stats)(nodes=stats.nodes, trace=stats.trace, native_status=stats.native_status + note)
    if not answer.status.has_solution:
        return Result.no_solution(answer.status, PROBLEM.name, "cpsat-rounds", stats.native_status,
                                  runtime_s=runtime, backend="cpsat")  # fmt: skip
    bound = answer.bound if answer.bound is not None else float(max(lower_bounds(instance)))
    schedule = cpsat.decode(answer)
    if instance.mesh is not None:
        schedule = assign_engines(instance, schedule)
    return Result(answer.status, PROBLEM.name, "cpsat-rounds", solution=schedule,
                  objective=answer.objective, bound=bound, runtime_s=runtime, backend="cpsat", seed=options.seed,
                  stats=stats)  # fmt: skip


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "cpsat-rounds",
        PROBLEM.name,
        "exact",
        solve_rounds,
        "CP-SAT: atoms to synchronous rounds of at most N atoms, minimum sum of round durations",
    ),
)
"""The CP-SAT round method: ``cpsat-rounds``."""
