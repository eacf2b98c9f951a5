"""Seeded tiny multicore instances for the exact methods (CP-SAT and enumeration) and their oracle tests."""

from __future__ import annotations

import functools

from accelsched.hardware.cost.cn_graph import Granularity
from accelsched.models.random_dag import random_workload
from accelsched.problems.multicore import MulticoreInstance, Priority
from tests.hardware.cost.helpers import multicore

OBJECTIVE_CYCLE = ("latency", "energy", "edp")
"""The objectives the exact methods support, taken in turn by the seeds."""


@functools.cache
def tiny(seed: int) -> MulticoreInstance:
    """3-5 layers on two compute cores of different dataflows and a SIMD core, 3-10 CNs.

    The seed varies the workload, the granularity (even: layer, odd: fused with 2-row CNs), the objective
    (latency, energy, EDP in turn), the priority, and the weight memory: every fourth seed gets 160 B, which
    keeps at most one or two layers' weights resident per core, so the residency constraint binds.
    """
    workload = random_workload(3 + seed % 3, seed, height=4, width=4, channels=(4, 8))
    return MulticoreInstance(
        workload,
        multicore(weight_bytes=160 if seed % 4 == 0 else 4000, activation_bytes=1500),
        Granularity.LAYER if seed % 2 == 0 else Granularity.FUSED,
        rows_per_cn=2,
        priority=Priority.MEMORY if seed % 7 == 3 else Priority.LATENCY,
        objective=OBJECTIVE_CYCLE[seed % 3],
    )
