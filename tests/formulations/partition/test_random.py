"""Issue 3, must-hold 1: on 200 seeded random DAGs of 6-12 layers, MILP via HiGHS, PuLP/CBC and
Pyomo, and CP-SAT reach the enumeration optimum, and every objective is the evaluator's value.

Every run goes through :func:`accelsched.registry.run_method`, which re-checks the solution and
raises ``ObjectiveMismatch`` when the method's objective differs from the evaluator's."""

from __future__ import annotations

from typing import Any

import pytest

from accelsched.problems.partition import Metric
from accelsched.solvers import Status
from tests.formulations.partition.helpers import SOLVERS, run, same
from tests.problems.partition_oracle import small_instance

CONFIGS: list[dict[str, Any]] = [
    {},
    {"shared": True, "act_kb": (5,)},
    {"act_kb": (2, 4, 8), "weight_kb": (1, 2)},
    {"metric": Metric.ENERGY, "act_kb": (3,), "weight_kb": (2,)},
    {"shared": True, "act_kb": (3, 5, 8), "metric": Metric.ENERGY, "alpha": 0.01},
]
"""Fixed separate EMA, fixed shared EMA, co-exploration separate EMA, fixed separate energy,
co-exploration shared energy, in turn."""


@pytest.mark.parametrize("seed", range(200))
def test_every_solver_reaches_the_enumeration_optimum(seed: int) -> None:
    instance = small_instance(6 + seed % 7, seed, **CONFIGS[seed % len(CONFIGS)])
    reference = run("enumerate", instance)
    assert reference.status is Status.OPTIMAL and reference.objective is not None
    for method in SOLVERS:
        result = run(method, instance)
        assert result.status is Status.OPTIMAL, (method, result.stats.native_status)
        assert same(result.objective, reference.objective), (method, result.objective, reference.objective)
