"""Atom sizing by simulated annealing (after Atomic Dataflow's Algorithm 1).

State: one candidate size per layer, from :func:`accelsched.problems.atomic.sizes.size_table`
(the same candidates as the exact method). Cost: the variance of the layers' atom
cycles. Move: one random layer takes the next smaller or larger candidate in its
cycle order, or (with ``jump_probability``) any of its candidates. Acceptance: Metropolis on the relative cost change,
``exp(-(dC / C) / T)``, with a geometric schedule from ``t0`` to ``t0 * t_end_ratio``
over ``iterations`` moves; the best state is kept. Starts from every layer's
median candidate. Seeded: the same seed gives the same sizes.

The step ``atoms=sa`` of the atomic problem (:data:`STEPS`) anneals with seed 0 and
default parameters over the instance's candidates
(:func:`accelsched.problems.atomic.instance_size_table`) and hands the sizes to
:func:`accelsched.problems.atomic.make_instance` as ``sizes=``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from accelsched.hardware.spec import Accelerator
from accelsched.models.workload import Workload
from accelsched.problems.atomic import PROBLEM, AtomSize, SizeTable, size_step_table, sized_options, variance
from accelsched.problems.base import InstanceStep

__all__ = ["STEPS", "AtomSizeSAParams", "sa_sizes", "sa_step"]


@dataclass(frozen=True)
class AtomSizeSAParams:
    """Iterations, start temperature, final-to-start temperature ratio, and the share of moves that jump to any
    candidate of the layer (the others step to a neighbour in cycle order)."""

    iterations: int = 5000
    t0: float = 2.0
    t_end_ratio: float = 1e-3
    jump_probability: float = 0.2

    def __post_init__(self) -> None:
        rules = (
            ("iterations", self.iterations >= 1, "iterations >= 1"),
            ("t0", self.t0 > 0, "t0 > 0"),
            ("t_end_ratio", 0 < self.t_end_ratio <= 1, "0 < t_end_ratio <= 1"),
            ("jump_probability", 0 <= self.jump_probability <= 1, "0 <= jump_probability <= 1"),
        )
        for name, ok, need in rules:
            if not ok:
                raise ValueError(f"AtomSizeSAParams: field {name} must satisfy {need}, got {getattr(self, name)!r}")


def sa_sizes(
    table: SizeTable, seed: int = 0, params: AtomSizeSAParams | None = None
) -> tuple[dict[str, AtomSize], float]:
    """The best sizes the anneal visits and their cycle variance."""
    params = params or AtomSizeSAParams()
    rng = np.random.default_rng(seed)
    index = [len(c) // 2 for c in table.candidates]
    cycles = [table.candidates[i][k][1] for i, k in enumerate(index)]
    cost = variance(cycles)
    best_cost, best_index = cost, list(index)
    movable = [i for i, c in enumerate(table.candidates) if len(c) > 1]
    if not movable:
        return table.sizes(best_index), best_cost
    decay = params.t_end_ratio ** (1 / max(1, params.iterations - 1))
    temperature = params.t0
    for _ in range(params.iterations):
        layer = movable[int(rng.integers(len(movable)))]
        if rng.random() < params.jump_probability:  # any candidate of the layer
            k = int(rng.integers(len(table.candidates[layer])))
        else:  # the next smaller or larger candidate
            k = min(max(index[layer] + (1 if rng.random() < 0.5 else -1), 0), len(table.candidates[layer]) - 1)
        if k != index[layer]:
            old = cycles[layer]
            cycles[layer] = table.candidates[layer][k][1]
            new_cost = variance(cycles)
            delta = (new_cost - cost) / cost if cost > 0 else (1.0 if new_cost > 0 else 0.0)
            if delta <= 0 or rng.random() < math.exp(-delta / temperature):
                index[layer], cost = k, new_cost
                if cost < best_cost:
                    best_cost, best_index = cost, list(index)
            else:
                cycles[layer] = old
        temperature *= decay
    return table.sizes(best_index), best_cost


def sa_step(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with the annealed sizes (seed 0, default parameters) as ``sizes=`` (module docstring).

    Raises
    ------
    InputError
        Bad options (:func:`accelsched.problems.atomic.size_step_table`).
    """
    return sized_options(options, sa_sizes(size_step_table(workload, accelerator, options), seed=0)[0])


STEPS: tuple[InstanceStep, ...] = (
    InstanceStep(PROBLEM.name, "atoms", "sa", sa_step, "atom sizes of low cycle variance by Algorithm 1's annealing"),
)
"""The atom-size step ``atoms=sa`` of the atomic problem."""
