r"""The joint atom-to-engine mapping over all rounds, CP-SAT (exact; small instances).

Given the rounds of a schedule (at most ``N`` atoms each), place every atom on an
engine so that the byte-hops of all edges, :math:`\sum_{(a,b)} b_{ab}\,
\text{hops}(e_a, e_b)`, are least, with the atoms of a round on distinct engines:

.. math::

    \min \sum_{(a,b) \in E} b_{ab} (|y_a - y_b| + |x_a - x_b|) \quad\text{s.t.}\quad
    \sum_e p_{ae} = 1 \;\forall a, \qquad \sum_{a \in r} p_{ae} \le 1 \;\forall r, e, \\
    y_a = \textstyle\sum_e \lfloor e / C \rfloor p_{ae}, \qquad x_a = \sum_e (e \bmod C)\, p_{ae},

with :math:`p_{ae}` true when atom :math:`a` is on engine :math:`e`, :math:`(y_a, x_a)`
its mesh row and column (:math:`C` columns) and XY-routing hops as the Manhattan
distance. The per-round linear assignment of
:func:`accelsched.problems.atomic.placement.assign_engines` optimizes the same
quantity (plus weight reloads, absent without weights) one round at a time given the
earlier rounds, so the joint optimum of the byte-hops is never above it, nor above
Atomic Dataflow's zig-zag placement; the tests check all three against brute force
over every placement on tiny instances.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from accelsched.problems.atomic import AtomicInstance, RoundSchedule
from accelsched.solvers import SolveOptions, Status, solve_cpsat

__all__ = ["JointMapping", "joint_engines"]


class JointMapping:
    """The joint mapping model of a schedule's rounds (module docstring); one method per constraint family."""

    def __init__(self, instance: AtomicInstance, schedule: RoundSchedule) -> None:
        if instance.mesh is None:
            raise ValueError("the joint mapping needs an instance on a mesh")
        self.instance, self.schedule = instance, schedule
        self.dag = instance.dag_for(schedule)
        self.model = cp_model.CpModel()
        n, engines, cols = len(self.dag.atoms), instance.n_engines, instance.mesh.cols
        self.on = {(a, e): self.model.new_bool_var(f"on[{a},{e}]") for a in range(n) for e in range(engines)}
        rows = (engines - 1) // cols
        self.row = [self.model.new_int_var(0, rows, f"y[{a}]") for a in range(n)]
        self.col = [self.model.new_int_var(0, cols - 1, f"x[{a}]") for a in range(n)]
        self.assignment()
        self.distinct()
        self.coordinates()
        self.objective()

    def assignment(self) -> None:
        """Every atom is on one engine."""
        for a in range(len(self.dag.atoms)):
            self.model.add_exactly_one(self.on[a, e] for e in range(self.instance.n_engines))

    def distinct(self) -> None:
        """The atoms of a round are on different engines.

        Raises
        ------
        ValueError
            A round holds more atoms than engines.
        """
        for r, members in enumerate(self.schedule.rounds):
            if len(members) > self.instance.n_engines:
                raise ValueError(f"round {r} holds {len(members)} atoms > {self.instance.n_engines} engines")
            for e in range(self.instance.n_engines):
                self.model.add_at_most_one(self.on[a, e] for a in members)

    def coordinates(self) -> None:
        """An atom's mesh row and column are its engine's."""
        cols = self.instance.mesh.cols if self.instance.mesh is not None else 1
        for a in range(len(self.dag.atoms)):
            engines = range(self.instance.n_engines)
            self.model.add(self.row[a] == sum((e // cols) * self.on[a, e] for e in engines))
            self.model.add(self.col[a] == sum((e % cols) * self.on[a, e] for e in engines))

    def objective(self) -> None:
        """Byte-hops of every edge under XY routing."""
        terms = []
        for a, b, nbytes in self.dag.edges:
            if not nbytes:
                continue
            dy = self.model.new_int_var(0, self.instance.n_engines, f"dy[{a},{b}]")
            dx = self.model.new_int_var(0, self.instance.n_engines, f"dx[{a},{b}]")
            self.model.add_abs_equality(dy, self.row[a] - self.row[b])
            self.model.add_abs_equality(dx, self.col[a] - self.col[b])
            terms.append(nbytes * (dy + dx))
        self.model.minimize(sum(terms))

    def hints(self, engines: tuple[int, ...]) -> dict[cp_model.IntVar, int]:
        """Values of the placement variables for ``engines``."""
        return {var: int(engines[a] == e) for (a, e), var in self.on.items()}


def joint_engines(
    instance: AtomicInstance, schedule: RoundSchedule, options: SolveOptions, hint: RoundSchedule | None = None
) -> tuple[RoundSchedule, Status, float | None]:
    """``schedule`` placed by the joint model, the solve status and its proven bound (byte-hops), hinted by
    ``hint``'s engines. Without a solution within the time limit the schedule is returned as given.

    Raises
    ------
    ValueError
        No mesh, or a round with more atoms than engines.
    """
    mapping = JointMapping(instance, schedule)
    answer = solve_cpsat(
        mapping.model, options, None if hint is None or hint.engines is None else mapping.hints(hint.engines)
    )
    if not answer.status.has_solution:
        return schedule, answer.status, answer.bound
    engines = [next(e for e in range(instance.n_engines) if answer.boolean_value(mapping.on[a, e]))
               for a in range(len(mapping.dag.atoms))]  # fmt: skip
    return schedule.placed(engines), answer.status, answer.bound
