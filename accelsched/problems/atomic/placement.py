"""Placement and buffering of a round schedule: what every atomic method does after it has chosen the rounds.

Engine ``e`` sits at ``(e // cols, e % cols)`` on the instance's mesh; moving ``b``
bytes from engine ``e`` to ``f`` costs ``b x hops(e, f)`` byte-hops under XY routing.

* :func:`assign_engines` (exact per round): rounds in order; for round ``r`` the
  atoms are matched to engines so that the energy of bringing them their data is
  least: the byte-hops from their producers (all in earlier rounds, already placed)
  x the mesh's energy per byte and hop, plus the HBM read energy of an atom's
  weights on an engine that does not hold them (its previous atom had other
  weights; an engine keeps one weight block, as in the evaluator). Without weights
  this is the least byte-hops. A linear assignment problem (atoms x engines, padded
  with zero-cost rows, costs in integer centi-pJ), solved exactly by OR-Tools'
  ``SimpleLinearSumAssignment``. Greedy over rounds: a later round's traffic does
  not influence an earlier round's placement (the joint optimum of the byte-hops
  over all rounds is :mod:`accelsched.formulations.atomic_joint_mapping`, for small
  instances).
* :func:`zigzag_engines` (Atomic Dataflow's baseline): engines visited in
  serpentine (boustrophedon) order, each round's atoms placed in that order by
  (layer order, atom index), so that consecutive atoms of a layer are neighbours.
* :func:`evict` (Atomic Dataflow's Algorithm 3): rounds in order, and on each
  engine whose buffer would overflow (:func:`accelsched.problems.atomic.cost.buffer_occupancy`),
  the held outputs with the largest *size x time to reuse* (bytes x rounds until
  their next consumer) are written back to HBM until the round fits. A written-back
  output leaves the buffer when it is produced (writing it back at production
  instead of at eviction never holds more), and its consumers read it from HBM.
  Writing an output back never raises what any engine holds in any round (a
  consumer that found it locally loads at most the output's bytes instead), so one
  pass over the rounds suffices. A round whose atoms alone overflow stays over
  (the checker then names it).

:func:`place_and_buffer` applies the instance's mapping and then the eviction;
:func:`price` gives a placed, buffered schedule's objective, or why it does not fit.
"""

from __future__ import annotations

import bisect

import numpy as np
from ortools.graph.python import linear_sum_assignment

from accelsched.problems.atomic.cost import buffer_overflow, evaluate_rounds
from accelsched.problems.atomic.dag import RoundSchedule
from accelsched.problems.atomic.instance import AtomicInstance

__all__ = [
    "assign_engines",
    "buffer_failure",
    "evict",
    "hop_matrix",
    "place_and_buffer",
    "placement_byte_hops",
    "price",
    "serpentine",
    "zigzag_engines",
]


def hop_matrix(instance: AtomicInstance) -> np.ndarray:
    """Mesh hops between every two engines (zeros without a mesh)."""
    engines = np.arange(instance.n_engines)
    mesh = instance.mesh
    if mesh is None:
        return np.zeros((instance.n_engines, instance.n_engines), dtype=np.int64)
    rows, cols = engines // mesh.cols, engines % mesh.cols
    return np.abs(rows[:, None] - rows[None, :]) + np.abs(cols[:, None] - cols[None, :])


def placement_byte_hops(instance: AtomicInstance, schedule: RoundSchedule) -> int:
    """Bytes x hops of every edge of ``schedule``'s DAG between the engines of its atoms: what the mappings
    minimize (before write-backs send some of it through HBM)."""
    if schedule.engines is None:
        raise ValueError("the schedule has no engines")
    dag = instance.dag_for(schedule)
    engines = np.asarray(schedule.engines, dtype=np.int64)
    src, dst, nbytes = dag.edge_array.T
    return int((nbytes * hop_matrix(instance)[engines[src], engines[dst]]).sum())


def _one_per_engine(instance: AtomicInstance, schedule: RoundSchedule) -> None:
    for r, members in enumerate(schedule.rounds):
        if len(members) > instance.n_engines:
            raise ValueError(f"round {r} holds {len(members)} atoms > {instance.n_engines} engines: "
                             "engine placement needs one atom per engine")  # fmt: skip


