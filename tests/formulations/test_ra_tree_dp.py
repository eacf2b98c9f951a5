"""The LS / LP segment dynamic programs: equal to brute force over their subspaces, checked, limited."""

from __future__ import annotations

import itertools

import pytest

from accelsched.errors import InfeasibleSolution
from accelsched.formulations.ra_tree_dp import METHODS, SegmentDP
from accelsched.problems.ra_tree import PROBLEM, RATreeInstance, check, evaluate
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RANode, RATree, sequential_tree
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions, Status
from tests.problems.ra_tree.instances import small

DP = {m.name: m for m in METHODS}


def brute_force(instance: RATreeInstance, kind: CutKind) -> float:
    """Least objective over every segmentation of the order and every segment choice."""
    names, batch = instance.workload.names, instance.batch
    divisors = [s for s in range(1, batch + 1) if batch % s == 0]
    best = float("inf")
    for cuts in itertools.product((False, True), repeat=len(names) - 1):
        bounds = [0, *(k + 1 for k, cut in enumerate(cuts) if cut), len(names)]
        runs = [names[a:b] for a, b in itertools.pairwise(bounds)]
        choices: list[list[RANode]] = []
        for run in runs:
            if len(run) == 1:
                choices.append([Leaf(run[0], batch)])
            else:
                choices.append([Cut(kind, batch, s, tuple(Leaf(x, batch // s) for x in run)) for s in divisors])
        for segments in itertools.product(*choices):
            tree = RATree(Cut(CutKind.T, batch, 1, tuple(segments)))
            try:
                check(instance, tree)
            except InfeasibleSolution:
                continue
            report = evaluate(instance, tree)
            best = min(best, PROBLEM.objective(instance, tree, report))
    return best


@pytest.mark.parametrize("kind", [CutKind.T, CutKind.S])
@pytest.mark.parametrize("seed", range(6))
def test_dp_equals_brute_force_over_its_subspace(kind: CutKind, seed: int) -> None:
    instance = small(4 + seed % 2, seed)
    method = DP["dp-ls" if kind is CutKind.T else "dp-lp"]
    result = run_method(PROBLEM, instance, method, SolveOptions())
    assert result.status is Status.FEASIBLE and result.objective is not None
    assert "optimal in the" in result.stats.native_status
    assert result.objective == pytest.approx(brute_force(instance, kind), rel=1e-9)


def test_dp_ls_is_never_worse_than_layer_sequential() -> None:
    instance = small(6, 11)
    tree = sequential_tree(instance.workload)
    sequential = PROBLEM.objective(instance, tree, PROBLEM.evaluate(instance, tree))
    result = run_method(PROBLEM, instance, DP["dp-ls"], SolveOptions())
    assert result.objective is not None and result.objective <= sequential * (1 + 1e-9)


def test_a_spent_time_limit_is_a_status() -> None:
    result = run_method(PROBLEM, small(6, 3), DP["dp-lp"], SolveOptions(time_limit_s=1e-9))
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION and result.solution is None
    assert result.stats.native_status.startswith("time limit reached at layer")


def test_s_segments_never_have_more_layers_than_tiles() -> None:
    instance = small(6, 2)
    dp = SegmentDP(instance, CutKind.S)
    lengths = [end for end, subbatches, _ in dp.segments(0) if subbatches]
    assert max(lengths) <= instance.n_tiles and dp.evaluated > 0
