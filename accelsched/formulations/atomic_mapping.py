"""Atom-to-engine mapping of a round schedule: a linear assignment per round, and the zig-zag baseline.

Engine ``e`` sits at ``(e // cols, e % cols)`` on the instance's mesh; moving ``b``
bytes from engine ``e`` to ``f`` costs ``b x hops(e, f)`` byte-hops under XY routing.

* :func:`assign_engines` (exact per round): rounds in order; for round ``r`` the
  atoms are matched to engines so that the byte-hops from their producers (all in
  earlier rounds, already placed) are least: a linear assignment problem (atoms x
  engines, padded with zero-cost dummies), solved exactly by OR-Tools'
  ``SimpleLinearSumAssignment``. Greedy over rounds: a later round's traffic does not
  influence an earlier round's placement.
* :func:`zigzag_engines` (Atomic Dataflow's baseline): engines visited in
  serpentine (boustrophedon) order, each round's atoms placed in that order by
  (layer order, atom index), so that consecutive atoms of a layer are neighbours.

Both return the schedule with ``engines`` set; the evaluator then charges the NoC
energy (:mod:`accelsched.hardware.cost.rounds`).
"""

from __future__ import annotations

from ortools.graph.python import linear_sum_assignment

from accelsched.problems.atomic import AtomicInstance, RoundSchedule

__all__ = ["assign_engines", "serpentine", "zigzag_engines"]


def _hops(instance: AtomicInstance, e: int, f: int) -> int:
    cols = instance.mesh.cols if instance.mesh is not None else instance.n_engines
    return abs(e // cols - f // cols) + abs(e % cols - f % cols)


def assign_engines(instance: AtomicInstance, schedule: RoundSchedule) -> RoundSchedule:
    """The schedule with each round's engines from an exact linear assignment (module docstring)."""
    placed: dict[int, int] = {}
    inputs: dict[int, list[tuple[int, int]]] = {}
    for a, b, nbytes in instance.dag.edges:
        inputs.setdefault(b, []).append((a, nbytes))
    for members in schedule.rounds:
        solver = linear_sum_assignment.SimpleLinearSumAssignment()
        for i in range(instance.n_engines):  # rows: the round's atoms, then zero-cost dummies
            atom = members[i] if i < len(members) else None
            for e in range(instance.n_engines):
                cost = 0 if atom is None else sum(n * _hops(instance, placed[p], e) for p, n in inputs.get(atom, ()))
                solver.add_arc_with_cost(i, e, cost)
        status = solver.solve()
        assert status == solver.OPTIMAL, f"linear assignment status {status}"
        for i, atom in enumerate(members):
            placed[atom] = solver.right_mate(i)
    return RoundSchedule(schedule.rounds, tuple(placed[a] for a in range(len(instance.dag.atoms))))


def serpentine(instance: AtomicInstance) -> list[int]:
    """Engines in boustrophedon order over the mesh rows (one row when there is no mesh)."""
    cols = instance.mesh.cols if instance.mesh is not None else instance.n_engines
    order = []
    for row in range((instance.n_engines + cols - 1) // cols):
        line = [row * cols + c for c in range(cols) if row * cols + c < instance.n_engines]
        order += line if row % 2 == 0 else line[::-1]
    return order


def zigzag_engines(instance: AtomicInstance, schedule: RoundSchedule) -> RoundSchedule:
    """The schedule with each round's atoms placed on the serpentine order of engines (module docstring)."""
    order = serpentine(instance)
    layer_rank = {name: i for i, name in enumerate(dict.fromkeys(a.layer for a in instance.dag.atoms))}
    engines = [0] * len(instance.dag.atoms)
    for members in schedule.rounds:
        ranked = sorted(members, key=lambda a: (layer_rank[instance.dag.atoms[a].layer], a))
        for slot, atom in enumerate(ranked):
            engines[atom] = order[slot]
    return RoundSchedule(schedule.rounds, tuple(engines))