def assign_engines(instance: AtomicInstance, schedule: RoundSchedule) -> RoundSchedule:
    """The schedule with each round's engines from an exact linear assignment (module docstring).

    Raises
    ------
    ValueError
        A round with more atoms than engines.
    """
    _one_per_engine(instance, schedule)
    dag = instance.dag_for(schedule)
    n, n_engines = len(dag.atoms), instance.n_engines
    hops = hop_matrix(instance)
    src, dst, nbytes = dag.edge_array.T
    by_consumer = np.argsort(dst, kind="stable")
    src, dst, nbytes = src[by_consumer], dst[by_consumer], nbytes[by_consumer]
    starts = np.searchsorted(dst, np.arange(n + 1))
    placed = np.full(n, -1, dtype=np.int64)
    tails = np.repeat(np.arange(n_engines), n_engines)
    heads = np.tile(np.arange(n_engines), n_engines)
    acc = instance.accelerator
    hop_cost = 100 * (instance.mesh.hop_energy_pj_per_byte if instance.mesh is not None else 1.0)
    reload_cost = 100 * acc.offchip.read_energy_pj_per_byte if acc is not None else 0.0
    weights = np.fromiter((a.weight_bytes for a in dag.atoms), dtype=np.float64, count=n)
    key_ids: dict[tuple[str, tuple[int, int], tuple[int, int]], int] = {}
    keys = np.fromiter((key_ids.setdefault(a.weight_key, len(key_ids)) for a in dag.atoms), dtype=np.int64, count=n)
    held = np.full(n_engines, -1, dtype=np.int64)
    for members in schedule.rounds:
        atoms = np.asarray(members, dtype=np.int64)
        lo, hi = starts[atoms], starts[atoms + 1]
        slots = np.repeat(np.arange(len(atoms)), hi - lo)
        edges = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)]) if len(atoms) else lo
        traffic = np.zeros((n_engines, n_engines), dtype=np.int64)
        np.add.at(traffic, (slots, placed[src[edges]]), nbytes[edges])
        energy = (traffic @ hops) * hop_cost  # rows: the round's atoms, then zero-cost padding
        energy[: len(atoms)] += np.where(
            held[None, :] == keys[atoms][:, None], 0.0, weights[atoms][:, None] * reload_cost
        )
        cost = np.rint(energy).astype(np.int64)
        if not cost.any():
            placed[atoms] = np.arange(len(atoms))
        else:
            solver = linear_sum_assignment.SimpleLinearSumAssignment()
            solver.add_arcs_with_cost(tails, heads, cost.ravel())
            status = solver.solve()
            assert status == solver.OPTIMAL, f"linear assignment status {status}"
            placed[atoms] = [solver.right_mate(i) for i in range(len(atoms))]
        held[placed[atoms]] = keys[atoms]
    return schedule.placed(placed.tolist())


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
    _one_per_engine(instance, schedule)
    dag = instance.dag_for(schedule)
    order = serpentine(instance)
    layer_rank = {name: i for i, name in enumerate(dict.fromkeys(a.layer for a in dag.atoms))}
    engines = [0] * len(dag.atoms)
    for members in schedule.rounds:
        ranked = sorted(members, key=lambda a: (layer_rank[dag.atoms[a].layer], a))
        for slot, atom in enumerate(ranked):
            engines[atom] = order[slot]
    return schedule.placed(engines)


class _Buffers:
    """Per-atom facts the eviction needs, as lists (the pass is a Python loop over rounds)."""

    def __init__(self, instance: AtomicInstance, schedule: RoundSchedule) -> None:
        dag = instance.dag_for(schedule)
        n = len(dag.atoms)
        self.round_of = schedule.round_of(n)
        engines = schedule.engines if schedule.engines is not None else _slots(schedule, n)
        self.engine = list(engines)
        self.outputs = [a.output_bytes for a in dag.atoms]
        self.inputs = [a.input_bytes for a in dag.atoms]
        self.weights = [a.weight_bytes for a in dag.atoms]
        self.uses: list[list[int]] = [[] for _ in range(n)]
        self.local: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # producer -> (consumer, bytes) on its engine
        self.found = [0] * n
        for a, b, nbytes in dag.edge_array.tolist():
            self.uses[a].append(self.round_of[b])
            if self.engine[a] == self.engine[b]:
                self.local[a].append((b, nbytes))
                self.found[b] += nbytes
        for uses in self.uses:
            uses.sort()
        self.written: set[int] = set()
        for a in schedule.write_back:
            self.write_back(a)

    def last_use(self, a: int) -> int:
        return self.uses[a][-1] if self.uses[a] else -1

    def persists(self, a: int) -> bool:
        return a not in self.written and self.last_use(a) > self.round_of[a]

    def working(self, a: int) -> int:
        out = 0 if self.persists(a) else self.outputs[a]
        return max(0, self.inputs[a] - self.found[a]) + self.weights[a] + out

    def next_use(self, a: int, r: int) -> int:
        uses = self.uses[a]
        i = bisect.bisect_left(uses, r + (1 if self.round_of[a] == r else 0))
        return uses[i] if i < len(uses) else r

    def write_back(self, a: int) -> None:
        self.written.add(a)
        for b, nbytes in self.local[a]:
            self.found[b] -= nbytes


