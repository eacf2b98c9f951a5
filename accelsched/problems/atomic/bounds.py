"""Lower bounds of the latency of an atomic DAG's schedules."""

from __future__ import annotations

import math

import numpy as np

from accelsched.problems.atomic.dag import AtomDag
from accelsched.problems.atomic.instance import AtomicInstance

__all__ = ["lower_bounds"]


def lower_bounds(instance: AtomicInstance, dag: AtomDag | None = None) -> tuple[int, int, int]:
    """Three valid bounds of the latency of ``dag`` (default: the instance's): the longest path in cycles, the
    work over ``N`` engines (both also bound the asynchronous job shop and every pipelined schedule), and the
    *round bound* ``sum_i t_(iN+1)`` over the durations sorted from the longest: the ``iN + 1`` longest atoms fill
    at least ``i + 1`` rounds of at most ``N`` atoms, so the ``(i+1)``-th longest round lasts at least
    ``t_(iN+1)`` (this one holds for Atomic Dataflow's rounds only). Transfers and HBM stalls only add time, so
    the three bound the evaluator's latency too."""
    dag = dag or instance.dag
    finish = np.zeros(len(dag.atoms), dtype=np.int64)
    durations = np.asarray(dag.durations, dtype=np.int64)
    preds = dag.predecessors
    for b in dag.topological_order:
        p = preds[b]
        finish[b] = durations[b] + (int(finish[list(p)].max()) if p else 0)
    longest_first = np.sort(durations)[::-1]
    rounds = int(longest_first[:: instance.n_engines].sum())
    return int(finish.max()), math.ceil(int(durations.sum()) / instance.n_engines), rounds

