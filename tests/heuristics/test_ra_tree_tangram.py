"""The Tangram-like baseline: pipelined segments in the LP subspace, never better than its exact optimum."""

from __future__ import annotations

import pytest

from accelsched.heuristics.ra_tree_sa import in_subspace
from accelsched.heuristics.ra_tree_tangram import METHODS
from accelsched.problems.ra_tree import PROBLEM, Cut, CutKind
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status
from tests.problems.ra_tree.instances import small

TANGRAM = METHODS[0]


@pytest.mark.parametrize("seed", range(4))
def test_tangram_is_in_the_lp_subspace_and_never_beats_its_optimum(seed: int) -> None:
    instance = small(6, seed, batch=4)
    result = run_method(PROBLEM, instance, TANGRAM, SolveOptions())
    assert result.status is Status.FEASIBLE and result.solution is not None and result.objective is not None
    assert in_subspace(result.solution, CutKind.S)
    for segment in result.solution.root.children:
        if isinstance(segment, Cut):
            assert segment.subbatches == instance.batch  # the finest granularity
    exact = run_method(PROBLEM, instance, get_method(PROBLEM.name, "dp-lp"), SolveOptions())
    assert exact.objective is not None and exact.objective <= result.objective * (1 + 1e-9)


def test_a_spent_time_limit_is_a_status() -> None:
    result = run_method(PROBLEM, small(6, 0), TANGRAM, SolveOptions(time_limit_s=1e-9))
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION and result.stats.native_status.startswith("time limit")
