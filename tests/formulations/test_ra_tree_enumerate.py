"""Exhaustive RA-tree enumeration: the SET space-size count (1..8 leaves), optimality over the subspaces, limits."""

from __future__ import annotations

import pytest

from accelsched.formulations.ra_tree_dp import METHODS as DP_METHODS
from accelsched.formulations.ra_tree_enumerate import (
    METHODS,
    RATreeEnumerateParams,
    all_trees,
    solve_enumerate,
    trees_in_order,
)
from accelsched.problems.ra_tree import PROBLEM, Cut, CutKind, check, tree_space_size
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions, Status
from tests.problems.ra_tree.instances import small

ENUMERATE = METHODS[0]
DP = {m.name: m for m in DP_METHODS}


@pytest.mark.parametrize("n", [*range(1, 8), pytest.param(8, marks=pytest.mark.slow)])
def test_labeled_shapes_match_the_set_space_size(n: int) -> None:
    trees = list(trees_in_order([f"l{i}" for i in range(n)], 1))
    # A labeled shape with a T root is the root itself; one with an S root hangs under the root T-Cut.
    shapes = [t for t in trees if len(t.root.children) > 1 or not isinstance(t.root.children[0], Cut)
              or t.root.children[0].kind is CutKind.S]  # fmt: skip
    assert len(shapes) == tree_space_size(n)
    assert len(trees) == (1 if n == 1 else tree_space_size(n) * 3 // 2)
    assert len({t.to_text() for t in trees}) == len(trees)  # no tree twice


def test_sub_batch_choices_divide_every_batch() -> None:
    trees = list(trees_in_order(["a", "b", "c"], 4))
    for tree in trees:
        for _, node in tree.walk():
            if isinstance(node, Cut):
                assert node.batch % node.subbatches == 0
                assert all(child.batch == node.batch // node.subbatches for child in node.children)
    assert any(t.root.subbatches == 4 for t in trees) and any(t.root.subbatches == 1 for t in trees)


def test_every_tree_of_an_instance_passes_the_structural_rules() -> None:
    instance = small(4, 1, batch=2)
    trees = list(all_trees(instance))
    for tree in trees[:: max(1, len(trees) // 50)]:
        check(instance, tree)


@pytest.mark.parametrize("seed", range(5))
def test_the_optimum_is_no_worse_than_either_subspace(seed: int) -> None:
    instance = small(4, seed, batch=2)
    best = run_method(PROBLEM, instance, ENUMERATE, SolveOptions())
    assert best.status is Status.OPTIMAL and best.objective is not None and best.bound == best.objective
    for name in ("dp-ls", "dp-lp"):
        sub = run_method(PROBLEM, instance, DP[name], SolveOptions())
        assert sub.objective is not None and best.objective <= sub.objective * (1 + 1e-9)


def test_large_networks_and_spent_time_limits_are_statuses() -> None:
    big = run_method(PROBLEM, small(7, 0), ENUMERATE, SolveOptions())
    assert big.status is Status.TIME_LIMIT_NO_SOLUTION
    assert big.stats.native_status == "too large for exhaustive enumeration (7 layers > 6)"
    capped = solve_enumerate(small(5, 0, batch=2), SolveOptions(), params=RATreeEnumerateParams(max_layers=4))
    assert capped.stats.native_status == "too large for exhaustive enumeration (5 layers > 4)"
    with pytest.raises(ValueError, match="field max_layers must be an integer >= 1, got 0"):
        RATreeEnumerateParams(max_layers=0)
    spent = run_method(PROBLEM, small(5, 0, batch=2), ENUMERATE, SolveOptions(time_limit_s=1e-9))
    assert spent.status is Status.TIME_LIMIT_NO_SOLUTION and spent.stats.native_status.startswith("time limit")
