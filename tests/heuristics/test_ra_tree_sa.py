"""SET's operators and SA over RA trees: valid moves, determinism, never better than enumeration."""

from __future__ import annotations

from functools import partial
from typing import Any, cast

import numpy as np
import pytest

from accelsched.errors import InfeasibleSolution
from accelsched.heuristics.ra_tree_moves import EXTRA_OPERATORS, OPERATORS, neighbour
from accelsched.heuristics.ra_tree_sa import METHODS, SA_OPERATORS, RATreeSAParams, in_subspace, solve_sa
from accelsched.problems.ra_tree import PROBLEM, Cut, CutKind, check_structure, parse_tree, sequential_tree
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status
from tests.problems.ra_tree.instances import TEXT, instance, small

SA = {m.name: m for m in METHODS}


@pytest.mark.parametrize("operator", OPERATORS + EXTRA_OPERATORS)
def test_every_operator_keeps_the_tree_valid(operator: str) -> None:
    inst = instance()
    edges = frozenset(inst.workload.edges)
    rng = np.random.default_rng(0)
    tree, applied = parse_tree(TEXT), 0
    for _ in range(200):
        moved = neighbour(tree, edges, rng, operator)
        if moved is None:
            moved = neighbour(tree, edges, rng)  # another operator, to keep exploring
            if moved is None:
                continue
        else:
            applied += 1
        try:
            check_structure(inst, moved)
        except InfeasibleSolution as exc:
            # only the tile count can fail (an S-Cut grown wider than the mesh); batches and order never do
            assert "disjoint tiles" in str(exc), (operator, moved.to_text())
            continue
        tree = moved
    assert applied > 0