def _slots(schedule: RoundSchedule, n: int) -> list[int]:
    engines = [0] * n
    for members in schedule.rounds:
        for slot, a in enumerate(members):
            engines[a] = slot
    return engines


def evict(instance: AtomicInstance, schedule: RoundSchedule) -> RoundSchedule:
    """The schedule with the write-backs of Algorithm 3 added (module docstring); unchanged on an abstract
    instance or when every buffer already fits."""
    if instance.accelerator is None or buffer_overflow(instance, schedule) is None:
        return schedule
    capacity = instance.accelerator.cores[0].top_capacity_bytes
    state = _Buffers(instance, schedule)
    resident: list[dict[int, None]] = [{} for _ in range(instance.n_engines)]
    held = [0] * instance.n_engines
    expiry: dict[int, list[int]] = {}
    for r, members in enumerate(schedule.rounds):
        for p in expiry.pop(r, ()):
            e = state.engine[p]
            if p in resident[e]:
                del resident[e][p]
                held[e] -= state.outputs[p]
        on: dict[int, list[int]] = {}
        for a in members:
            on.setdefault(state.engine[a], []).append(a)
        for e, atoms in on.items():
            _fit(state, resident[e], held, e, r, atoms, capacity)
            for a in atoms:
                if state.persists(a):
                    resident[e][a] = None
                    held[e] += state.outputs[a]
                    expiry.setdefault(state.last_use(a) + 1, []).append(a)
    return RoundSchedule(schedule.rounds, schedule.engines, frozenset(state.written), schedule.sizes)


def _fit(
    state: _Buffers, resident: dict[int, None], held: list[int], e: int, r: int, atoms: list[int], capacity: int
) -> None:
    """Write back held outputs of engine ``e`` (largest size x time to reuse first) until round ``r`` fits."""

    def occupancy() -> int:
        kept = sum(state.outputs[a] for a in atoms if state.persists(a))
        return held[e] + kept + max(state.working(a) for a in atoms)

    while occupancy() > capacity:
        candidates = list(resident) + [a for a in atoms if state.persists(a)]
        if not candidates:
            return
        victim = max(candidates, key=lambda p: (state.outputs[p] * (state.next_use(p, r) - r), -p))
        state.write_back(victim)
        if victim in resident:
            del resident[victim]
            held[e] -= state.outputs[victim]


def buffer_failure(instance: AtomicInstance, schedule: RoundSchedule) -> str | None:
    """Why ``schedule``, given :func:`evict`'s write-backs, still overflows a buffer (its round's own atoms do not
    fit), or None."""
    over = buffer_overflow(instance, schedule)
    if over is None:
        return None
    engine, r, held, capacity = over
    return (f"engine {engine} holds {held:,} bytes in round {r} > its buffer of {capacity:,} bytes with every held "
            "output written back: the round's own atoms do not fit")  # fmt: skip


def place_and_buffer(instance: AtomicInstance, schedule: RoundSchedule) -> RoundSchedule:
    """Place ``schedule``'s atoms with the instance's mapping (``assignment`` or ``zigzag``; abstract instances
    keep the slot order) and add Algorithm 3's write-backs."""
    if instance.accelerator is None:
        return schedule
    placed = zigzag_engines(instance, schedule) if instance.mapping == "zigzag" else assign_engines(instance, schedule)
    return evict(instance, placed)


def price(instance: AtomicInstance, schedule: RoundSchedule) -> tuple[float | None, str | None]:
    """The instance's objective of the round evaluator for a placed, buffered ``schedule``, or None and why it
    overflows a buffer (:func:`buffer_failure`)."""
    failure = buffer_failure(instance, schedule)
    if failure is not None:
        return None, failure
    return evaluate_rounds(instance, schedule).metric(instance.objective), None
