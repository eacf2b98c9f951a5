"""The checker of the atomic problem: the rules every round schedule must keep.

1. *cover*: every atom of the solution's DAG is in exactly one round, and no round is empty;
2. *engines*: without engines, a round holds at most ``N`` atoms (one per engine, in slot
   order); with engines, one engine in ``0 .. N-1`` per atom;
3. *precedence*: for every edge ``a -> b`` the round of ``a`` is before the round of ``b``,
   or both are in one round, engines are given and ``a`` is listed before ``b``;
4. *buffer*: on an accelerator, no engine's buffer holds more than its capacity in any
   round (:func:`accelsched.problems.atomic.cost.buffer_occupancy` states what it holds);
5. *sizes*: the solution's sizes name every layer once and keep the PE-array rule;
6. *write-back*: the written-back atoms exist.
"""

from __future__ import annotations

import numpy as np

from accelsched.errors import InfeasibleSolution
from accelsched.problems.atomic.cost import buffer_overflow
from accelsched.problems.atomic.dag import RoundSchedule
from accelsched.problems.atomic.instance import AtomicInstance

__all__ = ["check"]


def check(instance: AtomicInstance, solution: RoundSchedule) -> None:
    """Raise :class:`InfeasibleSolution` naming the first rule (module docstring) that ``solution`` breaks."""
    dag = instance.dag_for(solution)
    n = len(dag.atoms)
    counts = np.zeros(n, dtype=np.int64)
    for r, members in enumerate(solution.rounds):
        if not members:
            raise InfeasibleSolution(f"rule 1: round {r} is empty")
        if solution.engines is None and len(members) > instance.n_engines:
            raise InfeasibleSolution(f"rule 2: round {r} holds {len(members)} atoms > {instance.n_engines} engines")
        index = np.asarray(members, dtype=np.int64)
        if ((index < 0) | (index >= n)).any():
            raise InfeasibleSolution(f"rule 1: round {r} names an atom outside 0..{n - 1}")
        np.add.at(counts, index, 1)
    if (counts != 1).any():
        a = int(np.flatnonzero(counts != 1)[0])
        raise InfeasibleSolution(f"rule 1: atom {a} ({dag.atoms[a].name}) is in {int(counts[a])} rounds")
    if solution.engines is not None:
        if len(solution.engines) != n:
            raise InfeasibleSolution(f"rule 2: {len(solution.engines)} engines given for {n} atoms")
        engines = np.asarray(solution.engines, dtype=np.int64)
        if ((engines < 0) | (engines >= instance.n_engines)).any():
            a = int(np.flatnonzero((engines < 0) | (engines >= instance.n_engines))[0])
            last = instance.n_engines - 1
            raise InfeasibleSolution(f"rule 2: atom {a} on engine {int(engines[a])}, not in 0..{last}")
    round_of, position = _positions(solution, n)
    src, dst = dag.edge_array[:, 0], dag.edge_array[:, 1]
    later = round_of[src] < round_of[dst]
    same = (round_of[src] == round_of[dst]) & (position[src] < position[dst]) & (solution.engines is not None)
    broken = ~(later | same)
    if broken.any():
        i = int(np.flatnonzero(broken)[0])
        a, b = int(src[i]), int(dst[i])
        raise InfeasibleSolution(f"rule 3: edge {a} -> {b} goes from round {round_of[a]} to round {round_of[b]}"
                                 + (" (listed after its consumer)" if round_of[a] == round_of[b] else ""))  # fmt: skip
    if any(not 0 <= a < n for a in solution.write_back):
        raise InfeasibleSolution(f"rule 6: write-back names an atom outside 0..{n - 1}")
    if instance.accelerator is not None:
        overflow = buffer_overflow(instance, solution)
        if overflow is not None:
            engine, r, held, capacity = overflow
            raise InfeasibleSolution(f"rule 4: engine {engine} holds {held:,} bytes in round {r} > its buffer of "
                                     f"{capacity:,} bytes")  # fmt: skip


def _positions(solution: RoundSchedule, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Round of every atom and its position in the execution order (round by round, in listed order)."""
    round_of = np.full(n, -1, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    k = 0
    for r, members in enumerate(solution.rounds):
        index = np.asarray(members, dtype=np.int64)
        round_of[index] = r
        position[index] = np.arange(k, k + len(index))
        k += len(index)
    return round_of, position