def test_operators_by_hand() -> None:
    inst = instance()
    edges = frozenset(inst.workload.edges)
    rng = np.random.default_rng(1)
    tree = parse_tree(TEXT)  # T 8/1 [a 8, S 8/4 [b 2, c 2, d 2]]
    swapped = neighbour(tree, edges, rng, "swap")
    assert swapped is not None and [x.layer for x in swapped.leaves()] == ["a", "c", "b", "d"]  # b, c independent
    deleted = neighbour(tree, edges, rng, "delete")
    assert deleted is not None and deleted.to_text() == "T 8/1\n\ta 8\n\tb 8\n\tc 8\n\td 8\n"
    moved = neighbour(tree, edges, rng, "move")  # b leaves the S-Cut at its front (the others: test_ra_tree_moves)
    assert moved is not None and moved.to_text() == "T 8/1\n\ta 8\n\tb 8\n\tS 8/4\n\t\tc 2\n\t\td 2\n"
    divided = neighbour(tree, edges, rng, "divide")
    assert divided is not None and divided.root.children[1].to_text() == "S 8/2"
    multiplied = neighbour(tree, edges, rng, "multiply")
    assert multiplied is not None
    before = [n.subbatches for _, n in tree.walk() if isinstance(n, Cut)]
    after = [n.subbatches for _, n in multiplied.walk() if isinstance(n, Cut)]
    assert sorted(a // b for a, b in zip(after, before, strict=True))[-1] == 2 and sum(after) > sum(before)
    grouped = neighbour(tree, edges, rng, "group")
    assert grouped is not None and len(grouped.root.children[1].children) == 2  # type: ignore[union-attr]


def test_sa_is_deterministic_under_a_seed() -> None:
    inst = small(5, 4, batch=2)
    params = RATreeSAParams(rounds_per_layer=20, chains=2, hot_chains=1)
    a = solve_sa(inst, SolveOptions(seed=3), params=params)
    b = solve_sa(inst, SolveOptions(seed=3), params=params)
    assert a.solution == b.solution and a.objective == b.objective


def test_chains_in_processes_give_the_result_of_one_process() -> None:
    """Chain i has the i-th seed and its own temperature wherever it runs; the trace is merged by time."""
    inst = small(5, 4, batch=2)
    params = RATreeSAParams(rounds_per_layer=20, chains=2, hot_chains=1)
    one = solve_sa(inst, SolveOptions(seed=5), params=params)
    two = solve_sa(inst, SolveOptions(seed=5, threads=2), params=params)
    assert "2 processes" in two.stats.native_status and "processes" not in one.stats.native_status
    assert two.solution == one.solution and two.objective == one.objective
    assert two.stats.iterations == one.stats.iterations == 3 * 20 * len(inst.workload)
    for result in (one, two):
        costs = [cost for _, cost in result.stats.trace]
        assert costs == sorted(costs, reverse=True) and costs[-1] == result.objective


def test_chains_stay_in_this_process_where_no_process_can_start() -> None:
    """Where processes cannot start (a daemonic Pool or Dask worker, ``can_spawn``), the chains run in this one."""
    inst = small(4, 1, batch=2)
    params = RATreeSAParams(rounds_per_layer=10, chains=1, hot_chains=1)
    alone = solve_sa(inst, SolveOptions(seed=2), params=params)
    result = solve_sa(inst, SolveOptions(seed=2, threads=2), params=params, can_start_processes=lambda: False)
    assert "in one process (the 2 worker processes could not start)" in result.stats.native_status
    assert result.solution == alone.solution


def test_hot_chains_only_add_to_set_chains() -> None:
    """SET's chains keep their seeds when hot chains are added, so the result is never worse than theirs."""
    for seed in range(4):
        inst = small(5, seed, batch=2)
        cold = solve_sa(inst, SolveOptions(seed=seed), params=RATreeSAParams(rounds_per_layer=30, hot_chains=0))
        both = solve_sa(inst, SolveOptions(seed=seed), params=RATreeSAParams(rounds_per_layer=30))
        assert cold.objective is not None and both.objective is not None
        assert both.objective <= cold.objective
        assert "4 chains at T0 = 0.07 and 4 at T0 = 2" in both.stats.native_status


def test_sa_never_beats_enumeration_and_is_close_to_it() -> None:
    """On 8 random 4-layer instances: never better than the optimum; mostly equal to it, never far.

    A regression guard on the search quality (SET's budget of 100 x layers iterations,
    the method's chains); the rate on 50 instances of 5 layers is measured by
    ``python -m accelsched.bench.ra_tree rate``.
    """
    gaps = []
    for seed in range(8):
        inst = small(4, seed, batch=2)
        best = run_method(PROBLEM, inst, get_method(PROBLEM.name, "enumerate"), SolveOptions())
        result = run_method(PROBLEM, inst, SA["sa"], SolveOptions(seed=seed))
        assert result.status is Status.FEASIBLE and result.objective is not None and best.objective is not None
        assert result.objective >= best.objective * (1 - 1e-9)
        gaps.append(result.objective / best.objective - 1)
    assert sum(g < 1e-9 for g in gaps) >= 5 and max(gaps) < 0.15, gaps


@pytest.mark.parametrize(("name", "kind"), [("sa-ls", CutKind.T), ("sa-lp", CutKind.S)])
def test_restricted_sa_stays_in_its_subspace(name: str, kind: CutKind) -> None:
    inst = small(5, 2, batch=2)
    result = run_method(PROBLEM, inst, SA[name], SolveOptions(seed=0))
    assert result.solution is not None and in_subspace(result.solution, kind)
    dp = run_method(PROBLEM, inst, get_method(PROBLEM.name, "dp-ls" if kind is CutKind.T else "dp-lp"), SolveOptions())
    assert dp.objective is not None and result.objective is not None
    assert result.objective >= dp.objective * (1 - 1e-9)  # the DP is exact over the subspace


def test_warm_start_and_time_limit() -> None:
    inst = small(5, 1, batch=2)
    warm = sequential_tree(inst.workload)
    start_value = PROBLEM.objective(inst, warm, PROBLEM.evaluate(inst, warm))
    result = run_method(PROBLEM, inst, SA["sa"], SolveOptions(seed=0, time_limit_s=1e-6), warm)
    assert result.status is Status.FEASIBLE and result.objective is not None
    assert result.objective <= start_value * (1 + 1e-12)
    assert "stopped by the time limit" in result.stats.native_status
    with pytest.raises(ValueError, match="field chains must be an integer >= 1, got 0"):
        RATreeSAParams(chains=0)
    with pytest.raises(ValueError, match="field hot_chains must be an integer >= 0, got -1"):
        RATreeSAParams(hot_chains=-1)
    with pytest.raises(ValueError, match="field hot_t0 must be > 0, got 0"):
        RATreeSAParams(hot_t0=0)
    with pytest.raises(ValueError, match="field max_draws must be an integer >= 1, got 0"):
        RATreeSAParams(max_draws=0)


def test_flip_turns_a_cut_into_the_other_kind_and_unknown_operators_are_rejected() -> None:
    inst = instance()
    flipped = neighbour(parse_tree(TEXT), frozenset(inst.workload.edges), np.random.default_rng(0), "flip")
    assert flipped is not None and flipped.root.children[1].to_text() == "T 8/4"
    with pytest.raises(ValueError, match=r"field operators must name operators of ra_tree_moves, got \['spin'\]"):
        RATreeSAParams(operators=("swap", "spin"))


def test_sa_draws_flip_and_the_restricted_sas_draw_set_six() -> None:
    """Every flip leaves the LS and LP subspaces, so ``sa-ls`` and ``sa-lp`` keep SET's six."""
    drawn = {name: cast(partial[Any], spec.run).keywords["params"].operators for name, spec in SA.items()}
    assert drawn == {"sa": SA_OPERATORS, "sa-ls": OPERATORS, "sa-lp": OPERATORS}
    assert (*OPERATORS, "flip") == SA_OPERATORS == RATreeSAParams().operators



def test_a_chain_starts_from_sets_ls_tree_when_the_full_batch_leaves_overflow() -> None:
    """Transformer at batch 8: every layer over the full batch overflows a tile (a leaf holds its whole
    input); SET's LS halves the leaf batch until the tree passes, and the SA starts there and never ends
    worse than it."""
    from accelsched.hardware import load_accelerator
    from accelsched.models.registry import load_workload
    from accelsched.problems.ra_tree import check, evaluate_tree, make_instance, objective, set_ls_tree

    inst = make_instance(load_workload("transformer_base", batch=8), load_accelerator("set-edge-4x4"), {})
    with pytest.raises(InfeasibleSolution):
        check(inst, sequential_tree(inst.workload))
    start = set_ls_tree(inst)
    start_objective = objective(inst, start, evaluate_tree(inst, start).report)
    params = RATreeSAParams(rounds_per_layer=1, chains=1, hot_chains=0)
    result = solve_sa(inst, SolveOptions(seed=0), params=params)
    assert result.status is Status.FEASIBLE
    assert result.objective is not None and result.objective <= start_objective * (1 + 1e-9)
